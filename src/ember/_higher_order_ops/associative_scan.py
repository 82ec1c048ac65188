"""``associative_scan(combine_fn, xs, dim, reverse=False, combine_mode="pointwise")``: an
inclusive scan with an associative operator in O(log n) sequential steps
(torch._higher_order_ops.associative_scan)."""
from .._creation import arange, tensor
from .._ops.indexing import index_select
from .._ops.join import cat
from .._tensor import _wrap_dim
from .utils import flatten, skeleton, unflatten

__all__ = ["associative_scan"]


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
    if reverse:
        leaves = [x.flip([dim]) for x in leaves]

    def combine(a, b):
        out = flatten(combine_fn(unflatten(shape, iter(a)), unflatten(shape, iter(b))))
        if len(out) != len(a) or any(o.shape != x.shape for o, x in zip(out, a)):
            raise RuntimeError(f"combine_fn must return xs's structure with its shapes, got "
                               f"{[tuple(o.shape) for o in out]} for inputs {[tuple(x.shape) for x in a]}")
        return out

    ys = _scan(combine, leaves, dim)
    if reverse:
        ys = [y.flip([dim]) for y in ys]
    return unflatten(shape, iter(ys))


def _take(leaves, dim, start, stop, step=1):
    index = arange(start, stop, step, device=leaves[0].device)
    return [index_select(x, dim, index) for x in leaves]


def _scan(combine, leaves, dim):
    n = leaves[0].shape[dim]
    if n < 2:
        return leaves
    odd = _scan(combine, combine(_take(leaves, dim, 0, n - 1, 2), _take(leaves, dim, 1, n, 2)), dim)
    # odd[k] is the prefix ending at 2k+1; the prefix ending at 2k+2 adds element 2k+2 to it.
    even = combine(_take(odd, dim, 0, (n - 1) // 2), _take(leaves, dim, 2, n, 2))
    even = [cat([x, e], dim) for x, e in zip(_take(leaves, dim, 0, 1), even)]
    # Interleave: position 2k comes from even[k], 2k+1 from odd[k].
    half = (n + 1) // 2
    index = tensor([i // 2 if i % 2 == 0 else half + i // 2 for i in range(n)], device=leaves[0].device)
    return [index_select(cat([e, o], dim), dim, index) for e, o in zip(even, odd)]
