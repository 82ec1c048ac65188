"""C kernels for pooling: 2-D max pooling's ``MaxPoolIndices`` (each window's argmax), ``MaxPool``
(its maximum) and ``MaxPoolBackward`` (the gradient scattered to the argmax), and 1-, 2- and 3-D
average pooling's ``AvgPool`` and its gradient ``AvgPoolTranspose`` of :mod:`ember._ops.pool`.

Eager ember visits a window with one NumPy pass per kernel offset over every window at once
(several passes and temporaries per op); here one loop visits each window's taps once. The rules
are eager's (PyTorch's CPU kernels): taps in the padding never win, ties go to the first maximum
(row-major), a NaN wins over any number and among NaNs the last one wins; a window whose real
taps are all -inf reports its first real tap. Any padding, stride, dilation and ceil_mode.

Average pooling follows eager's (PyTorch's) divisor rules: a window's divisor is
``divisor_override`` when given, else its element count, the padding included or not
(``count_include_pad``) but never a ceil_mode window's overhang past the padding. Its sums add
the real taps in eager's order (row-major over the window); the gradient adds each window's
``g / divisor`` to its positions, visiting the windows last first, so every position receives
its shares in the order eager's per-tap passes add them: compiled and eager agree to the bit.
1-D and 2-D windows run as 3-D ones with leading unit dims.

In a graph with size symbols any size may be symbolic: the leading dims (the batch) only count
the planes the loops visit, and the image sizes (``s0``, ``s0 // 2``: C expressions of the sizes
the library's entry points take) bound the window loops, with the clamped taps of any window
(a symbolic size never takes the fixed trip count of windows known to lie inside); the
window's own sizes are known.
"""
import math

import numpy as np

__all__ = ["OPS", "supported", "pool_kernel"]

OPS = ("MaxPool", "MaxPoolIndices", "MaxPoolBackward", "AvgPool", "AvgPoolTranspose")
_AVERAGES = ("AvgPool", "AvgPoolTranspose")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _dtype(node):
    d = node.meta["dtype"]
    return np.dtype(getattr(d, "np", d))


def supported(node):
    """2-D max-pool windows over a float array, argmax positions (``flat=False``) of an integer
    dtype; 1- to 3-D average-pool windows over a float array."""
    k = node.kwargs
    if node.target.name in _AVERAGES:
        return _average_supported(node)
    if len(k.get("kernel_size", ())) != 2:
        return False
    first = node.args[0]
    if not hasattr(first, "meta") or len(first.meta["shape"]) < 2 or _dtype(first) not in _FLOATS:
        return False
    if node.target.name == "MaxPoolIndices":  # flat indices (return_indices, the default) run from Python
        return not k.get("flat", True) and _dtype(node) in (np.dtype(np.uint8), np.dtype(np.int64))
    argmax = node.args[1]
    if node.target.name == "MaxPoolBackward" and not hasattr(argmax, "meta"):
        return False
    return _dtype(node) == _dtype(first)


