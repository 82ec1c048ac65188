"""``ember.save`` and ``ember.load``: tensors and nested containers of them in a file
(the semantics of ``torch.save``/``torch.load``, https://pytorch.org/docs/stable/notes/serialization.html).

The file is a zip archive (stored, not compressed) that holds no pickle:

- ``archive/ember.json``: ``{"format": "ember", "version": 1, "object": <node>,
  "tensors": [<record>, ...], "storages": <count>}``.
- ``archive/data/<k>.npy``: storage ``k``, one NumPy ``.npy`` array (format 1.0 or 2.0) of
  an ember dtype.

A node is ``null``, ``true``/``false``, an integer, a string, a finite float, or an object
``{"type": ...}``: ``float`` (``"value"``: ``"inf"``, ``"-inf"`` or ``"nan"``), ``list``, ``tuple``
and ``size`` (``"items"``: nodes), ``dict`` and ``ordereddict`` (``"items"``: ``[key, value]``
node pairs, so keys need not be strings; an OrderedDict's ``_metadata``, which
``Module.load_state_dict`` reads, is kept under ``"metadata"``), ``dtype`` (``"name"``),
``device`` (``"name"``), ``tensor`` (``"index"`` into ``"tensors"``). A tensor record is
``{"storage": k, "dtype": name, "shape": [...], "requires_grad": bool, "parameter": bool}``.

Sharing: a tensor object that appears several times is saved once and loads as one object.
Distinct tensors that are the same view of the same memory (same address, shape, strides and
dtype, such as tied weights in a state_dict) share one storage and load as distinct tensors
sharing memory. Views that only overlap are saved separately and load as independent tensors;
a view saves only its own elements, never the whole buffer behind it. Containers are copied
per occurrence. Loading runs no code from the file: the JSON is decoded by rules, and an array
is read only after its ``.npy`` header names an ember dtype (never an object array, which
would need unpickling) and a size that matches the entry.
"""
import collections
import io
import json
import math
import os
import secrets
import zipfile

import numpy as np

from . import _dtype
from ._device import check_device, device
from ._size import Size
from ._tensor import Tensor

__all__ = ["save", "load"]

_FORMAT = "ember"
_VERSION = 1
_INDEX = "archive/ember.json"
_STORAGE = "archive/data/{}.npy"


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves ``obj`` to ``f``.

    Args:
        obj: a Tensor (or Parameter), or nested ``dict``/``OrderedDict``/``list``/``tuple`` of
            tensors, ``int``, ``float``, ``bool``, ``str``, ``None``, ``ember.dtype``,
            ``ember.Size`` and ``ember.device`` (a ``state_dict``, an optimizer's
            ``state_dict`` with its ``param_groups``, a checkpoint dict).
        f: a path (``str`` or ``os.PathLike``) or a binary file-like object with ``write``.
        pickle_module, pickle_protocol: accepted for PyTorch compatibility and ignored; the
            format holds no pickle.

    A path is written to a temporary file in the same directory that then replaces ``f`` in
    one step, so a crash or an error never leaves a partly written file under the name ``f``
    (an existing file stays as it was). Raises TypeError naming the type of an object that
    cannot be saved, ValueError for a container that contains itself, and RuntimeError if the
    parent directory of a path does not exist; nothing is written in those cases.
    """
    index, arrays = _Encoder().encode(obj)
    if isinstance(f, (str, os.PathLike)):
        _write_atomically(os.fspath(f), lambda fh: _write_archive(fh, index, arrays))
    else:
        _write_archive(f, index, arrays)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads an object saved by :func:`save` from ``f`` (a path or a binary file-like object).

    Tensors come back as they were saved (dtype, shape, values, ``requires_grad``); saved
    Parameters come back as ``ember.nn.Parameter``. ``map_location`` may be None, a device
    or device string, a dict mapping the saved location (``"cpu"``) to a device, or a callable
    ``map_location(tensor, "cpu")`` returning the tensor to use (or None to keep it); ember
    keeps tensors on the CPU and raises RuntimeError for another device.

    ``weights_only``, ``mmap``, ``pickle_module`` and ``pickle_load_args`` are accepted for
    PyTorch compatibility: the format can only hold tensors and plain data, so every load is
    "weights only", and the arrays are read into memory.

    Raises RuntimeError for a file that is not an ember archive, is truncated or corrupt, or
    describes an object inconsistently (a PyTorch pickle checkpoint is refused, not unpickled).
    """
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _Decoder(_open_archive(fh, name), name, map_location).decode()
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _Decoder(_open_archive(f, name), name, map_location).decode()


# ---- writing --------------------------------------------------------------------------------

def _parameter_class():
    try:
        from .nn import Parameter
    except ImportError:
        return None
    return Parameter


