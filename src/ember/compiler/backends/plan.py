"""Scheduling a graph for the C backend: where each value lives and which kernel computes it.

Where values live (storages, locations, views as strides) is :mod:`.locs`. Passes, each a
small function over the graph:
  :func:`inline_into_reductions` marks single-use elementwise producers of a sum, computed
      inside the sum's loop instead of stored;
  :func:`gather_scatters` makes a sum of index gradients (q, k and v's of one qkv tensor) one
      kernel that copies each gradient into its view of the sum;
  :func:`schedule` walks the nodes in order, giving each value a :class:`Loc` (storage, offset,
      strides: views cost nothing) and putting each node into a kernel; elementwise nodes join an
      open loop over the same shape when their operands are ready before it (a chain, and
      independent chains over one shape, become one loop; two optimizer updates do not);
  :func:`elide_clones` lets a kernel write its result straight into the memory of the one
      Clone that reads it (a leaf's first gradient), dropping the copy;
  :func:`fold_bias_sums` lets the weight-gradient product ``dY^T @ X`` sum the rows of its
      A operand (a bias gradient's ``dY.sum(0)``) while it reads them;
  :func:`fuse_epilogues` moves the loop that reads a GEMM's result right behind it, to run
      per output block while the block is in cache;
  :func:`write_in_place` lets a loop store a mutation's value straight into the placeholder
      (an optimizer update writing the parameter) when nothing reads the old value afterwards;
  :func:`overwrite_operands` lets a loop store a value over an operand nothing reads later.

In a graph with size symbols (dynamic shapes) sizes, strides, offsets and byte counts are
:class:`~ember.compiler.symbolic.Expr` s of the symbols: the kernels of :data:`SYMBOLIC_KINDS`
take them as they come, other nodes run from Python, and buffers whose size depends on a
symbol keep their own memory (sized per call).
"""
from ..graph import kwarg_nodes, nodes_in
from ..symbolic import Expr, SymbolicSizeError, free_symbols
from .kernels import CTYPES, Part, _dtype, kind_of, norm_backward_operands, operands, reads
from .locs import Loc, Storage, _numel, contiguous_strides, scatter_loc, view_loc
from .updates import joins_updates

__all__ = ["Storage", "Loc", "Kernel", "Plan", "make_plan", "scatter_loc", "batched_operands", "SYMBOLIC_KINDS"]

# The kernels whose generators compute every size, stride and trip count from symbolic sizes.
SYMBOLIC_KINDS = frozenset({"view", "elementwise", "sum", "softmax", "log_softmax", "gemm", "cross_entropy",
                            "cross_entropy_backward", "norm_stats", "norm_backward", "result", "bmm", "attention",
                            "softmax_grad", "embedding_backward", "scatter", "index", "pool", "conv", "cat", "rnn"})


class Kernel:
    """A unit of the schedule: ``kind`` is "python" (one node's forward), "loop" (fused
    elementwise nodes over ``shape``), or one node's reduction, row or GEMM kernel."""

    def __init__(self, kind, nodes, shape=None):
        self.kind, self.nodes, self.shape = kind, list(nodes), shape
        self.epilogue = None       # a loop run per block of this GEMM's result
        self.in_epilogue = False   # this loop is such an epilogue
        self.sums = []             # Sum nodes it computes: its A operand's row sums (fold_bias_sums)

    def __repr__(self):
        return f"{self.kind}[{', '.join(n.name for n in self.nodes)}]"


class Plan:
    """How a captured graph runs as generated code: each node's location (``loc``: a
    :class:`Loc` over a :class:`Storage`), its kernel ``kind`` ("elementwise", "gemm", "sum",
    "python", ...), the ordered ``kernels`` (fused loops, GEMMs with their epilogues), the
    mutations written in place and the buffers shared; built by :func:`make_plan`."""

    def __init__(self, graph, have_blas=False):
        self.graph, self.have_blas = graph, have_blas  # BLAS found: GEMM kernels may call it
        self.loc, self.kernels, self.kind, self.inlined = {}, [], {}, set()
        self.position = {}  # node -> index of the kernel that computes it (-1: placeholder)
        self.in_place = {}  # mutation value node -> placeholder whose array it is written into
        self.scatter_sums = {}  # Add node -> the IndexBackward nodes whose sum it is (gather_scatters)


def _is_node(a):
    return hasattr(a, "meta") and hasattr(a, "users")