def pool_kernel(src, node, fname, ctypes):
    """C lines of ``static void fname(void** p)`` computing ``node`` (see :func:`supported`);
    ``ctypes`` maps NumPy dtypes to C type names."""
    name, k = node.target.name, node.kwargs
    if name in _AVERAGES:
        return _average_kernel(src, node, fname, ctypes)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = k["kernel_size"], k["stride"], k["padding"], k["dilation"]
    plan = src.plan
    out = plan.loc[node]

    def pointer(a):
        loc = plan.loc[a]
        return f"{src.pointer(loc)} + {loc.offset}"
    if name == "MaxPoolBackward":
        g, argmax = node.args[0], node.args[1]
        h, w = k["spatial"]
        ho, wo = g.meta["shape"][-2:]
        t, it = ctypes[_dtype(node)], ctypes[_dtype(argmax)]
        planes = math.prod(out.shape[:-2])  # an int, or an expression of size symbols
        return [
            f"/* max-pool gradient {list(g.meta['shape'])} -> {list(out.shape)}: {name}({node.name}) */",
            f"static void {fname}(void** restrict p) {{",
            f"    {t}* restrict y = {src.pointer(out)};",
            f"    const {t}* restrict g = {pointer(g)};",
            f"    const {it}* restrict at = {pointer(argmax)};",
            f"    for (long k = 0; k < {planes * h * w}; k++) y[k] = 0;",
            f"    for (long c = 0; c < {planes}; c++) for (long oh = 0; oh < {ho}; oh++) for (long ow = 0; ow < {wo}; ow++) {{",
            f"        long o = (c*{ho} + oh)*{wo} + ow, tap = (long)at[o];",
            f"        long ih = oh*{sh} - {ph} + (tap / {kw})*{dh}, iw = ow*{sw} - {pw} + (tap % {kw})*{dw};",
            f"        if (ih >= 0 && ih < {h} && iw >= 0 && iw < {w}) {{ y[(c*{h} + ih)*{w} + iw] += g[o]; continue; }}",
            # a window of padding only: torch's index, its starts moved past the left padding,
            # kept when it lies in the plane (eager's _gradient_index)
            f"        long mh = oh*{sh} - {ph}, mw = ow*{sw} - {pw};",
            f"        if (mh < 0) mh += (-mh + {dh - 1}) / {dh} * {dh};",
            f"        if (mw < 0) mw += (-mw + {dw - 1}) / {dw} * {dw};",
            f"        if (mh*{w} + mw < {h * w}) y[c*{h * w} + mh*{w} + mw] += g[o];",
            "    }", "}"]
    x = node.args[0]
    h, w = x.meta["shape"][-2:]
    ho, wo = out.shape[-2:]
    t = ctypes[_dtype(x)]
    planes = math.prod(out.shape[:-2])
    store = "y[o] = best;" if name == "MaxPool" else f"y[o] = ({ctypes[_dtype(node)]})pos;"
    # the first real tap of a window starting at a < 0 (in the left padding) is ceil(-a / d)
    return [
        f"/* max-pool {'argmax' if name == 'MaxPoolIndices' else 'maximum'} {list(x.meta['shape'])} -> "
        f"{list(out.shape)}, kernel ({kh}, {kw}): {name}({node.name}) */",
        f"static void {fname}(void** restrict p) {{",
        f"    {ctypes[_dtype(node)]}* restrict y = {src.pointer(out)};",
        f"    const {t}* restrict x = {pointer(x)};",
        f"    for (long c = 0; c < {planes}; c++) for (long oh = 0; oh < {ho}; oh++) for (long ow = 0; ow < {wo}; ow++) {{",
        f"        const {t}* restrict xp = x + c*{h * w};",
        f"        long h0 = oh*{sh} - {ph}, w0 = ow*{sw} - {pw}, o = (c*{ho} + oh)*{wo} + ow;",
        f"        long fi = h0 < 0 ? (-h0 + {dh - 1}) / {dh} : 0, fj = w0 < 0 ? (-w0 + {dw - 1}) / {dw} : 0;",
        f"        long pos = (fi < {kh} ? fi : {kh - 1})*{kw} + (fj < {kw} ? fj : {kw - 1});",
        f"        {t} best = -INFINITY;",
        "        int have = 0;",
        f"        for (long i = 0; i < {kh}; i++) {{",
        f"            long ih = h0 + i*{dh};",
        f"            if (ih < 0 || ih >= {h}) continue;",
        f"            for (long j = 0; j < {kw}; j++) {{",
        f"                long iw = w0 + j*{dw};",
        f"                if (iw < 0 || iw >= {w}) continue;",
        f"                {t} v = xp[ih*{w} + iw];",
        f"                if (!have || v > best || v != v) {{ best = v; pos = i*{kw} + j; have = 1; }}",
        "            }",
        "        }",
        f"        {store}",
        "    }", "}"]


def _average_supported(node):
    """1- to 3-D windows (their sizes known) over a float array."""
    first, n = node.args[0], len(node.kwargs["kernel_size"])
    if not hasattr(first, "meta") or not 1 <= n <= 3 or len(first.meta["shape"]) < n:
        return False
    return _dtype(first) in _FLOATS and _dtype(node) == _dtype(first)


def _strided(loc, n):
    """(C expression of the first element of plane ``c`` of ``loc``, the element strides of its
    ``n`` trailing dims padded to 3 with zeros): the operand is read where it lies; leading dims
    laid out one after the other count as one."""
    lead = []
    for size, stride in zip(loc.shape[:-n], loc.strides[:-n]):
        if lead and lead[-1][1] == stride * size:
            lead[-1] = (lead[-1][0] * size, stride)
        else:
            lead.append((size, stride))
    terms, below = [], 1
    for i in range(len(lead) - 1, -1, -1):
        at = "c" if below == 1 else f"c / ({below})"
        terms.append(f"({at}{'' if i == 0 else f' % {lead[i][0]}'})*{lead[i][1]}")
        below = below * lead[i][0]
    return " + ".join([str(loc.offset)] + terms[::-1]), (0,) * (3 - n) + tuple(loc.strides[-n:])


