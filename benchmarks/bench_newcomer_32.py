"""Two plain PyTorch training scripts as a newcomer has them, run unchanged but for ``import
ember as torch`` and ``model = torch.compile(model)``: pytorch/examples' ``mnist/main.py`` Net and
loop (Conv2d x2, Dropout, Adadelta(lr=1), StepLR; on synthetic MNIST-shaped batches of 64, as
no download is possible here) and a tiny character transformer LM (Embedding,
``nn.TransformerEncoder`` of 2 pre-norm GELU layers with a causal mask, AdamW, grad clipping;
batch 16 x 64). Each variant runs in a process of its own (torch eager, ember eager, ember
compiled; one thread), timed by process CPU time per step after 5 warm-up steps; prints the
median ms, ratios to torch eager, and whether every logged loss equals torch eager's (4 digits).

    PYTHONPATH=src python benchmarks/bench_newcomer_32.py [--steps 30]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def mnist_cnn(torch, compiled, steps):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):  # pytorch/examples mnist/main.py, as written there
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv2(F.relu(self.conv1(x))))
            x = torch.flatten(self.dropout1(F.max_pool2d(x, 2)), 1)
            x = self.fc2(self.dropout2(F.relu(self.fc1(x))))
            return F.log_softmax(x, dim=1)

    torch.manual_seed(1)
    rng = np.random.default_rng(0)
    xs = torch.from_numpy(((rng.random((steps, 64, 1, 28, 28)) - 0.1307) / 0.3081).astype(np.float32))
    ys = torch.from_numpy(rng.integers(0, 10, (steps, 64)))
    model = Net()
    net = torch.compile(model) if compiled else model
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    model.train()

    def step(i):
        optimizer.zero_grad()
        loss = F.nll_loss(net(xs[i]), ys[i])
        loss.backward()
        optimizer.step()
        return loss.item()
    return step, scheduler.step


def tiny_transformer(torch, compiled, steps, B=16, T=64, vocab=65, d=64):
    nn, F = torch.nn, torch.nn.functional

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
            layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.1, batch_first=True, norm_first=True,
                                               activation="gelu")
            self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(T))

        def forward(self, idx, targets):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(t))
            x = self.blocks(x, mask=self.mask[:t, :t], is_causal=True)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    text = rng.integers(0, vocab, 20000)
    starts = rng.integers(0, len(text) - T - 1, (steps, B))
    xs = torch.from_numpy(np.stack([[text[s:s + T] for s in row] for row in starts]))
    ys = torch.from_numpy(np.stack([[text[s + 1:s + T + 1] for s in row] for row in starts]))
    model = TinyLM()
    net = torch.compile(model) if compiled else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(i):
        loss = net(xs[i], ys[i])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()
    return step, None


PROGRAMS = {"mnist_cnn": mnist_cnn, "tiny_transformer": tiny_transformer}
VARIANTS = (("torch", False), ("ember", False), ("ember", True))


def _child(program, lib, compiled, steps):
    """Runs one variant in this process; prints a JSON line."""
    torch = __import__(lib)
    torch.set_num_threads(1)
    step, _ = PROGRAMS[program](torch, compiled, steps)
    losses, cpu, first = [], [], time.perf_counter()
    for i in range(steps):
        start = time.process_time()
        losses.append(step(i))
        cpu.append(time.process_time() - start)
        if i == 0:
            first = time.perf_counter() - first
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    print(json.dumps({"losses": losses, "ms": 1e3 * float(np.median(cpu[5:])), "first_s": first, "graphs": graphs}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args.child[0], args.child[1], args.child[2] == "1", args.steps)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    ratios = {}
    print(f"{'program':18}{'torch ms':>10}{'ember':>8}{'ember.compile':>15}{'first call s':>14}  graphs  same losses")
    for program in PROGRAMS:
        got = {}
        for lib, compiled in VARIANTS:
            out = subprocess.run([sys.executable, __file__, "--steps", str(args.steps), "--child", program, lib,
                                  str(int(compiled))], capture_output=True, text=True, env=env, check=True)
            got[lib, compiled] = json.loads(out.stdout.strip().splitlines()[-1])
        base = got["torch", False]["ms"]
        eager, comp = got["ember", False], got["ember", True]
        same = all(np.allclose(v["losses"], got["torch", False]["losses"], atol=5e-5) for v in (eager, comp))
        ratios[f"{program}_eager"], ratios[f"{program}_compiled"] = eager["ms"] / base, comp["ms"] / base
        print(f"{program:18}{base:10.1f}{eager['ms'] / base:7.2f}x{comp['ms'] / base:14.2f}x"
              f"{comp['first_s']:14.2f}  {comp['graphs']:>6}  {same}")
    print(json.dumps({"benchmark": "newcomer_32", "timer": "cpu", "ember_over_torch": ratios}))


if __name__ == "__main__":
    main()