def _args(node):
    return [a for a in node.args if _is_node(a)]


def _reads(node):
    """The nodes a kernel computing ``node`` reads (of an update, those its result uses; an index array too)."""
    return [a for a in reads(node) if _is_node(a)] + kwarg_nodes(node)


def _special_users(graph):
    """Nodes whose values leave the graph: outputs and mutation values."""
    return set(o for o in graph.outputs if _is_node(o)) | {v for _, v in graph.mutations}


def inline_into_reductions(plan, escaping):
    """Marks elementwise nodes used once (reading no :class:`Part`: its own loop places that), by
    a sum or by another marked node over the same shape: the sum's loop computes them (``sum(g * x)``)."""
    def visit(node, shape):
        for a in _args(node):
            if (plan.kind.get(a) == "elementwise" and len(a.users) == 1 and a not in escaping
                    and a.meta["shape"] == shape and not any(isinstance(p, Part) for p in operands(a))):
                plan.inlined.add(a)
                visit(a, shape)
    for node in plan.graph.nodes:
        if plan.kind.get(node) == "sum":
            visit(node, node.args[0].meta["shape"])


def gather_scatters(plan, escaping):
    """Finds trees of Adds (alpha 1, each used once, one shape and dtype) whose leaves are all
    "scatter" nodes (IndexBackward: zeros with g in a view), such as the gradient of a qkv
    tensor that q, k and v were sliced from. The root becomes one "scatter" kernel that writes
    each g into its view of the sum; the Adds and leaves inside are computed by it (in
    ``plan.inlined``). Measured on the tiny GPT's step: three zeroed 1.5 MB arrays and two Add
    loops over them per layer (0.6 ms) become three copies (0.1 ms)."""
    def leaves(node, shape, dtype, root):
        if node is not root and (len(node.users) != 1 or node in escaping or node in plan.inlined):
            return None
        if tuple(node.meta.get("shape", ())) != shape or _dtype(node) != dtype:
            return None
        if plan.kind.get(node) == "scatter" and node is not root:
            return [node]
        if plan.kind.get(node) != "elementwise" or getattr(node.target, "name", None) != "Add" or node.kwargs.get("alpha", 1) != 1 \
                or len(node.args) != 2 or not all(_is_node(a) for a in node.args):
            return None
        found = [leaves(a, shape, dtype, root) for a in node.args]
        return None if None in found or node.args[0] is node.args[1] else found[0] + found[1]
    for node in reversed(plan.graph.nodes):
        if node.op != "call_op" or node in plan.inlined or plan.kind.get(node) != "elementwise":
            continue
        found = leaves(node, tuple(node.meta["shape"]), _dtype(node), node)
        if found is None:
            continue
        plan.kind[node] = "scatter"
        plan.scatter_sums[node] = found

        def claim(add):  # the tree's inner Adds and its leaves
            for a in add.args:
                plan.inlined.add(a)
                if a not in found:
                    claim(a)
        claim(node)


def _align(loc, domain):
    """The loc's strides over ``domain`` (right-aligned broadcasting: 0 where it repeats)."""
    lead = len(domain) - len(loc.shape)
    return [0] * lead + [0 if (n == 1 and m != 1) else s for n, m, s in zip(loc.shape, domain[lead:], loc.strides)]


def _part_loc(plan, part):
    """Where a :class:`Part` lives: inside its source's contiguous memory, or None."""
    src = plan.loc.get(part.source)
    if src is None or not src.contiguous:
        return None
    shape = part.meta["shape"]
    return Loc(src.storage, shape, contiguous_strides(shape), src.dtype, src.offset)


def _permuted_loc(node, loc):
    """A value read only through one Permute is laid out in the permuted order: the permuted
    view is contiguous, so a reshape after it (GPT's (3, B, H, T, D) qkv gradient back to
    (B, T, 3C)) is free instead of a strided copy."""
    if len(node.users) != 1 or getattr(node.users[0].target, "name", None) != "Permute":
        return loc
    permute = node.users[0]
    dims = permute.kwargs.get("dims", permute.args[1] if len(permute.args) > 1 else None)
    shape = tuple(permute.meta["shape"])
    strides = [0] * len(shape)
    for i, stride in zip(dims, contiguous_strides(shape)):
        strides[i] = stride
    return Loc(Storage("buffer", node, shape, loc.dtype), loc.shape, strides, loc.dtype)