class _Encoder:
    """Turns an object tree into a JSON-able index and the list of arrays to store."""

    def __init__(self):
        self.tensors = []           # records, in order of first appearance
        self.tensor_ids = {}        # id(tensor) -> index in self.tensors (obj keeps them alive)
        self.arrays = []            # storage k -> array
        self.storage_ids = {}       # (address, shape, strides, dtype) -> storage k
        self.open_containers = set()
        self.parameter = _parameter_class()

    def encode(self, obj):
        node = self.node(obj)
        index = {"format": _FORMAT, "version": _VERSION, "object": node, "tensors": self.tensors,
                 "storages": len(self.arrays)}
        return index, self.arrays

    def node(self, obj):
        if obj is None or type(obj) in (bool, int, str):
            return obj
        if type(obj) is float:
            return obj if math.isfinite(obj) else {"type": "float", "value": repr(obj)}
        if isinstance(obj, Tensor):
            return {"type": "tensor", "index": self.tensor(obj)}
        if type(obj) is _dtype.dtype:
            return {"type": "dtype", "name": obj.name}
        if type(obj) is device:
            return {"type": "device", "name": str(obj)}
        if type(obj) is Size:
            return {"type": "size", "items": list(obj)}
        kind = _CONTAINERS.get(type(obj))
        if kind is None:
            raise TypeError(f"ember.save: cannot save an object of type '{type(obj).__module__}."
                            f"{type(obj).__qualname__}'; supported: Tensor, dict, OrderedDict, list, "
                            f"tuple, int, float, bool, str, None, dtype, Size, device")
        if id(obj) in self.open_containers:
            raise ValueError(f"ember.save: the {type(obj).__name__} contains itself")
        self.open_containers.add(id(obj))
        if kind in ("dict", "ordereddict"):
            node = {"type": kind, "items": [[self.node(k), self.node(v)] for k, v in obj.items()]}
            metadata = getattr(obj, "_metadata", None)
            if kind == "ordereddict" and metadata is not None:
                node["metadata"] = self.node(metadata)
        else:
            node = {"type": kind, "items": [self.node(x) for x in obj]}
        self.open_containers.discard(id(obj))
        return node

    def tensor(self, t):
        if id(t) in self.tensor_ids:
            return self.tensor_ids[id(t)]
        data = t._data
        key = (data.__array_interface__["data"][0], data.shape, data.strides, data.dtype.str)
        if key not in self.storage_ids:
            self.storage_ids[key] = len(self.arrays)
            self.arrays.append(data)
        self.tensor_ids[id(t)] = len(self.tensors)
        self.tensors.append({"storage": self.storage_ids[key], "dtype": t.dtype.name,
                             "shape": list(data.shape), "requires_grad": bool(t.requires_grad),
                             "parameter": self.parameter is not None and isinstance(t, self.parameter)})
        return self.tensor_ids[id(t)]


_CONTAINERS = {list: "list", tuple: "tuple", dict: "dict", collections.OrderedDict: "ordereddict"}


