"""``map(f, xs, *args)``: apply a function to each slice of ``xs`` along its first dimension
(torch._higher_order_ops.map)."""
from .._ops.join import stack
from ..compiler import hop, replay
from .utils import flatten, skeleton, unflatten

__all__ = ["map", "Map"]


def map(f, xs, *args):
    """Return the stack of ``f(x_i, *args)`` over the slices ``x_i = xs[i]`` (dim 0).

    Args:
        f: callable returning a (nested) tuple, list or dict of tensors of the same structure
            and shapes for every slice.
        xs: a tensor or a (nested) tuple, list or dict of tensors of equal first size.
        args: extra inputs passed unchanged to every call.

    Gradients flow to ``xs``, ``args`` and what ``f`` closes over. Inside a compiled function
    one ``Map`` node holds ``f`` traced once (on the first slice); its backward (a training
    step calling ``backward()``) is a second ``Map`` over ``f``'s vector-Jacobian product.

    Raises:
        RuntimeError: ``xs`` holds no tensor, or its leaves differ in first size (or have none,
            or it is 0).

    Source: PyTorch, ``torch._higher_order_ops.map``.
    """
    leaves = flatten(xs)
    if not leaves:
        raise RuntimeError(f"map() expects xs to hold at least one tensor, got {xs!r}")
    sizes = {x.shape[0] if x.dim() else None for x in leaves}
    if None in sizes or len(sizes) > 1:
        raise RuntimeError(f"Leaves of xs must have the same leading dimension size, got shapes "
                           f"{[tuple(x.shape) for x in leaves]}")
    n = sizes.pop()
    if n == 0:  # torch too: the outputs' structure comes from a call of f
        raise RuntimeError("Leading dimensions of mapped xs cannot be 0.")
    tracer = hop.tracer()
    if tracer is not None:
        return hop.captured(lambda: _capture(tracer, f, xs, leaves, args), lambda: _loop(f, xs, leaves, n, args))
    return _loop(f, xs, leaves, n, args)


def _loop(f, xs, leaves, n, args):
    shape = skeleton(xs)
    outs = [f(unflatten(shape, iter([leaf[i] for leaf in leaves])), *args) for i in range(n)]
    stacked = [stack(list(step)) for step in zip(*(flatten(o) for o in outs))]
    return unflatten(skeleton(outs[0]), iter(stacked))


class Map(hop.HigherOrderOp):
    """The graph node of :func:`map`: args ``(*xs leaves, *args' tensors, *lifted)``."""
    name = "Map"

    @staticmethod
    def run(tensors, body_graph, n_xs):
        xs, rest = tensors[:n_xs], tensors[n_xs:]
        return flatten(map(lambda x, *r: body_graph(*x, *r), tuple(xs), *rest))

    @classmethod
    def vjp(cls, kwargs, tensors, grads, needs):
        """A map of ``f``'s vector-Jacobian product over the slices of ``xs`` and of the
        outputs' gradients: its results are the slices' gradients, and each other input's
        gradient per slice, summed over the slices."""
        n_xs = kwargs["n_xs"]
        product = hop.vjp_of(replay.dispatch(kwargs["body_graph"].graph), len(tensors), needs)

        def back(sliced, *rest):
            return product(*sliced[:n_xs], *rest, *sliced[n_xs:])
        per_slice = iter(map(back, (*tensors[:n_xs], *grads), *tensors[n_xs:]))
        return [None if not need else next(per_slice) if k < n_xs else next(per_slice).sum(0)
                for k, need in enumerate(needs)]


def _capture(tracer, f, xs, leaves, args):
    with hop.untraced(tracer):  # the first slice, as the traced function's input
        first = unflatten(skeleton(xs), iter([leaf[0] for leaf in leaves]))
    body = hop.trace(tracer, lambda x, *a: f(x, *a), (first, *args), "map's f")
    outs = hop.add_node(tracer, Map, [*leaves, *flatten(args)], {"body_graph": body}, n_xs=len(leaves))
    return unflatten(skeleton(body.result), iter(outs))
