"""torch's memory formats: the order in which a tensor's dims lie in memory
(https://pytorch.org/docs/stable/tensor_attributes.html#torch-memory-format).

``contiguous_format`` is row-major; ``channels_last`` lays a 4-D (N, C, H, W) tensor out as
NHWC (strides ``(H W C, 1, W C, C)``) and ``channels_last_3d`` a 5-D (N, C, D, H, W) one as
NDHWC; ``preserve_format`` keeps the layout of the tensor it copies. Values never change with the
format, only the strides. A tensor's format is read from its strides, as torch reads it:
``is_contiguous(array, fmt)``, where dims of size 1 have no say.

ember's ops compute in any layout; the layout of their results follows torch's rules
(``_result_layout``): elementwise results TensorIterator's, convolutions, pooling and
interpolation keep a channels-last input's format; reductions give row-major results.
"""
import numpy as np

from ._backend import dense as _dense

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


class memory_format:
    """A memory format (``torch.memory_format``): one of the four objects below, printed as
    ``torch.channels_last`` and the like, kept the same object through pickling and copying."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name  # the module global of that name

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# The rank each channels-last format needs, and its dims from the innermost out.
_ORDER = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}


def checked(fmt, fn):
    """``fmt`` when it is a memory format, else torch's TypeError naming the function ``fn``."""
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not {type(fmt).__name__}")
    return fmt


def channels_order(fmt, ndim):
    """The dims of a channels-last ``fmt`` from the innermost out; RuntimeError, as torch's,
    for a tensor of another rank."""
    rank, order = _ORDER[fmt]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    return order


def is_contiguous(array, fmt=contiguous_format):
    """torch's ``is_contiguous(memory_format=fmt)`` of an array: its elements lie in ``fmt``'s
    order without gaps (dims of size 1 aside). False for a channels-last format of another rank."""
    if fmt not in _ORDER:
        return bool(array.flags.c_contiguous)
    rank, order = _ORDER[fmt]
    if array.ndim != rank:
        return False
    expected = array.itemsize
    for d in order:
        if array.shape[d] != 1:
            if array.strides[d] != expected:
                return False
            expected *= array.shape[d]
    return True


def _channels_last_strides(array, order):
    """Whether ``array``'s strides rise along ``order`` (innermost dim first), gaps allowed, as
    torch's ``is_channels_last_strides_2d/3d`` reads them: an empty dim, a zero channel stride,
    or a batch stride no larger than the channel stride (a tensor of single pixels) reads as
    row-major instead."""
    if array.strides[1] == 0:
        return False
    low = 0
    for d in order:
        size, stride = array.shape[d], array.strides[d]
        if size == 0 or stride < low or (d == 0 and low == array.strides[1]):
            return False
        low = stride * size if size > 1 else stride
    return True


def may_suggest(array):
    """Whether ``array``'s strides may read as a channels-last format: it is not row-major, or
    has a dim of size 1 (whose stride NumPy's flag ignores and torch reads: (2, 1, 8, 12) at
    strides (96, 1, 12, 1), pixel_shuffle's result of a channels-last input, is channels-last)."""
    return not array.flags.c_contiguous or 1 in array.shape


def suggested(array):
    """The channels-last format ``array``'s strides follow, or ``contiguous_format``: what
    ``preserve_format`` keeps (torch's ``suggest_memory_format``; a row-major array is row-major)."""
    if may_suggest(array):
        for fmt, (rank, order) in _ORDER.items():
            if array.ndim == rank and _channels_last_strides(array, order):
                return fmt
    return contiguous_format


def fill_order(array):
    """The dims of ``array`` from outermost to innermost in memory (ordered by stride, dims of
    size 1 aside), or None when that is row-major. torch's ``empty_like`` lays its result out
    so, and a random fill (``bernoulli_``, ``uniform_``) writes its draws in memory order: a
    dropout mask or ``rand_like`` of a transposed or channels-last tensor gets the draws in this
    order (a batch_first ``nn.MultiheadAttention``'s output is transposed)."""
    order = sorted(range(array.ndim), key=lambda d: -abs(array.strides[d]))
    sized = [d for d in order if array.shape[d] > 1]
    return None if sized == sorted(sized) else order


