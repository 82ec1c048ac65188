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

from . import empty_at

__all__ = ["torch_layout", "take_as_torch", "tensor_iterator_order", "compatible_strides", "laid_out_as"]


def _operand_strides(x, index, shape):
    """The element strides of torch's operands over the result's dims (the restrided input, then
    each index array), or None for an index this rule does not cover (a Python bool, an int,
    None: ember's indexing takes those into a view first, as torch's does)."""
    items, strides, dim = [], [], 0  # (the index per dim of x; x's strides of the kept dims, times the step)
    for i in index:
        if i is Ellipsis:
            kept = x.ndim - sum(j.ndim if _is_mask(j) else 1 for j in index if j is not Ellipsis)
            items += [None] * kept
            strides += x.strides[dim:dim + kept]
            dim += kept
        elif type(i) is slice:
            items.append(None)
            strides.append(x.strides[dim] * (i.step or 1))
            dim += 1
        elif not isinstance(i, np.ndarray) or not i.ndim:
            return None
        elif i.dtype == np.bool_:
            items += np.nonzero(i)  # torch's nonzero columns, each contiguous
            dim += i.ndim
        elif i.dtype.kind in "iu":
            items.append(i)
            dim += 1
        else:
            return None
    items += [None] * (x.ndim - dim)
    strides += x.strides[dim:]
    arrays = [k for k, i in enumerate(items) if i is not None]
    if not arrays or len(items) != x.ndim:
        return None
    first = items[arrays[0]].shape
    indexed = first if all(items[k].shape == first for k in arrays) else \
        np.broadcast_shapes(*(items[k].shape for k in arrays))
    kept = [k for k in range(x.ndim) if items[k] is None]
    strides = [s // x.itemsize for s in strides]
    if arrays[-1] - arrays[0] != len(arrays) - 1:  # not adjacent: the indexed dims go first
        before, after = 0, len(kept)
    else:
        before = arrays[0]
        after = len(kept) - before
    if before + len(indexed) + after != len(shape):
        return None
    operands = [strides[:before] + [0] * len(indexed) + strides[before:]]
    for k in arrays:
        a = items[k] if items[k].shape == indexed else np.broadcast_to(items[k], indexed)
        own = [s // a.itemsize for s in a.strides]
        lead = own[0] * indexed[0] if own else 1  # reshape's strides for the size-1 dims it adds
        # (TensorIterator broadcasts: a size-1 dim where the result's is not has stride 0)
        operands.append([0 if shape[d] != 1 else lead for d in range(before)] + own
                        + [0 if shape[d] != 1 else 1 for d in range(before + len(indexed), len(shape))])
    return operands


def _contiguous_case(x, index):
    """Whether torch's order is plain C order without sorting: a C-contiguous ``x`` taken whole
    along the dims not indexed, by C-contiguous integer arrays of one shape that stand together,
    each with C order's strides (checked against the sort on 8,742 random such indexes)."""
    if not _row_major(x):
        return False
    shape, last = None, None
    for k, i in enumerate(index):
        if type(i) is np.ndarray:
            if i.dtype.kind not in "iu" or not _row_major(i) or shape is not None and (
                    i.shape != shape or last != k - 1):
                return False
            shape, last = i.shape, k
        elif i is not Ellipsis and i != _ALL:
            return False
    return shape is not None


_ALL = slice(None)


def _row_major(a):
    """Whether ``a``'s strides are C order's exactly, size-1 dims' too (NumPy's ``c_contiguous``
    flag ignores those; torch's order reads them)."""
    if not a.flags.c_contiguous:
        return False
    if 1 not in a.shape and 0 not in a.shape:  # then the flag is exact (no loop: x[i] is hot)
        return True
    step = a.itemsize
    for n, stride in zip(reversed(a.shape), reversed(a.strides)):
        if stride != step:
            return False
        step *= n
    return True


def _is_mask(i):
    return isinstance(i, np.ndarray) and i.dtype == np.bool_


def tensor_iterator_order(shape, operands):
    """TensorIterator's permutation of the dims, fastest first (``reorder_dimensions``), from
    each operand's strides over the result's dims (0 where it is broadcast), first operand first:
    the first operand whose strides tell two dims apart orders them."""
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


def take_as_torch(x, index):
    """``x[index]`` laid out as torch's for one integer array among whole slices of a C-contiguous
    ``x`` (``x[i]``, ``x[:, i]``: an embedding's lookup): NumPy's ``take`` gives C order at once,
    where its indexing may give another (``x[:, i]``) that would cost a second copy. None for
    other indexes."""
    if len(index) == 1:  # x[i], the commonest: decided without the general walk
        i = index[0]
        if type(x) is np.ndarray and type(i) is np.ndarray and i.dtype.kind in "iu" and _row_major(x) \
                and _row_major(i):
            return x.take(i, axis=0)
        return None
    if type(x) is not np.ndarray or not _contiguous_case(x, index):
        return None
    arrays = [k for k, i in enumerate(index) if type(i) is np.ndarray]
    if len(arrays) != 1 or any(i is Ellipsis for i in index[:arrays[0]]):
        return None
    return x.take(index[arrays[0]], axis=arrays[0])


def torch_layout(x, index, out):
    """``out`` (NumPy's ``x[index]`` of an advanced ``index``) with the strides torch's result has;
    ``out`` itself where they agree or the index is of a kind not covered."""
    if type(out) is not np.ndarray or out.ndim < 2:
        return out
    shape = out.shape
    if _contiguous_case(x, index):  # (the common case, decided without the sort: C order)
        perm = list(range(out.ndim - 1, -1, -1))
    else:
        operands = _operand_strides(x, index, shape)
        if operands is None:
            return out
        perm = tensor_iterator_order(shape, operands)
    return laid_out_as(out, perm, compatible_strides(shape, perm, out.itemsize))


def compatible_strides(shape, perm, itemsize):
    """The byte strides of a new dense tensor of ``shape`` whose dims lie in ``perm`` order,
    fastest first (TensorIterator's ``compatible_stride``; in plain C order, contiguous strides,
    a size-0 dim counted as 1)."""
    plain = perm == list(range(len(shape) - 1, -1, -1))
    strides = [0] * len(shape)
    step = itemsize
    for d in perm:
        strides[d] = step
        step *= max(shape[d], 1) if plain else shape[d]
    return tuple(strides)


def laid_out_as(out, perm, strides):
    """``out`` with byte ``strides`` (dense, dims in ``perm`` order, fastest first): itself where
    they agree, a view where only size-1 dims differ, else one copy."""
    shape = out.shape
    if tuple(strides) == out.strides:
        return out
    if all(a == b or n == 1 for a, b, n in zip(strides, out.strides, shape)) or out.size == 0:
        return empty_at(out, shape, strides, out.dtype, 0)  # (the same elements: a view)
    outermost_first = perm[::-1]
    back = [0] * len(perm)
    for i, d in enumerate(outermost_first):
        back[d] = i
    result = np.empty([shape[d] for d in outermost_first], out.dtype).transpose(back)
    result[...] = out
    return result if result.strides == tuple(strides) else empty_at(result, shape, strides, out.dtype, 0)