def _new_loc(node, kind, shape=None, dtype=None):
    """A new storage for ``node``'s value (of the node's shape and dtype unless given)."""
    shape = tuple(node.meta["shape"]) if shape is None else shape
    dtype = _dtype(node) if dtype is None else dtype
    return Loc(Storage(kind, node, shape, dtype), shape, contiguous_strides(shape), dtype)


def schedule(plan):
    graph = plan.graph
    open_loops = []
    for node in graph.nodes:
        if node.op == "placeholder":
            plan.loc[node] = _new_loc(node, "input")
            plan.position[node] = -1
            continue
        if node.op != "call_op":
            continue
        kind = plan.kind.get(node)
        if kind == "view":
            src = node.args[0]
            loc = view_loc(node, plan.loc.get(src), graph.symbol_ranges)
            if loc is not None:
                plan.loc[node] = loc
                plan.position[node] = plan.position[src]
                continue
            # a reshape of strided memory: C copies it into a contiguous buffer
            reshape = getattr(node.target, "name", None) == "View" and _dtype(node) in CTYPES
            kind = plan.kind[node] = "copy" if reshape else None
        if node in plan.inlined:
            plan.position[node] = len(plan.kernels)  # computed by the (later) sum kernel
            continue
        if kind == "result":  # written by the layer-norm backward or a recurrent kernel, if C runs it
            if plan.kind.get(node.args[0]) in ("norm_backward", "rnn", "extreme", "sort"):
                plan.loc[node] = _new_loc(node, "buffer")
                plan.position[node] = plan.position[node.args[0]]
                continue
            kind = plan.kind[node] = None
        if kind == "update":  # computed by the loops of the getitem nodes that pick its results
            plan.position[node] = -1
            continue
        parts = [a for a in operands(node) if isinstance(a, Part)] if kind == "elementwise" else []
        for part in parts:
            plan.loc[part] = _part_loc(plan, part)
            plan.position[part] = plan.position[part.source]
        if any(plan.loc[part] is None for part in parts):
            kind = plan.kind[node] = None
        if kind == "elementwise":
            plan.loc[node] = _new_loc(node, "buffer")
            shape = tuple(node.meta["shape"])
            for k in reversed(open_loops):
                index = plan.kernels.index(k)
                if k.shape == shape and (not shape or joins_updates(k.nodes, node)) and all(plan.position[a] < index or
                                            (a in k.nodes and plan.loc[a].storage.node is a and
                                             plan.loc[a].shape == shape) for a in _reads(node)):
                    k.nodes.append(node)
                    plan.position[node] = index
                    break
            else:
                k = Kernel("loop", [node], shape)
                open_loops.append(k)
                plan.position[node] = len(plan.kernels)
                plan.kernels.append(k)
            continue
        if kind is not None and not _operands_fit(node, kind, plan.loc):
            kind = plan.kind[node] = None
        if kind == "norm_stats":  # the mean, then the variance: each of the kept shape
            x = node.args[0]
            kept = tuple(1 if i in node.kwargs["axes"] else n for i, n in enumerate(x.meta["shape"]))
            plan.loc[node] = _new_loc(node, "buffer", (2,) + kept, _dtype(x))
        elif "shape" in node.meta and not isinstance(node.meta.get("dtype"), (list, tuple)):
            plan.loc[node] = _new_loc(node, "python" if kind is None else "buffer")
            if node in plan.scatter_sums:
                plan.loc[node] = _permuted_loc(node, plan.loc[node])
        plan.position[node] = len(plan.kernels)
        plan.kernels.append(Kernel(kind or "python", [node]))


def gemm_operands(node, loc):
    """(A, B, bias) of a GEMM node (``Matmul(a, b)``, ``Addmm(bias, a, b)``) as (Loc, (row
    stride, column stride)) pairs over the 2-D problem C[M, N] = A[M, K] B[K, N], and the bias's
    Loc or None."""
    a, b = loc[node.args[-2]], loc[node.args[-1]]
    if len(a.shape) > 2:  # a contiguous stack of rows folds into one product
        sa = (a.shape[-1], 1) if a.contiguous else None
    else:
        sa = a.strides
    bias = node.args[0] if node.target.name == "Addmm" else None
    return (a, sa), (b, b.strides), (loc[bias] if bias is not None else None)


