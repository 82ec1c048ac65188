"""``map(f, xs, *args)``: apply a function to each slice of ``xs`` along its first dimension
(torch._higher_order_ops.map)."""
from .._ops.join import stack
from .utils import flatten, skeleton, unflatten

__all__ = ["map"]


def map(f, xs, *args):
    """Return the stack of ``f(x_i, *args)`` over the slices ``x_i = xs[i]`` (dim 0).

    Args:
        f: callable returning a (nested) tuple, list or dict of tensors of the same structure
            and shapes for every slice.
        xs: a tensor or a (nested) tuple, list or dict of tensors of equal first size.
        args: extra inputs passed unchanged to every call.

    Gradients flow to ``xs``, ``args`` and what ``f`` closes over.

    Raises:
        RuntimeError: ``xs`` holds no tensor, or its leaves differ in first size (or have none).

    Source: PyTorch, ``torch._higher_order_ops.map``.
    """
    leaves = flatten(xs)
    if not leaves:
        raise RuntimeError(f"map() expects xs to hold at least one tensor, got {xs!r}")
    sizes = {x.shape[0] if x.dim() else None for x in leaves}
    if None in sizes or len(sizes) > 1:
        raise RuntimeError(f"Leaves of xs must have the same leading dimension size, got shapes "
                           f"{[tuple(x.shape) for x in leaves]}")
    shape = skeleton(xs)
    outs = [f(unflatten(shape, iter([leaf[i] for leaf in leaves])), *args) for i in range(sizes.pop())]
    stacked = [stack(list(step)) for step in zip(*(flatten(o) for o in outs))]
    return unflatten(skeleton(outs[0]), iter(stacked))
