"""Storages: the memory under a tensor, seen as bytes (``UntypedStorage``, from
``Tensor.untyped_storage()``) or as elements of the tensor's dtype (``TypedStorage``, from the
deprecated ``Tensor.storage()``), as torch's ``torch.storage``
(https://pytorch.org/docs/stable/storage.html).

A tensor here is a NumPy view of one allocation, its *owner* array: a storage is that whole
allocation, so every view of one tensor has the same storage (``data_ptr()`` equal), and writing
through a storage writes the tensors that view it. Programs use them to ask whether two tensors
share memory (``a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()``), and older
ones read a tensor's elements through ``storage().tolist()``.
"""
import warnings

import numpy as np

from . import _dtype
from ._backend import shared as _shared
from ._creation import real_if_fits
from ._device import device as _device

__all__ = ["UntypedStorage", "TypedStorage"]


def _flat(array):
    """The owner of ``array``'s memory as a flat array of ``array``'s element type (no copy; the
    owner may hold other items: bytes after ``share_memory_``, complex under ``.real``)."""
    owner = _shared.owner(array)
    return owner.ravel(order="K").view(array.dtype)  # a view: an array that owns its memory is contiguous


class _Storage:
    """What both storages share: ``_items``, a flat NumPy view of the whole allocation whose
    elements are the storage's items (bytes for the untyped one)."""

    def __init__(self, items):
        self._items = items

    def size(self):
        """The number of items (bytes or elements)."""
        return self._items.size

    def __len__(self):
        return self._items.size

    def nbytes(self):
        """The size of the memory in bytes."""
        return self._items.nbytes

    def element_size(self):
        """The size of one item in bytes (1 for an untyped storage)."""
        return self._items.itemsize

    def data_ptr(self):
        """The address of the memory's first byte: equal for every view of one allocation."""
        return self._items.__array_interface__["data"][0]

    @property
    def device(self):
        return _device("cpu")

    def is_shared(self):
        """Whether the memory lies in shared memory (``Tensor.share_memory_``)."""
        return _shared.is_shared(self._items)

    def is_pinned(self, device="cuda"):
        """False: there is no pinned memory on a CPU-only install."""
        return False

    def cpu(self):
        """The storage itself (it is on the CPU)."""
        return self

    def tolist(self):
        """The items as Python numbers (ints in [0, 255] for an untyped storage)."""
        return self._items.tolist()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._slice(index)
        return self._items[self._index(index)].item()

    def __setitem__(self, index, value):
        self._items[index if isinstance(index, slice) else self._index(index)] = self._converted(value)

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        """Writes ``value`` into every item; returns the storage."""
        self._items[...] = value
        return self

    def _index(self, index):
        if not -len(self) <= index < len(self):
            # (torch names a negative index after adding the size)
            raise IndexError(f"index {index + len(self) if index < 0 else index} out of range for storage "
                             f"of size {len(self)}")
        return index

    def __repr__(self):
        values = " " + "\n ".join(str(v) for v in self.tolist())
        return f"{values}\n[{self._describe()} of size {len(self)}]"

    __str__ = __repr__


class UntypedStorage(_Storage):
    """A tensor's memory as bytes (``Tensor.untyped_storage()``), or ``UntypedStorage(n)``: ``n``
    new zero bytes. Items are ints in [0, 255]; ``data_ptr``, ``nbytes``, ``size`` and indexing
    as torch's."""

    def __init__(self, size=0, *, device=None):
        if isinstance(size, np.ndarray):  # the bytes of an existing allocation
            super().__init__(size)
        else:
            super().__init__(np.zeros(int(size), np.uint8))

    def _slice(self, index):
        return UntypedStorage(self._items[index])

    @staticmethod
    def _converted(value):
        return np.asarray(value).astype(np.uint8, casting="unsafe")  # a byte wraps: 300 is 44

    @classmethod
    def _of(cls, array):
        return cls(_flat(array).view(np.uint8))

    def type(self):
        """The class's name as torch prints it."""
        return "torch.storage.UntypedStorage"

    def _describe(self):
        return f"torch.storage.UntypedStorage(device={self.device})"


_WARNED = []


class TypedStorage(_Storage):
    """A tensor's memory as elements of its dtype (the deprecated ``Tensor.storage()``, which warns
    once per process as torch does). ``dtype``, ``size()`` in elements, ``untyped()``."""

    def __init__(self, items, dtype):
        super().__init__(items)
        self.dtype = dtype

    def _slice(self, index):
        raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")

    def _converted(self, value):
        return real_if_fits(value, self.dtype)  # checked as a tensor's element: 300 into uint8 raises

    def type(self):
        """The legacy storage class's name, as torch prints it (``torch.FloatStorage``)."""
        return f"{_dtype.legacy_type_name(self.dtype)[:-len('Tensor')]}Storage"

    @classmethod
    def _of(cls, tensor):
        if not _WARNED:
            _WARNED.append(True)
            warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
                          "the only storage class. This should only matter to you if you are using storages "
                          "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
                          "tensor.storage()", UserWarning, stacklevel=3)
        return cls(_flat(tensor._data), tensor.dtype)

    def untyped(self):
        """The same memory as an :class:`UntypedStorage`."""
        return UntypedStorage(self._items.view(np.uint8))

    @property
    def _untyped_storage(self):
        return self.untyped()

    def _describe(self):
        return f"torch.storage.TypedStorage(dtype={self.dtype}, device={self.device})"


def untyped_storage(self):
    """The tensor's memory as an :class:`UntypedStorage` (all of it, not just this view's part:
    ``storage_offset()`` and ``stride()`` place the view in it)."""
    return UntypedStorage._of(self._data)


def storage(self):
    """The tensor's memory as a :class:`TypedStorage` of its dtype (deprecated in torch: a
    UserWarning the first time)."""
    return TypedStorage._of(self)
