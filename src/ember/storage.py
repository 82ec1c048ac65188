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
import weakref

import numpy as np

from . import _dtype, _memory
from ._backend import shared as _shared
from ._creation import real_if_fits, tensor
from ._device import device as _device
from ._ops.args import warn_once
from ._ops.core import Op, apply, named
from ._tensor import Tensor
from .autograd.grad_mode import STATE

__all__ = ["UntypedStorage", "TypedStorage", "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage",
           "LongStorage", "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage",
           "ComplexFloatStorage", "ComplexDoubleStorage"]


def _flat(array, dtype=np.uint8):
    """The owner of ``array``'s memory as a flat array of ``dtype``'s whole items (no copy; the
    owner may hold other items: bytes after ``share_memory_``, complex under ``.real``)."""
    raw = _shared.owner(array).ravel(order="K").view(np.uint8)  # a view: an array that owns its memory is contiguous
    return raw[:raw.size - raw.size % np.dtype(dtype).itemsize].view(dtype)


_LIVE = weakref.WeakSet()  # the storage objects alive, which follow their memory when it grows


def _follow(root, grown):
    """Points the live storages that show all of the allocation ``root`` at its grown bytes
    (``_shared.regrow``), as torch's storage objects share the memory they wrap."""
    start, nbytes = root.__array_interface__["data"][0], root.nbytes
    for storage in list(_LIVE):
        items = storage._items
        if items.nbytes == nbytes and storage.data_ptr() == start and _shared.owner(items) is root:
            storage._items = grown[:grown.size - grown.size % items.itemsize].view(items.dtype)


_shared.REGROWN.append(_follow)


_CONVERSIONS = [("double", _dtype.float64), ("float", _dtype.float32), ("half", _dtype.float16),
                ("bfloat16", _dtype.bfloat16), ("long", _dtype.int64), ("int", _dtype.int32),
                ("short", _dtype.int16), ("char", _dtype.int8), ("byte", _dtype.uint8),
                ("bool", _dtype.bool), ("complex_float", _dtype.complex64),
                ("complex_double", _dtype.complex128)]


def _conversion(name, dtype):
    """The storage method ``name``: a new TypedStorage of ``dtype`` holding the items converted
    as ``Tensor.to`` converts them (``_Storage._converted_to``)."""
    def convert(self):
        return self._converted_to(dtype)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"A {dtype} copy of this storage's items (an untyped storage's are its bytes)."
    return convert


class _Storage:
    """What both storages share: ``_items``, a flat NumPy view of the whole allocation whose
    elements are the storage's items (bytes for the untyped one)."""

    def __init__(self, items):
        self._items = items
        _LIVE.add(self)

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

    def _converted_to(self, dtype):
        """A new :class:`TypedStorage` of ``dtype`` holding this storage's items converted as
        ``Tensor.to`` converts (an untyped storage's items are its bytes, as uint8)."""
        items = Tensor._make(self._items)
        return TypedStorage(items.to(dtype, copy=True)._data, dtype)

    # ``double()``, ``float()``, ... ``complex_double()``: converted copies, as torch's
    # TypedStorage/UntypedStorage methods (:func:`_conversion`)
    (double, float, half, bfloat16, long, int, short, char, byte, bool, complex_float,
     complex_double) = (_conversion(name, dtype) for name, dtype in _CONVERSIONS)

    def _as_tensor(self, dtype, context):
        """A 1-d tensor of ``dtype`` over this storage's memory (shared): as many whole items as
        its bytes hold; a typed storage's own dtype where ``dtype`` is None. The constructors
        that take a storage (``tensor``, ``FloatTensor``, ``Tensor``) call it; ``context`` is
        their wording of torch's RuntimeError for a typed storage of another dtype: ``"tensor"``
        or ``"argument"``."""
        own = getattr(self, "dtype", None)
        if dtype is None:
            # (torch reads an untyped storage as a sequence of ints: int64, or an empty one the default float)
            dtype = own or (_dtype.int64 if len(self) else _dtype.get_default_dtype())
        elif own is not None and own is not dtype:
            got = _dtype.SCALAR_TYPE_NAMES[own.name]
            raise RuntimeError(f"Expected a Storage of type {_dtype.SCALAR_TYPE_NAMES[dtype.name]} or an UntypedStorage, "
                               f"but got {got if context == 'tensor' else f'type {got} for argument 1 {chr(39)}storage{chr(39)}'}")
        raw = self._memory()
        return Tensor._make(raw[:raw.size - raw.size % dtype.np.itemsize].view(dtype.np))

    def _memory(self):
        """The bytes as a tensor's storage: a slice of a storage (``storage[2:10]``) is an
        allocation of its own there, as torch's (its size, not resizable)."""
        return _shared.own_span(self._items.view(np.uint8))

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
        return cls(_flat(array))

    def type(self):
        """The class's name as torch prints it."""
        return "torch.storage.UntypedStorage"

    def untyped(self):
        """The storage itself (as torch's)."""
        return self

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
        self._items = _shared.regrow(self._items, size, Tensor)
        _memory.track(self._items)
        return self


