"""The C kernel of layer norm's backward (``NormalizeBackward`` of :mod:`ember._ops.norm` over
trailing axes, with or without elementwise weight and bias, centred or RMS), and batch norm's
statistics and backward (``NormStats`` and ``NormalizeBackward`` over every axis but the
channels, axis 1, of a contiguous (N, C, *) array: :func:`.kernels.channel_axes`).

Per row of M normalised elements, with ``xhat = (x - mean) * invstd`` and ``gh = g * weight``:
``grad x = invstd * (gh - sum(gh) / M - xhat * sum(gh * xhat) / M)`` (no ``sum(gh)`` term
for RMS norm), one pass for the two sums and one for the result; ``grad weight`` (the sum of
``g * xhat`` over rows) and ``grad bias`` (of ``g``) accumulate in the same passes. Eagerly it is
a dozen NumPy array operations over the activations.
"""
import re

import numpy as np

from ..symbolic import Expr
from .kernels import CTYPES, c_literal, norm_backward_operands as _operands
from .python import label
from .plan import _numel
from .toolchain import simd_reduction

__all__ = ["norm_backward_kernel", "channel_stats_kernel", "channel_backward_kernel", "support"]


def _channel_sizes(shape):
    """(N, C, positions per sample and channel) of a (N, C, *) shape, ints or size expressions."""
    return shape[0], shape[1], _numel(shape[2:])


def channel_stats_kernel(src, node, fname):
    """Batch norm's statistics: per channel c of a contiguous (N, C, *) ``x``, the mean and the
    biased variance (two passes, the deviations' squares in the second; mean 0 and the mean
    square when not ``centered``) over the N*H*W values, accumulated in double, into one
    buffer: the C means, then the C variances (``em_bn_stats_<t>``, :func:`support`)."""
    plan = src.plan
    x, out = plan.loc[node.args[0]], plan.loc[node]
    t = CTYPES[out.dtype]
    n, c, hw = _channel_sizes(x.shape)
    return [f"/* batch norm's mean and variance per channel of {list(x.shape)}: {label(node)} */",
            f"static void {fname}(void** restrict p) {{",
            f"    em_bn_stats_{t}({src.pointer(x)} + {x.offset}, {src.pointer(out)}, {n}, {c}, {hw}, "
            f"{int(node.kwargs.get('centered', True))});", "}"]


def _backward_operands(node, plan):
    """A norm backward ``node``'s operands, its results' indices, the Locs of its gradient, input,
    mean and var, their C type and the float functions' suffix ("f" for float32)."""
    (g, x, mean, var, weight, bias), outs = _operands(node)
    locs = plan.loc[g], plan.loc[x], plan.loc[mean], plan.loc[var]
    dtype = locs[1].dtype
    return (g, x, mean, var, weight, bias), outs, locs, CTYPES[dtype], "f" if dtype == np.float32 else ""


def _statistics(src, node, index, weight, ml, vl, t, sfx):
    """A norm backward's C lines: the pointers ``mean``, ``var`` and (with a ``weight``) ``w``,
    declared before the loop over the statistics (Locs ``ml``, ``vl``; C type ``t``); then,
    inside it, ``mu`` and ``invstd`` of statistic ``index`` (a C index: "r", "ch")."""
    lines = [f"    const {t}* restrict mean = {src.pointer(ml)} + {ml.offset};",
             f"    const {t}* restrict var = {src.pointer(vl)} + {vl.offset};"]
    if weight is not None:
        wl = src.plan.loc[weight]
        lines.append(f"    const {t}* restrict w = {src.pointer(wl)} + {wl.offset};")
    centered, eps = node.kwargs.get("centered", True), c_literal(node.kwargs["eps"], ml.dtype)
    return lines, [f"        const {t} mu = {f'mean[{index}]' if centered else '0'};",
                   f"        const {t} invstd = 1 / sqrt{sfx}(var[{index}] + {eps});"]


def channel_backward_kernel(src, node, fname, results):
    """Batch norm's backward per channel (:func:`.kernels.channel_axes`; ``results`` as for
    :func:`norm_backward_kernel`): with ``xhat = (x - mean) * invstd`` over the channel's
    M = N*H*W values, ``grad weight = sum(g * xhat)``, ``grad bias = sum(g)`` (accumulated in
    double) and ``grad x = invstd * (w g - w sum(g) / M - xhat * w sum(g xhat) / M)``
    (``em_bn_backward_<t>``, :func:`support`; a result not wanted is a null pointer)."""
    plan, k = src.plan, node.kwargs
    (g, x, mean, var, weight, bias), (ix, iw, ib), (gl, xl, ml, vl), t, _ = _backward_operands(node, plan)
    n, c, hw = _channel_sizes(xl.shape)
    w = f"{src.pointer(plan.loc[weight])} + {plan.loc[weight].offset}" if weight is not None else "0"
    outs = [src.pointer(results[i]) if i in results else "0" for i in (ix, iw, ib)]
    operands = [f"{src.pointer(loc)} + {loc.offset}" for loc in (ml, vl, gl, xl)]
    return [f"/* batch norm backward per channel of {list(xl.shape)}: {label(node)} */",
            f"static void {fname}(void** restrict p) {{",
            f"    em_bn_backward_{t}({', '.join(operands + [w] + outs)}, {n}, {c}, {hw}, "
            f"{c_literal(k['eps'], xl.dtype)}, {int(k.get('centered', True))});", "}"]


# The batch norm kernels' loops, shape-generic (session 31): one function per dtype in a unit
# of its own, the same text in every graph (cgen links it from the compile cache), each node's
# kernel one call with its sizes; per shape they had been 0.4 s of a CIFAR ResNet-18 step's gcc.
_CALL = re.compile(r"\bem_bn_(?:stats|backward)_(float|double)\(")