def batched_operands(node, loc):
    """(A, B) Locs of a product of stacks of matrices: Matmul's operands, or AttentionWeights'
    query and key, the key read transposed (its last two dimensions swapped)."""
    a, b = loc[node.args[0]], loc[node.args[1]]
    if node.target.name == "AttentionWeights":
        b = Loc(b.storage, b.shape[:-2] + b.shape[-2:][::-1], b.strides[:-2] + b.strides[-2:][::-1], b.dtype, b.offset)
    return a, b


def _blas_layout(strides, rows, cols):
    """("N" or "T", leading dimension) for a row-major operand, or None when BLAS cannot read it."""
    if strides is None:
        return None
    s0, s1 = strides
    if s1 == 1 and _covers(s0, cols):
        return "N", s0
    if s0 == 1 and _covers(s1, rows):
        return "T", s1
    return None


def _covers(stride, n):
    """Whether ``stride`` >= max(1, n): compared as ints, or equal expressions (a symbolic
    row length, its row's stride; the C code takes max(1, ·) of a leading dimension)."""
    if not isinstance(stride, Expr) and not isinstance(n, Expr):
        return stride >= max(1, n)
    return bool(stride == n)


def _operands_fit(node, kind, loc):
    """Whether the kernel can address its operands' layouts (else it runs from Python)."""
    if kind in ("softmax", "log_softmax", "norm_stats", "logsumexp", "argmax"):
        return loc[node.args[0]].contiguous
    if kind in ("cross_entropy", "cross_entropy_backward"):
        x = node.args[0] if kind == "cross_entropy" else node.args[3]
        return loc[x].contiguous and loc[node.args[1]].contiguous
    if kind in ("bmm", "attention"):
        (a, b), out = batched_operands(node, loc), node.meta["shape"]
        m, k, n = out[-2], a.shape[-1], out[-1]
        return _blas_layout(a.strides[-2:], m, k) is not None and _blas_layout(b.strides[-2:], k, n) is not None
    if kind == "softmax_grad":
        return all(loc[a].contiguous for a in node.args[:2])
    if kind == "norm_backward":
        return all(loc[a].contiguous for a in norm_backward_operands(node)[0] if a is not None)
    if kind == "embedding_backward":
        return loc[node.args[0]].contiguous and loc[node.args[1]].contiguous
    if kind == "gather":  # strided operands read in place; the index in C order
        return loc[node.kwargs["index"]].contiguous
    if kind == "conv":  # strided 4-D operands are read in place; the weight and bias contiguous
        return all(loc[a].contiguous for a in _args(node)[1:] if node.target.name != "ConvWeight")
    if kind == "rnn":  # the output's gradient may have strided rows (one direction's half of it)
        g_out = node.args[0] if node.target.name == "RNNLayerBackward" else None
        return all(loc[a].contiguous or (a is g_out and loc[a].strides[1] == 1) for a in _args(node))
    if kind == "pool":  # average pooling reads its operand where it lies
        return node.target.name in ("AvgPool", "AvgPoolTranspose") or all(loc[a].contiguous for a in _args(node))
    if kind == "gemm":
        (a, sa), (b, sb), _ = gemm_operands(node, loc)
        m, k = _numel(a.shape[:-1]), a.shape[-1]
        n = node.meta["shape"][-1]
        return _blas_layout(sa, m, k) is not None and _blas_layout(sb, k, n) is not None
    return True


# the kernels that write a value whole into its own buffer, so a Clone of it can own that buffer
# (not a loop: it stores its values after loading its operands, and may read the Clone)
_WRITERS = frozenset({"gemm", "sum", "result", "bmm", "embedding_backward"})


def _clone_source(plan, node, escaping):
    """The node whose kernel can write a Clone's value in place of the copy: the Clone's
    operand, or the source of the free views it is read through (a weight gradient's product,
    laid out as the transposed view it is read through), when its kernel writes its own buffer
    of the Clone's size and nothing else reads it; else None."""
    a, loc = node.args[0], plan.loc[node]
    aloc, chain = plan.loc.get(a), [a]
    while plan.kind.get(chain[-1]) == "view":
        chain.append(chain[-1].args[0])
    src = chain[-1]
    if (aloc is None or plan.kind.get(src) not in _WRITERS or any(len(n.users) != 1 or n in escaping or n in plan.inlined
                                                                  for n in chain)):
        return None
    storage = aloc.storage
    if (storage.node is not src or storage.kind != "buffer" or storage.alias is not None or storage.sized
            or loc.storage.sized or storage.nbytes != loc.storage.nbytes or not aloc.contiguous or aloc.offset
            or aloc.shape != loc.shape or aloc.dtype != loc.dtype or src in plan.scatter_sums):
        return None
    return src


