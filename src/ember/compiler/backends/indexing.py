"""C kernels for advanced indexing, which ran as NumPy calls inside compiled graphs before:
``Index`` (``x[idx]``, ``x[:, rows, cols]``: a gather), its gradient ``IndexBackward`` (zeros,
then each gradient element added where its forward read: ``np.add.at``), ``IndexPut``
(``x.index_put(idx, v)`` and ``x[idx] = v``: a copy of ``x``, then ``v`` written, or added
with ``accumulate``) and the ``Embedding`` lookup (``weight[ids]``); and the lookup's gradient
``EmbeddingBackward`` (:func:`embedding_backward_kernel`).

An index is a tuple of slices, one ``...`` and integer arrays (graph values: see
docs/compile.md, "Index arrays are graph values"), NumPy's rules throughout: the arrays
broadcast together to a shape B; B takes the place of the arrays when they are adjacent, the
front otherwise; the sliced dims keep their order. The kernel loops over the indexed shape in
C order and reads each array entry in the loop that its last broadcast dim opens (a row index
is read once per row). Entries are checked as eager checks them: from ``-n`` to ``n - 1`` for
an index (negative ones count from the end), ``[0, n)`` for an embedding id; the first bad
entry in C order makes the kernel return 1 with ``em_bad_target`` (the entry) and
``em_bad_where`` (the dim; an embedding: the id's flat position) set, which the driver raises
as eager's IndexError (:func:`error`). Repeated entries: the last write wins (``IndexPut``),
sums add in C order (``np.add.at``'s order: bit-equal). Operands may be strided (their
``Loc`` strides); results are contiguous. Bool masks, ``None`` and integers inside an
advanced index run from Python. In a graph with size symbols, the index arrays' sizes and the
indexed array's may be symbolic (``x[arange(B), y]``, ``w[ids]``): a symbolic dim is sliced
whole, the arrays broadcast where their sizes are equal expressions or 1.
"""
import math

import numpy as np

from ..._ops.embedding import id_out_of_range
from ..symbolic import Expr, evaluate, free_symbols

__all__ = ["OPS", "supported", "index_kernel", "error", "embedding_backward_kernel"]

OPS = ("Index", "IndexBackward", "IndexPut", "Embedding")
_INTEGERS = (np.dtype(np.int64), np.dtype(np.int32))


def _dtype(node):
    d = node.meta["dtype"]
    return np.dtype(getattr(d, "np", d))


def _is_node(a):
    return hasattr(a, "meta")


def _layout(shape, index):
    """(entries, domain): per dim of ``shape``, ``("slice", start, step, count)`` or
    ``("array", node)``; the indexed shape as a list of ``("b", j)`` (dim j of the arrays'
    broadcast shape) and ``("s", d)`` (sliced dim d) tags, with the broadcast shape. None when
    the index holds something else (None, an integer, a bool, a non-integer array)."""
    index = tuple(index) if isinstance(index, tuple) else (index,)
    ellipses = [k for k, i in enumerate(index) if i is Ellipsis]
    if len(ellipses) > 1:
        return None
    if ellipses:
        k = ellipses[0]
        index = index[:k] + (slice(None),) * (len(shape) - len(index) + 1) + index[k + 1:]
    if len(index) > len(shape):
        return None
    index = index + (slice(None),) * (len(shape) - len(index))
    entries = []
    for n, i in zip(shape, index):
        if type(i) is slice and (isinstance(n, Expr) or free_symbols((i.start, i.stop, i.step))):
            if (i.start, i.stop, i.step) not in ((None, None, None), (None, None, 1)):
                return None  # a symbolic dim is taken whole; symbolic bounds: .locs's views
            entries.append(("slice", 0, 1, n))
        elif type(i) is slice:
            start, stop, step = i.indices(n)
            entries.append(("slice", start, step, len(range(start, stop, step))))
        elif _is_node(i) and _dtype(i) in _INTEGERS and all(type(m) in (int, Expr) for m in i.meta["shape"]):
            entries.append(("array", i))
        else:
            return None
    arrays = [d for d, e in enumerate(entries) if e[0] == "array"]
    if not arrays:
        return None
    b = _broadcast([tuple(entries[d][1].meta["shape"]) for d in arrays])
    if b is None:
        return None
    sliced = [("s", d) for d, e in enumerate(entries) if e[0] == "slice"]
    broadcast = [("b", j) for j in range(len(b))]
    if arrays == list(range(arrays[0], arrays[-1] + 1)):  # adjacent: B in their place
        before = [t for t in sliced if t[1] < arrays[0]]
        domain = before + broadcast + sliced[len(before):]
    else:
        domain = broadcast + sliced
    return entries, domain, b


