"""The memory layout of an advanced-indexing result, as PyTorch's CPU ``index`` kernel lays it out.

NumPy's ``array[index]`` and torch's ``tensor[index]`` hold the same values in the same shape,
but their strides can differ: torch runs the gather as a TensorIterator over the input
"restrided" to the result's shape (stride 0 along the indexed dims) and the index arrays
(stride 0 elsewhere), and allocates the result in the order of those operands' strides
(``TensorIteratorBase::reorder_dimensions``, then ``compatible_stride``; ATen's
``native/TensorAdvancedIndexing.cpp`` ``make_info``/``restride_src``/``reshape_indexer``).
So ``x[None, [0, 1]]`` of a (4, 3) tensor strides (6, 3, 1) where NumPy's (1, 3, 1), and
``x.t()[[0, 1], None]`` follows the transposed input. :func:`torch_layout` gives the result
those strides (a view of the same data where only size-1 dims differ, else one copy).
"""
import numpy as np

__all__ = ["torch_layout"]


def _operand_strides(x, index, shape):
    """The element strides of torch's operands over the result's dims (the restrided input, then
    each index array), or None for an index this rule does not cover (a Python bool, an int,
    None: ember's indexing takes those into a view first, as torch's does)."""
    named = sum(i.ndim if _is_mask(i) else 1 for i in index if i is not Ellipsis)
    items = []
    for i in index:
        if i is Ellipsis:
            items += [slice(None)] * (x.ndim - named)
        elif _is_mask(i) and i.ndim:
            items += np.nonzero(i)  # torch's nonzero columns, each contiguous
        elif isinstance(i, slice) or isinstance(i, np.ndarray) and i.ndim and i.dtype.kind in "iu":
            items.append(i)
        else:
            return None
    items += [slice(None)] * (x.ndim - len(items))
    arrays = [k for k, i in enumerate(items) if isinstance(i, np.ndarray)]
    if not arrays or len(items) != x.ndim:
        return None
    indexed = np.broadcast_shapes(*(items[k].shape for k in arrays))
    view = x[tuple(i if isinstance(i, slice) else slice(None) for i in items)]
    rest = [k for k in range(x.ndim) if k not in arrays]
    if arrays != list(range(arrays[0], arrays[0] + len(arrays))):  # not adjacent: indexed dims first
        before, after = [], rest
    else:
        before, after = [k for k in rest if k < arrays[0]], [k for k in rest if k > arrays[0]]
    if len(before) + len(indexed) + len(after) != len(shape):
        return None
    size = view.itemsize
    operands = [[view.strides[k] // size for k in before] + [0] * len(indexed)
                + [view.strides[k] // size for k in after]]
    for k in arrays:
        a = np.broadcast_to(items[k], indexed)
        own = [s // a.itemsize for s in a.strides]
        lead = own[0] * indexed[0] if own else 1  # reshape's strides for the size-1 dims it adds
        operands.append([lead] * len(before) + own + [1] * len(after))
    # TensorIterator broadcasts: a size-1 dim of an operand where the result's is not has stride 0
    ends = [True] * len(before) + [False] * len(indexed) + [True] * len(after)
    operands[1:] = [[0 if end and shape[d] != 1 else s for d, (s, end) in enumerate(zip(o, ends))]
                    for o in operands[1:]]
    return operands


def _is_mask(i):
    return isinstance(i, np.ndarray) and i.dtype == np.bool_


def _order(shape, operands):
    """TensorIterator's permutation of the dims, fastest first (``reorder_dimensions``)."""
    ndim = len(shape)

    def should_swap(d0, d1):
        for strides in operands:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue  # broadcast along one of them: the next operand decides
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def torch_layout(x, index, out):
    """``out`` (NumPy's ``x[index]`` of an advanced ``index``) with the strides torch's result has;
    ``out`` itself where they agree or the index is of a kind not covered."""
    if type(out) is not np.ndarray or out.ndim < 2:
        return out
    shape = out.shape
    operands = _operand_strides(x, index, shape)
    if operands is None:
        return out
    perm = _order(shape, operands)
    # torch's strides in that order; in the plain order, contiguous strides (size 0 counted as 1)
    plain = perm == list(range(out.ndim - 1, -1, -1))
    strides = [0] * out.ndim
    step = out.itemsize
    for d in perm:
        strides[d] = step
        step *= max(shape[d], 1) if plain else shape[d]
    if tuple(strides) == out.strides:
        return out
    if all(a == b or n == 1 for a, b, n in zip(strides, out.strides, shape)) or out.size == 0:
        return np.lib.stride_tricks.as_strided(out, shape, strides)
    result = np.empty([shape[d] for d in reversed(perm)], out.dtype).transpose(np.argsort(list(reversed(perm))))
    result[...] = out
    return result
