"""PyTorch's checkpoint format, written and read by ember
(https://pytorch.org/docs/stable/notes/serialization.html).

A checkpoint is a zip archive of uncompressed entries under one folder (``archive/``):
``data.pkl`` (the object, pickled with protocol 2), ``data/<key>`` (the raw bytes of each
storage), ``version`` and ``byteorder``. In the pickle a tensor is the call
``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
backward_hooks)`` whose storage is a persistent id ``("storage", torch.<Type>Storage, key,
location, numel)``. The dtypes without a ``<Type>Storage`` class (uint16, uint32, uint64) are
``torch._utils._rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
backward_hooks, dtype)`` over ``("storage", torch.storage.UntypedStorage, key, location,
nbytes)``: the storage is bytes and the call names the dtype. A Parameter wraps that in ``torch._utils._rebuild_parameter(tensor,
requires_grad, backward_hooks)``; dtypes, ``torch.Size`` and ``torch.device`` are globals of
``torch``. ember writes these names (so torch reads ember's files) and maps them to ember's
tensors, dtypes, sizes and devices when reading (so ember reads torch's files); torch is
never imported.

Reading with ``weights_only=True`` (the default, as in PyTorch 2.6+) uses an unpickler whose
``find_class`` returns only what PyTorch's own weights-only unpickler allows (the rebuild
functions above, ``OrderedDict``, ``Counter``, ``set``, ``complex``, ``bytearray``, bytes via
``_codecs.encode``, dtypes, ``Size``, ``device``) plus the globals a user allowed with
:func:`add_safe_globals`; every other global is refused before anything runs.
"""
import _compat_pickle  # the stdlib's Python 2 -> 3 name table, which pickle itself uses
import codecs
import collections
import contextlib
import io
import pickle
import sys

import numpy as np

from .. import _dtype, _layout
from .._backend import shared as _shared
from .._device import check_device, device
from .._size import Size
from .._ops.sparse import sparse_coo_tensor
from .._tensor import Tensor
from ..nn.parameter import Parameter, is_lazy
from ..storage import LEGACY_STORAGES
from ._files import read_entry_into

# ---- names ----------------------------------------------------------------------------------

_STORAGE_TYPES = {cls.__name__: cls.dtype for cls in LEGACY_STORAGES}  # torch.FloatStorage -> float32, ...
_STORAGE_NAME = {dt: name for name, dt in _STORAGE_TYPES.items()}
# dtypes and storages PyTorch has and ember does not: named in a clear error rather than refused
# as unknown globals.
_FOREIGN_DTYPES = ("complex32", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "qint8",
                   "quint8", "qint32", "quint4x2", "bits8")
_FOREIGN_STORAGES = ("QInt8Storage",
                     "QUInt8Storage", "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage")
_UNSUPPORTED_REBUILDS = ("_rebuild_qtensor",
                         "_rebuild_meta_tensor_no_storage", "_rebuild_nested_tensor", "_rebuild_wrapper_subclass",
                         "_rebuild_device_tensor_from_numpy", "_rebuild_device_tensor_from_cpu_tensor")


class _Global:
    """A PyTorch global (``torch.FloatStorage``, ``torch._utils._rebuild_tensor_v2``) that the
    writer puts into the pickle by name, so saving never needs torch installed."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args):
        # pickle writes only callables as the function of a reduce; this one is never called.
        raise TypeError(f"{self!r} is a name written into checkpoints, not callable in ember")


class _StorageType:
    """What ``torch.<Type>Storage`` means when reading: the dtype of a storage's bytes."""

    def __init__(self, dtype):
        self.dtype = dtype


class _UntypedStorageType:
    """What ``torch.storage.UntypedStorage`` means when reading: a storage of bytes, whose dtype
    the ``_rebuild_tensor_v3`` calls over it give."""


class _Bytes:
    """An untyped storage read from a file: its bytes (``array``, uint8) and its key."""

    def __init__(self, key, array):
        self.key, self.array = key, array


class _TensorClass:
    """``torch.Tensor`` or ``torch.nn.Parameter`` named in ``_rebuild_from_type_v2``."""

    def __init__(self, parameter):
        self.parameter = parameter


