"""Activations and transcendentals that compiled graphs once ran as NumPy kernels between
their fused C loops (log1p, expm1, softplus, elu, selu, logsigmoid, hardswish, hardtanh, clamp
with tensor bounds, sinh/cosh, asinh/atanh), each in a chain
``op(x * a + b) * 1.5 + x`` forward and backward (the gradient of its sum) on a float32
(256, 1024) input: ember eager, ``ember.compile``'d, torch eager, per step, and the ratio
compiled / torch eager.

Times are process CPU time on one thread (other processes on a shared machine do not inflate
them), rows interleaved, best of --repeat. Run: python benchmarks/bench_fused_activations.py
"""
import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

CHAINS = {
    "log1p": lambda t, F, x: t.log1p(x.abs()), "expm1": lambda t, F, x: t.expm1(x),
    "softplus": lambda t, F, x: F.softplus(x), "elu": lambda t, F, x: F.elu(x), "selu": lambda t, F, x: F.selu(x),
    "logsigmoid": lambda t, F, x: F.logsigmoid(x), "hardswish": lambda t, F, x: F.hardswish(x),
    "hardtanh": lambda t, F, x: F.hardtanh(x), "clamp_tensor": lambda t, F, x: t.clamp(x, -x.abs() * 0.5, x.abs()),
    "cosh": lambda t, F, x: t.cosh(x), "asinh": lambda t, F, x: t.asinh(x), "atanh": lambda t, F, x: t.atanh(x * 0.1),
}


def make_chain(lib, name):
    F = lib.nn.functional
    op = CHAINS[name]

    def chain(x, a, b):
        return op(lib, F, x * a + b) * 1.5 + x

    return chain


def best(fn, number, repeat):
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        times.append((time.process_time() - start) / number)
    return min(times)


def main():
    import ember
    import torch
    torch.set_num_threads(1)
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--only", nargs="*", default=list(CHAINS))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x0 = (rng.standard_normal((256, 1024)) * 2).astype(np.float32)
    a0, b0 = np.float32(0.9), np.float32(0.1)
    print(f"{'chain':14s} {'ember eager':>12s} {'compiled':>10s} {'torch':>10s} {'compiled/torch':>15s}  (ms, CPU time)")
    out = {}
    for name in args.only:
        rows = {}
        for label, lib, fn in (("eager", ember, make_chain(ember, name)),
                               ("compiled", ember, ember.compile(make_chain(ember, name))),
                               ("torch", torch, make_chain(torch, name))):
            x = lib.tensor(x0, requires_grad=True)
            a, b = lib.tensor(a0), lib.tensor(b0)

            def call(fn=fn, x=x, a=a, b=b):
                x.grad = None
                fn(x, a, b).sum().backward()  # compiled: the forward graph, then its compiled backward
            call(), call()  # the compiled one records, then replays
            rows[label] = call
        times = {label: [] for label in rows}
        for _ in range(args.repeat):  # interleaved
            for label, call in rows.items():
                times[label].append(best(call, args.number, 1))
        t = {label: min(v) * 1e3 for label, v in times.items()}
        out[name] = t
        print(f"{name:14s} {t['eager']:12.2f} {t['compiled']:10.2f} {t['torch']:10.2f} {t['compiled'] / t['torch']:15.2f}")
    print(json.dumps({"benchmark": "fused_activations", "ms": out}))


if __name__ == "__main__":
    main()
