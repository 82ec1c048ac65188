"""GELU's loops alone, as the C backend writes them (``backends/kernels.ELEMENTWISE``), beside
torch's kernels: the forward ``x * Phi(x)`` (float32: ``em_normal_cdff``; and session 26's
``em_erff`` form), the forward that also keeps the gradient's bracket ``D = Phi(x) + x phi(x)``
(what a compiled training step's epilogue runs since session 27, ``backends/gelu_gradient.py``),
and the gradient ``g * (Phi(x) + x phi(x))`` four ways: ``em_gelu_gradf(x)`` (float32 GeluBackward),
Phi read back as ``output / x`` with ``em_expf`` for phi (session 26's loop, float64's form), Phi
from ``em_erff`` again, and ``g * D`` with D saved by the forward.

Each loop runs over a float32 (rows, 512) array in blocks of 32 rows, the first operand of
each block written just before (copied from one block that stays in cache: a product's
epilogue finds its block there; the other operands come from memory), pre-activations (the
forward's block, x) of standard deviation --std (1 as in a trained network; 0.22 is the GPT
benchmark's initialisation). Times are process CPU time on one thread, rows interleaved, best
and median of --repeat, the block writes' own time subtracted. Run:
python benchmarks/bench_gelu_loops.py [--rows 1024] [--std 1.0] [--repeat 51]
"""
import argparse
import ctypes
import json
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from ember.compiler.backends import toolchain  # noqa: E402
from ember.compiler.backends.kernels import ELEMENTWISE, c_literal  # noqa: E402

F32 = np.dtype(np.float32)
BLOCK_ROWS, COLS = 32, 512
_HALF, _SQRT_HALF = c_literal(0.5, F32), c_literal(0.7071067811865476, F32)
_PDF = f"(em_expf({c_literal(-0.5, F32)} * x[i] * x[i]) * {c_literal(0.3989422804014327, F32)})"
_ERF_CDF = f"({_HALF} * (1 + em_erff({{}} * {_SQRT_HALF})))"
VARIANTS = {  # name -> (operands besides the block, C statement for element i)
    "forward": ((), f"b[i] = {ELEMENTWISE['Gelu'](['b[i]'], {}, F32)};"),
    "forward, erf (s26)": ((), f"b[i] = b[i] * {_ERF_CDF.format('b[i]')};"),
    "forward, D kept": (("p",), f"{{ float v = b[i]; b[i] = {ELEMENTWISE['Gelu'](['v'], {}, F32)}; "
                                f"p[i] = {ELEMENTWISE['GeluBackward'](['1.0f', 'v'], {}, F32)}; }}"),
    "grad": (("x",), f"b[i] = {ELEMENTWISE['GeluBackward'](['b[i]', 'x[i]'], {}, F32)};"),
    "grad y/x (s26)": (("x", "y"), f"b[i] = b[i] * ((x[i] != 0 ? y[i] / x[i] : {_HALF}) + x[i] * {_PDF});"),
    "grad erf (s26)": (("x",), f"b[i] = b[i] * ({_ERF_CDF.format('x[i]')} + x[i] * {_PDF});"),
    "grad g * D": (("p",), "b[i] = b[i] * p[i];"),
}


def source():
    """One C function per variant: for each block, write it (a copy of z, one block that stays
    in cache: as a product writes its result), then the loop."""
    lines = ['#include "ember_math.h"', '#include "ember_graph.h"',  # EM_NO_CONTRACT, as cgen's loops
             "static void fill(float* restrict b, const float* restrict z, long n) { for (long i = 0; i < n; i++) b[i] = z[i]; }"]
    for k, (name, (args, statement)) in enumerate([("fill", ((), ""))] + list(VARIANTS.items())):
        params = "".join(f", float* restrict {a}0" for a in args)
        offsets = "".join(f" float* restrict {a} = {a}0 + s;" for a in args)
        body = f"for (long i = 0; i < m; i++) {statement}" if statement else ""
        lines.append(f"EM_NO_CONTRACT void v{k}(float* restrict b0, const float* restrict z{params}, long n, long m) {{"
                     f" for (long s = 0; s < n; s += m) {{ float* restrict b = b0 + s;{offsets} fill(b, z, m); {body} }} }}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--std", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=51)
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    lib = toolchain.build(source(), toolchain.find_compiler())[0]
    rng = np.random.default_rng(0)
    n, m = args.rows * COLS, BLOCK_ROWS * COLS
    x, z = ((rng.standard_normal(size) * args.std).astype(np.float32) for size in (n, m))
    y = torch.nn.functional.gelu(torch.from_numpy(x)).numpy()
    b, phi = np.empty(n, np.float32), np.empty(n, np.float32)
    ptr = {"x": x.ctypes.data, "y": y.ctypes.data, "p": phi.ctypes.data}
    head = (ctypes.c_void_p(b.ctypes.data), ctypes.c_void_p(z.ctypes.data))
    calls = {"fill": lambda: lib.v0(*head, ctypes.c_long(n), ctypes.c_long(m))}
    for k, (name, (operands, _)) in enumerate(VARIANTS.items(), 1):
        fn, ops = getattr(lib, f"v{k}"), [ctypes.c_void_p(ptr[a]) for a in operands]
        calls[name] = lambda fn=fn, ops=ops: fn(*head, *ops, ctypes.c_long(n), ctypes.c_long(m))
    tx, tg = torch.from_numpy(x), torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    calls["torch gelu"] = lambda: torch.nn.functional.gelu(tx)
    calls["torch gelu_backward"] = lambda: torch.ops.aten.gelu_backward(tg, tx)
    times = {name: [] for name in calls}
    for _ in range(args.repeat):
        for name, call in calls.items():
            t0 = time.process_time()
            call()
            times[name].append(time.process_time() - t0)
    fill = min(times["fill"])
    ms = {}
    print(f"{n} floats, std {args.std}, process CPU time, 1 thread; ms (best, median), block writes "
          f"({fill * 1e3:.3f} ms) subtracted from ember's rows")
    for name, ts in times.items():
        if name != "fill":
            less = 0.0 if name.startswith("torch") else fill
            ms[name] = round((min(ts) - less) * 1e3, 4)
            print(f"  {name:22s} {(min(ts) - less) * 1e3:7.3f} {(statistics.median(ts) - less) * 1e3:7.3f}")
    print(json.dumps({"benchmark": "gelu_loops", "floats": n, "std": args.std, "ms": ms}))


if __name__ == "__main__":
    main()
