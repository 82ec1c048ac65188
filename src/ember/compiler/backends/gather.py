"""C kernels for picking and writing along a dim at an int64 index: ``Gather``
(``out[i][j] = x[i][index[i][j]]`` for dim 1), ``ScatterAdd`` (``out = x``, then
``out[i][index[i][j]] += src[i][j]``), ``Scatter`` (``= src[i][j]`` or a number: the last write
wins) of :mod:`ember._ops.indexing` and ``ScatterReduce`` (sum, prod, mean, amax, amin; with
``include_self=False`` the targets start from the reduction's identity; mean divides by the
count of values each target took, in double as eager's NumPy does) of
:mod:`ember._ops.scatter_reduce`, the values applied in the index's C order as NumPy's
``ufunc.at`` (bit-equal), amax/amin propagating NaN as ``np.maximum``; and the index they are
often given: ``MaxAlongDim`` / ``MinAlongDim`` (``max(x, dim)``: the first extreme, or the first
NaN, and its int64 index, eager's ``argmax`` rule), whose two results are "result" nodes.

They are an embedding lookup's and a loss's ``gather`` and the gradients of ``gather``,
``max(x, dim)``, ``sort`` and ``topk`` (which scatter-add with the forward's indices). The index
is a value of the graph (see docs/compile.md, "Index arrays are graph values"): its entries are
checked as eager checks them, and an entry outside ``[0, size)`` makes the kernel return 1 with
``em_bad_target`` set, which the driver raises as PyTorch's RuntimeError
(:func:`error_message`). Operands may be strided (their ``Loc`` strides); the index and the
result are contiguous.
"""
import numpy as np

__all__ = ["OPS", "EXTREMES", "supported", "gather_kernel", "error_message", "extreme_kernel"]

OPS = ("Gather", "ScatterAdd", "Scatter", "ScatterReduce")
_REDUCE = {"sum": "+=", "mean": "+=", "prod": "*=", "amax": ">", "amin": "<"}
EXTREMES = ("MaxAlongDim", "MinAlongDim")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _dtype(node):
    d = node.meta["dtype"]
    return np.dtype(getattr(d, "np", d))


def supported(node):
    """Float operands of the result's dtype and an int64 index node of the input's rank (a
    scatter's src of that rank too, or a real number for ``Scatter``; a ``ScatterReduce`` of
    one of the five reductions); for an extreme, a float input with a non-empty ``dim``."""
    if node.target.name in EXTREMES:
        x = node.args[0]
        return hasattr(x, "meta") and _dtype(x) in _FLOATS and len(x.meta["shape"]) > 0 \
            and x.meta["shape"][node.kwargs["dim"]] > 0
    index, first = node.kwargs.get("index"), node.args[0]
    if not hasattr(index, "meta") or _dtype(index) != np.int64 or not hasattr(first, "meta"):
        return False
    if len(index.meta["shape"]) != len(first.meta["shape"]) or not first.meta["shape"]:
        return False
    name, src = node.target.name, node.args[1] if len(node.args) > 1 else None
    if name == "ScatterReduce" and (node.kwargs.get("reduce") not in _REDUCE or
                                    node.kwargs.get("include_self") not in (True, False)):
        return False
    if name == "Scatter" and not hasattr(src, "meta"):
        operands = node.args[:1] if isinstance(src, (int, float, np.number)) and not isinstance(src, complex) else ()
    else:
        operands = node.args[:1] if name == "Gather" else node.args[:2]
        if name != "Gather" and (not hasattr(src, "meta") or len(src.meta["shape"]) != len(index.meta["shape"])):
            return False  # (a 0-d src broadcast over the index: from Python)
    return bool(operands) and _dtype(node) in _FLOATS and all(
        hasattr(a, "meta") and _dtype(a) == _dtype(node) for a in operands)


def error_message(node, bad):
    """PyTorch's message for index entry ``bad`` out of range in ``node``."""
    dim = node.kwargs["dim"]
    return f"index {bad} is out of bounds for dimension {dim} with size {node.args[0].meta['shape'][dim]}"


def _at(offset, strides, loop_vars):
    terms = [f"{v}*{s}" for v, s in zip(loop_vars, strides) if s != 0]
    return " + ".join([str(offset)] + terms)


def _literal(value, dtype):
    """A number as the C constant NumPy's assignment into a ``dtype`` array stores."""
    v = float(dtype.type(value))
    return "NAN" if v != v else "INFINITY" if v == np.inf else "(-INFINITY)" if v == -np.inf else v.hex()


