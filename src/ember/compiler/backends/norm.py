"""The C kernel of layer norm's backward (``NormalizeBackward`` of :mod:`ember._ops.norm` over
trailing axes, with or without elementwise weight and bias, centred or RMS).

Per row of M normalised elements, with ``xhat = (x - mean) * invstd`` and ``gh = g * weight``:
``grad x = invstd * (gh - sum(gh) / M - xhat * sum(gh * xhat) / M)`` (no ``sum(gh)`` term
for RMS norm), one pass for the two sums and one for the result; ``grad weight`` (the sum of
``g * xhat`` over rows) and ``grad bias`` (of ``g``) accumulate in the same passes. Eagerly it is
a dozen NumPy array operations over the activations.
"""
import numpy as np

from ..symbolic import Expr
from .kernels import CTYPES, c_literal, norm_backward_operands as _operands
from .python import label
from .plan import _numel
from .toolchain import simd_reduction

__all__ = ["norm_backward_kernel"]


def norm_backward_kernel(src, node, fname, results):
    """``results``: result index -> the Loc it is written to (the getitem nodes picking it)."""
    plan = src.plan
    (g, x, mean, var, weight, bias), (ix, iw, ib) = _operands(node)
    k = node.kwargs
    gl, xl, ml, vl = plan.loc[g], plan.loc[x], plan.loc[mean], plan.loc[var]
    t = CTYPES[xl.dtype]
    sfx = "f" if xl.dtype == np.float32 else ""
    lead = len(xl.shape) - len(k["axes"])
    n, rows = _numel(xl.shape[lead:]), _numel(xl.shape[:lead])  # ints, or expressions of size symbols
    centered = k.get("centered", True)
    w = "w[j]" if weight is not None else "1"
    lines = [f"/* layer norm backward over rows of {n} of {list(xl.shape)}: {label(node)} */",
             f"static void {fname}(void** restrict p) {{",
             f"    const {t}* restrict mean = {src.pointer(ml)} + {ml.offset};",
             f"    const {t}* restrict var = {src.pointer(vl)} + {vl.offset};"]
    if weight is not None:
        wl = plan.loc[weight]
        lines.append(f"    const {t}* restrict w = {src.pointer(wl)} + {wl.offset};")
    for index, name in ((iw, "gw"), (ib, "gb")):
        if index in results:
            lines += [f"    {t}* restrict {name} = {src.pointer(results[index])};",
                      f"    for (long j = 0; j < {n}; j++) {name}[j] = 0;"]
    lines += [f"    for (long r = 0; r < {rows}; r++) {{",
              f"        const {t}* restrict g = {src.pointer(gl)} + {gl.offset} + r*{n};",
              f"        const {t}* restrict x = {src.pointer(xl)} + {xl.offset} + r*{n};",
              f"        const {t} mu = {'mean[r]' if centered else '0'};",
              f"        const {t} invstd = 1 / sqrt{sfx}(var[r] + {c_literal(k['eps'], xl.dtype)});",
              f"        {t} sum_gh = 0, sum_gh_xhat = 0;",
              f"        {simd_reduction('+', 'sum_gh', 'sum_gh_xhat')}",
              f"        for (long j = 0; j < {n}; j++) {{",
              f"            {t} xhat = (x[j] - mu) * invstd, gh = g[j] * {w};",
              "            sum_gh += gh; sum_gh_xhat += gh * xhat;"]
    if iw in results:
        lines.append("            gw[j] += g[j] * xhat;")
    if ib in results:
        lines.append("            gb[j] += g[j];")
    lines.append("        }")
    if ix in results:
        inv_n = f"(({t})1 / {n})" if isinstance(n, Expr) else c_literal(1 / max(n, 1), xl.dtype)
        shift = f"sum_gh * {inv_n}" if centered else "0"
        lines += [f"        {t}* restrict y = {src.pointer(results[ix])} + r*{n};",
                  f"        const {t} a = {shift}, b = sum_gh_xhat * {inv_n};",
                  f"        for (long j = 0; j < {n}; j++)",
                  f"            y[j] = (g[j] * {w} - a - (x[j] - mu) * invstd * b) * invstd;"]
    return lines + ["    }", "}"]
