"""Reading checkpoints written by ember before it wrote PyTorch's format (ember 0.1).

That format is a zip archive holding no pickle: ``archive/ember.json`` describes the object
tree (``{"format": "ember", "version": 1, "object": <node>, "tensors": [...], ...}``) and
``archive/data/<k>.npy`` holds storage ``k`` as a NumPy ``.npy`` array. A node is ``null``,
a bool, int, string or finite float, or ``{"type": ...}`` for ``float`` (inf/nan), ``list``,
``tuple``, ``size``, ``dict``, ``ordereddict`` (with its ``metadata``), ``dtype``, ``device``
and ``tensor`` (an index into ``tensors``, whose records name a storage, dtype, shape,
``requires_grad`` and ``parameter``). Reading runs no code: the JSON is decoded by rules and an
array is read only after its ``.npy`` header names an ember dtype and a size matching the entry.
"""
import collections
import json
import math
import zipfile

import numpy as np

from .. import _dtype
from .._device import device
from .._size import Size
from .._tensor import Tensor
from ..nn.parameter import Parameter
from ._torch_format import place

INDEX = "archive/ember.json"
_FORMAT = "ember"
_VERSION = 1
_STORAGE = "archive/data/{}.npy"


class Decoder:
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
        try:
            index = json.loads(self.read(INDEX).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            self.fail(f"{INDEX} is not valid JSON ({e})")
        except RecursionError:
            self.fail(f"{INDEX} is nested too deeply to be an object ember saved")
        if not isinstance(index, dict) or index.get("format") != _FORMAT:
            self.fail(f"{INDEX} does not describe an ember object")
        if index.get("version") != _VERSION:
            self.fail(f"format version {index.get('version')!r} is not supported (this ember reads "
                      f"version {_VERSION})")
        self.records = index.get("tensors")
        if not isinstance(self.records, list) or "object" not in index:
            self.fail(f"{INDEX} lacks its object or tensor table")
        try:
            return self.node(index["object"])
        except RecursionError:
            self.fail(f"{INDEX} is nested too deeply to be an object ember saved")

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
            if record["parameter"]:
                t = Parameter(t, requires_grad=requires_grad)
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
        return place(t, "cpu", self.map_location)