def gather_kernel(src, node, fname, ctypes):
    """C lines of ``static int fname(void** p)`` computing ``node`` (see :func:`supported`)."""
    plan, name = src.plan, node.target.name
    index, out, dim = plan.loc[node.kwargs["index"]], plan.loc[node], node.kwargs["dim"]
    t = ctypes[out.dtype]
    size = plan.loc[node.args[0]].shape[dim]
    reduce, include_self = node.kwargs.get("reduce", "sum"), node.kwargs.get("include_self", True)
    what = f"{name}({reduce}{'' if include_self else ', include_self=False'})" if name == "ScatterReduce" else name
    loops = [f"i{d}" for d in range(len(index.shape))]
    lines = [f"/* {what} along dim {dim}, index {list(index.shape)} -> {list(out.shape)}: {node.name} */",
             f"static int {fname}(void** restrict p) {{",
             f"    const int64_t* restrict ix = {src.pointer(index)} + {index.offset};",
             f"    {t}* restrict y = {src.pointer(out)} + {out.offset};"]
    picked = ["c" if d == dim else v for d, v in enumerate(loops)]
    x = plan.loc[node.args[0]]
    lines.append(f"    const {t}* x = {src.pointer(x)};")
    if name == "Gather":
        value, target, op = f"x[{_at(x.offset, x.strides, picked)}]", _at(0, out.strides, loops), "="
    else:  # y = x (a copy in C order), then src written, added or reduced in at the index
        copy = [f"c{d}" for d in range(len(out.shape))]
        lines += [f"    for (long {v} = 0; {v} < {n}; {v}++)" for v, n in zip(copy, out.shape)]
        lines.append(f"        y[{_at(0, out.strides, copy)}] = x[{_at(x.offset, x.strides, copy)}];")
        if hasattr(node.args[1], "meta"):
            s = plan.loc[node.args[1]]
            lines.append(f"    const {t}* s = {src.pointer(s)};")
            value = f"s[{_at(s.offset, s.strides, loops)}]"
        else:
            value = _literal(node.args[1], out.dtype)
        target = _at(0, out.strides, picked)
        op = "=" if name == "Scatter" else _REDUCE[reduce] if name == "ScatterReduce" else "+="
    n_out = int(np.prod(out.shape))

    def over_index(body, release=""):  # (release: what a bad index frees before returning)
        return (["    long k = 0;"] + [f"    for (long {v} = 0; {v} < {n}; {v}++)" for v, n in zip(loops, index.shape)]
                + ["    {", "        int64_t c = ix[k++];",
                   f"        if (c < 0 || c >= {size}) {{ {release}em_bad_target = c; em_bad_where = 0; return 1; }}"]
                + [f"        {b}" for b in body] + ["    }"])
    if name == "ScatterReduce" and not include_self:  # the targets start from the identity
        identity = {"sum": "0", "mean": "0", "prod": "1", "amax": "(-INFINITY)", "amin": "INFINITY"}[reduce]
        lines += ["    {"] + ["    " + ln for ln in over_index([f"y[{target}] = {identity};"])] + ["    }"]
    if reduce == "mean" and name == "ScatterReduce":
        lines.append(f"    int64_t* count = calloc({n_out}, sizeof(int64_t));")
        lines.append("    if (!count) { em_bad_where = -1; return 1; }")
    if op in ("<", ">"):  # np.maximum / np.minimum: NaN from either side
        body = [f"{t} a = y[{target}], b = {value};", f"y[{target}] = (a != a || a {op} b) ? a : b;"]
    else:
        body = [f"y[{target}] {op} {value};"]
    if reduce == "mean" and name == "ScatterReduce":
        body.append(f"count[{target}]++;")
    lines += over_index(body, "free(count); " if reduce == "mean" and name == "ScatterReduce" else "")
    if reduce == "mean" and name == "ScatterReduce":
        lines += [f"    for (long i = 0; i < {n_out}; i++) {{",
                  f"        int64_t n = count[i] + {int(include_self)};",
                  f"        y[i] = ({t})((double)y[i] / (double)(n > 1 ? n : 1));", "    }", "    free(count);"]
    return lines + ["    return 0;", "}"]


def extreme_kernel(src, node, fname, ctypes, results):
    """C lines of ``static void fname(void** p)`` writing the ``results`` (output number ->
    Loc: 0 the values, 1 the indices, each present when the graph reads it) of ``node``."""
    plan = src.plan
    x, dim = plan.loc[node.args[0]], node.kwargs["dim"]
    t, n, better = ctypes[x.dtype], x.shape[dim], ">" if node.target.name == "MaxAlongDim" else "<"
    loops = [f"i{d}" for d in range(len(x.shape))]
    lines = [f"/* {node.target.name} along dim {dim} of {list(x.shape)}: {node.name} */",
             f"static void {fname}(void** restrict p) {{", f"    const {t}* restrict x = {src.pointer(x)};"]
    names = {0: ("v", t), 1: ("ix", "int64_t")}
    for k, loc in results.items():
        lines.append(f"    {names[k][1]}* restrict {names[k][0]} = {src.pointer(loc)} + {loc.offset};")
    lines += [f"    for (long {v} = 0; {v} < {1 if d == dim else m}; {v}++)"
              for d, (v, m) in enumerate(zip(loops, x.shape))]
    step = x.strides[dim]
    lines += ["    {", f"        const {t}* row = x + {_at(x.offset, x.strides, loops)};",
              f"        long k = 0; {t} m = row[0];",
              f"        if (m == m) for (long j = 1; j < {n}; j++) {{",
              f"            {t} e = row[j*{step}];",
              "            if (e != e) { k = j; break; }",
              f"            if (e {better} m) {{ m = e; k = j; }}", "        }"]
    for k, loc in results.items():
        value = f"row[k*{step}]" if k == 0 else "k"
        lines.append(f"        {names[k][0]}[{_at(0, loc.strides, loops)}] = {value};")
    return lines + ["    }", "}"]