def _broadcast(shapes):
    """NumPy's broadcast shape of ``shapes`` whose sizes may be expressions (equal ones, or 1,
    broadcast), or None."""
    b = [1] * max(map(len, shapes))
    for shape in shapes:
        for k, n in enumerate(shape, len(b) - len(shape)):
            if b[k] == 1 or (isinstance(n, Expr) and isinstance(b[k], Expr) and bool(n == b[k])):
                b[k] = n
            elif n != 1 and (isinstance(n, Expr) or isinstance(b[k], Expr) or n != b[k]):
                return None
    return tuple(b)


def _sizes(layout):
    entries, domain, b = layout
    return tuple(b[j] if tag == "b" else entries[j][3] for tag, j in domain)


def _shape(node):
    return tuple(node.meta["shape"])


def supported(node):
    """Whether the kernel computes ``node``: operands of one C dtype (the index int64 or
    int32), known sizes, an index of slices, ``...`` and integer arrays whose indexed shape is
    the result's (Index), the gradient's (IndexBackward) or one the values broadcast to
    (IndexPut: no sum of booleans); an Embedding of a 2-D weight."""
    name, x = node.target.name, node.args[0] if node.args else None
    # sizes known or symbolic (then only IndexPut's, and an embedding's table, must be known)
    fixed = _shape(x) + _shape(node)[-1:] if name == "Embedding" else _shape(node) if name == "IndexPut" else ()
    if not _is_node(x) or not all(type(n) is int for n in fixed):
        return False
    out = _dtype(node)
    if out not in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.int32)):
        return False
    if name == "Embedding":
        ids = node.args[1] if len(node.args) > 1 else None
        return len(_shape(x)) == 2 and _dtype(x) == out and _is_node(ids) and _dtype(ids) in _INTEGERS
    if _dtype(x) != out:
        return False
    shape = tuple(node.kwargs["shape"]) if name == "IndexBackward" else _shape(x)
    layout = _layout(shape, node.kwargs.get("index"))
    if layout is None:
        return False
    if name == "Index":
        return _sizes(layout) == _shape(node)
    if name == "IndexBackward":
        return _sizes(layout) == _shape(x) and shape == _shape(node)
    values = node.args[1] if len(node.args) > 1 else None
    if not _is_node(values) or _dtype(values) != out or len(node.args) != 2:
        return False
    domain, vshape = _sizes(layout), _shape(values)
    return len(vshape) <= len(domain) and all(v in (1, d) for v, d in zip(vshape[::-1], domain[::-1]))


def error(node, bad, where, sizes=None):
    """Eager's IndexError for the entry ``bad`` the kernel of ``node`` refused at ``where``
    (``sizes``: the values of the size symbols, in a graph with them)."""
    if node.target.name == "Embedding":
        ids = evaluate(_shape(node.args[1]), sizes or {})
        return id_out_of_range(bad, tuple(int(i) for i in np.unravel_index(where, ids)), _shape(node.args[0])[0])
    shape = node.kwargs["shape"] if node.target.name == "IndexBackward" else _shape(node.args[0])
    return IndexError(f"index {bad} is out of bounds for dimension {where} with size {evaluate(shape[where], sizes or {})}")