TYPED_STORAGE_DEPRECATED = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
    "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
    "directly, use tensor.untyped_storage() instead of tensor.storage()")


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
        warn_once(TYPED_STORAGE_DEPRECATED)
        return cls(_flat(tensor._data, tensor._data.dtype), tensor.dtype)

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


_SET_FORMS = (" * ()\n * (torch.Storage source)\n * (torch.Storage source, int storage_offset, tuple of ints size, "
              "tuple of ints stride = None)\n * (Tensor source)\n * (Tensor source, int storage_offset, tuple of ints "
              "size, tuple of ints stride = None)\n")
_NO_SOURCE = object()


def set_(self, source=_NO_SOURCE, storage_offset=None, size=None, stride=None):
    """Makes ``self`` view other memory, in place: ``set_()`` an empty storage; ``set_(tensor)``
    ``tensor``'s storage, offset, shape and strides; ``set_(storage)`` all of a storage's whole
    elements, 1-d; ``set_(source, storage_offset, size, stride=None)`` that view of the
    storage (or of the tensor's storage; row-major strides by default). ``self`` then shares
    the memory: writes through either show in the other. A view reaching past the storage's
    end grows the storage, for every tensor on it (new bytes zero; torch's are uninitialised).
    Where ``source`` or ``self`` requires grad, ``self`` gets torch's ``NotImplemented`` node,
    whose backward raises. Returns ``self``
    (https://pytorch.org/docs/stable/generated/torch.Tensor.set_.html).

    Raises:
        TypeError: arguments matching none of the forms (torch's message lists them).
        RuntimeError: ``self`` is a leaf that requires grad, while grad mode is on; a typed
            storage or tensor of another dtype than ``self``'s; a negative offset; sizes and
            strides of other lengths; a storage that cannot grow (a slice of one).
    """
    given = ([] if source is _NO_SOURCE else [source]) + [a for a in (storage_offset, size, stride) if a is not None]
    is_storage = isinstance(source, _Storage)
    if source is _NO_SOURCE and given or not (source is _NO_SOURCE or is_storage or isinstance(source, Tensor)) \
            or (storage_offset is None) != (size is None) or stride is not None and size is None:
        got = ", ".join(type(a).__name__ if not isinstance(a, _Storage) else f"torch.storage.{type(a).__name__}"
                        for a in given)
        raise TypeError(f"set_() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        + _SET_FORMS)
    if self.requires_grad and self.grad_fn is None and STATE.enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    itemsize = self._data.itemsize
    if source is _NO_SOURCE:
        data = np.zeros(0, self.dtype.np)
    else:
        if isinstance(source, TypedStorage) and source.dtype is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {_dtype.CPP_NAMES[self.dtype.name]} or an UntypedStorage, "
                               f"but got type {_dtype.SCALAR_TYPE_NAMES[source.dtype.name]} for argument 1 'storage'")
        if isinstance(source, Tensor) and source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_dtype.CPP_NAMES[source.dtype.name]} to a tensor of "
                               f"type {_dtype.CPP_NAMES[self.dtype.name]}")
        memory = UntypedStorage._of(source._data) if isinstance(source, Tensor) else source.untyped()
        if size is None:
            if is_storage:
                size, storage_offset = (memory.nbytes() // itemsize,), 0
            else:
                size, storage_offset, stride = source.shape, source.storage_offset(), source.stride()
        size = tuple(int(n) for n in size)
        stride = _contiguous(size) if stride is None else tuple(int(n) for n in stride)
        if storage_offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
        if len(stride) != len(size):
            raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
        if any(n < 0 for n in size):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
        end = (storage_offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1) * itemsize if all(size) else 0
        if end > memory.nbytes():
            memory.resize_(end)
        data = np.ndarray(size, self.dtype.np, buffer=memory._memory(), offset=storage_offset * itemsize,
                          strides=tuple(st * itemsize for st in stride))
    _memory.track(data)
    self._data = data
    self._view_chain = self._view_creation = None
    self._versions[0] += 1  # (after the change, as torch: an inference tensor's counter then raises)
    if STATE.enabled and (self.requires_grad or isinstance(source, Tensor) and source.requires_grad):
        source = source if isinstance(source, Tensor) else Tensor._make(data)
        linked = named(apply(_SetNotImplemented, self._alias_with_history(), source), "NotImplemented")
        self.grad_fn, self.requires_grad = linked.grad_fn, True
    return self


def _contiguous(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class _SetNotImplemented(Op):
    """The node ``set_`` leaves where the memory's history is lost (torch's ``NotImplemented``):
    its result is the new view; its backward raises as torch's."""
    name = "SetNotImplemented"
    promote = None
    save_inputs = False

    @staticmethod
    def forward(previous, source):
        return source

    @classmethod
    def infer(cls, previous, source):
        return tuple(source.shape), source.dtype

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for set_ is not implemented")


def untyped_storage(self):
    """The tensor's memory as an :class:`UntypedStorage` (all of it, not just this view's part:
    ``storage_offset()`` and ``stride()`` place the view in it)."""
    return UntypedStorage._of(self._data)


def storage(self):
    """The tensor's memory as a :class:`TypedStorage` of its dtype (deprecated in torch: a
    UserWarning the first time)."""
    return TypedStorage._of(self)
