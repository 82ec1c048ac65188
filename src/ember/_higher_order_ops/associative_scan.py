"""``associative_scan(combine_fn, xs, dim, reverse=False, combine_mode="pointwise")``: an
inclusive scan with an associative operator in O(log n) sequential steps
(torch._higher_order_ops.associative_scan)."""
from .._backend import namespace
from .._creation import zeros_like
from .._ops.join import cat, stack
from .._tensor import _wrap_dim
from ..autograd import grad
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..compiler import hop, replay
from .utils import flatten, skeleton, unflatten

__all__ = ["associative_scan", "AssociativeScan", "AssociativeScanGrad"]


def associative_scan(combine_fn, xs, dim, reverse=False, combine_mode="pointwise"):
    """Return ``ys`` with ``ys[i] = xs[0] ⊕ xs[1] ⊕ ... ⊕ xs[i]`` along ``dim``, ``⊕`` being
    ``combine_fn``, which must be associative (``(a ⊕ b) ⊕ c == a ⊕ (b ⊕ c)``).

    The parallel prefix of Ladner & Fischer (1980) as JAX's ``lax.associative_scan`` lays it
    out: combine neighbouring pairs, scan the half-length result recursively, then fill in the
    even positions. ``combine_fn`` is called on whole slices, about 2 log2(n) times.

    Args:
        combine_fn: ``(a, b) -> c`` on (nested) tuples, lists or dicts of tensors shaped like
            ``xs`` but of any size along ``dim``; elementwise for ``"pointwise"``.
        xs: a tensor or a (nested) tuple, list or dict of tensors of equal size along ``dim``.
        dim: the dimension scanned along.
        reverse: scan from the last element to the first.
        combine_mode: ``"pointwise"`` or ``"generic"`` (both run the same algorithm eagerly).

    Returns: ``xs``'s structure, each leaf of its shape. Gradients flow through the ops.

    Inside a compiled function one ``AssociativeScan`` node holds ``combine_fn`` traced once,
    on the first two elements along ``dim``; the node runs the same algorithm with that graph.
    Its backward (a training step calling ``backward()``) is recorded as one
    ``AssociativeScanGrad`` node holding ``combine_fn`` and its vector-Jacobian product, so
    a dynamic graph keeps the length a symbol.
    While recording, the graph's results at every slice length the algorithm uses are checked
    against ``combine_fn``'s own: a ``combine_fn`` whose ops depend on that length (a reshape
    to it) is a graph break instead.

    Raises:
        ValueError: ``combine_mode`` is neither; ``xs`` holds no tensor; its leaves differ in
            size along ``dim``.
        RuntimeError: ``combine_fn`` changes the structure or shapes.
        IndexError: ``dim`` is out of range for ``xs``.

    Source: https://pytorch.org/docs/main/higher_order_ops/associative_scan.html
    """
    if combine_mode not in ("pointwise", "generic"):
        raise ValueError(f"Combine_mode must either 'pointwise' or 'generic', but got {combine_mode}")
    leaves = flatten(xs)
    if not leaves:
        raise ValueError(f"associative_scan() expects xs to hold at least one tensor, got {xs!r}")
    dim = _wrap_dim(dim, leaves[0].dim())
    sizes = {x.shape[dim] for x in leaves}
    if len(sizes) > 1:
        raise ValueError(f"All xs leaves must have the same size along dim={dim}, got sizes {sorted(sizes)}")
    shape = skeleton(xs)

    def combine(a, b):
        out = flatten(combine_fn(unflatten(shape, iter(a)), unflatten(shape, iter(b))))
        if len(out) != len(a) or any(o.shape != x.shape for o, x in zip(out, a)):
            raise RuntimeError(f"combine_fn must return xs's structure with its shapes, got "
                               f"{[tuple(o.shape) for o in out]} for inputs {[tuple(x.shape) for x in a]}")
        return out

    tracer = hop.tracer()
    if tracer is not None and leaves[0].shape[dim] > 1:
        ys = hop.captured(lambda: _capture(tracer, combine, leaves, dim, reverse),
                          lambda: _run(combine, leaves, dim, reverse))
    else:
        ys = _run(combine, leaves, dim, reverse)
    return unflatten(shape, iter(ys))


