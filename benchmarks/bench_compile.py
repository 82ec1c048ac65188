"""ember.compile vs ember eager vs torch eager vs torch.compile, side by side in one process.

Each workload is one whole training step (forward, backward, optimizer step, zero_grad) built
the same way for both libraries from the same initial weights, run four ways: ember eager,
ember compiled (``ember.compile(step)``: the whole step is one captured graph), torch eager and
torch.compile (inductor). Steady-state times are the best of ``--repeat`` rounds of
``--number`` steps, the four variants taking turns so that they see the same load; the
compile time column is the wall time of the first calls (capture or tracing, code generation,
the optimizer's first step), minus one steady step. Ratios are to torch eager (lower is
better for ember).

Workloads (rows, in WORKLOADS; each builder's docstring gives its sizes):
    mlp_digits_step: MLP 64-128-64-10 (ReLU), batch 32 of digits-shaped float32 inputs,
        cross-entropy, SGD with momentum 0.9 (target: compiled <= 0.15x torch eager).
    lenet_step: LeNet-5, batch 32 of 1x32x32, Adam (target <= 0.7).
    conv2d_fwd_bwd / depthwise_fwd_bwd: a convolution's forward and backward (targets <= 1.0; with
        --mode max-autotune each conv node's kernel is timed, see docs/compile.md).
    gpt_train_step: the tiny GPT of ember/models/gpt.py, AdamW, (16, 64) tokens (target <= 0.8).
    gpt_decode_token: greedy generation with a static KV cache, one token per step: the ratio of
        times is torch's tokens/s over ember's (target: <= 0.67, i.e. >= 1.5x torch's tokens/s).
    lstm_fwd_bwd: nn.LSTM(128, 128, num_layers=2), sequence 16, batch 16 (target <= 1.0).
    embed_gather_step: Embedding(1000, 64) of (32, 16) ids, max over the sequence, Linear(64, 10),
        the loss picked with gather, SGD: index arrays as graph values (these broke the graph
        before session 11).
    resnet18_step: a CIFAR ResNet-18 SGD step, batch 8 (only with --only; its cold compile is what
        bench_compile_cache.py measures).
ember compiles with fullgraph=True: a row that does not capture as one graph raises.

Run: python benchmarks/bench_compile.py [--repeat N] [--number N] [--cpu-time] [--no-inductor] [--mode M]
Prints a table (with the CPU's name) and one JSON line.
"""
import argparse
import json
import os
import time
import timeit


def mlp_digits_step(lib, weights, data):
    """One training step of the digits MLP in ``lib`` (ember or torch)."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    return _classifier_step(lib, model, weights, data, lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9))


def lenet_step(lib, weights, data):
    """One Adam step of LeNet-5 (the lenet milestone's network) on a batch of 32x32 images."""
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                          nn.ReLU(), nn.Linear(84, 10))
    return _classifier_step(lib, model, weights, data, lib.optim.Adam(model.parameters(), lr=1e-3))


def resnet18_step(lib, weights, data):
    """One SGD (Nesterov momentum, weight decay) step of a CIFAR ResNet-18 (BasicBlock x [2, 2, 2, 2],
    BatchNorm, 11M parameters) on a batch of 8 3x32x32 images: a large graph, for cold compile times
    (``bench_compile_cache.py resnet18_step``); in this table only with ``--only resnet18_step``."""
    nn, F = lib.nn, lib.nn.functional

    def block(inp, planes, stride):
        conv_bn = lambda i, o, k, s: [nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o)]  # noqa: E731
        body = nn.Sequential(*conv_bn(inp, planes, 3, stride), nn.ReLU(), *conv_bn(planes, planes, 3, 1))
        shortcut = nn.Sequential(*conv_bn(inp, planes, 1, stride)) if stride != 1 or inp != planes else nn.Identity()
        return nn.ModuleDict({"body": body, "shortcut": shortcut})

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
            sizes = [(64, 64, 1), (64, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1),
                     (256, 512, 2), (512, 512, 1)]
            self.blocks = nn.ModuleList([block(*size) for size in sizes])
            self.linear = nn.Linear(512, 10)

        def forward(self, x):
            x = self.stem(x)
            for b in self.blocks:
                x = F.relu(b["body"](x) + b["shortcut"](x))
            return self.linear(F.adaptive_avg_pool2d(x, 1).flatten(1))
    model = ResNet18()
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
    return _classifier_step(lib, model, weights, data, optimizer)


def _classifier_step(lib, model, weights, data, optimizer):
    model.load_state_dict({name: lib.tensor(value) for name, value in weights(model).items()})
    x, y = lib.tensor(data["x"]), lib.tensor(data["y"])

    def step():
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
    return step


