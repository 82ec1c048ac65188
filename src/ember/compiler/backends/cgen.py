"""C source for a :class:`~.plan.Plan`: one function per kernel, one per run of C kernels.

Every array is reached through slot ``i`` of a pointer table ``p`` (``s<i>`` in the code);
shapes, strides and offsets are compile-time constants, so loops have fixed trip counts and
contiguous inner strides of 1 that the compiler vectorises. Each kernel is preceded by a
comment naming the graph nodes it computes.

A graph with size symbols (dynamic shapes) gets one source for every size: its sizes are C
expressions of the symbols' values (``em_S0``, ...), which the exported entry points take as
their second argument (``int64_t sz[]``, in ``graph.symbols`` order) and store before running.
"""
import re
from itertools import accumulate

import numpy as np

from . import attention, conv_gemm, copies, indexing, norm, rnn, shared, sort, winograd
from .conv_gemm import conv_variants
from .direct_gemm import packed_support
from .gemm import gemm_kernel
from .gather import extreme_kernel, gather_kernel
from .pool import pool_kernel
from .row_reductions import row_reduction_kernel
from .rows import cross_entropy_kernel, norm_stats_kernel, softmax_kernel
from .kernels import CTYPES, c_literal, cat_dim, channel_axes, elementwise_expr, operands
from .python import label
from ..symbolic import Expr, at_least_1, c_spelling, free_symbols
from .locs import coverage
from .plan import _align, _args, _numel, contiguous_strides, scatter_loc
from .toolchain import compile_cost, loop_nest, row_loops, simd_reduction

__all__ = ["generate", "collapse", "CSource"]

# Loops over at least this many elements get an OpenMP pragma (waking a team costs microseconds).
OMP_MIN_ELEMENTS = 1 << 20
_HEADER = '#include "ember_graph.h"\n'
_GLOBALS = """em_sgemm_t em_sgemm;
em_dgemm_t em_dgemm;
em_sgemm64_t em_sgemm64;
em_dgemm64_t em_dgemm64;
void (*em_set_threads)(int); int (*em_get_threads)(void); int em_max_threads = 1;
int64_t em_bad_target, em_bad_where;
void em_init(void* s, void* d, void* set_threads, void* get_threads, int max_threads) {
    em_sgemm = (em_sgemm_t)s; em_dgemm = (em_dgemm_t)d; em_max_threads = max_threads;
    em_set_threads = (void (*)(int))set_threads; em_get_threads = (int (*)(void))get_threads;
}
void (*em_set_threads64)(int); int (*em_get_threads64)(void);
void em_init64(void* s, void* d, void* set_threads, void* get_threads) {
    em_sgemm64 = (em_sgemm64_t)s; em_dgemm64 = (em_dgemm64_t)d;
    em_set_threads64 = (void (*)(int))set_threads; em_get_threads64 = (int (*)(void))get_threads;
}
"""


def collapse(domain, stride_lists, keep_last=False):
    """Merges adjacent dimensions that every operand walks as one (and drops size-1 ones):
    returns (dims, stride lists). With ``keep_last`` the last dimension is never merged."""
    dims, out = [], [[] for _ in stride_lists]
    last = len(domain) - 1
    for d, n in enumerate(domain):
        if n == 1 and not (keep_last and d == last):
            continue
        if dims and not (keep_last and d == last) and all(
                o[-1] == s[d] * n for o, s in zip(out, stride_lists)):
            dims[-1] *= n
            for o, s in zip(out, stride_lists):
                o[-1] = s[d]
            continue
        dims.append(n)
        for o, s in zip(out, stride_lists):
            o.append(s[d])
    return dims, out


class _Source:
    def __init__(self, plan):
        self.plan, self.slots = plan, {}

    def slot(self, storage):
        storage = storage.resolve()
        if storage.index is None:
            storage.index = len(self.slots)
            self.slots[storage.index] = storage
        return storage.index

    def pointer(self, loc):
        return f"(({CTYPES[loc.dtype]}*)p[{self.slot(loc.storage)}])"