def _run(combine, leaves, dim, reverse):
    if reverse:
        leaves = [x.flip([dim]) for x in leaves]
    ys = _scan(combine, leaves, dim)
    return [y.flip([dim]) for y in ys] if reverse else ys


class AssociativeScan(hop.HigherOrderOp):
    """The graph node of :func:`associative_scan`: args ``(*xs leaves, *lifted)``; results the
    scanned leaves."""
    name = "AssociativeScan"

    @staticmethod
    def run(tensors, combine_graph, n_xs, dim, reverse):
        xs, lifted = tensors[:n_xs], tensors[n_xs:]
        return _run(lambda a, b: list(combine_graph(*a, *b, *lifted)), list(xs), dim, reverse)

    @classmethod
    def vjp(cls, kwargs, tensors, grads, needs):
        """The node's algorithm run again with autograd, then its backward. Recorded, this is
        one :class:`AssociativeScanGrad` node, the same for every length (so a dynamic graph
        keeps the length a symbol): it holds ``combine_fn`` and its vector-Jacobian product,
        each traced on single elements."""
        combine, n_xs, dim, reverse = kwargs["combine_graph"].graph, kwargs["n_xs"], kwargs["dim"], kwargs["reverse"]
        step = replay.dispatch(combine)
        outer = hop.tracer()
        if outer is None:
            def run(ts):
                return cls.run(ts, lambda *a: step(list(a)), n_xs, dim, reverse)
            got = iter(hop.vjp_of(run, len(tensors), needs)(*tensors, *grads))
            return [next(got) if need else None for need in needs]
        xs, lifted = list(tensors[:n_xs]), list(tensors[n_xs:])
        inputs = len(combine.placeholders)
        floats = [p.meta["dtype"].is_floating_point for p in combine.placeholders]
        product = hop.vjp_of(step, inputs, floats)
        with hop.untraced(outer):  # single elements, as the traced functions' inputs
            a, b, g = ([t.narrow(dim, k, 1) for t in ts] for ts, k in ((xs, 0), (xs, 1), (grads, 0)))
        n = 2 * n_xs
        traced = {"combine_graph": hop.trace(outer, lambda *ts: step(list(ts)), (*a, *b, *lifted),
                                             "associative_scan's combine_fn"),
                  "vjp_graph": hop.trace(outer, lambda *ts: product(*ts[:n], *ts[n + n_xs:], *ts[n:n + n_xs]),
                                         (*a, *b, *g, *lifted), "associative_scan's combine_fn's backward")}
        for t in traced.values():
            t.graph.any_shape = True
        outs = iter(hop.add_node(outer, AssociativeScanGrad, [*xs, *grads, *lifted], traced, n_xs=n_xs,
                                 n_lifted=len(lifted), dim=dim, reverse=reverse, floats=tuple(floats),
                                 needs=tuple(needs)))
        return [next(outs) if need else None for need in needs]


class AssociativeScanGrad(hop.HigherOrderOp):
    """The backward of :class:`AssociativeScan`: args ``(*xs leaves, *their gradients,
    *lifted)``; results the gradients of the ``needs`` of ``(*xs, *lifted)``. It runs the
    algorithm again with autograd, each combine an autograd function whose backward is the
    ``vjp_graph`` (``(*a, *b, *grads, *lifted)`` -> the gradients of ``floats`` of ``(*a, *b,
    *lifted)``); the graph holds no op of that algorithm, so it is one node at every length."""
    name = "AssociativeScanGrad"

    @staticmethod
    def run(tensors, combine_graph, vjp_graph, n_xs, n_lifted, dim, reverse, floats, needs):
        xs, grads = tensors[:n_xs], tensors[n_xs:2 * n_xs]
        lifted, extra = tensors[2 * n_xs:2 * n_xs + n_lifted], tensors[2 * n_xs + n_lifted:]
        with enable_grad():
            xs = [x.detach().requires_grad_(need) for x, need in zip(xs, needs)]
            lifted = [t.detach().requires_grad_(need) for t, need in zip(lifted, needs[n_xs:])]

            def combine(a, b):
                return list(_Combine.apply(lambda *ts: combine_graph(*ts, *extra),
                                           lambda *ts: vjp_graph(*ts, *extra), floats, *a, *b, *lifted))
            ys = _run(combine, xs, dim, reverse)
            wanted = [t for t, need in zip(xs + lifted, needs) if need]
            got = grad(ys, wanted, list(grads), allow_unused=True)
        return [zeros_like(t) if g is None else g for t, g in zip(wanted, got)]