def _functions(t):
    """C of ``em_bn_stats_<t>`` and ``em_bn_backward_<t>`` (see the kernels above)."""
    a, sfx = "double", "f" if t == "float" else ""  # a channel sums N*H*W values: double, as torch's CPU kernels
    loops = ["        for (long s = 0; s < n; s++) {",
             f"            const {t}* restrict xs = x + (s*c + ch)*hw;"]
    return "\n".join([
        f"void em_bn_stats_{t}(const {t}* restrict x, {t}* restrict stats, long n, long c, long hw, int centered) {{",
        f"    const {a} count = ({a})n*hw > 0 ? ({a})n*hw : 1;",
        "    for (long ch = 0; ch < c; ch++) {",
        f"        {a} sum = 0, var = 0;",
        "        if (centered)", *loops, f"            {simd_reduction('+', 'sum')}",
        "            for (long j = 0; j < hw; j++) sum += xs[j];", "        }",
        f"        const {a} mean = sum / count;",
        *loops, f"            {simd_reduction('+', 'var')}",
        f"            for (long j = 0; j < hw; j++) {{ {a} d = xs[j] - mean; var += d * d; }}", "        }",
        f"        stats[ch] = ({t})mean;",
        f"        stats[c + ch] = ({t})(var / count);",
        "    }", "}",
        f"void em_bn_backward_{t}(const {t}* restrict mean, const {t}* restrict var, const {t}* restrict g,",
        f"                        const {t}* restrict x, const {t}* restrict w, {t}* restrict gx, {t}* restrict gw,",
        f"                        {t}* restrict gb, long n, long c, long hw, {t} eps, int centered) {{",
        f"    const {a} count = ({a})n*hw > 0 ? ({a})n*hw : 1;",
        "    for (long ch = 0; ch < c; ch++) {",
        f"        const {t} mu = centered ? mean[ch] : 0;",
        f"        const {t} invstd = 1 / sqrt{sfx}(var[ch] + eps);",
        f"        const {t} wc = w ? w[ch] : 1;",
        f"        {a} sum_g = 0, sum_gx = 0;",
        "        for (long s = 0; s < n; s++) {",
        "            const long o = (s*c + ch)*hw;",
        f"            {simd_reduction('+', 'sum_g', 'sum_gx')}",
        "            for (long j = 0; j < hw; j++) { sum_g += g[o + j]; sum_gx += g[o + j] * (x[o + j] - mu); }",
        "        }",
        f"        if (gw) gw[ch] = ({t})(sum_gx * invstd);",
        f"        if (gb) gb[ch] = ({t})sum_g;",
        "        if (!gx) continue;",
        f"        const {t} a = centered ? ({t})(wc * sum_g / count) : 0, b = ({t})(wc * sum_gx * invstd / count) * invstd;",
        "        for (long s = 0; s < n; s++) {",
        "            const long o = (s*c + ch)*hw;",
        "            for (long j = 0; j < hw; j++)",
        "                gx[o + j] = (g[o + j] * wc - a - (x[o + j] - mu) * b) * invstd;",
        "        }",
        "    }", "}", ""])


def support(program):
    """(declarations, units) of the shape-generic batch norm functions ``program`` (C text)
    calls: their prototypes, for every unit; one unit per dtype called, the same text in every
    graph (its object, cached by content, compiles once and every later graph links it)."""
    used = sorted(set(_CALL.findall(program)))
    declarations = [f"void em_bn_stats_{t}(const {t}* restrict x, {t}* restrict stats, long n, long c, long hw, int centered);\n"
                    f"void em_bn_backward_{t}(const {t}* restrict mean, const {t}* restrict var, const {t}* restrict g, "
                    f"const {t}* restrict x, const {t}* restrict w, {t}* restrict gx, {t}* restrict gw, {t}* restrict gb, "
                    f"long n, long c, long hw, {t} eps, int centered);\n" for t in used]
    return "".join(declarations), [_functions(t) for t in used]


def norm_backward_kernel(src, node, fname, results):
    """Layer norm's (and RMS norm's) backward over the trailing ``axes``, row by row of their
    M elements: ``grad x`` (per row, from the row's two sums) and ``grad weight`` and ``grad
    bias`` (accumulated over the rows in the same pass), in the input's type. ``results``:
    result index -> the Loc it is written to (the getitem nodes picking it); a gradient not
    there is not computed."""
    (g, x, mean, var, weight, bias), (ix, iw, ib), (gl, xl, ml, vl), t, sfx = _backward_operands(node, src.plan)
    lead = len(xl.shape) - len(node.kwargs["axes"])
    n, rows = _numel(xl.shape[lead:]), _numel(xl.shape[:lead])  # ints, or expressions of size symbols
    centered = node.kwargs.get("centered", True)
    w = "w[j]" if weight is not None else "1"
    pointers, per_row = _statistics(src, node, "r", weight, ml, vl, t, sfx)
    lines = [f"/* layer norm backward over rows of {n} of {list(xl.shape)}: {label(node)} */",
             f"static void {fname}(void** restrict p) {{", *pointers]
    for index, name in ((iw, "gw"), (ib, "gb")):
        if index in results:
            lines += [f"    {t}* restrict {name} = {src.pointer(results[index])};",
                      f"    for (long j = 0; j < {n}; j++) {name}[j] = 0;"]
    lines += [f"    for (long r = 0; r < {rows}; r++) {{",
              f"        const {t}* restrict g = {src.pointer(gl)} + {gl.offset} + r*{n};",
              f"        const {t}* restrict x = {src.pointer(xl)} + {xl.offset} + r*{n};", *per_row,
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