class _Body:
    """Statements of one loop body: values by name, loads of operands, stores."""

    def __init__(self, src, members, domain, index_of):
        self.src, self.members, self.domain, self.index_of = src, members, domain, index_of
        self.lines, self.names = [], {}
        # Loads at one address (0-d operands: Adam's step count) go before the loops: the compiler
        # cannot hoist them past stores that may alias (nor the math on them: bias corrections).
        self.invariant = []

    def operand(self, a, node):
        if a is None:
            return None
        if not hasattr(a, "meta"):
            dtype = node_dtype(node)
            if getattr(node.target, "name", None) in ("Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Where"):
                dtype = next((node_dtype(b) for b in _args(node) if node_dtype(b) != np.bool_), dtype)
            return c_literal(a, dtype)
        return self.value(a)

    def value(self, node):
        if node in self.names:
            return self.names[node]
        plan = self.src.plan
        if node in self.members or node in plan.inlined:
            expr = elementwise_expr(node, [self.operand(a, node) for a in operands(node)])
        else:
            loc = plan.loc[node]
            index = self.index_of(loc)
            expr = f"{self.src.pointer(loc)}[{index}]"
            if "i" not in index:  # no loop variable: one address for the whole loop
                name = f"t{len(self.names)}"
                self.invariant.append(f"const {CTYPES[node_dtype(node)]} {name} = {expr};")
                self.names[node] = name
                return name
        name = f"t{len(self.names)}"
        self.lines.append(f"{CTYPES[node_dtype(node)]} {name} = {expr};")
        self.names[node] = name
        return name


def node_dtype(node):
    d = node.meta["dtype"]
    return np.dtype(getattr(d, "np", d))


def _leaves(plan, nodes, members):
    """Operands a loop loads from memory (through inlined producers)."""
    seen, out = set(), []

    def visit(n):
        for a in operands(n):
            if not hasattr(a, "meta"):
                continue
            if a in seen:
                continue
            seen.add(a)
            if a in members or a in plan.inlined:
                visit(a)
            else:
                out.append(a)
    for n in nodes:
        visit(n)
    return out


def _index(offset, strides, loop_vars):
    terms = [f"{v}*{s}" if s != 1 else v for v, s in zip(loop_vars, strides) if s != 0]
    return " + ".join([str(offset)] * bool(offset != 0) + terms) or "0"