def elide_clones(plan, escaping):
    """A Clone computed by a loop, of a value another kernel writes whole into its own buffer
    (a GEMM, a sum, the layer-norm backward) that nothing else reads: that kernel writes into
    the Clone's memory instead and the copy is dropped (the Clone becomes a "result" of it).
    The autograd engine clones each leaf's first gradient (``.grad`` must not alias the
    graph's memory), so a training step copied each weight and bias gradient once more: in
    the tiny GPT's step 27 of its 28 such copies go, 1.6 MB read and written."""
    for kernel in [k for k in plan.kernels if k.kind == "loop"]:
        for node in list(kernel.nodes):
            if getattr(node.target, "name", None) != "Clone" or node in plan.inlined:
                continue
            src = _clone_source(plan, node, escaping)
            if src is not None:
                plan.loc[src].storage.alias = plan.loc[node].storage
                plan.kind[node] = "result"
                kernel.nodes.remove(node)
        if not kernel.nodes:
            plan.kernels.remove(kernel)
    _renumber(plan)


def _row_sum_of(plan, kernel):
    """The GEMM kernel before ``kernel`` (a sum over dim 0 of a contiguous 2-D [K, M] value
    read from memory) whose A operand is that value transposed ([M, K], strides (1, M)): the
    sum is A's row sums; else None."""
    node = kernel.nodes[0]
    x = node.args[0]
    dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else None)
    xloc, out = plan.loc.get(x), plan.loc.get(node)
    if (node.target.name != "Sum" or tuple(dim if isinstance(dim, (tuple, list)) else (dim,)) not in ((0,), (-2,))
            or node.kwargs.get("keepdim", False) or x in plan.inlined or xloc is None or out is None
            or len(xloc.shape) != 2 or not xloc.contiguous or out.dtype != xloc.dtype
            or not all(isinstance(v, int) for v in xloc.shape)):
        return None
    for g in plan.kernels[:plan.kernels.index(kernel)]:
        if g.kind == "gemm" and not g.sums and xloc.shape[1] > 1:
            (a, sa), _, _ = gemm_operands(g.nodes[0], plan.loc)
            if (a.storage.resolve() is xloc.storage.resolve() and a.offset == xloc.offset
                    and a.shape == xloc.shape[::-1] and sa == (1, xloc.shape[1])):
                return g
    return None


def fold_bias_sums(plan):
    """A bias gradient ``dY.sum(0)`` is computed by the weight gradient's product ``dY^T @ X``
    that reads the same dY as its A operand: the packed kernel adds each block of dY's rows into
    the sums while it transposes the block (in registers), the other candidates in a loop before
    the product. Either way each sum adds the rows in order, as the sum kernel did (the same
    bits). The sum's own pass read dY (2 MB a layer in the tiny GPT's step) again from memory."""
    for kernel in [k for k in plan.kernels if k.kind == "sum"]:
        g = _row_sum_of(plan, kernel)
        if g is not None:
            g.sums.append(kernel.nodes[0])
            plan.kernels.remove(kernel)
    _renumber(plan)


def _takes_epilogue(kernel):
    """GEMMs, and stride-1 convolutions without crops (their kernel finishes a sample at a time)."""
    if kernel.kind == "gemm":
        return True
    node = kernel.nodes[0]
    k = node.kwargs
    return (kernel.kind == "conv" and node.target.name == "Conv" and tuple(k["stride"]) == (1, 1)
            and min(min(pair) for pair in k["padding"]) >= 0)


def fuse_epilogues(plan):
    """Moves the first consumer loop over a GEMM's (or a convolution's) shape right behind it,
    to run per block of its output while the block is in cache."""
    for g in [k for k in plan.kernels if _takes_epilogue(k)]:
        node = g.nodes[0]
        results = _result_views(plan, node)
        for loop in plan.kernels[plan.kernels.index(g) + 1:]:
            result = next((r for r in results if tuple(r.meta["shape"]) == loop.shape), None)
            if loop.kind != "loop" or result is None or loop.in_epilogue:
                continue
            reads = {a for n in loop.nodes for a in _reads(n) if a not in loop.nodes}
            if result not in reads:
                continue
            gi = plan.kernels.index(g)
            if all(plan.position[a] < gi or a is result for a in reads) and all(
                    plan.loc[a].storage.node is not None for a in reads):
                plan.kernels.remove(loop)
                g.epilogue, loop.in_epilogue = loop, True
                for n in loop.nodes:
                    plan.position[n] = gi
                _renumber(plan)
            break