def _layer_step(lib, layer, weights, data):
    """Forward and backward of ``layer(x).sum()`` into the input's and the layer's gradients."""
    layer.load_state_dict({name: lib.tensor(value) for name, value in weights(layer).items()})
    x = lib.tensor(data["x"], requires_grad=True)

    def step():
        layer.zero_grad()
        x.grad = None
        out = layer(x)
        total = (out[0] if isinstance(out, tuple) else out).sum()
        total.backward()
        return total
    return step


def conv2d_fwd_bwd(lib, weights, data):
    """Conv2d(16, 32, 3, padding=1) forward + backward."""
    return _layer_step(lib, lib.nn.Conv2d(16, 32, 3, padding=1), weights, data)


def depthwise_fwd_bwd(lib, weights, data):
    """Depthwise Conv2d(32, 32, 3, padding=1, groups=32) forward + backward."""
    return _layer_step(lib, lib.nn.Conv2d(32, 32, 3, padding=1, groups=32), weights, data)


def lstm_fwd_bwd(lib, weights, data):
    """2-layer LSTM(128, 128) forward + backward of the output's sum."""
    return _layer_step(lib, lib.nn.LSTM(128, 128, num_layers=2), weights, data)


GPT_SIZES = dict(vocab_size=96, block_size=64, n_layer=2, n_head=4, n_embd=128)


def _gpt_module(lib):
    """ember/models/gpt.py in ``lib`` (the same file with its imports pointed at torch)."""
    from bench_gpt import gpt_modules
    return gpt_modules()[0 if lib.__name__ == "ember" else 1]


def _gpt(lib, weights, block_size):
    """The GPT of ember/models/gpt.py in ``lib``, with the shared weights."""
    gpt = _gpt_module(lib)
    model = gpt.GPT(gpt.GPTConfig(**dict(GPT_SIZES, block_size=block_size)))
    model.load_state_dict({name: lib.tensor(value) for name, value in weights(model).items()})
    return model


def gpt_train_step(lib, weights, data):
    """One AdamW step of the tiny GPT (2 layers, 4 heads, n_embd 128) on a (16, 64) batch."""
    model = _gpt(lib, weights, 64)
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3)
    idx, targets = lib.tensor(data["idx"]), lib.tensor(data["targets"])

    def step():
        optimizer.zero_grad()
        _, loss = model(idx, targets)
        loss.backward()
        optimizer.step()
        return loss
    return step


def gpt_decode_token(lib, weights, data):
    """Greedy KV-cache generation, one token per step (batch 1), of the tiny GPT with block size
    256: the cache is static (ember.models.gpt.StaticKVDecoder: every position allocated, the new
    key and value written where a one-hot position mask is set, attention masked to the positions
    written so far), so each step has the same shapes and compiles once (gpt-fast's static cache).
    tokens/s = 1/time."""
    decoder = _gpt_module(lib).StaticKVDecoder(_gpt(lib, weights, 256).eval())
    caches, block_size = decoder.new_caches(1), len(decoder.slots)
    positions = [lib.tensor([t]) for t in range(block_size)]
    state = {"t": 0, "token": lib.tensor(data["prompt"])}

    def decode(token, position):
        return decoder.decode(token, position, caches)

    def step(run=decode):
        with lib.no_grad():
            state["token"] = run(state["token"], positions[state["t"]])
        state["t"] = (state["t"] + 1) % block_size
        return state["token"]
    step.decode, step.caches = decode, caches
    return step


def embed_gather_step(lib, weights, data):
    """Embedding(1000, 64) of (32, 16) ids, max over the sequence, Linear(64, 10), negative
    log-likelihood picked with gather, SGD (lr 0.1)."""
    nn = lib.nn
    model = nn.ModuleDict({"embed": nn.Embedding(1000, 64), "out": nn.Linear(64, 10)})
    model.load_state_dict({name: lib.tensor(value) for name, value in weights(model).items()})
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    ids, y = lib.tensor(data["ids"]), lib.tensor(data["y"])

    def step():
        h = model["embed"](ids).max(dim=1).values
        logp = nn.functional.log_softmax(model["out"](h), dim=1)
        loss = -logp.gather(1, y).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
    return step


def _embed_data(np):
    rng = np.random.default_rng(0)
    return {"ids": rng.integers(0, 1000, (32, 16)), "y": rng.integers(0, 10, (32, 1))}


def _classifier_data(shape):
    def make(np):
        rng = np.random.default_rng(0)
        return {"x": rng.standard_normal(shape).astype(np.float32), "y": rng.integers(0, 10, shape[0])}
    return make


def _input_data(shape):
    return lambda np: {"x": np.random.default_rng(0).standard_normal(shape).astype(np.float32)}


def _gpt_data(np):
    rng = np.random.default_rng(0)
    return {"idx": rng.integers(0, 96, (16, 64)), "targets": rng.integers(0, 96, (16, 64)),
            "prompt": rng.integers(0, 96, (1, 1))}