class _Combine(Function):
    """``combine_fn`` on two slices (and the lifted tensors), differentiated by its traced
    vector-Jacobian product ``product(*inputs, *grads)``, which gives a gradient for each
    input of a floating dtype."""

    @staticmethod
    def forward(ctx, combine, product, floats, *inputs):
        ctx.product, ctx.floats = product, floats
        ctx.save_for_backward(*inputs)
        return tuple(combine(*inputs))

    @staticmethod
    def backward(ctx, *grads):
        inputs = ctx.saved_tensors
        n = len(grads) * 2  # a and b, then the lifted tensors
        got = iter(ctx.product(*inputs[:n], *grads, *inputs[n:]))
        return (None, None, None, *[next(got) if f else None for f in ctx.floats])


def _capture(tracer, combine, leaves, dim, reverse):
    with hop.untraced(tracer):  # two elements, as the traced function's inputs
        a, b = ([x.narrow(dim, k, 1) for x in leaves] for k in (0, 1))
    body = hop.trace(tracer, combine, (a, b), "associative_scan's combine_fn")
    body.graph.any_shape = True
    graph = replay.dispatch(body.graph)
    lifted = [t for _, t in body.lifted]
    with hop.untraced(tracer), no_grad():  # the graph must be combine_fn at every slice length
        try:
            got = AssociativeScan.run(leaves + lifted, lambda *ts: graph(list(ts)), len(leaves), dim, reverse)
        except Exception as e:
            got = e
        want = _run(combine, leaves, dim, reverse)
    if isinstance(got, Exception) or not all(namespace(g._data).array_equal(g._data, w._data, equal_nan=True)
                                             for g, w in zip(got, want)):
        tracer.graph_break("associative_scan's combine_fn traced on single elements is not the same "
                           "function on longer slices (its ops depend on their length)")
        return _run(combine, leaves, dim, reverse)  # with autograd (the check ran without)
    return hop.add_node(tracer, AssociativeScan, leaves, {"combine_graph": body},
                        n_xs=len(leaves), dim=dim, reverse=reverse)


def _take(leaves, dim, start, stop, step=1):
    # slicing, not an index tensor: a view the compiler records (also in the recorded backward)
    where = (slice(None),) * dim + (slice(start, stop, step),)
    return [x[where] for x in leaves]


def _scan(combine, leaves, dim):
    n = leaves[0].shape[dim]
    if n < 2:
        return leaves
    odd = _scan(combine, combine(_take(leaves, dim, 0, n - 1, 2), _take(leaves, dim, 1, n, 2)), dim)
    # odd[k] is the prefix ending at 2k+1; the prefix ending at 2k+2 adds element 2k+2 to it.
    even = combine(_take(odd, dim, 0, (n - 1) // 2), _take(leaves, dim, 2, n, 2))
    even = [cat([x, e], dim) for x, e in zip(_take(leaves, dim, 0, 1), even)]
    # Interleave: position 2k comes from even[k], 2k+1 from odd[k]; an odd n ends with an even.
    pairs = [stack([e.narrow(dim, 0, n // 2), o], dim + 1).flatten(dim, dim + 1) for e, o in zip(even, odd)]
    return [cat([p, e.narrow(dim, n // 2, 1)], dim) for p, e in zip(pairs, even)] if n % 2 else pairs
