"""Complex-valued training steps, compiled: what computing complex values as real and
imaginary parts (ember.compiler.complex_decompose) buys over running the complex ops on NumPy
from the generated driver. Two workloads, complex64, backward and SGD in one graph:
  "network": two complex nn.Linear layers with a magnitude gate ``z * sigmoid(|z|)`` and a real
      loss of the output's magnitudes (GEMM-bound);
  "pointwise": a complex elementwise chain of a complex parameter (mul, div, exp, conj, abs).

Rows: ember eager, ember compiled (decomposed: the default), ember compiled with the complex
ops kept whole (the decomposition switched off), torch eager; per step, process CPU time, one
thread, best of ``--repeat`` rounds. Prints a table (with the CPU's name) and one JSON line.

Run: python benchmarks/bench_complex_compile.py [--batch 64] [--width 128] [--repeat 5]
"""
import argparse
import json
import time
import timeit

from threadpoolctl import threadpool_limits

from bench_linalg import cpu_name


def make_step(lib, workload, batch, width, seed=0):
    lib.manual_seed(seed)
    if workload == "network":
        model = lib.nn.Sequential(lib.nn.Linear(width, width, dtype=lib.complex64), Gate(lib),
                                  lib.nn.Linear(width, 10, dtype=lib.complex64))
        x, y = lib.randn(batch, width, dtype=lib.complex64), lib.rand(batch, 10)
        loss_fn = lambda: (model(x).abs() - y).square().mean()  # noqa: E731
        params = list(model.parameters())
    else:
        w = lib.nn.Parameter(lib.randn(batch, width, dtype=lib.complex64))
        x = lib.randn(batch, width, dtype=lib.complex64)
        loss_fn = lambda: ((x * w + x / (w.conj() + 2)) * 0.1).exp().abs().mean()  # noqa: E731
        params = [w]
    opt = lib.optim.SGD(params, lr=0.01, momentum=0.9)

    def step():
        loss = loss_fn()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def Gate(lib):
    class Gate(lib.nn.Module):
        def forward(self, z):
            return z * lib.sigmoid(z.abs())
    return Gate()


def per_step(step, repeat):
    for _ in range(3):  # records, compiles, warms
        step()
    number = max(3, int(0.2 / max(timeit.timeit(step, number=1, timer=time.process_time), 1e-6)))
    return min(timeit.repeat(step, number=number, repeat=repeat, timer=time.process_time)) / number


def main():
    import ember
    import torch
    from ember.compiler import backends
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    threadpool_limits(1)
    torch.set_num_threads(1)
    print(f"CPU: {cpu_name()}  timer: cpu, 1 thread  batch {args.batch}, width {args.width}, complex64")
    print(f"{'':<46}{'per step':>10}{'/ torch':>10}")
    times = {}
    decompose = backends.decompose_complex
    for workload in ("network", "pointwise"):
        shape = (workload, args.batch, args.width)
        rows = {"ember eager": make_step(ember, *shape),
                "ember compiled": ember.compile(make_step(ember, *shape), fullgraph=True)}
        rows = {name: per_step(step, args.repeat) for name, step in rows.items()}
        backends.decompose_complex = lambda graph, log=False: graph  # complex ops run whole, on NumPy
        try:
            ember.compiler.reset()
            rows["ember compiled, complex kept whole"] = per_step(
                ember.compile(make_step(ember, *shape), fullgraph=True), args.repeat)
        finally:
            backends.decompose_complex = decompose
        rows["torch eager"] = per_step(make_step(torch, *shape), args.repeat)
        for name, t in rows.items():
            times[f"{workload}: {name}"] = (t, t / rows["torch eager"])
            print(f"{workload + ': ' + name:<46}{t * 1e3:>8.2f}ms{t / rows['torch eager']:>10.2f}")
    print(json.dumps({"benchmark": "complex_compile", "cpu": cpu_name(), "timer": "cpu",
                      "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                      "seconds": {k: float(f"{v[0]:.4g}") for k, v in times.items()},
                      "over_torch": {k: round(v[1], 3) for k, v in times.items()}}))


if __name__ == "__main__":
    main()
