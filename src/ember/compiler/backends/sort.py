"""C kernel for ``sort`` and ``argsort`` along a dim (:mod:`ember._ops.sort`: ``Sort``, two
results, and ``Argsort``), which ran as NumPy's stable argsort and ``take_along_axis`` inside
compiled graphs before; ``msort``, ``kthvalue`` and ``median`` are built on them.

Eager's order, which is torch's: stable (equal elements, -0.0 and 0.0 among them, keep their
order, ascending and descending alike), NaN after every number ascending and before every
number descending. Each slice along ``dim`` is copied into a contiguous row of keys, its
positions sorted by a stable merge sort (runs of 16 by insertion, then merges of doubling
width between two position buffers: n log n), and the sorted values and their int64 positions
written to the results the graph reads. The input may be strided (its ``Loc`` strides); the
results are contiguous. Buffers come from ``malloc``; the kernel returns 1 when there is no
memory (the driver raises MemoryError).

``topk`` (``Topk``: the first ``k`` of that order) selects instead of sorting: each row's
positions go through a heap of the ``k`` best so far whose root is the worst of them (an
element enters only if strictly before the root: a later equal one never displaces an earlier
one, so ties stay in index order), n log k; the heap is then emptied worst first into the
results from the back, k log k. Torch's own topk orders ties its own way; ember's order,
eager and compiled alike, is its stable sort's.
"""
import numpy as np

__all__ = ["OPS", "supported", "sort_kernel"]

OPS = ("Sort", "Argsort", "Topk")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _dtype(node):
    d = node.meta["dtype"]
    return np.dtype(getattr(d, "np", d))


def supported(node):
    """A float input of known, non-empty shape with at least one dim, sorted along one."""
    x = node.args[0] if node.args else None
    if not hasattr(x, "meta") or _dtype(x) not in _FLOATS or len(node.args) != 1:
        return False
    shape = tuple(x.meta["shape"])
    k = node.kwargs.get("k", 1)
    return bool(shape) and all(type(n) is int and n > 0 for n in shape) and type(node.kwargs.get("dim")) is int \
        and type(k) is int and k > 0


def _before(a, b, descending):
    """C: ``a`` sorts strictly before ``b`` (NaN the largest ascending, the first descending)."""
    return f"({a} < {b} || ({b} != {b} && {a} == {a}))" if not descending else f"({a} > {b} || ({a} != {a} && {b} == {b}))"


def _worse(i, j, descending):
    """C: position ``i`` of ``key`` comes after position ``j`` in the stable order."""
    return f"({_before(f'key[{j}]', f'key[{i}]', descending)} || (!{_before(f'key[{i}]', f'key[{j}]', descending)} && {i} > {j}))"


def _at(offset, strides, loop_vars):
    return " + ".join([str(offset)] + [f"{v}*{s}" for v, s in zip(loop_vars, strides) if s != 0])


def sort_kernel(src, node, fname, ctypes, results):
    """C lines of ``static int fname(void** p)`` writing the ``results`` (0: the values, 1: the
    int64 positions; Loc of each the graph reads) of a Sort or Argsort ``node``."""
    plan = src.plan
    x = plan.loc[node.args[0]]
    if node.target.name == "Topk":
        return _topk_kernel(src, node, fname, ctypes, results)
    dim, descending = node.kwargs["dim"] % len(x.shape), bool(node.kwargs.get("descending", False))
    t, n = ctypes[x.dtype], x.shape[dim]
    names, loops, lines = _row_head(src, x, dim, fname, t, ("pos", 2 * n), results,
                                    f"/* {node.target.name} along dim {dim} of {list(x.shape)}"
                                    f"{', descending' if descending else ''} (stable): {node.name} */")
    lines += [f"        int64_t* a_ = pos; int64_t* b_ = pos + {n};",
              f"        for (long s = 0; s < {n}; s += 16) {{  /* insertion sort of each run of 16 */",
              f"            long e = s + 16 < {n} ? s + 16 : {n};",
              "            for (long i = s; i < e; i++) {",
              "                long j = i;",
              f"                for (; j > s && {_before('key[i]', 'key[a_[j - 1]]', descending)}; j--) a_[j] = a_[j - 1];",
              "                a_[j] = i;",
              "            }",
              "        }",
              f"        for (long w = 16; w < {n}; w *= 2) {{  /* merges of runs of width w, a_ into b_ */",
              f"            for (long s = 0; s < {n}; s += 2 * w) {{",
              f"                long m = s + w < {n} ? s + w : {n}, e = s + 2 * w < {n} ? s + 2 * w : {n};",
              "                long i = s, j = m, d = s;",
              "                while (i < m && j < e)  /* the right run's first goes first only if strictly before */",
              f"                    b_[d++] = {_before('key[a_[j]]', 'key[a_[i]]', descending)} ? a_[j++] : a_[i++];",
              "                while (i < m) b_[d++] = a_[i++];",
              "                while (j < e) b_[d++] = a_[j++];",
              "            }",
              "            int64_t* swap = a_; a_ = b_; b_ = swap;",
              "        }",
              f"        for (long j = 0; j < {n}; j++) {{"]
    for r, loc in results.items():
        at = _at(0, loc.strides, loops) + f" + j*{loc.strides[dim]}"
        lines.append(f"            {names[r][0]}[{at}] = {'key[a_[j]]' if r == 0 else 'a_[j]'};")
    return lines + ["        }", "    }", "    free(key); free(pos);", "    return 0;", "}"]


