"""C kernels that move or mask a value's elements into a new buffer: ``Flip`` (the operand read
through negated strides), ``Tril``/``Triu`` (the triangle of the last two dims on one side of
``diagonal`` kept, zeros elsewhere, NaN included, as NumPy's tril/triu) and ``ConstantPad``
(the value everywhere, then the operand, cropped where a pad is negative, into the interior;
its gradient is a ConstantPad too), one loop nest each, so that they no longer run as NumPy
calls between the fused loops. Any dtype with a C type, strided or broadcast operands.

``Pad`` (reflect, replicate, circular), its adjoint ``PadTranspose`` and ``Roll`` map each
output position to the input position it copies, dim by dim (:func:`_source`): reflect
mirrors about the edge (``j < 0``: ``-j``; ``j >= n``: ``2(n - 1) - j``), replicate clamps,
circular and roll wrap once (the op's checks keep every pad within one period, a roll's shift
is taken modulo the size). Negative pads crop as ``ember/_ops/pad.py`` does: reflect and
replicate pad the uncropped input and crop after, circular crops first. ``PadTranspose`` adds
each gradient element into the position its forward read (``y`` zeroed first), in the
gradient's C order into ``-0.0`` (``+0.0`` where a crop leaves a position unread, as eager):
the sums are eager's up to their order (reflect along one dim: the same order, so bit-equal)."""
import numpy as np

from ..._ops.pad import _pad_pairs
from .toolchain import loop_nest

__all__ = ["OPS", "supported", "copy_kernel"]

OPS = ("Flip", "Tril", "Triu", "ConstantPad", "Pad", "PadTranspose", "Roll")
_MAPPED = ("Pad", "PadTranspose", "Roll")


def _dtype(node):
    d = node.meta["dtype"]
    return np.dtype(getattr(d, "np", d))


def supported(node, ctypes):
    """One operand of the result's dtype (a C type) and known sizes; flip's dims are ints,
    tril/triu's diagonal an int over at least two dims, constant pad's pads ints and its value
    a number of the result's kind (an int for integers: a float would be truncated)."""
    x, shape, k, name = node.args[0] if node.args else None, tuple(node.meta["shape"]), node.kwargs, node.target.name
    if len(node.args) != 1 or not hasattr(x, "meta") or _dtype(x) != _dtype(node) or _dtype(node) not in ctypes:
        return False
    if not all(type(n) is int for n in shape + tuple(x.meta["shape"])):
        return False
    if name == "ConstantPad":
        return _pad_ok(node)
    if name in _MAPPED:
        return _mapped_ok(node)
    if tuple(x.meta["shape"]) != shape:
        return False
    if name == "Flip":
        return all(type(d) is int and -len(shape) <= d < len(shape) for d in k.get("dims", ()))
    return len(shape) >= 2 and type(k.get("diagonal", 0)) is int


def _pad_ok(node):
    value, pad, kind = node.kwargs.get("value", 0), tuple(node.kwargs.get("pad", ())), _dtype(node).kind
    return all(type(p) is int for p in pad) and len(pad) % 2 == 0 and len(pad) <= 2 * len(node.meta["shape"]) \
        and (kind == "f" and type(value) in (int, float) or kind == "i" and type(value) is int)


def _mapped_ok(node):
    """Pad/PadTranspose: integer pads, a known mode, and an input with elements wherever the
    output has some; Roll: integer shifts along integer dims (flattened rolls are reshapes)."""
    x, k = node.args[0], node.kwargs
    if 0 in tuple(x.meta["shape"]) and 0 not in tuple(node.meta["shape"]):
        return False
    if node.target.name == "Roll":
        shifts, dims = k.get("shifts"), k.get("dims")
        shifts, dims = (shifts, dims) if isinstance(shifts, tuple) else ((shifts,), (dims,))
        return len(shifts) == len(dims) and all(type(v) is int for v in shifts + dims)
    pad = tuple(k.get("pad", ()))
    return k.get("mode") in ("reflect", "replicate", "circular") and all(type(p) is int for p in pad)


