"""safetensors files with ember tensors: the API of ``safetensors.torch``
(https://huggingface.co/docs/safetensors/api/torch), on the ``safetensors`` package's NumPy API.

A safetensors file is a JSON header (names, dtypes, shapes, byte ranges) followed by raw
tensor bytes; reading it never runs code. Needs the ``safetensors`` package
(``pip install "ember[safetensors]"``); ImportError saying so otherwise.
"""
import os

import numpy as np

from .._backend import bfloat16
from .._device import check_device
from .._dtype import from_numpy_dtype
from .._tensor import Tensor
from ..serialization import write_atomically

__all__ = ["save", "save_file", "load", "load_file"]


def _numpy_api():
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError("ember.utils.safetensors needs the safetensors package: "
                          "pip install 'ember[safetensors]' (or pip install safetensors)") from None
    bfloat16()  # the package names bfloat16 to NumPy, which knows the name once ml_dtypes is loaded
    return safetensors.numpy


def _arrays(tensors):
    if not isinstance(tensors, dict):
        raise TypeError(f"expected a dict of str to Tensor, got {type(tensors).__name__}")
    arrays = {}
    for name, tensor in tensors.items():
        if not isinstance(name, str) or not isinstance(tensor, Tensor):
            raise TypeError(f"expected a dict of str to Tensor, got {type(name).__name__} -> "
                            f"{type(tensor).__name__} for {name!r}")
        arrays[name] = np.ascontiguousarray(tensor.detach()._data)
    return arrays


def _tensors(arrays):
    out = {}
    for name, array in arrays.items():
        from_numpy_dtype(array.dtype)  # TypeError naming a dtype ember lacks (bfloat16, ...)
        out[name] = Tensor._make(np.array(array))  # own, writable memory
    return out


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding ``tensors`` (a dict of str to Tensor, each
    stored contiguously) and ``metadata`` (a dict of str to str, or None).
    TypeError for other keys or values."""
    return _numpy_api().save(_arrays(tensors), metadata=metadata)


def save_file(tensors, filename, metadata=None):
    """Writes ``save(tensors, metadata)`` to ``filename`` atomically (a temporary file beside it
    renamed over it), so a crash never leaves a half-written file."""
    data = save(tensors, metadata)
    write_atomically(os.fspath(filename), lambda fh: fh.write(data))


def _read(read, source):
    try:
        return _tensors(read(source))
    except AttributeError as error:  # the package looks a dtype up on NumPy (float8 types)
        name = str(error).rsplit(" ", 1)[-1].strip("'")
        raise TypeError(f"the safetensors data holds a dtype ember does not have: {name}") from None


def load(data):
    """The dict of str to Tensor in safetensors bytes ``data``; the package's SafetensorError
    for malformed data, TypeError for a dtype ember does not have."""
    return _read(_numpy_api().load, data)


def load_file(filename, device="cpu"):
    """The dict of str to Tensor in the safetensors file ``filename``; ``device`` must be the
    CPU (RuntimeError otherwise). Errors as :func:`load`, FileNotFoundError for a missing file."""
    check_device(device)
    return _read(_numpy_api().load_file, os.fspath(filename))