def _at(offset, terms):
    """``offset + var*stride + ...`` of (var, stride) ``terms``, zero strides left out."""
    return " + ".join([_c(offset)] + [f"{v}*{_c(s)}" for v, s in terms if isinstance(s, Expr) or s != 0])


def _c(n):
    """An int as it is, a size expression in parentheses (its C spelling may hold a ``+``)."""
    return f"({n})" if isinstance(n, Expr) else str(n)


def index_kernel(src, node, fname, ctypes):
    """C lines of ``static int fname(void** p)`` computing ``node`` (see :func:`supported`)."""
    plan, name = src.plan, node.target.name
    out = plan.loc[node]
    t = ctypes[out.dtype]
    lines = [f"static int {fname}(void** restrict p) {{", f"    {t}* restrict y = {src.pointer(out)};"]
    if name == "Embedding":
        weight, ids = plan.loc[node.args[0]], node.args[1]
        layout = ([("array", ids), ("slice", 0, 1, weight.shape[1])],
                  [("b", j) for j in range(len(ids.meta["shape"]))] + [("s", 1)], _shape(ids))
        addressed, what = weight, f"embedding of {list(_shape(ids))} ids in {list(weight.shape)}"
    else:
        shape = tuple(node.kwargs["shape"]) if name == "IndexBackward" else _shape(node.args[0])
        layout = _layout(shape, node.kwargs["index"])
        addressed, what = (out if name != "Index" else plan.loc[node.args[0]]), f"{name} {_describe(layout)}"
    domain = _sizes(layout)
    lines.insert(0, f"/* {what} -> {list(out.shape)}: {node.name} */")
    if name == "Index" or name == "Embedding":
        lines.append(f"    const {t}* restrict x = {src.pointer(addressed)};")
    n = math.prod(out.shape)
    if name == "IndexBackward":  # zeros, then the gradient added at the index
        g = plan.loc[node.args[0]]
        lines += [f"    const {t}* restrict g = {src.pointer(g)};",
                  f"    for (long i = 0; i < {n}; i++) y[{out.offset} + i] = 0;"]
    elif name == "IndexPut":  # a copy of x, then the values at the index
        x, v = plan.loc[node.args[0]], plan.loc[node.args[1]]
        lines.append(f"    const {t}* x = {src.pointer(x)};")
        lines.append(f"    const {t}* v = {src.pointer(v)};")
        copy = [f"c{d}" for d in range(len(x.shape))]
        lines += [f"    for (long {c} = 0; {c} < {m}; {c}++)" for c, m in zip(copy, x.shape)]
        lines.append(f"        y[{_at(out.offset, zip(copy, out.strides))}] = x[{_at(x.offset, zip(copy, x.strides))}];")
    loops = [f"r{k}" for k in range(len(domain))]
    body = _index_loads(src, layout, loops, addressed, check="ids" if name == "Embedding" else "index")
    source = body.pop()
    if name in ("Index", "Embedding"):
        statement = f"y[{_at(out.offset, zip(loops, out.strides))}] = x[{source}];"
    elif name == "IndexBackward":
        statement = f"y[{source}] += g[{_at(g.offset, zip(loops, g.strides))}];"
    else:
        offset = len(domain) - len(v.shape)
        terms = [(loops[offset + j], s if m != 1 else 0) for j, (m, s) in enumerate(zip(v.shape, v.strides))]
        statement = f"y[{source}] {'+=' if node.kwargs.get('accumulate') else '='} v[{_at(v.offset, terms)}];"
    lines += body[0]
    for depth, loop in enumerate(loops):
        pad = "    " * (depth + 1)
        lines.append(f"{pad}for (long {loop} = 0; {loop} < {domain[depth]}; {loop}++) {{")
        lines += [pad + "    " + ln for ln in body[depth + 1]]
    lines.append("    " * (len(loops) + 1) + statement)
    lines += ["    " * (depth + 1) + "}" for depth in reversed(range(len(loops)))]
    return lines + ["    return 0;", "}"]