# name -> (build(lib, weights, data) -> step, data(np)); each step is one graph under fullgraph=True.
WORKLOADS = {
    "mlp_digits_step": (mlp_digits_step, _classifier_data((32, 64))),
    "lenet_step": (lenet_step, _classifier_data((32, 1, 32, 32))),
    "conv2d_fwd_bwd": (conv2d_fwd_bwd, _input_data((8, 16, 32, 32))),
    "depthwise_fwd_bwd": (depthwise_fwd_bwd, _input_data((32, 32, 16, 16))),
    "gpt_train_step": (gpt_train_step, _gpt_data),
    "gpt_decode_token": (gpt_decode_token, _gpt_data),
    "lstm_fwd_bwd": (lstm_fwd_bwd, _input_data((16, 16, 128))),
    "embed_gather_step": (embed_gather_step, _embed_data),
    "resnet18_step": (resnet18_step, _classifier_data((8, 3, 32, 32))),
}
OPT_IN = {"resnet18_step"}  # rows run only when --only names them


def compiled(lib, step, **options):
    """``lib.compile`` of a workload's step (of its decode function for the generation row)."""
    if hasattr(step, "decode"):
        run = lib.compile(step.decode, **options)
        return lambda: step(run)
    return lib.compile(step, **options)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def best_times(steps, number, repeat, timer):
    times = [float("inf")] * len(steps)
    for _ in range(repeat):
        for i, step in enumerate(steps):
            step()
            times[i] = min(times[i], timeit.timeit(step, number=number, timer=timer) / number)
    return times


def first_calls(step, calls=2):
    """Wall time of the first ``calls`` calls (capture and compilation happen there)."""
    start = time.perf_counter()
    for _ in range(calls):
        step()
    return time.perf_counter() - start


def _cell(value, width, spec, unit=""):
    return f"{'-':>{width}}" if value != value else f"{format(value, spec) + unit:>{width}}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds; the best counts")
    parser.add_argument("--number", type=int, default=20, help="steps per round")
    parser.add_argument("--cpu-time", action="store_true", help="one thread each, timed by process CPU time")
    parser.add_argument("--no-inductor", action="store_true", help="skip torch.compile (it compiles for 10-60 s)")
    parser.add_argument("--only", nargs="+", choices=list(WORKLOADS), help="these rows only")
    parser.add_argument("--mode", help="ember.compile's mode for the compiled column (default: the cost models)")
    args = parser.parse_args()
    if args.cpu_time:
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    import numpy as np
    import torch

    import ember
    if args.cpu_time:
        torch.set_num_threads(1)
    timer = time.process_time if args.cpu_time else time.perf_counter
    columns = ["ember eager", "ember compiled", "torch eager", "torch.compile"]
    print(f"CPU: {cpu_name()}; timer: {'process CPU time, 1 thread' if args.cpu_time else 'wall'}")
    print(f"{'workload (ms/step)':<20}" + "".join(f"{c:>16}" for c in columns)
          + f"{'compile ember':>15}{'compile torch':>15}" + "".join(f"{c + ' /t':>18}" for c in columns[:2] + columns[3:]))
    results = {}
    for name, (build, make_data) in WORKLOADS.items():
        if (name not in args.only) if args.only else name in OPT_IN:
            continue
        data = make_data(np)
        torch.manual_seed(0)
        reference = {}

        def weights(model):
            if not reference:  # the first library to ask (torch) draws them; the other copies
                reference.update({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
            return reference
        torch_eager = build(torch, weights, data)
        steps = [build(ember, weights, data), compiled(ember, build(ember, weights, data), fullgraph=True,
                                                       mode=args.mode), torch_eager]
        compile_times = [first_calls(steps[1]) - first_calls(steps[0])]
        if not args.no_inductor:
            steps.append(compiled(torch, build(torch, weights, data)))
            compile_times.append(first_calls(steps[3]) - first_calls(steps[2]))
        for step in steps:
            step()
        times = best_times(steps, args.number, args.repeat, timer)
        times += [float("nan")] * (4 - len(times))
        compile_times += [float("nan")] * (2 - len(compile_times))
        ratios = [times[0] / times[2], times[1] / times[2], times[3] / times[2]]
        print(f"{name:<20}" + "".join(_cell(t * 1e3, 16, ".3f") for t in times)
              + "".join(_cell(c, 15, ".2f", "s") for c in compile_times) + "".join(_cell(r, 18, ".2f") for r in ratios))
        results[name] = {"ms": [round(t * 1e3, 4) for t in times], "compile_s": [round(c, 3) for c in compile_times],
                         "over_torch_eager": [round(r, 3) for r in ratios]}
    print(json.dumps({"benchmark": "compile", "cpu": cpu_name(), "timer": "cpu" if args.cpu_time else "wall",
                      "columns": columns, "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "results": results}))


if __name__ == "__main__":
    main()
