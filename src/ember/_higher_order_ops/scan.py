"""``scan(combine_fn, init, xs, *, dim=0, reverse=False, length=None)``: a loop threading a
carry through the slices of ``xs`` (torch._higher_order_ops.scan, with 2.14's counter mode)."""
from .._creation import zeros_like
from .._ops.join import stack
from .._tensor import _wrap_dim
from ..compiler import hop, replay
from .utils import check_same_meta, flatten, skeleton, unflatten

__all__ = ["scan", "Scan"]


def scan(combine_fn, init, xs, *, dim=0, reverse=False, length=None):
    """Return ``(carry, ys)`` where ``carry, y_t = combine_fn(carry, x_t)`` for each slice
    ``x_t`` of ``xs`` along ``dim`` and ``ys`` stacks the ``y_t`` along ``dim``.

    Args:
        combine_fn: ``(carry, x) -> (next_carry, y)``; ``next_carry`` has ``init``'s structure,
            shapes and dtypes.
        init: a (nested) tuple, list or dict of tensors: the first carry.
        xs: a (nested) tuple, list or dict of tensors sharing their size along ``dim``, or None
            with ``length`` for a counter loop in which ``combine_fn`` receives ``x=None``.
        dim: the dimension of ``xs`` scanned over; ``ys`` stack along it, counted from the
            front (``dim=-1`` of 2-d ``xs`` stacks along dimension 1).
        reverse: scan from the last slice to the first (``ys`` keeps ``xs``'s order).
        length: the number of steps; must equal the size of ``xs`` along ``dim`` if both given.

    Gradients flow to ``init``, ``xs`` and the tensors ``combine_fn`` closes over. Inside a
    compiled function one ``Scan`` node holds ``combine_fn`` traced once (on the first slice).

    Raises:
        RuntimeError: ``init`` holds no tensor; the leaves of ``xs`` differ in size along
            ``dim`` or have size 0 there; ``combine_fn`` changes the carry's structure,
            shape or dtype.
        IndexError: ``dim`` is out of range for ``xs``.
        ValueError: neither ``xs`` nor ``length`` is given, or they disagree.

    Source: https://pytorch.org/docs/main/higher_order_ops/scan.html
    """
    if not flatten(init):
        raise RuntimeError("scan() operator requires init leaves to be tensors, got none")
    leaves = flatten(xs) if xs is not None else []
    if leaves:  # as torch: ys stack along xs's dimension, counted from the front
        dim = _wrap_dim(dim, leaves[0].dim())
    sizes = {x.shape[dim] for x in leaves}
    if len(sizes) > 1:
        raise RuntimeError(f"All xs leaves must have the same size along dim={dim}, got sizes {sorted(sizes)}")
    if 0 in sizes:  # torch too: ys would have no slice to take their structure from
        raise RuntimeError(f"scan(): xs has size 0 along dim={dim}; the scan dimension must be > 0")
    if xs is None or not leaves:
        if length is None:
            raise ValueError("scan() needs xs or length: got xs=None and length=None")
        n = length
    else:
        n = sizes.pop()
        if length is not None and length != n:
            raise ValueError(f"scan(): length={length} differs from the size {n} of xs along dim={dim}")
    tracer = hop.tracer()
    if tracer is not None and n > 0:
        return hop.captured(lambda: _capture(tracer, combine_fn, init, xs, leaves, n, dim, reverse),
                            lambda: _loop(combine_fn, init, xs, leaves, n, dim, reverse))
    return _loop(combine_fn, init, xs, leaves, n, dim, reverse)


def _loop(combine_fn, init, xs, leaves, n, dim, reverse):
    shape = skeleton(xs) if leaves else None
    carry, ys = init, []
    for t in (reversed(range(n)) if reverse else range(n)):
        x = unflatten(shape, iter([leaf.select(dim, t) for leaf in leaves])) if leaves else None
        out = combine_fn(carry, x)
        _check(out, init)
        carry = out[0]
        ys.append(out[1])
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    stacked = [stack(list(step), dim=dim) for step in zip(*(flatten(y) for y in ys))]
    return carry, unflatten(skeleton(ys[0]), iter(stacked))