def _result_views(plan, node):
    """A GEMM's (or convolution's) result node and the free reshapes of it that keep its rows
    (F.linear's ``view`` of a product over folded rows back to (*, N)): a loop over one of them
    reads the result row by row, so it can run per block of the product's rows."""
    results = [node]
    out = plan.loc.get(node)
    for user in node.users:
        loc = plan.loc.get(user)
        if (getattr(user.target, "name", None) == "View" and loc is not None and out is not None
                and loc.storage is out.storage and loc.contiguous and out.contiguous
                and loc.shape[-1:] == out.shape[-1:]):
            results.append(user)
    return results


def _renumber(plan):
    index = {id(k): i for i, k in enumerate(plan.kernels)}
    for k in plan.kernels:
        for n in k.nodes + k.sums + (k.epilogue.nodes if k.epilogue else []):
            plan.position[n] = index[id(k)]
    for n, kind in plan.kind.items():
        if kind in ("result", "view") and n in plan.loc:  # (graph order: a view's source comes first)
            plan.position[n] = plan.position[n.args[0]]
    for n in plan.inlined:
        user = n.users[0]
        while user in plan.inlined:
            user = user.users[0]
        plan.position[n] = plan.position[user]


def write_in_place(plan):
    """A mutation's value computed by a loop over the placeholder's shape is stored straight
    into the placeholder's array when every other read of that array comes earlier, or in the
    same loop at the same element."""
    graph = plan.graph
    # every read of a kernel, once (an update's reads are found by writing its equations)
    kernel_reads = [(node, a, plan.loc[a]) for node in graph.nodes
                    if node.op == "call_op" and plan.kind.get(node) not in ("view", "update")
                    for a in _reads(node) if a in plan.loc]
    for placeholder, value in graph.mutations:
        ploc, vloc = plan.loc.get(placeholder), plan.loc.get(value)
        if vloc is None or plan.kind.get(value) != "elementwise" or value in plan.inlined:
            continue
        if vloc.shape != ploc.shape or vloc.dtype != ploc.dtype or vloc.storage.node is not value:
            continue
        where = plan.position[value]
        loop = next(k for k in plan.kernels if value in k.nodes or (k.epilogue and value in k.epilogue.nodes))
        members = loop.epilogue.nodes if loop.epilogue and value in loop.epilogue.nodes else loop.nodes
        safe = all(plan.position[node] < where or node in members and a is placeholder
                   for node, a, loc in kernel_reads if loc.storage.resolve() is ploc.storage)
        if safe and placeholder not in plan.in_place.values():
            vloc.storage.alias = ploc.storage
            plan.in_place[value] = placeholder


def overwrite_operands(plan, escaping):
    """A loop's stored value takes the buffer of an operand it reads at the same element (same
    shape and layout, the whole buffer: a product or a free view of it) when nothing reads that
    buffer after the loop: each element is loaded before it is overwritten. :func:`reuse_buffers` only passes a buffer on to a later kernel,
    so a GEMM's epilogue (the GELU gradient of ``dY @ W``) wrote its 2 MB result into fresh
    memory beside the product's, which the L2 then evicted; now it overwrites the product."""
    kernel_reads = [(node, a) for node in plan.graph.nodes
                    if node.op == "call_op" and plan.kind.get(node) not in ("view", "update")
                    for a in _reads(node) if a in plan.loc]
    kept = {plan.loc[e].storage.resolve() for e in escaping if e in plan.loc}  # outputs' memories
    taken = set()
    for loop in [k for k in plan.kernels if k.kind == "loop"] + [k.epilogue for k in plan.kernels if k.epilogue]:
        members, where = set(loop.nodes), plan.position[loop.nodes[0]]
        for v in loop.nodes:
            vloc = plan.loc.get(v)
            if (v in escaping or vloc is None or vloc.storage.node is not v or vloc.storage.alias is not None
                    or vloc.storage.sized or all(u in members for u in v.users)):
                continue
            for a in [a for n in loop.nodes for a in _reads(n) if a not in members and a in plan.loc]:
                aloc = plan.loc[a]
                s = aloc.storage
                if (s in kept or s.kind != "buffer" or s.alias is not None or s in taken or s.sized
                        or a in plan.scatter_sums or aloc.shape != vloc.shape or aloc.dtype != vloc.dtype
                        or aloc.strides != vloc.strides or aloc.offset != vloc.offset or s.nbytes != vloc.storage.nbytes):
                    continue
                if all((plan.position[node] < where and plan.kind.get(node) is not None) or (node in members and b is a)
                       for node, b in kernel_reads if plan.loc[b].storage.resolve() is s):
                    vloc.storage.alias = s
                    taken.add(s)
                    break

