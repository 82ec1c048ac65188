"""ember's eager per-op cost against torch's, op by op, in one process: what a single dispatch
costs on tiny tensors, where the Python around the kernel is the whole time.

Cases (8x8 float32 unless said):
  add            a + b
  mul_scalar     a * 2.0
  relu           a.relu()
  sum            a.sum()
  view           a.view(64)
  slice          a[1:]
  matmul         a @ b
  add_bcast      a + bias (bias of shape (8,))
  *_grad         the same op on w, which requires grad (records a node): add_grad is a + w
  mm_sum_bwd     (a @ w).sum().backward()
  mlp_step       one training step of bench_compile.py's digits MLP (mlp_digits_step: forward,
                 cross-entropy, backward, SGD with momentum), eager
  gpt_decode     one greedy decode token of the tiny GPT (benchmarks/bench_compile.py's
                 gpt_decode_token row, eager; in milliseconds, with --gpt)

Each figure is the best of ``--repeat`` rounds of ``--number`` calls, ember and torch taking
turns so that both see the same load. ``--cpu-time`` times process CPU time with one thread
each (other processes on a shared machine inflate it less than wall time). Prints the CPU's
name, one row per case (ember us, torch us, ember/torch) and one JSON line of ember's figures.

Run: python benchmarks/bench_eager_ops.py [--repeat N] [--number N] [--cpu-time] [--gpt] [--ember-only]
"""
import argparse
import json
import os
import sys
import time
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compile import cpu_name  # noqa: E402  (the benchmarks folder is not a package)


def cases(lib):
    """name -> (zero-argument function, calls per round) for library ``lib``."""
    rng = np.random.default_rng(0)
    a, b = (lib.tensor(rng.standard_normal((8, 8)).astype(np.float32)) for _ in range(2))
    bias = lib.tensor(rng.standard_normal(8).astype(np.float32))
    w = lib.tensor(rng.standard_normal((8, 8)).astype(np.float32), requires_grad=True)

    def mm_sum_bwd():
        (a @ w).sum().backward()
    return {
        "add": (lambda: a + b, 2000),
        "mul_scalar": (lambda: a * 2.0, 2000),
        "relu": (lambda: a.relu(), 2000),
        "sum": (lambda: a.sum(), 2000),
        "view": (lambda: a.view(64), 2000),
        "slice": (lambda: a[1:], 2000),
        "matmul": (lambda: a @ b, 2000),
        "add_bcast": (lambda: a + bias, 2000),
        "add_grad": (lambda: a + w, 2000),
        "mul_scalar_grad": (lambda: w * 2.0, 2000),
        "relu_grad": (lambda: w.relu(), 2000),
        "sum_grad": (lambda: w.sum(), 2000),
        "slice_grad": (lambda: w[1:], 2000),
        "matmul_grad": (lambda: a @ w, 2000),
        "mm_sum_bwd": (mm_sum_bwd, 200),
    }


def workload(lib, name, reference):
    """bench_compile's eager step ``name`` in ``lib``; ``reference`` (a dict, filled by the
    first library to ask) holds the weights both libraries load."""
    import bench_compile
    build, data = bench_compile.WORKLOADS[name]

    def weights(model):
        if not reference:
            rng = np.random.default_rng(1)
            reference.update({name: (rng.standard_normal(tuple(p.shape)) * 0.05).astype(np.float32)
                              for name, p in model.state_dict().items()})
        return reference
    return build(lib, weights, data(np))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpt", action="store_true", help="also the GPT decode token (eager)")
    parser.add_argument("--ember-only", action="store_true", help="time ember alone (no torch)")
    parser.add_argument("--cpu-time", action="store_true", help="one thread each, timed by process CPU time")
    parser.add_argument("--repeat", type=int, default=7, help="rounds; the best counts")
    parser.add_argument("--number", type=float, default=1.0, help="scales the calls per round")
    args = parser.parse_args()
    import ember
    libs = [ember]
    if not args.ember_only:
        try:
            import torch
            libs.append(torch)
        except ImportError:
            pass
    timer = timeit.default_timer
    if args.cpu_time:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
        if len(libs) > 1:
            libs[1].set_num_threads(1)
        timer = time.process_time
    tables = [cases(lib) for lib in libs]
    steps = {"mlp_step": ("mlp_digits_step", 50)}
    if args.gpt:
        steps["gpt_decode"] = ("gpt_decode_token", 20)
    for row, (name, number) in steps.items():
        reference = {}
        for lib, table in zip(libs, tables):
            table[row] = (workload(lib, name, reference), number)
    best = [{name: float("inf") for name in tables[0]} for _ in libs]
    for _ in range(args.repeat):
        for name in tables[0]:
            for i, table in enumerate(tables):
                fn, number = table[name]
                number = max(1, int(number * args.number))
                fn()
                best[i][name] = min(best[i][name], timeit.timeit(fn, number=number, timer=timer) / number)
    print(f"CPU: {cpu_name()}; load {os.getloadavg()[0]:.2f}; {'process CPU time' if args.cpu_time else 'wall time'}")
    print(f"{'case':<16} {'ember us':>10} {'torch us':>10} {'ratio':>7}")
    for name in tables[0]:
        scale, unit = (1e3, " ms") if name == "gpt_decode" else (1e6, "")
        e = best[0][name] * scale
        t = best[1][name] * scale if len(libs) > 1 else float("nan")
        print(f"{name:<16} {e:>10.2f} {t:>10.2f} {e / t:>7.2f}{unit}")
    print(json.dumps({"ember": {name: round(best[0][name] * 1e6, 2) for name in tables[0]}}))


if __name__ == "__main__":
    main()
