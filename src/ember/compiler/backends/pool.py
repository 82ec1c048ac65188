"""C kernels for 2-D max pooling: ``MaxPoolIndices`` (each window's argmax), ``MaxPool`` (its
maximum) and ``MaxPoolBackward`` (the gradient scattered to the argmax) of :mod:`ember._ops.pool`.

Eager ember visits a window with one NumPy pass per kernel offset over every window at once
(several passes and temporaries per op); here one loop visits each window's taps once. The rules
are eager's (PyTorch's CPU kernels): taps in the padding never win, ties go to the first maximum
(row-major), a NaN wins over any number and among NaNs the last one wins; a window whose real
taps are all -inf reports its first real tap. Any padding, stride, dilation and ceil_mode.
In a graph with size symbols the leading dims (the batch) may be symbolic: they only count the
planes the loops visit; the window's dims are known.
"""
import math

import numpy as np

__all__ = ["OPS", "supported", "pool_kernel"]

OPS = ("MaxPool", "MaxPoolIndices", "MaxPoolBackward")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _dtype(node):
    d = node.meta["dtype"]
    return np.dtype(getattr(d, "np", d))


def supported(node):
    """2-D windows over a float array; argmax positions (``flat=False``) of an integer dtype."""
    k = node.kwargs
    if len(k.get("kernel_size", ())) != 2:
        return False
    first = node.args[0]
    if not hasattr(first, "meta") or len(first.meta["shape"]) < 2 or _dtype(first) not in _FLOATS:
        return False
    if not all(type(n) is int for n in (*first.meta["shape"][-2:], *node.meta["shape"][-2:])):
        return False  # symbolic planes only
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
            f"        if (ih >= 0 && ih < {h} && iw >= 0 && iw < {w}) y[(c*{h} + ih)*{w} + iw] += g[o];",
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