def _source(node, shape):
    """Per dim of the op's loop domain, the C expression of the input index that loop variable
    ``i<d>`` reads (None: itself). ``shape`` is the input's (Pad, Roll) or the result's
    (PadTranspose: the shape of the Pad it is the adjoint of)."""
    out = [None] * len(shape)
    if node.target.name == "Roll":
        for d, s in _shifts(node).items():
            n = shape[d]
            k = (-s) % n if n else 0
            if k:  # (i + k) mod n, for i < n and k < n
                out[d] = f"(i{d} + {k} - (i{d} >= {n - k} ? {n} : 0))"
        return out
    mode = node.kwargs["mode"]
    for d, before, after in _pad_pairs(len(shape), tuple(node.kwargs["pad"])):
        n, lo, cut = shape[d], max(before, 0), max(-before, 0)
        if mode == "circular":  # the cropped input, wrapped: period m, read from cut on
            m = n - cut - max(-after, 0)
            j = f"(i{d} - {lo})"
            out[d] = f"({j} + ({j} < 0 ? {m} : 0) - ({j} >= {m} ? {m} : 0) + {cut})"
            continue
        j = f"(i{d} + {cut - lo})"
        if mode == "reflect":
            out[d] = f"({j} < 0 ? -{j} : {j} >= {n} ? {2 * (n - 1)} - {j} : {j})"
        else:
            out[d] = f"({j} < 0 ? 0 : {j} >= {n} ? {n - 1} : {j})"
    return out


def _shifts(node):
    """{dim: total shift} of a Roll (a dim named twice shifts by the sum)."""
    shifts, dims = node.kwargs["shifts"], node.kwargs["dims"]
    shifts, dims = (shifts, dims) if isinstance(shifts, tuple) else ((shifts,), (dims,))
    rank, total = len(node.meta["shape"]), {}
    for s, d in zip(shifts, dims):
        total[d % rank] = total.get(d % rank, 0) + s
    return total


def _mapped_kernel(src, node, fname, ctypes, index):
    plan = src.plan
    x, out = plan.loc[node.args[0]], plan.loc[node]
    t, name = ctypes[out.dtype], node.target.name
    adjoint = name == "PadTranspose"
    source = _source(node, out.shape if adjoint else x.shape)
    loop_vars = [f"i{d}" for d in range(len(out.shape))]
    mapped = [v if e is None else e for v, e in zip(loop_vars, source)]
    what = f"roll by {node.kwargs['shifts']} along {node.kwargs['dims']}" if name == "Roll" else \
        f"{node.kwargs['mode']} pad {list(node.kwargs['pad'])}" + " (adjoint: sums)" * adjoint
    lines = [f"/* {what} -> {list(out.shape)}: {name}({node.name}) */", f"static void {fname}(void** restrict p) {{",
             f"    {t}* restrict y = {src.pointer(out)};", f"    const {t}* restrict a = {src.pointer(x)};"]
    if adjoint:  # -0.0 + v is v (-0.0 too); positions a crop leaves unread stay +0.0, as eager's
        window = [f"i{d} >= {max(-b, 0)} && i{d} < {out.shape[d] - max(-a, 0)}"
                  for d, b, a in _pad_pairs(len(out.shape), tuple(node.kwargs["pad"])) if b < 0 or a < 0]
        zero = f"({' && '.join(window)} ? -0.0 : 0.0)" if window else "-0.0"
        lines += loop_nest(loop_vars, list(out.shape), f"y[{index(out.offset, out.strides, loop_vars)}] = {zero};")
        statement = f"y[{index(out.offset, out.strides, mapped)}] += a[{index(x.offset, x.strides, loop_vars)}];"
    elif name == "Roll" and source[-1] is not None:  # the last dim in two runs, each vectorised
        n, k = out.shape[-1], (-_shifts(node).get(len(out.shape) - 1, 0)) % out.shape[-1]
        last, rest = loop_vars[-1], loop_vars[:-1]
        y_at, a_at = index(out.offset, out.strides, loop_vars), index(x.offset, x.strides, mapped[:-1] + [last])
        runs = [f"for (long {last} = 0; {last} < {n - k}; {last}++) y[{y_at}] = a[{a_at} + {k * x.strides[-1]}];",
                f"for (long {last} = {n - k}; {last} < {n}; {last}++) y[{y_at}] = a[{a_at} - {(n - k) * x.strides[-1]}];"]
        lines += loop_nest(rest, list(out.shape[:-1]), "{ " + " ".join(runs) + " }")
        return lines + ["}"]
    else:
        statement = f"y[{index(out.offset, out.strides, loop_vars)}] = a[{index(x.offset, x.strides, mapped)}];"
    lines += loop_nest(loop_vars, list((x if adjoint else out).shape), statement)
    return lines + ["}"]