def reuse_buffers(plan):
    """Memory planning: a buffer whose value is dead gives its memory to a value computed by a
    later kernel (the smallest free one that fits). Values Python reads (it may keep views of
    them), outputs and mutation values live to the end of the step."""
    graph, end = plan.graph, len(plan.kernels)
    last = {}
    for node in graph.nodes:
        if node.op != "call_op" or plan.kind.get(node) in ("view", "update"):
            continue
        python = plan.kind.get(node) is None
        for a in _reads(node):
            loc = plan.loc.get(a)
            if loc is not None:
                s = loc.storage.resolve()
                last[s] = max(last.get(s, -1), end if python else plan.position[node])
    for value in [o for o in graph.outputs if _is_node(o)] + [v for _, v in graph.mutations]:
        if value in plan.loc:
            last[plan.loc[value].storage.resolve()] = end
    buffers = {}
    for node, loc in plan.loc.items():
        s = loc.storage
        if s.kind == "buffer" and s.alias is None and s.node is node and not s.sized:
            buffers[s] = plan.position[node]
    # course:begin 18/reuse-buffers
    # hint: walk the buffers in the order they are born; a buffer whose last use (last[s]) comes before
    # hint: this one's birth is free; give the new buffer the smallest free one that fits (s.alias = host),
    # hint: and keep the host busy until the latest last use of all its tenants
    free, live = [], []  # free: (nbytes, storage); live: (last use, storage)
    for s, born in sorted(buffers.items(), key=lambda item: item[1]):
        for item in [x for x in live if x[0] < born]:
            live.remove(item)
            free.append((item[1].nbytes, item[1]))
        fits = sorted((f for f in free if f[0] >= s.nbytes), key=lambda f: f[0])
        if fits:
            free.remove(fits[0])
            s.alias = fits[0][1]
            host = fits[0][1]
        else:
            host = s
        live.append((max(last.get(s, end), 0), host))
        # the host stays busy until the latest of its tenants' last uses
        live = [(max(t for t, h in live if h is host), host)] + [x for x in live if x[1] is not host]
    # course:end 18/reuse-buffers


def _sizes_fixed(node):
    """Whether no size ``node`` has or reads is symbolic (a parameter's update): any kernel runs it."""
    values = [node, *nodes_in(node.args), *kwarg_nodes(node)]
    return not free_symbols((node.args, node.kwargs)) and \
        not any(free_symbols(v.meta.get("shape")) for v in values if hasattr(v, "meta"))


def make_plan(graph, have_blas):
    """The :class:`Plan` of ``graph``: kernel kinds (GEMMs call BLAS when ``have_blas``),
    elementwise chains fused into loops and into reductions, gradient scatters gathered,
    kernels scheduled, epilogues fused into GEMMs, writes in place and buffers reused."""
    plan = Plan(graph, have_blas)
    escaping = _special_users(graph)
    for node in graph.nodes:
        try:
            plan.kind[node] = kind_of(node, have_blas) if node.op == "call_op" else None
        except SymbolicSizeError:  # its kernel's rule needs a size the graph leaves symbolic
            plan.kind[node] = None
        if graph.symbols and not _sizes_fixed(node) and (plan.kind[node] not in SYMBOLIC_KINDS or (
                plan.kind[node] == "scatter" and scatter_loc(node, None, graph.symbol_ranges) is None)):  # (pos[:T]'s gradient)
            plan.kind[node] = None
    inline_into_reductions(plan, escaping)
    gather_scatters(plan, escaping)
    schedule(plan)
    elide_clones(plan, escaping)
    fold_bias_sums(plan)
    fuse_epilogues(plan)
    _renumber(plan)
    write_in_place(plan)
    overwrite_operands(plan, escaping)
    reuse_buffers(plan)
    return plan
