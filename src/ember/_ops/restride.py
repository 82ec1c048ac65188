"""Views by explicit strides and the in-place shape changes: ``as_strided``, ``t_``,
``squeeze_``, ``unsqueeze_``, ``resize_``.

``as_strided`` addresses the input's storage (the array that owns its memory) directly, so
its offsets and strides are PyTorch's, counted in elements from the storage's start. (That
addressing, ``np.ndarray`` over a buffer, is NumPy's: another library's arrays need their
own ``as_strided`` here; everything else in this file computes in the input's namespace.) The
in-place shape changes make ``self`` the matching view of itself: the same memory, the view's
shape and strides and its history (a recorded ``t_`` is a ``t``).
"""
import math

import numpy as np

from .. import _backend, _memory, _memory_format
from .._backend.shared import owner, regrow
from .._creation import from_numpy
from ..autograd.grad_mode import STATE
from . import core as _core
from .args import shape_arg
from .core import Op, apply
from .parser import parsed
from .shape import squeeze, t, unsqueeze

__all__ = ["as_strided", "t_", "squeeze_", "unsqueeze_", "resize_"]


def _indices(size, stride, offset, xp):
    """The storage index of each element of a (size, stride, offset) view, as an int64 array
    of the namespace ``xp``."""
    index = xp.full(tuple(size), offset, dtype=np.int64)
    for dim, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[dim] = n
        index = index + (xp.arange(n, dtype=np.int64) * s).reshape(shape)
    return index


@parsed
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given ``size``, ``stride`` (in elements) and
    ``storage_offset`` (default: ``input``'s own); elements may overlap. Differentiable: the
    gradient adds up over the storage elements each input element shares with the view
    (https://pytorch.org/docs/stable/generated/torch.as_strided.html).

    Raises:
        RuntimeError: ``size`` and ``stride`` differ in length, a stride is negative, or the
            view reaches past the end of the storage.
        TypeError: ``size`` or ``stride`` is no sequence of ints (torch's parser's words).
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    storage = owner(input._data).size
    needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if math.prod(size) else 0
    if needed > storage:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{offset}, and itemsize {input._data.itemsize} requiring a storage size of "
                           f"{needed * input._data.itemsize} are out of bounds for storage of size "
                           f"{storage * input._data.itemsize}")
    return apply(AsStrided, input, size=size, stride=stride, offset=offset,
                 input_geometry=(tuple(input.shape), input.stride(), input.storage_offset(), storage))


class AsStrided(Op):
    promote = None
    save_inputs = False
    is_view = True
    infer = classmethod(lambda op, x, size, stride, offset, input_geometry: (size, x.dtype))

    @staticmethod
    def forward(x, size, stride, offset, input_geometry):
        root = owner(x)
        item = x.itemsize
        strides = tuple(s * item for s in stride)
        if not math.prod(size):  # (an empty view may start past the storage's end, as torch's)
            return _backend.empty_at(root, size, strides, x.dtype, offset * item)
        return np.ndarray(size, x.dtype, buffer=root, offset=offset * item, strides=strides)

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        shape, stride, offset, storage = a["input_geometry"]
        xp = _backend.namespace(g._data)
        # index tables made from the geometry alone: constants (of a compiled graph too)
        at = from_numpy(_indices(a["size"], a["stride"], a["offset"], xp).reshape(-1))
        flat = g.new_zeros(storage).index_add(0, at, g.reshape(-1))
        read = _indices(shape, stride, offset, xp).reshape(-1)
        shared = xp.bincount(read, minlength=storage)
        if read.size and shared.max() > 1:  # an input element sharing memory gets its share, as torch
            flat = flat / from_numpy(xp.maximum(shared, 1).astype(g._data.dtype))
        # torch's gradient has the input's geometry (strides and all) over that storage
        return (as_strided(flat, shape, stride, offset),)


def _become(self, view):
    """Makes ``self`` the view ``view`` of itself: its memory, shape, strides and history. An
    in-place op, as torch's: the version counter (shared with its views) counts it."""
    if STATE.enabled and self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    self._data = view._data
    if view.requires_grad:
        self.grad_fn, self._output_nr = view.grad_fn, view._output_nr
    self._versions[0] += 1
    if self._base is not None:
        self._view_chain, self._view_version = view._view_chain, self._versions[0]
    return self


def t_(self):
    """In-place ``t``: ``self`` becomes its transpose (0-D and 1-D unchanged)."""
    return _become(self, t(self))


def squeeze_(self, dim=None):
    """In-place ``squeeze``: removes size-1 dimensions (all, or those in ``dim``)."""
    return _become(self, squeeze(self, dim))


def unsqueeze_(self, dim):
    """In-place ``unsqueeze``: inserts a size-1 dimension at ``dim``."""
    return _become(self, unsqueeze(self, dim))


def resize_(self, *sizes, memory_format=None):
    """Gives ``self`` the shape ``sizes`` over its own storage, as torch's: the same shape keeps
    ``self`` as it is (strides too); another one lays ``sizes`` out from ``storage_offset()`` with
    ``memory_format``'s strides (row-major by default), so the elements are the storage's next
    ones, not ``self``'s in row-major order. Where the storage is too short, it grows (zeros after
    the old items; torch's are uninitialised), for every tensor on it, as torch's shared storage.
    (https://pytorch.org/docs/stable/generated/torch.Tensor.resize_.html)

    Raises:
        RuntimeError: a storage that cannot grow (a slice of one: "Trying to resize storage that
            is not resizable"); ``self`` requires grad ("cannot resize variables that require grad"), a
            size is negative (torch's ``-1`` is not inferred here), ``memory_format`` is
            ``preserve_format`` or a channels-last format of another rank.
    """
    sizes = shape_arg(sizes, ("resize_", "size"))  # (resize_(2.5): torch's TypeError, not 2 elements)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
    old = self._data
    if memory_format is None:
        if sizes == tuple(old.shape):
            return self
        memory_format = _memory_format.contiguous_format
    elif _memory_format.checked(memory_format, "resize_") is _memory_format.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    elif _memory_format.is_channels_last(memory_format):
        _memory_format.channels_order(memory_format, len(sizes))
    strides = _memory_format.strides(sizes, old.itemsize, memory_format)
    n = math.prod(sizes)
    if not isinstance(old, np.ndarray):  # another array library: a new row-major array
        new = _backend.namespace(old).zeros(sizes, old.dtype)
        keep = min(n, old.size)
        new.reshape(-1)[:keep] = old.reshape(-1)[:keep]
        self._data = new
        return self
    offset = self.storage_offset()
    raw = owner(old).ravel(order="K").view(np.uint8)  # the storage, as whole elements of self's dtype
    if (offset + n) * old.itemsize > raw.size:  # grown for every tensor on it, as torch's shared storage
        raw = regrow(raw, (offset + n) * old.itemsize, _core._Tensor)
        _memory.track(raw)
    storage = raw[:raw.size - raw.size % old.itemsize].view(old.dtype)
    self._data = np.ndarray(sizes, old.dtype, buffer=storage, offset=offset * old.itemsize, strides=strides)
    self._versions[0] += 1  # a write, as torch counts it (an inference tensor's counter then raises, as torch)
    return self