def _write_archive(fh, index, arrays):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_INDEX, json.dumps(index, allow_nan=False))
        for k, array in enumerate(arrays):
            with archive.open(_STORAGE.format(k), "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, array, allow_pickle=False)


def _write_atomically(path, write):
    """Runs ``write(file)`` on a new file beside ``path`` and renames it over ``path`` once
    it is complete and flushed to disk; on any error the new file is removed."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(path) or directory} does not exist.")
    temp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: never write through someone else's file or link; 0o666 lets the umask decide,
    # as for a file opened normally.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


# ---- reading --------------------------------------------------------------------------------

def _open_archive(fh, name):
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise RuntimeError(f"ember.load: {name} is not an ember checkpoint, or it is truncated or "
                           f"corrupt: it is not a readable zip archive ({e})") from None
    return archive


class _Decoder:
    """Rebuilds the object tree from an archive, checking every node and array it reads."""

    def __init__(self, archive, name, map_location):
        self.archive = archive
        self.name = name
        self.map_location = map_location
        self.storages = {}
        self.loaded = {}

    def fail(self, problem):
        raise RuntimeError(f"ember.load: {self.name} is not a valid ember checkpoint: {problem}")

    def decode(self):
        names = set(self.archive.namelist())
        if _INDEX not in names:
            if any(n.endswith("data.pkl") for n in names):
                self.fail("it is a PyTorch (pickle) checkpoint; ember reads only its own format and "
                          "never unpickles a file")
            self.fail(f"it has no {_INDEX}")
        try:
            index = json.loads(self.read(_INDEX).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            self.fail(f"{_INDEX} is not valid JSON ({e})")
        if not isinstance(index, dict) or index.get("format") != _FORMAT:
            self.fail(f"{_INDEX} does not describe an ember object")
        if index.get("version") != _VERSION:
            self.fail(f"format version {index.get('version')!r} is not supported (this ember reads "
                      f"version {_VERSION})")
        self.records = index.get("tensors")
        if not isinstance(self.records, list) or "object" not in index:
            self.fail(f"{_INDEX} lacks its object or tensor table")
        return self.node(index["object"])

    def read(self, member):
        try:
            return self.archive.read(member)
        except (zipfile.BadZipFile, OSError, EOFError, KeyError, ValueError) as e:
            self.fail(f"cannot read {member} ({e})")

    def node(self, node):
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is not dict:
            self.fail(f"unexpected {type(node).__name__} in the object description")
        kind = node.get("type")
        try:
            if kind == "tensor":
                return self.tensor(node["index"])
            if kind in ("list", "tuple", "size"):
                items = [self.node(x) for x in node["items"]]
                return items if kind == "list" else tuple(items) if kind == "tuple" else Size(items)
            if kind in ("dict", "ordereddict"):
                items = ((self.node(k), self.node(v)) for k, v in node["items"])
                if kind == "dict":
                    return dict(items)
                out = collections.OrderedDict(items)
                if "metadata" in node:
                    out._metadata = self.node(node["metadata"])
                return out
            if kind == "float" and node["value"] in ("inf", "-inf", "nan"):
                return float(node["value"])
            if kind == "dtype":
                return _dtype._FROM_NAME[node["name"]]
            if kind == "device":
                return device(node["name"])
        except (KeyError, TypeError, ValueError) as e:
            self.fail(f"malformed {kind} entry ({type(e).__name__}: {e})")
        self.fail(f"unknown entry type {kind!r}")

    def tensor(self, i):
        if type(i) is not int or not 0 <= i < len(self.records):
            self.fail(f"tensor index {i!r} is out of range")
        if i in self.loaded:
            return self.loaded[i]
        record = self.records[i]
        try:
            array = self.storage(record["storage"])
            dtype = _dtype._FROM_NAME[record["dtype"]]
            if array.dtype != dtype.np or list(array.shape) != record["shape"]:
                self.fail(f"tensor {i} is described as {record['dtype']} {record['shape']} but its "
                          f"storage holds {array.dtype} {list(array.shape)}")
            requires_grad = bool(record["requires_grad"]) and dtype.is_floating_point
            t = Tensor._make(array)
            parameter = _parameter_class() if record["parameter"] else None
            if parameter is not None:
                t = parameter(t, requires_grad=requires_grad)
            t.requires_grad = requires_grad
        except (KeyError, TypeError) as e:
            self.fail(f"malformed tensor record {i} ({type(e).__name__}: {e})")
        t = self.place(t)
        self.loaded[i] = t
        return t

    def storage(self, k):
        if type(k) is not int or k < 0:
            self.fail(f"storage index {k!r} is invalid")
        if k not in self.storages:
            self.storages[k] = self.read_npy(_STORAGE.format(k))
        return self.storages[k]

    def read_npy(self, member):
        """The array in ``member``, after checking that its header describes exactly the bytes
        that follow (so a corrupt header cannot ask for a huge allocation) and a dtype ember
        has (object arrays, which would need unpickling, are refused)."""
        try:
            size = self.archive.getinfo(member).file_size
            with self.archive.open(member) as entry:
                version = np.lib.format.read_magic(entry)
                if version not in ((1, 0), (2, 0)):
                    self.fail(f"{member} has unsupported .npy version {version}")
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran_order, dtype = read_header(entry)
                if dtype not in _dtype._FROM_NP:
                    self.fail(f"{member} holds unsupported dtype {dtype}")
                count = math.prod(shape)
                if count * dtype.itemsize != size - entry.tell():
                    self.fail(f"{member} is truncated or its header is corrupt: {shape} {dtype} "
                              f"needs {count * dtype.itemsize} bytes, the entry has {size - entry.tell()}")
                flat = np.empty(count, dtype)
                entry.readinto(flat.view(np.uint8))
                entry.read(1)  # reaching the end of the entry checks its CRC
        except (zipfile.BadZipFile, OSError, EOFError, KeyError, ValueError) as e:
            self.fail(f"cannot read {member} ({type(e).__name__}: {e})")
        return flat.reshape(shape, order="F" if fortran_order else "C")

    def place(self, t):
        target = self.map_location
        if target is None:
            return t
        if isinstance(target, dict):
            target = target.get("cpu", "cpu")
        elif callable(target) and not isinstance(target, (str, device)):
            moved = target(t, "cpu")
            return moved if isinstance(moved, Tensor) else t
        check_device(target)
        return t