def _check(out, init):
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise RuntimeError("combine_fn must return a tuple (next_carry, y)")
    check_same_meta(out[0], init, "combine_fn's next_carry and init")


class Scan(hop.HigherOrderOp):
    """The graph node of :func:`scan`: args ``(*init leaves, *xs leaves, *lifted)``; results
    the carry's leaves, then the stacked ys' leaves."""
    name = "Scan"

    @staticmethod
    def run(tensors, combine_graph, n_init, n_xs, dim, reverse, length):
        init, xs, lifted = tensors[:n_init], tensors[n_init:n_init + n_xs], tensors[n_init + n_xs:]

        def combine(carry, x):
            out = combine_graph(*carry, *(x or ()), *lifted)
            return out[:n_init], out[n_init:]
        carry, ys = scan(combine, list(init), list(xs) or None, dim=dim, reverse=reverse, length=length)
        return [*carry, *(ys or ())]

    @classmethod
    def vjp(cls, kwargs, tensors, grads, needs):
        """Two scans: one giving the carry before each step (as its ys), then a reverse scan
        whose carry is the carry's gradient (and the lifted tensors' gradients, summed over the
        steps) and whose ys are the gradients of ``xs``' slices; each step is the combine
        function's vector-Jacobian product. Scanned along dimension 0 (``xs`` moved there)."""
        graph, n_init, n_xs = kwargs["combine_graph"].graph, kwargs["n_init"], kwargs["n_xs"]
        dim, reverse, length = kwargs["dim"], kwargs["reverse"], kwargs["length"]
        init, lifted = list(tensors[:n_init]), list(tensors[n_init + n_xs:])
        xs = [x.movedim(dim, 0) for x in tensors[n_init:n_init + n_xs]]
        step = replay.dispatch(graph)

        def with_carries(carry, x):
            return step([*carry, *(x or ()), *lifted])[:n_init], list(carry)
        _, carries = scan(with_carries, init, xs or None, reverse=reverse, length=length)
        floats = [t.dtype.is_floating_point for t in tensors]  # what a step differentiates
        product = hop.vjp_of(step, len(tensors), floats)
        grad_carry, grad_ys = list(grads[:n_init]), [g.movedim(dim, 0) for g in grads[n_init:]]

        def back(carry, x):  # x: the step's carry, its slices of xs, its ys' gradients
            before, x_t, grad_y = x[:n_init], x[n_init:n_init + n_xs], x[n_init + n_xs:]
            got = iter(product(*before, *x_t, *lifted, *carry[:n_init], *grad_y))
            step_grads = [next(got) if f else zeros_like(t) for f, t in zip(floats, tensors)]
            summed = [a + b for a, b in zip(carry[n_init:], step_grads[n_init + n_xs:])]
            return [*step_grads[:n_init], *summed], step_grads[n_init:n_init + n_xs]
        sums = [zeros_like(t) for t in lifted]
        carry, grad_xs = scan(back, [*grad_carry, *sums], [*carries, *xs, *grad_ys],
                              reverse=not reverse, length=length)
        out = [*carry[:n_init], *(g.movedim(0, dim) for g in grad_xs or ()), *carry[n_init:]]
        return [g if need else None for g, need in zip(out, needs)]


def _capture(tracer, combine_fn, init, xs, leaves, n, dim, reverse):
    with hop.untraced(tracer):  # the first slice, as the traced function's input
        first = [leaf.select(dim, n - 1 if reverse else 0) for leaf in leaves]
    x = unflatten(skeleton(xs), iter(first)) if leaves else None
    body = hop.trace(tracer, lambda c, x: combine_fn(c, x), (init, x), "scan's combine_fn")
    _check(body.result, init)
    init_leaves = flatten(init)
    outs = hop.add_node(tracer, Scan, [*init_leaves, *leaves], {"combine_graph": body},
                        n_init=len(init_leaves), n_xs=len(leaves), dim=dim, reverse=reverse, length=n)
    carry, y = body.result
    return (unflatten(skeleton(carry), iter(outs[:len(init_leaves)])),
            unflatten(skeleton(y), iter(outs[len(init_leaves):])))