def _sift_down(descending, k):
    """C lines: the heap ``h`` of ``k`` positions (the worst at the root), its root replaced,
    restored."""
    return ["for (long r = 0;;) {",
            "    long c = 2 * r + 1;",
            f"    if (c >= {k}) break;",
            f"    if (c + 1 < {k} && {_worse('h[c + 1]', 'h[c]', descending)}) c++;",
            f"    if (!{_worse('h[c]', 'h[r]', descending)}) break;",
            "    int64_t swap = h[r]; h[r] = h[c]; h[c] = swap; r = c;",
            "}"]


def _row_head(src, x, dim, fname, t, scratch, results, comment):
    """The opening both kernels share: ``comment``, the function, a ``key`` row and the int64
    work array ``scratch`` = (name, length) from malloc, the results' pointers (``v``: values,
    ``ix``: positions), and the loops over every row along ``dim`` with the row copied into
    ``key``. Returns (names, loop variables, lines)."""
    (work, count), loops = scratch, [f"i{d}" for d in range(len(x.shape))]
    names = {0: ("v", t), 1: ("ix", "int64_t")}
    lines = [comment, f"static int {fname}(void** restrict p) {{",
             f"    const {t}* restrict x = {src.pointer(x)};",
             f"    {t}* key = malloc({x.shape[dim]} * sizeof({t}));",
             f"    int64_t* {work} = malloc({count} * sizeof(int64_t));",
             f"    if (!key || !{work}) {{ free(key); free({work}); em_bad_where = -1; return 1; }}"]
    lines += [f"    {names[r][1]}* restrict {names[r][0]} = {src.pointer(loc)} + {loc.offset};" for r, loc in results.items()]
    lines += [f"    for (long {v} = 0; {v} < {1 if d == dim else m}; {v}++)" for d, (v, m) in enumerate(zip(loops, x.shape))]
    lines += ["    {", f"        const {t}* row = x + {_at(x.offset, x.strides, loops)};",
              f"        for (long j = 0; j < {x.shape[dim]}; j++) key[j] = row[j*{x.strides[dim]}];"]
    return names, loops, lines


def _topk_kernel(src, node, fname, ctypes, results):
    """C lines of ``fname`` writing Topk's values (result 0) and indices (1) as Sort's first k."""
    x = src.plan.loc[node.args[0]]
    dim, k = node.kwargs["dim"] % len(x.shape), node.kwargs["k"]
    descending = bool(node.kwargs.get("largest", True))
    t, n = ctypes[x.dtype], x.shape[dim]
    names, loops, lines = _row_head(src, x, dim, fname, t, ("h", k), results,
                                    f"/* Topk: {k} {'largest' if descending else 'smallest'} along dim {dim} of "
                                    f"{list(x.shape)} (ties in index order): {node.name} */")
    lines += [f"        for (long j = 0; j < {k}; j++) {{  /* the first k, heaped by sifting each up */",
              "            h[j] = j;",
              "            for (long c = j; c > 0;) {",
              "                long r = (c - 1) / 2;",
              f"                if (!{_worse('h[c]', 'h[r]', descending)}) break;",
              "                int64_t swap = h[r]; h[r] = h[c]; h[c] = swap; c = r;",
              "            }",
              "        }",
              f"        for (long j = {k}; j < {n}; j++) {{  /* the rest: in if strictly before the worst */",
              f"            if (!{_before('key[j]', 'key[h[0]]', descending)}) continue;",
              "            h[0] = j;"]
    lines += ["            " + ln for ln in _sift_down(descending, k)]
    lines += ["        }",
              f"        for (long e = {k} - 1; e >= 0; e--) {{  /* the worst out to the back */",
              "            int64_t j = h[0];"]
    for r, loc in results.items():
        at = _at(0, loc.strides, loops) + f" + e*{loc.strides[dim]}"
        lines.append(f"            {names[r][0]}[{at}] = {'key[j]' if r == 0 else 'j'};")
    lines += ["            h[0] = h[e];"]
    lines += ["            " + ln for ln in _sift_down(descending, "e")]
    return lines + ["        }", "    }", "    free(key); free(h);", "    return 0;", "}"]