def _average_kernel(src, node, fname, ctypes):
    """C of an ``AvgPool`` (each window's sum over its divisor) or ``AvgPoolTranspose`` (each
    window's ``g / divisor`` added to its positions, windows visited last first) over
    (planes, D, H, W): one visit of each window, its taps clamped to the input; a dim whose
    windows never leave the input (no padding, no ceil_mode overhang) has a fixed trip count."""
    name, k = node.target.name, node.kwargs
    n = len(k["kernel_size"])
    unit = (1,) * (3 - n)
    plan = src.plan
    out, x = plan.loc[node], plan.loc[node.args[0]]
    t = ctypes[_dtype(node)]
    size, pooled = x.shape[-n:], out.shape[-n:]
    if name == "AvgPoolTranspose":
        size, pooled = pooled, size
    dims = list(zip("dhw", unit + tuple(k["kernel_size"]), unit + tuple(k["stride"]),
                    (0,) * (3 - n) + tuple(k["padding"]), unit + tuple(size), unit + tuple(pooled)))
    bounds, counts = [], []
    for a, kk, s, p, m, o in dims:
        if not p and isinstance(o, int) and isinstance(m, int) and (o - 1) * s + kk <= m:  # every window inside
            bounds.append(f"{a}lo = o{a}*{s}, {a}hi = {a}lo + {kk}")
            counts.append(str(kk))
            continue
        bounds.append(f"{a}0 = o{a}*{s} - {p}, {a}lo = {a}0 > 0 ? {a}0 : 0, {a}hi = {a}0 + {kk} < {m} ? {a}0 + {kk} : {m}")
        counts.append(f"(({a}0 + {kk} < {m + p} ? {a}0 + {kk} : {m + p}) - {a}0)" if k["count_include_pad"]
                      else f"({a}hi - {a}lo)")  # (never counting a ceil_mode window's overhang)
    divisor = k["divisor_override"] or "*".join(counts)
    (d, h, w), (do, ho, wo) = (unit + tuple(size)), (unit + tuple(pooled))
    planes = math.prod(out.shape[:-n])
    where = f"((c*{do} + od)*{ho} + oh)*{wo} + ow"
    taps = "for (long i = dlo; i < dhi; i++) for (long j = hlo; j < hhi; j++) for (long l = wlo; l < whi; l++)"
    base, (sd, sh, sw) = _strided(x, n)
    head = [f"static void {fname}(void** restrict p) {{",
            f"    {t}* restrict y = {src.pointer(out)};",
            f"    const {t}* restrict x = {src.pointer(x)};"]
    window = [f"        long {b};" for b in bounds]
    if name == "AvgPool":
        return [
            f"/* average pool {list(x.shape)} -> {list(out.shape)}, kernel {tuple(k['kernel_size'])}: "
            f"{name}({node.name}) */", *head,
            f"    for (long c = 0; c < {planes}; c++) for (long od = 0; od < {do}; od++) "
            f"for (long oh = 0; oh < {ho}; oh++) for (long ow = 0; ow < {wo}; ow++) {{",
            f"        const {t}* restrict xp = x + {base};", *window,
            f"        {t} s = 0;",
            f"        {taps}",
            f"            s += xp[i*{sd} + j*{sh} + l*{sw}];",
            f"        y[{where}] = s / ({t})({divisor});",
            "    }", "}"]
    return [
        f"/* average-pool gradient {list(x.shape)} -> {list(out.shape)}, kernel {tuple(k['kernel_size'])}: "
        f"{name}({node.name}) */", *head,
        f"    for (long e = 0; e < {planes * d * h * w}; e++) y[e] = 0;",
        "    /* the windows last first: each position adds its windows' shares in eager's order */",
        f"    for (long c = 0; c < {planes}; c++) for (long od = {do - 1}; od >= 0; od--) "
        f"for (long oh = {ho - 1}; oh >= 0; oh--) for (long ow = {wo - 1}; ow >= 0; ow--) {{",
        f"        {t}* restrict yp = y + c*{d * h * w};", *window,
        f"        {t} v = x[{base} + od*{sd} + oh*{sh} + ow*{sw}] / ({t})({divisor});",
        f"        {taps}",
        f"            yp[(i*{h} + j)*{w} + l] += v;",
        "    }", "}"]