_REBUILD_TENSOR_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _Global("torch.storage", "UntypedStorage")
# one object per name, so that pickle's memo writes a name once per file, as torch's pickler does
_STORAGE_GLOBAL = {dt: _Global("torch", name) for dt, name in _STORAGE_NAME.items()}
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")
_TORCH_SIZE = _Global("torch", "Size")
_TORCH_DEVICE = _Global("torch", "device")

# ---- user-allowed globals (torch.serialization.add_safe_globals and friends) ----------------

_user_globals = []


def add_safe_globals(safe_globals):
    """Allows ``weights_only`` loading to construct the given classes and call the given
    functions (PyTorch's ``torch.serialization.add_safe_globals``). Each item is the object,
    or a tuple ``(object, "module.name")`` naming it as the pickle does. Only add what you
    trust: an allowed class is instantiated, and an allowed function called, with arguments
    from the file."""
    _user_globals.extend(safe_globals)


def get_safe_globals():
    """The list of user-allowed globals (PyTorch's ``get_safe_globals``)."""
    return list(_user_globals)


def clear_safe_globals():
    """Forgets every user-allowed global (PyTorch's ``clear_safe_globals``)."""
    _user_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Context manager: the given globals are allowed inside the ``with`` block only
    (PyTorch's ``torch.serialization.safe_globals``)."""
    before = list(_user_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_globals[:] = before


def _user_allowed():
    allowed = {}
    for item in _user_globals:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
            allowed[item[1]] = item[0]
        else:
            allowed[f"{item.__module__}.{item.__qualname__}"] = item
    return allowed

# ---- writing --------------------------------------------------------------------------------


class _Storage:
    """One storage to write: a C-contiguous NumPy array whose bytes become ``data/<key>``."""

    def __init__(self, key, array):
        self.key, self.array = key, array


class _Reduced:
    """``function(*args)`` in the pickle: a call the reader makes (torch's ``_get_layout``)."""

    def __init__(self, function, args):
        self.function, self.args = function, args


class _TensorData:
    """A tensor's data without its Parameter-ness, as ``_rebuild_parameter`` takes it."""

    def __init__(self, tensor):
        self.tensor = tensor


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, because it lets a subclass write a global by name (``torch
    FloatStorage``) without importing its module; only the small object tree goes through it,
    the tensors' bytes are written as storages."""
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = []
        self.storage_of = {}   # id(root array) -> _Storage (self.storages keeps the roots alive)

    def persistent_id(self, obj):
        if type(obj) is _Storage:
            dtype = _dtype._FROM_NP[obj.array.dtype]
            if dtype not in _STORAGE_NAME:  # an untyped storage, its size in bytes (as torch writes it)
                return ("storage", _UNTYPED_STORAGE, obj.key, "cpu", obj.array.nbytes)
            return ("storage", _STORAGE_GLOBAL[dtype], obj.key, "cpu", obj.array.size)
        return None

    def reducer_override(self, obj):
        if is_lazy(obj):  # a lazy module's parameter before its first forward: torch writes the class
            return _Global("torch.nn.parameter", type(obj).__name__), (obj.requires_grad,)
        if isinstance(obj, Tensor) or type(obj) is _TensorData:
            tensor = obj.tensor if type(obj) is _TensorData else obj
            if type(obj) is not _TensorData and isinstance(tensor, Parameter):
                return _REBUILD_PARAMETER, (_TensorData(tensor), tensor.requires_grad, collections.OrderedDict())
            if tensor.is_sparse:  # (layout, (indices, values, size, is_coalesced)), as torch writes it
                return _REBUILD_SPARSE, (_Reduced(_GET_LAYOUT, ("torch.sparse_coo",)), (
                    tensor._indices(), tensor._values().detach(), Size(tensor.shape), tensor.is_coalesced()))
            storage, offset, stride = self.locate(tensor._data)
            requires_grad = tensor.requires_grad and type(obj) is not _TensorData
            args = (storage, offset, tuple(tensor._data.shape), stride, requires_grad, collections.OrderedDict())
            if tensor.dtype not in _STORAGE_NAME:  # no typed storage in torch: v3 names the dtype
                return _REBUILD_TENSOR_V3, args + (tensor.dtype,)
            return _REBUILD_TENSOR_V2, args
        if type(obj) is _Reduced:
            return obj.function, obj.args
        if type(obj) is Size:
            return _TORCH_SIZE, (tuple(obj),)
        if type(obj) is device:
            return _TORCH_DEVICE, (str(obj),)
        return NotImplemented

    def locate(self, array):
        """(storage, offset, strides) in elements for ``array``: the memory block it views, so
        tensors sharing memory share a storage as in PyTorch, or a copy of its own where
        the view cannot be described by an offset and non-negative strides of its dtype."""
        root = _shared.owner(array)  # (through as_strided's go-between too)
        itemsize = array.itemsize
        offset = _address(array) - _address(root)
        if not (root.flags.c_contiguous and root.nbytes % itemsize == 0 and offset % itemsize == 0
                and 0 <= offset <= root.nbytes and all(s >= 0 and s % itemsize == 0 for s in array.strides)):
            array = root = np.array(array, order="C")  # a copy of its own (0-d stays 0-d)
            offset = 0
        found = self.storage_of.get(id(root))
        if found is not None and found.array.dtype != array.dtype:  # that memory as another dtype: a copy
            array = root = np.array(array, order="C")
            offset, found = 0, None
        if found is None:
            found = self.storage_of[id(root)] = _Storage(str(len(self.storages)), root.reshape(-1).view(array.dtype))
            self.storages.append(root)
        return found, offset // itemsize, Tensor._make(array).stride()  # (torch's strides for an empty one)

    def save_torch_global(self, obj, module=None, name=None):
        self.write(pickle.GLOBAL + f"{module or obj.module}\n{name or obj.name}\n".encode("utf-8"))
        self.memoize(obj)  # a later use of obj is a reference to this one

    def save_dtype(self, obj):
        self.save_torch_global(obj, "torch", obj.name)

    dispatch[_Global] = save_torch_global
    dispatch[_dtype.dtype] = save_dtype


def _address(array):
    return array.__array_interface__["data"][0]


def dump(obj, protocol):
    """``(data.pkl bytes, storages)`` for ``obj``; ``storages`` are ``(key, flat array)``.
    Raises ValueError for an object nested too deeply to pickle, and pickle's own errors
    (TypeError, PicklingError, AttributeError) naming an object that cannot be pickled."""
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, protocol)
    try:
        pickler.dump(obj)
    except RecursionError:
        raise ValueError("ember.save: the object is nested too deeply to save (deeper than Python's "
                         f"recursion limit, {sys.getrecursionlimit()})") from None
    except pickle.PicklingError as e:
        if "it's not found as" in str(e):  # a lambda or local class: torch's C pickler says AttributeError
            raise AttributeError(f"ember.save: {e}") from None
        raise
    return buffer.getvalue(), [(s.key, s.array) for s in pickler.storage_of.values()]

# ---- reading --------------------------------------------------------------------------------


def place(t, location, map_location):
    """``t`` (a storage as a 1-D tensor, or a tensor) where ``map_location`` sends data saved on
    ``location``; ember keeps everything on the CPU (PyTorch's ``map_location`` semantics:
    None, a device or string, a dict from saved to wanted location, or a callable
    ``(storage, location)`` returning the storage to use or None)."""
    target = location if map_location is None else map_location
    if isinstance(target, dict):
        target = target.get(location, location)
    elif callable(target) and not isinstance(target, (str, device)):
        moved = target(t, location)
        if moved is None:
            return place(t, location, None)
        if not isinstance(moved, Tensor):
            raise TypeError(f"ember.load: map_location returned {type(moved).__name__}, expected a Tensor or None")
        return moved
    if device(target).type != "cpu" and map_location is None:
        raise RuntimeError(f"ember.load: the file holds tensors saved on '{location}', and ember computes "
                           f"only on the CPU; pass map_location='cpu' to load them there")
    check_device(target)
    return t


class _Rebuilder:
    """Turns a PyTorch pickle back into ember objects: storages from the archive, tensors as
    views of them, and PyTorch's names as ember's."""

    def __init__(self, archive, prefix, name, map_location, byteorder):
        self.archive, self.prefix, self.name = archive, prefix, name
        self.map_location, self.byteorder = map_location, byteorder
        self.storages = {}
        self.widths = {}  # key -> bytes per number, of the untyped storages put in the machine's order

    def fail(self, problem):
        raise RuntimeError(f"ember.load: {self.name} is not a valid checkpoint: {problem}")

    def storage(self, pid):
        """The storage ``pid`` names: a flat array of its dtype, or :class:`_Bytes` for an
        untyped one; read once per key, so tensors that shared a storage share it again."""
        if not (type(pid) is tuple and len(pid) == 5 and pid[0] == "storage"
                and type(pid[1]) in (_StorageType, _UntypedStorageType)
                and type(pid[2]) is str and type(pid[3]) is str and type(pid[4]) is int and pid[4] >= 0):
            self.fail(f"unexpected persistent id {pid!r:.200}")
        _, storage_type, key, location, numel = pid
        untyped = type(storage_type) is _UntypedStorageType
        dtype = _dtype.uint8 if untyped else storage_type.dtype
        if key not in self.storages:
            array = np.empty(numel, dtype.np)
            read_entry_into(self.archive, f"{self.prefix}/data/{key}", array, self.name)
            if not untyped:  # an untyped storage is put in the machine's order by its dtype's first use
                self.to_native_order(array)
            array = place(Tensor._make(array), location, self.map_location)._data.reshape(-1)
            self.storages[key] = _Bytes(key, array) if untyped else array
        found = self.storages[key]
        if (type(found) is _Bytes) != untyped or (not untyped and found.dtype != dtype.np):
            self.fail(f"storage {key} is used with two dtypes")
        return found

    def to_native_order(self, array):
        """Reverses the bytes of each of ``array``'s numbers in place where the file's byte
        order is not this machine's (each half of a complex number on its own)."""
        width = _number_width(array.dtype)
        if self.byteorder != sys.byteorder and width > 1 and array.size:
            grouped = array.reshape(-1).view(np.uint8).reshape(-1, width)
            grouped[...] = grouped[:, ::-1].copy()

    def typed(self, storage, dtype):
        """The bytes of the untyped storage ``storage`` as a flat array of ``dtype``: the same
        memory, so every tensor over the storage shares it. From a file in the other byte
        order the bytes are reordered on the storage's first use, so its later uses must be
        numbers of the same width."""
        itemsize = dtype.np.itemsize
        array = storage.array[:storage.array.size // itemsize * itemsize].view(dtype.np)
        if self.byteorder != sys.byteorder:
            if storage.key not in self.widths:
                self.widths[storage.key] = _number_width(array.dtype)
                self.to_native_order(array)
            if self.widths[storage.key] != _number_width(array.dtype):
                self.fail(f"storage {storage.key} is read as {dtype} and as numbers of "
                          f"{self.widths[storage.key]} bytes, in a file of the other byte order")
        return array

    def tensor_v2(self, storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                  metadata=None):
        if not isinstance(storage, np.ndarray):
            self.fail(f"a tensor's storage is a {type(storage).__name__}")
        if not (_ints(size) and _ints(stride) and len(size) == len(stride) and type(storage_offset) is int):
            self.fail(f"tensor geometry size={size!r:.100} stride={stride!r:.100} offset={storage_offset!r:.40}")
        if any(n < 0 for n in size) or any(s < 0 for s in stride) or storage_offset < 0:
            self.fail(f"negative size, stride or offset: size={size} stride={stride} offset={storage_offset}")
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if 0 not in size and last >= storage.size:
            self.fail(f"a tensor of size {list(size)}, stride {list(stride)} and offset {storage_offset} "
                      f"reaches element {last} of a storage of {storage.size}")
        if 0 in size and storage_offset > storage.size:
            array = np.empty(size, storage.dtype)
        else:  # (an empty view within its storage stays on it, as in torch)
            array = np.lib.stride_tricks.as_strided(storage[storage_offset:], size,
                                                    [s * storage.itemsize for s in stride])
        t = Tensor._make(array)
        if requires_grad is True:
            t.requires_grad_(True)
        return t

    def tensor_v3(self, storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, dtype=None,
                  metadata=None):
        """``_rebuild_tensor_v3``: a tensor of ``dtype`` over an untyped storage (in elements of
        ``dtype``, as ``storage_offset`` and ``stride`` count)."""
        if type(storage) is not _Bytes or not isinstance(dtype, _dtype.dtype):
            self.fail(f"_rebuild_tensor_v3 of a {type(storage).__name__} storage and dtype {dtype!r:.40}")
        return self.tensor_v2(self.typed(storage, dtype), storage_offset, size, stride, requires_grad)

    def tensor_v1(self, storage, storage_offset, size, stride):
        return self.tensor_v2(storage, storage_offset, size, stride)

    def parameter(self, data, requires_grad, backward_hooks=None, state=None):
        if not isinstance(data, Tensor):
            self.fail(f"a Parameter's data is a {type(data).__name__}")
        p = Parameter(data, requires_grad=bool(requires_grad))
        self.set_state(p, state)
        return p

    def sparse(self, layout, data):
        """``_rebuild_sparse_tensor``: a COO tensor from its indices, values and size, checked as
        ``sparse_coo_tensor`` checks them (a file cannot make an out-of-range index)."""
        if layout is not _layout.sparse_coo:
            self.fail(f"a sparse tensor of layout {layout!r:.100}")
        if type(data) is not tuple or len(data) not in (3, 4):
            self.fail(f"sparse tensor data {data!r:.100}")
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) == 4 else None
        if not (isinstance(indices, Tensor) and isinstance(values, Tensor) and _ints(size)
                and coalesced in (None, True, False)):
            self.fail(f"sparse tensor data {data!r:.100}")
        return sparse_coo_tensor(indices, values, tuple(size), is_coalesced=bool(coalesced))

    def from_type_v2(self, func, new_type, args, state):
        if type(new_type) is not _TensorClass or not isinstance(args, tuple):
            self.fail(f"_rebuild_from_type_v2 of {new_type!r:.100}")
        t = func(*args)
        if new_type.parameter and not isinstance(t, Parameter):
            t = self.parameter(t, t.requires_grad)
        self.set_state(t, state)
        return t

    def set_state(self, t, state):
        # Python attributes a user set on a tensor; never ember's own slots.
        if state is None or state == {}:
            return
        if not isinstance(state, dict) or not all(type(k) is str and not k.startswith("_") for k in state):
            self.fail(f"tensor attributes {state!r:.100}")
        for key, value in state.items():
            setattr(t, key, value)

    def globals(self):
        """Every PyTorch name this reader maps, to what it means in ember."""
        table = {"torch._utils._rebuild_tensor_v2": self.tensor_v2, "torch._utils._rebuild_tensor": self.tensor_v1,
                 "torch._utils._rebuild_tensor_v3": self.tensor_v3, "torch.storage.UntypedStorage": _UntypedStorageType(),
                 "torch._utils._rebuild_parameter": self.parameter,
                 "torch._utils._rebuild_parameter_with_state": self.parameter,
                 "torch._tensor._rebuild_from_type_v2": self.from_type_v2,
                 "torch._utils._rebuild_sparse_tensor": self.sparse, "torch.serialization._get_layout": _get_layout,
                 "torch.Tensor": _TensorClass(False), "torch.nn.parameter.Parameter": _TensorClass(True),
                 "torch.Size": Size, "torch.device": device}
        table.update({f"torch.{n}": _StorageType(dt) for n, dt in _STORAGE_TYPES.items()})
        table.update({f"torch.{dt.name}": dt for dt in _dtype._ALL})
        for name in _FOREIGN_DTYPES + _FOREIGN_STORAGES:
            table[f"torch.{name}"] = _Unsupported(name)
        for name in _UNSUPPORTED_REBUILDS:
            table[f"torch._utils.{name}"] = _Unsupported(name)
        return table


def _get_layout(name):
    """A layout named as torch writes it (``"torch.sparse_coo"``); UnpicklingError otherwise."""
    found = {"torch.sparse_coo": _layout.sparse_coo, "torch.strided": _layout.strided}.get(name)
    if found is None:
        raise pickle.UnpicklingError(f"ember.load: unknown or unsupported layout {name!r:.100}")
    return found


class _Unsupported:
    """A PyTorch name ember has no equivalent for (float8 or complex32 dtypes, quantized tensors)."""

    def __init__(self, name):
        self.name = name


def _number_width(np_dtype):
    """Bytes per number of ``np_dtype``, whose order a byte order reverses (a complex number is two)."""
    return np_dtype.itemsize // (2 if np_dtype.kind == "c" else 1)


def _ints(values):
    return type(values) in (tuple, list, Size) and all(type(v) is int for v in values)


def _bytes_from_text(text, encoding="utf-8", errors="strict"):
    # What ``_codecs.encode`` does for bytes pickled with protocol 2, limited to text input.
    if type(text) is not str or type(encoding) is not str:
        raise pickle.UnpicklingError("_codecs.encode is allowed only to turn text into bytes")
    return codecs.encode(text, encoding, errors)


_ALLOWED = {"collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
            "_codecs.encode": _bytes_from_text, "builtins.bytearray": bytearray, "builtins.set": set,
            "builtins.complex": complex}


def _python3_name(module, name):
    # Protocol-2 pickles may name Python 2 modules (``__builtin__ set``), as the stdlib maps them.
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def unsupported_global_message(full_name):
    return (f"Weights only load failed. This file can still be loaded, to do so you have two options, do those "
            f"steps only if you trust the source of the checkpoint.\n\t(1) Re-running `ember.load` with "
            f"`weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. "
            f"Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
            f"`weights_only=True` please check the recommended steps in the following error message.\n\t"
            f"WeightsUnpickler error: Unsupported global: GLOBAL {full_name} was not an allowed global by "
            f"default. Please use `ember.serialization.add_safe_globals([{full_name}])` or the "
            f"`ember.serialization.safe_globals([{full_name}])` context manager to allowlist this global "
            f"if you trust this class/function.")


def unpickle(data, rebuilder, weights_only, encoding="utf-8", **pickle_load_args):
    """The object pickled in ``data``; with ``weights_only`` only allowed globals are looked up,
    anything else raises ``pickle.UnpicklingError`` before it is constructed."""
    torch_names = rebuilder.globals()

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            module, name = _python3_name(module, name)
            full_name = f"{module}.{name}"
            found = torch_names.get(full_name)
            if type(found) is _Unsupported:
                raise RuntimeError(f"ember.load: {rebuilder.name} holds torch.{found.name}, which ember does not "
                                   f"have (ember has dense CPU tensors of {', '.join(d.name for d in _dtype._ALL)})")
            if found is not None:
                return found
            if not weights_only:
                if module == "torch" or module.startswith("torch."):
                    module = "ember" + module[len("torch"):]  # torch's classes are ember's of the same path
                return super().find_class(module, name)
            found = _ALLOWED.get(full_name, _user_allowed().get(full_name))
            if found is None:
                raise pickle.UnpicklingError(unsupported_global_message(full_name))
            return found

        def persistent_load(self, pid):
            return rebuilder.storage(pid)

    try:
        obj = Unpickler(io.BytesIO(data), encoding=encoding, **pickle_load_args).load()
    except (pickle.UnpicklingError, RuntimeError, MemoryError):
        raise
    except Exception as e:
        if weights_only:
            raise pickle.UnpicklingError(f"Weights only load failed: {rebuilder.name}: {type(e).__name__}: {e}") \
                from None
        raise
    check_depth(obj, rebuilder.name)
    return obj


def check_depth(obj, name, limit=None):
    """RuntimeError if containers nest more than ``limit`` (Python's recursion limit) deep:
    neither torch.save nor ember.save can write such an object, and printing or walking it
    would stop with RecursionError. Iterative and linear in the number of containers."""
    limit = limit or sys.getrecursionlimit()
    containers = (list, tuple, dict, set, frozenset)
    if not isinstance(obj, containers):
        return 0
    height = {}
    stack = [(obj, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in height and not children_done:
            continue
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        children = [c for c in children if isinstance(c, containers)]
        if not children_done:
            height[id(node)] = 0  # in progress: a cycle back to it adds nothing
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in height)
            continue
        height[id(node)] = 1 + max((height.get(id(c), 0) for c in children), default=0)
        if height[id(node)] > limit:
            raise RuntimeError(f"ember.load: {name} holds containers nested more than {limit} deep, deeper than "
                               f"torch.save or ember.save can write: the file is damaged or crafted")
    return height.get(id(obj), 0)