def copy_kernel(src, node, fname, ctypes, index, literal):
    """C lines of ``static void fname(void** p)`` computing ``node``; ``index(offset, strides,
    loop_vars)`` spells an element's address (cgen._index), ``literal(value, dtype)`` a C constant."""
    if node.target.name == "ConstantPad":
        return _pad_kernel(src, node, fname, ctypes, index, literal)
    if node.target.name in _MAPPED:
        return _mapped_kernel(src, node, fname, ctypes, index)
    plan = src.plan
    x, out = plan.loc[node.args[0]], plan.loc[node]
    shape, strides, offset = list(out.shape), list(x.strides), x.offset
    name = node.target.name
    if name == "Flip":  # the last element of each flipped dim first
        for d in sorted({d % len(shape) for d in node.kwargs.get("dims", ())}):
            offset += (shape[d] - 1) * strides[d]
            strides[d] = -strides[d]
    loop_vars = [f"i{d}" for d in range(len(shape))]
    value = f"a[{index(offset, strides, loop_vars)}]"
    what = f"flip of dims {list(node.kwargs.get('dims', ()))}"
    if name != "Flip":  # column - row <= diagonal keeps tril's elements, >= triu's
        k = node.kwargs.get("diagonal", 0)
        keep = f"{loop_vars[-1]} - {loop_vars[-2]} {'<=' if name == 'Tril' else '>='} {k}"
        value, what = f"({keep} ? {value} : 0)", f"{name.lower()} with diagonal {k}"
    t = ctypes[out.dtype]
    lines = [f"/* {what} -> {shape}: {name}({node.name}) */", f"static void {fname}(void** restrict p) {{",
             f"    {t}* restrict y = {src.pointer(out)};", f"    const {t}* restrict a = {src.pointer(x)};"]
    lines += loop_nest(loop_vars, shape, f"y[{index(out.offset, out.strides, loop_vars)}] = {value};")
    return lines + ["}"]


def _pad_kernel(src, node, fname, ctypes, index, literal):
    plan = src.plan
    x, out = plan.loc[node.args[0]], plan.loc[node]
    pad, t = tuple(node.kwargs.get("pad", ())), ctypes[out.dtype]
    region, offset, at = list(x.shape), x.offset, out.offset
    for d, before, after in _pad_pairs(len(region), pad):
        offset += max(-before, 0) * x.strides[d]   # cropped: read from further in
        at += max(before, 0) * out.strides[d]      # padded: write further in
        region[d] -= max(-before, 0) + max(-after, 0)
    value = literal(node.kwargs.get("value", 0), out.dtype)
    lines = [f"/* pad {list(pad)} with {value} -> {list(out.shape)}: ConstantPad({node.name}) */",
             f"static void {fname}(void** restrict p) {{",
             f"    {t}* restrict y = {src.pointer(out)};", f"    const {t}* restrict a = {src.pointer(x)};"]
    if any(p > 0 for p in pad):
        n = int(np.prod(out.shape))
        lines.append(f"    for (long i = 0; i < {n}; i++) y[{index(out.offset, [1], ['i'])}] = {value};")
    loop_vars = [f"i{d}" for d in range(len(region))]
    lines += loop_nest(loop_vars, [max(n, 0) for n in region], f"y[{index(at, out.strides, loop_vars)}] = a[{index(offset, x.strides, loop_vars)}];")
    return lines + ["}"]
