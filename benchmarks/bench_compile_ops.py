"""One compiled graph per op that used to run as a NumPy call inside compiled graphs, forward
and backward, beside torch eager: the op between elementwise neighbours (``op(x * a) * w``
summed: the compiled forward, then ``backward``: the compiled backward), at a conv net's or a language model's sizes, float32.

  reflect_pad    F.pad(x, (1, 1, 1, 1), mode="reflect"), x [8, 16, 32, 32]
  replicate_pad  F.pad(x, (2, 2, 2, 2), mode="replicate"), x [8, 16, 32, 32]
  roll           x.roll((1, -2), (2, 3)), x [8, 16, 32, 32]
  cumprod        x.cumprod(1), x [512, 32] (the gradient: reversed cumulative sums, O(n))
  index          x[idx], x [4096, 64], idx 1024 rows
  index_put      x.index_put((idx,), v, accumulate=True), x [4096, 64], 1024 rows of v
  embedding      F.embedding(ids, w), w [1000, 64], ids [32, 64]
  asin           torch.asin(x.clamp(-1, 1)), x [256, 1024]
  atan           torch.atan(x), x [256, 1024]
  vector_norm    torch.linalg.vector_norm(x, dim=1), x [256, 1024]
  tan            torch.tan(x), x [256, 1024] (ember_math.h's em_tanf_near in the fused loop);
                 and a row of the compiled forward alone against NumPy's np.tan
  sort           x.sort(dim=1, stable=True).values, x [256, 1024]
  topk           x.topk(16, dim=1).values, x [256, 1024] (a heap of 16 per row in C)
  scatter        x.scatter(0, idx, x[:512]), x [1024, 64], idx [512, 64]
  scatter_add    x.scatter_add(0, idx, x[:512]), as scatter
  scatter_amax   x.scatter_reduce(0, idx, x[:512], "amax", include_self=False), as scatter
  scatter_mean   x.scatter_reduce(0, idx, x[:512], "mean"), as scatter

Times are process CPU time on one thread (other processes on a shared machine do not inflate
them), best of --repeat, each of --number calls; ember compiled and torch eager interleaved.
To compare two trees, run this file with each tree's ``src`` on PYTHONPATH, alternating, in the
same minutes (the rows print the tree they ran). Run: python benchmarks/bench_compile_ops.py
"""
import argparse
import os
import time

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402


def _ops(lib):
    F = lib.nn.functional
    return {
        "reflect_pad": ((8, 16, 32, 32), lambda x, k: F.pad(x, (1, 1, 1, 1), mode="reflect")),
        "replicate_pad": ((8, 16, 32, 32), lambda x, k: F.pad(x, (2, 2, 2, 2), mode="replicate")),
        "roll": ((8, 16, 32, 32), lambda x, k: x.roll((1, -2), (2, 3))),
        "cumprod": ((512, 32), lambda x, k: x.cumprod(1)),
        "index": ((4096, 64), lambda x, k: x[k]),
        "index_put": ((4096, 64), lambda x, k: x.index_put((k,), x[:1024] * 2, accumulate=True)),
        "embedding": ((1000, 64), lambda x, k: F.embedding(k, x)),
        "asin": ((256, 1024), lambda x, k: lib.asin(x.clamp(-1, 1))),
        "atan": ((256, 1024), lambda x, k: lib.atan(x)),
        "vector_norm": ((256, 1024), lambda x, k: lib.linalg.vector_norm(x, dim=1)),
        "tan": ((256, 1024), lambda x, k: lib.tan(x)),
        "sort": ((256, 1024), lambda x, k: x.sort(dim=1, stable=True).values),
        "topk": ((256, 1024), lambda x, k: x.topk(16, dim=1).values),
        "scatter": ((1024, 64), lambda x, k: x.scatter(0, k, x[:512])),
        "scatter_add": ((1024, 64), lambda x, k: x.scatter_add(0, k, x[:512])),
        "scatter_amax": ((1024, 64), lambda x, k: x.scatter_reduce(0, k, x[:512], "amax", include_self=False)),
        "scatter_mean": ((1024, 64), lambda x, k: x.scatter_reduce(0, k, x[:512], "mean")),
    }


def _keys(name, rng):
    if name in ("index", "index_put"):
        return rng.integers(0, 4096, 1024)
    if name == "embedding":
        return rng.integers(0, 1000, (32, 64))
    if name.startswith("scatter"):
        return rng.integers(0, 1024, (512, 64))
    return np.zeros(1, np.int64)


def _step(lib, op, x0, k0, compiled):
    x, k = lib.tensor(x0, requires_grad=True), lib.tensor(k0)
    w = lib.full(op(x.detach(), k).shape, 0.25)

    def forward(x, k):
        return (op(x * 0.5, k) * w).sum()
    if compiled:  # (its loss's backward runs the compiled backward)
        forward = lib.compile(forward, fullgraph=True)

    def run():
        forward(x, k).backward()
        x.grad = None
    for _ in range(3):
        run()
    return run


def _best(fn, repeat, number):
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - start) / number)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--only", nargs="*", help="op names (default: all)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    tree = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
    print(f"ember from {tree}; process CPU time, one thread, best of {args.repeat} x {args.number}")
    print(f"{'op':<14} {'ember compiled us':>18} {'torch eager us':>15} {'ratio':>7}")
    for name, (shape, _) in _ops(ember).items():
        if args.only and name not in args.only:
            continue
        x0, k0 = rng.standard_normal(shape).astype(np.float32), _keys(name, rng)
        ours = _step(ember, _ops(ember)[name][1], x0, k0, True)
        theirs = _step(torch, _ops(torch)[name][1], x0, k0, False)
        times = [[], []]
        for _ in range(2):  # interleaved
            times[0].append(_best(ours, args.repeat, args.number))
            times[1].append(_best(theirs, args.repeat, args.number))
        a, b = min(times[0]) * 1e6, min(times[1]) * 1e6
        print(f"{name:<14} {a:>18.1f} {b:>15.1f} {a / b:>7.2f}")
    if not args.only or "tan" in args.only:
        _tan_against_numpy(rng, args)


def _tan_against_numpy(rng, args):
    """The tan kernel alone: ``tan(x)`` of [256, 1024] float32 (|x| < 4096: em_tanf_near after
    the pass over the arguments) compiled, no gradient, against NumPy's ``np.tan(x, out=y)``."""
    x0 = (rng.standard_normal((256, 1024)) * 3).astype(np.float32)
    x, y = ember.tensor(x0), np.empty_like(x0)
    fn = ember.compile(lambda x: ember.tan(x), fullgraph=True)
    for _ in range(3):
        fn(x)
    times = [[], []]
    for _ in range(2):
        times[0].append(_best(lambda: fn(x), args.repeat, args.number))
        times[1].append(_best(lambda: np.tan(x0, out=y), args.repeat, args.number))
    a, b = min(times[0]) * 1e6, min(times[1]) * 1e6
    print(f"{'tan fwd only':<14} {a:>18.1f} {b:>15.1f} {a / b:>7.2f}  (against NumPy's np.tan, not torch)")


if __name__ == "__main__":
    main()