def _loop_kernel(src, kernel, fname, rows):
    """Fused elementwise loop; ``rows``: collapse to (rows, last dim) so the outer range can be
    a block of a GEMM's rows. float32 tan, sin and cos: em_tanf_near (em_sinf_near, em_cosf_near),
    em_tanf (em_sinf, em_cosf) if an argument is beyond it."""
    plan, domain = src.plan, kernel.shape
    members = set(kernel.nodes)
    stores = [n for n in kernel.nodes if _stored(plan, n, members)]
    leaves = _leaves(plan, kernel.nodes, members)
    locs = [plan.loc[a] for a in leaves] + [plan.loc[n] for n in stores]
    strides = [_align(loc, domain) for loc in locs]
    if rows and len(domain) >= 1:
        lead, last = domain[:-1], domain[-1:]
        dims, merged = collapse(list(lead) + list(last), strides, keep_last=True)
        if len(dims) != 2 or dims[0] != _numel(lead):
            return None
    else:
        dims, merged = collapse(list(domain), strides)
    stride_of = {id(loc): s for loc, s in zip(locs, merged)}
    loop_vars = [f"i{d}" for d in range(len(dims))]
    body = _Body(src, members, domain, lambda loc: _index(loc.offset, stride_of[id(loc)], loop_vars))
    for n in kernel.nodes:
        body.value(n)
    values = list(body.lines)  # (without the stores)
    for n in stores:
        loc = plan.loc[n]
        body.lines.append(f"{src.pointer(loc)}[{_index(loc.offset, stride_of[id(loc)], loop_vars)}] = {body.names[n]};")
    outer = dims[0] if dims else 1
    lines = [f"/* loop over {list(domain)}: {', '.join(label(n) for n in kernel.nodes)} */",
             f"static EM_NO_CONTRACT void {fname}(void** restrict p, long r0, long r1) {{"]
    lines += ["    " + ln for ln in body.invariant]
    if not dims:
        lines += ["    if (r0 >= r1) return;"] + ["    " + ln for ln in body.lines] + ["}"]
        return lines, 1
    parallel = not isinstance(_numel(domain), Expr) and _numel(domain) >= OMP_MIN_ELEMENTS
    if parallel and rows:  # a GEMM's epilogue, called per block of rows (one row at a time in the
        # blocked GEMM): threads only for a range that large, not a team woken per row (a GPT
        # forward at 47 x 215 rows: 60 thousand parallel regions, more CPU in futex than in the loops)
        parallel = f"if ((r1 - r0) * {dims[-1]}L >= {OMP_MIN_ELEMENTS}L)"
    alias = {plan.loc[a].storage.resolve() for a in leaves} & {plan.loc[n].storage.resolve() for n in stores}
    hoist = not alias and isinstance(dims[-1], int) and dims[-1] > 0  # the row's invariants before its loop
    tans = re.findall(r"em_(?:tan|sin|cos)f\((t\d+)\)", "\n".join(values))
    if tans:  # float32 tan, sin, cos: the _near forms; a rerun with the exact ones if an argument is beyond (a first pass if in place)
        wide = [f"wide |= {' || '.join(f'fabsf({t}) >= EM_TANF_NEAR' for t in tans)};"]
        fast = [re.sub(r"em_(tan|sin|cos)f\(", r"em_\1f_near(", ln) for ln in body.lines]
        reduction = parallel and " ".join(["reduction(|:wide)"] + [parallel] * isinstance(parallel, str))
        lines.append("    int wide = 0;  /* an argument of tan, sin or cos beyond the _near forms' range */")
        if alias:
            lines += row_loops(dims, loop_vars, values + wide, reduction, hoist) + ["    if (!wide) {"]
            lines += ["    " + ln for ln in row_loops(dims, loop_vars, fast, parallel, hoist)] + ["        return;", "    }"]
        else:
            lines += row_loops(dims, loop_vars, fast + wide, reduction, hoist) + ["    if (!wide) return;"]
    lines += row_loops(dims, loop_vars, body.lines, parallel, hoist)
    return lines + ["}"], outer


def _stored(plan, node, members):
    """A loop member is written to memory when something outside the loop reads it."""
    escaping = {o for o in plan.graph.outputs if hasattr(o, "meta")} | {v for _, v in plan.graph.mutations}
    return node in escaping or any(u not in members for u in node.users)


# The reductions of the sum kernel: (initial value, C of a accumulating b, how an element counts,
# the OpenMP reduction that vectorises an inner loop of it). The extremes keep NaN, as NumPy's
# maximum.reduce (eager): once a is NaN, b never replaces it.
_EXTREME = "(({b} != {b} || {b} %s {a}) ? {b} : {a})"
_REDUCTIONS = {"Sum": ("0", "{a} + {b}", "{}", "+"), "All": ("1", "{a} & {b}", "({} != 0)", "&"),
               "Any": ("0", "{a} | {b}", "({} != 0)", "|"), "Amax": ("-INFINITY", _EXTREME % ">", "{}", None),
               "Amin": ("INFINITY", _EXTREME % "<", "{}", None),
               "Prod": ("1", "{a} * {b}", "{}", "*")}
_REDUCTIONS.update(Max=_REDUCTIONS["Amax"], Min=_REDUCTIONS["Amin"])