def _describe(layout):
    """``[:, 2::1, i] (indices broadcast to [4])``: slices by their start and step, arrays by name."""
    entries, _, b = layout
    parts = [e[1].name if e[0] == "array" else ":" if e[1:3] == (0, 1) else f"{e[1]}::{e[2]}" for e in entries]
    return f"[{', '.join(parts)}] (indices broadcast to {list(b)})"


def _index_loads(src, layout, loops, addressed, check):
    """Per loop depth (0: before the loops), the C lines that read, check and wrap each array
    entry where its last loop opens; the list ends with the addressed array's element
    offset."""
    plan = src.plan
    entries, domain, b = layout
    where = {tag: loops[k] for k, tag in enumerate(domain)}
    body = [[] for _ in range(len(loops) + 1)]
    terms, offset = [], addressed.offset
    for d, e in enumerate(entries):
        stride = addressed.strides[d]
        if e[0] == "slice":
            offset += e[1] * stride
            terms.append(f"{where[('s', d)]}*{_c(e[2] * stride)}")
            continue
        a = plan.loc[e[1]]
        lead = len(b) - len(a.shape)
        vars_ = [(where[("b", lead + j)], s if (isinstance(m, Expr) or m != 1) else 0) for j, (m, s) in enumerate(zip(a.shape, a.strides))]
        depth = max([loops.index(v) + 1 for v, s in vars_ if isinstance(s, Expr) or s != 0], default=0)
        n, c, it = addressed.shape[d], f"c{d}", "int64_t" if a.dtype == np.int64 else "int32_t"
        read = f"(({it}*)p[{src.slot(a.storage)}])[{_at(a.offset, vars_)}]"
        if check == "ids":  # [0, n); where: the id's flat position
            # the loops open where the id is read (an id broadcast over later loops: its first place)
            flat = " + ".join(f"{where[('b', j)]}*{math.prod(b[j + 1:])}" for j in range(len(b))
                              if loops.index(where[("b", j)]) < depth) or "0"
            lines = [f"const int64_t {c} = {read};",
                     f"if ({c} < 0 || {c} >= {n}) {{ em_bad_target = {c}; em_bad_where = {flat}; return 1; }}"]
        else:  # [-n, n), negative entries from the end; where: the dim
            lines = [f"int64_t {c} = {read};",
                     f"if ({c} < -{_c(n)} || {c} >= {n}) {{ em_bad_target = {c}; em_bad_where = {d}; return 1; }}",
                     f"if ({c} < 0) {c} += {n};"]
        body[depth] += lines
        terms.append(f"{c}*{_c(stride)}")
    body[0] = ["    " + ln for ln in body[0]]
    body.append(" + ".join([_c(offset)] + terms))
    return body



def embedding_backward_kernel(src, node, fname, ctypes):
    """Row r of the weight gradient sums the rows of ``g`` whose id is r (none for
    ``padding_idx``). The ids are in range: the forward's Embedding, earlier in the graph,
    raised for any other."""
    plan = src.plan
    g, ids, out = plan.loc[node.args[0]], plan.loc[node.args[1]], plan.loc[node]
    t = ctypes[out.dtype]
    n, width = math.prod(ids.shape), out.shape[-1]  # n: an int, or an expression of size symbols
    padding = node.kwargs.get("padding_idx")
    return [f"/* embedding gradient: {n} rows of {width} summed into {list(out.shape)}: EmbeddingBackward({node.name}) */",
            f"static void {fname}(void** restrict p) {{",
            f"    const int64_t* restrict ids = {src.pointer(ids)} + {ids.offset};",
            f"    {t}* restrict y = {src.pointer(out)};",
            f"    memset(y, 0, {math.prod(out.shape) * out.dtype.itemsize});",
            f"    for (long r = 0; r < {n}; r++) {{",
            f"        if (ids[r] == {padding}) continue;" if padding is not None else "",
            f"        const {t}* restrict g = {src.pointer(g)} + {g.offset} + r*{width};",
            f"        {t}* restrict row = y + ids[r]*{width};",
            f"        for (long j = 0; j < {width}; j++) row[j] += g[j];",
            "    }", "}"]