def made_in_order(make, shape, order):
    """The tensor ``make(size)`` makes row-major for ``shape`` permuted by ``order`` (from
    :func:`fill_order`), viewed back in ``shape``'s dims: its values lie in memory in ``order``."""
    made = make(tuple(shape[d] for d in order))
    return made.permute(*sorted(range(len(order)), key=order.__getitem__))


def is_channels_last(fmt):
    return fmt in _ORDER


def strides(shape, itemsize, fmt):
    """torch's strides (bytes) of a new tensor of ``shape`` laid out as ``fmt``."""
    channels_last = fmt in _ORDER
    order = _ORDER[fmt][1] if channels_last else tuple(range(len(shape)))[::-1]
    out, step = [0] * len(shape), itemsize
    for d in order:  # (torch counts a size 0 as 1 in row-major strides only)
        out[d] = step
        step *= shape[d] if channels_last else max(shape[d], 1)
    return tuple(out)


def laid_out(array, fmt, xp=np):
    """A copy of ``array`` laid out as ``fmt`` (a channels-last format or ``contiguous_format``)
    with torch's strides for it (dims of size 1 included), in namespace ``xp``."""
    if fmt not in _ORDER:
        return xp.array(array, order="C", copy=True)
    outermost_first = channels_order(fmt, array.ndim)[::-1]
    if not array.size and xp is np:  # (NumPy gives an empty transpose zero strides)
        return np.lib.stride_tricks.as_strided(np.empty(0, array.dtype), array.shape,
                                               strides(array.shape, array.itemsize, fmt))
    out = xp.empty(tuple(array.shape[d] for d in outermost_first), array.dtype).transpose(np.argsort(outermost_first))
    out[...] = array
    return out


def for_empty(array, fmt, fn="empty"):
    """``array`` (new, row-major) laid out as the ``memory_format`` a factory was given (None:
    as is). TypeError for a non-format, RuntimeError for ``preserve_format`` or a channels-last
    format of another rank, as torch's ``empty``."""
    if fmt is None:
        return array
    fmt = checked(fmt, fn)
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    if is_channels_last(fmt):
        channels_order(fmt, array.ndim)
        array = laid_out(array, fmt)
    return array



def preserved(out, source):
    """``out``, a new array of ``source``'s shape and values, laid out as torch's
    ``preserve_format`` lays out a copy of ``source``: with ``source``'s strides (in elements)
    exactly when ``source`` is non-overlapping and dense (a permuted or channels-last tensor,
    a size-1 dim's stride and an empty tensor's included), else ``out`` as it is. A NumPy
    copy in "K" order differs only in size-1 dims' strides (and loses an empty one's)."""
    if type(out) is not np.ndarray or type(source) is not np.ndarray:
        return out
    strides = tuple(s // source.itemsize * out.itemsize for s in source.strides)
    if out.strides == strides or not _dense(source):
        return out
    if not out.size:
        return np.lib.stride_tricks.as_strided(np.empty(0, out.dtype), out.shape, strides)
    copy = np.ndarray(out.shape, out.dtype, buffer=np.empty(out.size, out.dtype), strides=strides)
    copy[...] = out
    return copy


def preserved_copy(source, xp=np):
    """A copy of ``source`` laid out as :func:`preserved` lays it out, in one pass: NumPy's "K"
    order, or, for a dense array with a size-1 dim (whose stride "K" does not keep), straight
    into memory with ``source``'s strides."""
    if type(source) is np.ndarray and 1 in source.shape and source.size and _dense(source):
        copy = np.ndarray(source.shape, source.dtype, buffer=np.empty(source.size, source.dtype),
                          strides=source.strides)
        copy[...] = source
        return copy
    return preserved(xp.array(source, copy=True, order="K"), source)