def _reduction(node, t):
    """(initial value, combine, element, OpenMP reduction, finish: C applied to each result or
    None) of a sum-kernel node. VectorNorm(ord) is eager's: the sum of |x| (1), of x^2 then its
    sqrt (2), of |x|^p then its 1/p-th power (p), the largest or smallest |x| (+-inf, NaN
    kept), the count of nonzeros (0)."""
    if node.target.name != "VectorNorm":
        return _REDUCTIONS[node.target.name] + (None,)
    ord, sfx = node.kwargs["ord"], "f" if t == "float" else ""
    absolute = f"fabs{sfx}({{}})"
    if ord in (np.inf, -np.inf):
        return ("0" if ord > 0 else "INFINITY", _EXTREME % (">" if ord > 0 else "<"), absolute, None, None)
    if ord == 0:
        return ("0", "{a} + {b}", f"({t})({{}} != 0)", "+", None)
    if ord == 1:
        return ("0", "{a} + {b}", absolute, "+", None)
    if ord == 2:
        return ("0", "{a} + {b}", "({0} * {0})", "+", f"sqrt{sfx}({{}})")
    p, inverse = c_literal(ord, np.dtype(t == "float" and np.float32 or np.float64)), \
        c_literal(1.0 / ord, np.dtype(t == "float" and np.float32 or np.float64))
    return ("0", "{a} + {b}", f"pow{sfx}(fabs{sfx}({{0}}), {p})", "+", f"pow{sfx}({{}}, {inverse})")


