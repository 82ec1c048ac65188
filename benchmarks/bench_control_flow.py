"""A greedy decoder whose length depends on the data, written with ``while_loop``: ember
compiled (one graph, the loop a single node) vs ember eager vs torch eager, in tokens/s.

The decoder is a small recurrent language model (embedding, tanh cell, output projection)
generating greedily from a start token until it emits the end token or reaches ``--max-len``;
each prompt (a different start token) stops after a different number of steps. The same weights
and the same function run in both libraries (``torch._higher_order_ops.while_loop`` for
torch). Times are the best of ``--repeat`` rounds over all prompts, the variants taking turns;
ember compiled's first call (capture and code generation) is reported apart.

Run: python benchmarks/bench_control_flow.py [--repeat N] [--max-len N]
Prints a table (with the CPU's name) and one JSON line.
"""
import argparse
import json
import time

import numpy as np

VOCAB, HIDDEN, END = 48, 96, 0


def decoder(lib, while_loop, weights, max_len):
    """``generate(start) -> (length, tokens)`` in ``lib`` (ember or torch)."""
    emb, w_h, w_o = (lib.tensor(weights[k]) for k in ("emb", "w_h", "w_o"))
    positions, vocab = lib.arange(max_len), lib.arange(VOCAB)

    def generate(start, hidden):
        def keep_going(i, token, h, out):
            return (i < max_len) & (token != END)

        def step(i, token, h, out):
            h = lib.tanh((vocab == token).to(emb.dtype) @ emb + h @ w_h)  # one-hot: the embedding row
            token = (h @ w_o).argmax()
            return i + 1, token, h, lib.where(positions == i, token, out)

        return while_loop(keep_going, step, (lib.zeros((), dtype=lib.int64), start, hidden,
                                             lib.full((max_len,), -1, dtype=lib.int64)))
    return generate


def _weights():
    rng = np.random.default_rng(0)
    return {"emb": rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32),
            "w_h": (rng.standard_normal((HIDDEN, HIDDEN)) / HIDDEN ** 0.5).astype(np.float32),
            "w_o": rng.standard_normal((HIDDEN, VOCAB)).astype(np.float32)}


def _run(generate, lib, prompts):
    tokens = 0
    for start in prompts:
        n, *_ = generate(lib.tensor(start), lib.zeros(HIDDEN))
        tokens += int(n)
    return tokens


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-len", type=int, default=64)
    args = parser.parse_args()
    import torch
    from torch._higher_order_ops import while_loop as torch_while_loop

    import ember
    torch.set_num_threads(1)
    weights, prompts = _weights(), list(range(1, 17))
    variants = {"ember eager": (decoder(ember, ember.while_loop, weights, args.max_len), ember),
                "torch eager": (decoder(torch, torch_while_loop, weights, args.max_len), torch)}
    compiled = ember.compile(decoder(ember, ember.while_loop, weights, args.max_len), fullgraph=True)
    start = time.perf_counter()
    _run(compiled, ember, prompts[:1])
    compile_s = time.perf_counter() - start
    variants["ember compiled"] = (compiled, ember)
    counts = {name: _run(fn, lib, prompts) for name, (fn, lib) in variants.items()}
    assert len(set(counts.values())) == 1, counts  # the same tokens generated every way
    best = {name: float("inf") for name in variants}
    for _ in range(args.repeat):
        for name, (fn, lib) in variants.items():
            start = time.perf_counter()
            _run(fn, lib, prompts)
            best[name] = min(best[name], time.perf_counter() - start)
    tokens = counts["torch eager"]
    graphs = ember._dynamo.utils.counters["stats"]["unique_graphs"]
    print(f"greedy while_loop decoder, {len(prompts)} prompts, {tokens} tokens; {cpu_name()}")
    print(f"{'variant':<16}{'tokens/s':>12}{'vs torch':>10}")
    for name, seconds in best.items():
        print(f"{name:<16}{tokens / seconds:>12.0f}{best['torch eager'] / seconds:>9.2f}x")
    print(f"ember compiled: {graphs} graph(s), first call {compile_s:.2f} s")
    print(json.dumps({"benchmark": "control_flow_decoder", "cpu": cpu_name(), "tokens": tokens,
                      "tokens_per_s": {k: tokens / v for k, v in best.items()},
                      "compile_s": compile_s, "graphs": graphs}))


if __name__ == "__main__":
    main()
