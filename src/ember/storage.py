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
import numbers
import warnings

import numpy as np

from . import _dtype, _memory
from ._backend import shared as _shared
from ._creation import real_if_fits, tensor
from ._device import device as _device
from ._tensor import Tensor

__all__ = ["UntypedStorage", "TypedStorage", "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage",
           "LongStorage", "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage",
           "ComplexFloatStorage", "ComplexDoubleStorage"]


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

    def copy_(self, src, non_blocking=None):
        """Writes the bytes of the storage ``src`` (untyped or typed) over this one's; returns
        self. TypeError for what is not a storage (a tensor), RuntimeError for a size in
        bytes other than this one's."""
        if not isinstance(src, _Storage):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be torch.Storage, not {type(src).__name__}")
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was {src.nbytes()} bytes")
        self._items[...] = src._items.view(np.uint8)
        return self

    def clone(self):
        """A new storage holding a copy of these bytes."""
        return UntypedStorage(self._items.copy())

    def resize_(self, size):
        """Gives the storage ``size`` bytes, keeping the first ones (new ones are zero here;
        torch leaves them uninitialised); returns self. The tensors on this memory move with
        it, as they share torch's storage. RuntimeError for a negative size, or where a tensor
        on it would reach past the new end (torch lets it, and fails when it is read), or the
        storage is a slice of another (``storage[1:3]``)."""
        size = int(size)
        if size < 0:
            raise RuntimeError(f"Trying to resize storage to a negative number of bytes: {size}")
        root = _shared.owner(self._items)
        start = root.__array_interface__["data"][0]
        if self.data_ptr() != start or self.nbytes() != root.nbytes:  # a slice of a storage
            raise RuntimeError("Trying to resize storage that is not resizable")
        grown = np.zeros(size, np.uint8)
        keep = min(size, self._items.size)
        grown[:keep] = self._items[:keep]
        moved = []
        for t in _shared.on(root, Tensor):
            data = t._data
            offset = data.__array_interface__["data"][0] - start
            end = offset + sum(max((n - 1) * st, 0) for n, st in zip(data.shape, data.strides)) + data.itemsize
            if data.size and end > size:
                raise RuntimeError(f"resize_: a tensor of shape {list(data.shape)} on this storage reaches byte "
                                   f"{end}, past the new size {size}")
            moved.append((t, offset))
        for t, offset in moved:
            t._data = np.ndarray(t._data.shape, t._data.dtype, buffer=grown, offset=min(offset, size),
                                 strides=t._data.strides)
        if moved:
            _memory.track(moved[0][0]._data)
        self._items = grown
        return self


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


class _LegacyStorageMeta(type):
    """A legacy storage class (``FloatStorage``) counts every TypedStorage of its dtype as an
    instance, as torch's."""

    def __instancecheck__(cls, instance):
        if type(instance) is TypedStorage:
            return instance.dtype is cls.dtype
        return super().__instancecheck__(instance)


class _LegacyStorage(metaclass=_LegacyStorageMeta):
    """``torch.FloatStorage()`` (empty), ``(size)`` (zeros here; torch leaves them
    uninitialised), ``(sequence)`` (its numbers, flattened, converted as ``tensor(data,
    dtype=...)`` converts them) or ``(wrap_storage=untyped)`` (that memory): a
    :class:`TypedStorage` of the class's ``dtype``.
    TypeError for an argument of another type, RuntimeError for several arguments, a negative
    size or a number the dtype cannot hold."""
    dtype = None

    def __new__(cls, *args, wrap_storage=None):
        if wrap_storage is not None:
            if args:
                raise RuntimeError(_invalid(cls, "No positional arguments should be given when using 'wrap_storage'"))
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"Argument 'wrap_storage' must be UntypedStorage, but got {type(wrap_storage)}")
            items = wrap_storage._items
            whole = items.size // cls.dtype.np.itemsize * cls.dtype.np.itemsize  # (torch drops a partial item)
            return TypedStorage(items[:whole].view(cls.dtype.np), cls.dtype)  # the same memory
        if not args:
            args = (0,)
        if len(args) != 1 or isinstance(args[0], bool) or not isinstance(args[0], (numbers.Integral, list, tuple, str)):
            if len(args) > 1:  # (torch says RuntimeError for that one, TypeError for a wrong type)
                raise RuntimeError(_invalid(cls, "Too many positional arguments"))
            raise TypeError(_invalid(cls, f"Argument type not recognized: {type(args[0])}"))
        if isinstance(args[0], numbers.Integral):
            if args[0] < 0:
                raise RuntimeError(f"Trying to create a storage of negative size {args[0]}")
            return TypedStorage(np.zeros(int(args[0]), cls.dtype.np), cls.dtype)
        return TypedStorage(tensor(args[0], dtype=cls.dtype)._data.reshape(-1), cls.dtype)


def _invalid(cls, problem):
    return (f"{cls}.__new__ received an invalid combination of arguments. Expected one of:\n * no arguments\n"
            f" * (int size)\n * (Sequence data)\n * (*, UntypedStorage wrap_storage)\n{problem}")


def _legacy_class(dtype):
    name = f"{_dtype.legacy_type_name(dtype).rsplit('.', 1)[1][:-len('Tensor')]}Storage"
    # printed as torch's (<class 'torch.FloatStorage'>), as dtypes are: the names programs compare
    return _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dtype, "__module__": _dtype.PRINTED_MODULE,
                                                          "__qualname__": name})


LEGACY_STORAGES = tuple(_legacy_class(dt) for dt in (
    _dtype.float32, _dtype.float64, _dtype.float16, _dtype.bfloat16, _dtype.int64, _dtype.int32, _dtype.int16,
    _dtype.int8, _dtype.uint8, _dtype.bool, _dtype.complex64, _dtype.complex128))
(FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage, ShortStorage, CharStorage,
 ByteStorage, BoolStorage, ComplexFloatStorage, ComplexDoubleStorage) = LEGACY_STORAGES


def untyped_storage(self):
    """The tensor's memory as an :class:`UntypedStorage` (all of it, not just this view's part:
    ``storage_offset()`` and ``stride()`` place the view in it)."""
    return UntypedStorage._of(self._data)


def storage(self):
    """The tensor's memory as a :class:`TypedStorage` of its dtype (deprecated in torch: a
    UserWarning the first time)."""
    return TypedStorage._of(self)