def _sum_kernel(src, node, fname):
    """Sum, All, Any, Amax, Amin, Prod or VectorNorm over some dims, their elementwise producers computed in the
    loop; an innermost reduced loop is vectorised (a sum then adds in another order than a left
    fold, as torch's vectorised sums)."""
    plan = src.plan
    start, combine, element, simd, finish = _reduction(node, CTYPES[plan.loc[node].dtype])
    x = node.args[0]
    domain = tuple(x.meta["shape"])
    dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else None)
    reduced = set(range(len(domain))) if dim is None else {d % len(domain) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    out = plan.loc[node]
    keepdim = node.kwargs.get("keepdim", False)
    out_strides, k = [], 0
    for d in range(len(domain)):
        if d in reduced:
            out_strides.append(0)
            k += keepdim
        else:
            out_strides.append(out.strides[k] if out.strides else 0)
            k += 1
    members = {x} if x in plan.inlined else set()
    leaves = _leaves(plan, [x], members) if x in plan.inlined else [x]
    locs = [plan.loc[a] for a in leaves]
    dims, merged = collapse(list(domain), [_align(loc, domain) for loc in locs] + [out_strides])
    stride_of = {id(loc): s for loc, s in zip(locs, merged)}
    ostr = merged[-1]
    loop_vars = [f"i{d}" for d in range(len(dims))]
    body = _Body(src, members, domain, lambda loc: _index(loc.offset, stride_of[id(loc)], loop_vars))
    value = element.format(body.value(x))
    t, ptr = CTYPES[out.dtype], src.pointer(out)
    lines = [f"/* {node.target.name.lower()} over dims {sorted(reduced)} of {list(domain)}: "
             f"{', '.join(label(n) for n in [*sorted(plan.inlined & _inlined_under(plan, x), key=lambda n: n.name), node])} */",
             f"static void {fname}(void** restrict p) {{",
             f"    {t}* restrict o = {ptr};",
             f"    for (long i = 0; i < {at_least_1(_numel(out.shape))}; i++) o[i] = {start};"]
    lines += ["    " + ln for ln in body.invariant]
    inner_reduced = bool(dims) and ostr[-1] == 0
    indent = "    "
    for d, (v, n) in enumerate(zip(loop_vars, dims)):
        if inner_reduced and d == len(dims) - 1:
            lines.append(f"{indent}{t} acc = {start};")
            if simd:
                lines.append(indent + simd_reduction(simd, "acc"))
        lines.append(f"{indent}for (long {v} = 0; {v} < {n}; {v}++) {{")
        indent += "    "
    lines += [indent + ln for ln in body.lines]
    if inner_reduced:
        lines.append(f"{indent}acc = {combine.format(a='acc', b=value)};")
        lines.append(f"{indent[:-4]}}}")
        o = f"o[{_index(0, ostr[:-1], loop_vars[:-1])}]"
        lines.append(f"{indent[:-4]}{o} = {combine.format(a=o, b='acc')};")
        closing = len(dims) - 1
        indent = indent[:-4]
    else:
        o = f"o[{_index(0, ostr, loop_vars)}]"
        lines.append(f"{indent}{o} = {combine.format(a=o, b=value)};")
        closing = len(dims)
    lines += ["    " * (closing - d) + "}" for d in range(closing)]
    if finish is not None:
        lines.append(f"    for (long i = 0; i < {at_least_1(_numel(out.shape))}; i++) o[i] = {finish.format('o[i]')};")
    return lines[:3] + _hoisted(lines[3:] + ["}"])


_POINTER = re.compile(r"\(\((\w+)\*\)p\[(\d+)\]\)")


def _hoisted(lines):
    """``lines`` with each array's pointer (``((float*)p[3])``) read from the table once, first,
    as a local (``a0``): in a loop that re-reads the table GCC keeps an omp simd reduction's
    partial sums in memory, three times slower."""
    names = {}
    body = [_POINTER.sub(lambda m: names.setdefault(m.groups(), f"a{len(names)}"), ln) for ln in lines]
    return [f"    {t}* {name} = ({t}*)p[{slot}];" for (t, slot), name in names.items()] + body


def _inlined_under(plan, node):
    out = set()
    for a in _args(node):
        if a in plan.inlined:
            out.add(a)
            out |= _inlined_under(plan, a)
    if node in plan.inlined:
        out.add(node)
    return out


def _copy_kernel(src, node, fname):
    """A reshape of strided memory ("copy": the values in order into a contiguous buffer), a
    concatenation or a stack ("cat": each operand into its slice of the result) or
    the gradient of a basic index ("scatter": g copied into the indexed view, the rest zeros),
    or a sum of such gradients (plan.gather_scatters): each g into its view, zeroing first only
    where the views leave gaps, adding only where they overlap."""
    plan = src.plan
    out = plan.loc[node]
    t = CTYPES[out.dtype]
    if node.target.name == "View":
        g = plan.loc[node.args[0]]
        moves, what, op, zero = [(g, 0, contiguous_strides(g.shape))], f"strided copy {list(g.shape)}", "=", False
    elif node.target.name == "Cat":  # each operand into its slice of the result, which they cover
        d, moves, start = cat_dim(node), [], 0
        for a in node.args:
            moves.append((plan.loc[a], out.offset + start * out.strides[d], out.strides))
            start += a.meta["shape"][d]
        what, op, zero = f"cat of {len(moves)} along dim {d}", "=", False
    elif node.target.name == "Stack":  # each operand into its index along the new dim
        d = cat_dim(node)
        rest = tuple(out.strides[:d]) + tuple(out.strides[d + 1:])
        moves = [(plan.loc[a], out.offset + k * out.strides[d], rest) for k, a in enumerate(node.args)]
        what, op, zero = f"stack of {len(moves)} along dim {d}", "=", False
    else:
        scatters = plan.scatter_sums.get(node, [node])
        moves = [(plan.loc[leaf.args[0]], view.offset, view.strides)
                 for leaf, view in zip(scatters, [scatter_loc(leaf, out, plan.graph.symbol_ranges) for leaf in scatters])]
        cover = None if any(free_symbols(leaf.kwargs["index"]) for leaf in scatters) else \
            coverage(out, moves, plan.graph.symbol_ranges)
        op = "=" if cover is not None and cover[0] <= 1 else "+="
        zero = op == "+=" or cover[1] == 0
        what = "zeros, then g into the view" if len(moves) == 1 else \
            f"sum of {len(moves)} index gradients, each {'added ' * (op == '+=')}into its view{', zeros first' * zero}"
    nodes = [*plan.scatter_sums.get(node, []), node]
    lines = [f"/* {what} -> {list(out.shape)}: {', '.join(label(n) for n in nodes)} */",
             f"static void {fname}(void** restrict p) {{", f"    {t}* restrict y = {src.pointer(out)};"]
    if zero:
        lines.append(f"    memset(y, 0, {_numel(out.shape) * out.dtype.itemsize});")
    for k, (g, offset, strides) in enumerate(moves):
        lines.append(f"    const {t}* restrict a{k} = {src.pointer(g)};")
        dims, (sa, sy) = collapse(list(g.shape), [list(g.strides), list(strides)])
        loop_vars = [f"i{d}" for d in range(len(dims))]
        lines += loop_nest(loop_vars, dims, f"y[{_index(offset, sy, loop_vars)}] {op} a{k}[{_index(g.offset, sa, loop_vars)}];")
    return lines + ["}"]


def _epilogue(src, kernel, fname):
    """(C lines, ``(name, per_block, outer)`` or None) of the loop fused behind ``kernel``:
    ``name(p, r0, r1)`` over rows [r0, r1) of its output when ``per_block``, else over all
    ``outer`` rows at once, after the whole output."""
    if kernel.epilogue is None:
        return [], None
    made = _loop_kernel(src, kernel.epilogue, fname + "e", rows=True)
    lines, outer = made or _loop_kernel(src, kernel.epilogue, fname + "e", rows=False)
    return lines, (fname + "e", made is not None, outer)


def generate(plan, conv_choice=lambda kernel: None, gemm_choice=lambda shape, kernel: None):
    """(:class:`CSource`, regions, gemms, slots, convs): regions are lists of kernels run by one
    exported ``region_<i>(void** p)`` (and each kernel alone by ``kernel_<i>``, its index in the plan;
    ``(void** p, const int64_t* sz)`` with size symbols); gemms are (function name, (M, N, K,
    itemsize), kernel); convs are (function name, kernel), each variant chosen by
    ``em_conv_choice[i]`` (see conv_gemm.conv_variants): only the variant ``conv_choice(kernel)``
    names (half the C to compile), every variant where it is None (to be timed); GEMMs alike."""
    symbols = {name: i for i, name in enumerate(plan.graph.symbols)}
    with c_spelling(lambda name: f"em_S{symbols[name]}"):
        return _generate(plan, symbols, conv_choice, gemm_choice)


def _generate(plan, symbols, conv_choice, gemm_choice):
    src = _Source(plan)
    body, regions, gemms, calls, convs = [], [], [], {}, []
    params = "void** restrict p, const int64_t* restrict sz" if symbols else "void** restrict p"
    entry = ["    " + " ".join(f"em_S{i} = sz[{i}];" for i in symbols.values())] if symbols else []
    for i, kernel in enumerate(plan.kernels):
        fname = f"k{i}"
        if kernel.kind == "python":
            continue
        if kernel.kind == "loop":
            lines, outer = _loop_kernel(src, kernel, fname, rows=False)
            calls[id(kernel)] = [f"{fname}(p, 0, {outer});"]
        elif kernel.kind == "sum":
            lines = _sum_kernel(src, kernel.nodes[0], fname)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind in ("softmax", "log_softmax"):
            lines = softmax_kernel(src, kernel.nodes[0], fname, kernel.kind == "log_softmax")
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind in ("logsumexp", "argmax", "cumsum", "cumprod"):
            lines = row_reduction_kernel(src, kernel.nodes[0], fname)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind == "norm_stats":
            node = kernel.nodes[0]
            stats = norm.channel_stats_kernel if channel_axes(node.args[0].meta["shape"], node.kwargs["axes"]) \
                else norm_stats_kernel
            lines = stats(src, node, fname)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind == "conv":
            lines, epilogue = _epilogue(src, kernel, fname)
            node, choice = kernel.nodes[0], conv_choice(kernel)
            lines += conv_variants(src, node, fname, CTYPES[node_dtype(node)], epilogue,
                                   None if choice is None else (choice,))
            convs.append((fname, kernel))
            calls[id(kernel)] = [f"if ({fname}(p, em_conv_choice[{len(convs) - 1}])) return {i + 1};"]
        elif kernel.kind == "copies":
            lines = copies.copy_kernel(src, kernel.nodes[0], fname, CTYPES, _index, c_literal)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind == "pool":
            lines = pool_kernel(src, kernel.nodes[0], fname, CTYPES)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind == "norm_backward":
            node = kernel.nodes[0]
            results = {u.args[1]: plan.loc[u] for u in node.users if u in plan.loc}
            backward = norm.channel_backward_kernel if channel_axes(node.args[1].meta["shape"], node.kwargs["axes"]) \
                else norm.norm_backward_kernel
            lines = backward(src, node, fname, results)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind == "rnn":
            node = kernel.nodes[0]
            lines = rnn.rnn_kernel(src, node, fname, {u.args[1]: plan.loc[u] for u in node.users if u in plan.loc})
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind == "embedding_backward":
            lines = indexing.embedding_backward_kernel(src, kernel.nodes[0], fname, CTYPES)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind in ("copy", "scatter", "cat"):
            lines = _copy_kernel(src, kernel.nodes[0], fname)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind in ("bmm", "attention", "softmax_grad"):
            lines = getattr(attention, kernel.kind + "_kernel")(src, kernel.nodes[0], fname)
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind == "gather":
            lines = gather_kernel(src, kernel.nodes[0], fname, CTYPES)
            calls[id(kernel)] = [f"if ({fname}(p)) return {i + 1};"]
        elif kernel.kind == "index":
            lines = indexing.index_kernel(src, kernel.nodes[0], fname, CTYPES)
            calls[id(kernel)] = [f"if ({fname}(p)) return {i + 1};"]
        elif kernel.kind == "sort":  # Sort's results are getitem nodes; Argsort's is the node itself
            node = kernel.nodes[0]
            results = {1: plan.loc[node]} if node.target.name == "Argsort" else \
                {u.args[1]: plan.loc[u] for u in node.users if u in plan.loc}
            lines = sort.sort_kernel(src, node, fname, CTYPES, results)
            calls[id(kernel)] = [f"if ({fname}(p)) return {i + 1};"]
        elif kernel.kind == "extreme":
            node = kernel.nodes[0]
            lines = extreme_kernel(src, node, fname, CTYPES, {u.args[1]: plan.loc[u] for u in node.users if u in plan.loc})
            calls[id(kernel)] = [f"{fname}(p);"]
        elif kernel.kind.startswith("cross_entropy"):
            lines = cross_entropy_kernel(src, kernel.nodes[0], fname, kernel.kind.endswith("backward"))
            calls[id(kernel)] = [f"if ({fname}(p)) return {i + 1};"]
        else:
            lines, epilogue = _epilogue(src, kernel, fname)
            glines, shape = gemm_kernel(src, kernel, fname, epilogue, gemm_choice)
            lines += glines
            gemms.append((fname, shape, kernel))
            calls[id(kernel)] = [f"{fname}(p, em_choice[{len(gemms) - 1}], em_block[{len(gemms) - 1}]);"]
        # kernel_<i>: the kernel alone (the profiler's ranges), exported, the regions' callee
        body.append("\n".join(lines + [f"int kernel_{i}({params}) {{"] + entry + ["    " + c for c in calls[id(kernel)]]
                               + ["    return 0;", "}", ""]) + "\n")
    region = None
    for kernel in plan.kernels:
        if kernel.kind == "python":
            region = None
            continue
        if region is None:
            region = []
            regions.append(region)
        region.append(kernel)
    index = {id(k): i for i, k in enumerate(plan.kernels)}
    args = "p, sz" if symbols else "p"
    declarations, definitions = packed_support("".join(body))
    generic, winograd_units = winograd.support("".join(body))
    im2col, im2col_units = conv_gemm.support("".join(body))
    bn, bn_units = norm.support("".join(body))
    # (one unit for both: each is too small for a compiler process of its own, CSource.MIN_UNIT_CHARS)
    small = ["".join(im2col_units + bn_units)] if im2col_units or bn_units else []
    main = [_GLOBALS, f"int em_choice[{max(1, len(gemms))}];", f"long em_block[{max(1, len(gemms))}];",
            f"int em_conv_choice[{max(1, len(convs))}];"]
    main += [f"int kernel_{index[id(k)]}({params});" for kernels in regions for k in kernels]
    for r, kernels in enumerate(regions):
        main += [f"int region_{r}({params}) {{", "    int failed;"]
        main += [f"    if ((failed = kernel_{index[id(k)]}({args}))) return failed;" for k in kernels]
        main += ["    return 0;", "}"]
    # size symbols: each unit's own copy, set by its exported entry points
    head = _HEADER + declarations + generic + im2col + bn + "".join(f"static long em_S{i};  /* {name} */\n" for name, i in symbols.items())
    helpers = [_HEADER + h for h in ([definitions] if definitions else []) + winograd_units + small]
    return (CSource(head, shared.share(body), "\n".join(main) + "\n", helpers),
            regions, gemms, src.slots, convs)


class CSource:
    """The C of one graph: ``str()`` is the whole program; :meth:`units` cuts it into
    translation units that compile in parallel (and are cached each on its own)."""

    # A unit smaller than this is not worth its own compiler process (~0.06 s of CPU to start).
    MIN_UNIT_CHARS = 10_000

    def __init__(self, head, kernels, main, helpers=()):
        self.head = head        # what every unit starts with: includes, shared declarations
        self.kernels = kernels  # per kernel: its functions and its entry point kernel_<i>
        self.main = main        # the shared globals' definitions, em_init, the regions
        # units of their own whatever the graph (the packed products' tiles and packing, the
        # Winograd, im2col + BLAS and batch norm loops): the same text in every graph that calls them, so their object, cached
        # by its content, compiles once and every later graph links it (0.3 s of gcc's CPU for
        # the GPT step's)
        self.helpers = list(helpers)

    def __str__(self):
        return self.head + "".join(self.kernels) + self.main + "".join(h.replace(_HEADER, "", 1) for h in self.helpers)

    def units(self, count, built=lambda unit: False):
        """At most ``count`` translation units of the kernels, in order, the first holding
        ``main``; then the helpers, one unit each. Units are cut to balance the compiler's
        time (:func:`toolchain.compile_cost`) over ``count // 2`` CPUs, two units each, the
        costliest compiled first: one CPU's share is the helpers and one unit of kernels, each
        other CPU's two units. A helper whose object is cached already (``built(unit)``, as
        :func:`toolchain.has_object`) costs nothing: with none to compile, the kernels make
        ``count`` units of equal cost. (Cut by length, the GPT step's four units took 0.24-0.90 s of
        gcc, one CPU idle for the last 0.4 s.) A kernel goes to the unit its middle falls in:
        cutting after the boundary put the Conv2d step's two large kernels in one unit, 1.0 s
        of gcc while the others took 0.4."""
        total = sum(map(len, self.kernels)) + len(self.main)
        count = max(1, min(count, total // self.MIN_UNIT_CHARS))
        texts = [self.main] + self.kernels
        costs = [compile_cost(t) for t in texts]
        helpers = sum(compile_cost(h) for h in self.helpers if not built(h))
        ends = list(accumulate(_shares(sum(costs), helpers, count)))
        units, done = [[]], 0.0
        for text, cost in zip(texts, costs):
            if units[-1] and done + cost / 2 > ends[len(units) - 1] and len(units) < len(ends):
                units.append([])
            units[-1].append(text)
            done += cost
        return [self.head + "".join(texts) for texts in units] + self.helpers


def _shares(kernels, helpers, count):
    """The compile costs of the units of kernels (costing ``kernels`` in all) that ``units(count)``
    cuts beside helper units costing ``helpers``: ``count`` equal ones without helpers; with them,
    on ``count // 2`` CPUs, one CPU's share is the helpers and one unit, each other CPU's two
    units (the helpers alone where they cost a CPU's share: the kernels on the other CPUs)."""
    cpus = count // 2
    if not helpers or cpus < 2:
        units = count if not helpers else max(1, count - 1)
        return [kernels / units] * units
    share = (kernels + helpers) / cpus
    if share <= helpers:
        return [kernels / (2 * cpus - 2)] * (2 * cpus - 2)
    return [share - helpers] + [share / 2] * (2 * cpus - 2)
