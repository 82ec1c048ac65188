"""DLPack, the array-exchange protocol (https://dmlc.github.io/dlpack/latest/): ``torch.from_dlpack``,
``torch.utils.dlpack.to_dlpack`` and ``Tensor.__dlpack__``/``__dlpack_device__``. Ember's
memory is a NumPy array, and NumPy speaks DLPack, so a round trip shares memory: a tensor made
from a NumPy array (or a torch tensor) sees the writes made through the other, and back
(https://pytorch.org/docs/stable/dlpack.html)."""
import ctypes

import numpy as np

from . import _dtype
from ._tensor import Tensor

# DLPack's type codes (dlpack.h's DLDataTypeCode) and where a capsule's DLTensor keeps its
# dtype ({uint8 code, uint8 bits, uint16 lanes} at byte 20 of a DLTensor, which begins a
# "dltensor" capsule's struct and lies at byte 32 of a "dltensor_versioned" one).
_UINT, _BFLOAT = 1, 4
_DTYPE_AT = {b"dltensor": 20, b"dltensor_versioned": 32 + 20}
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _relabel(capsule, code, to):
    """Rewrite an unconsumed capsule's 16-bit dtype code ``code`` as ``to`` (bfloat16 and
    uint16 are the same bits), so that NumPy, which has no bfloat16, moves the memory and the
    caller views it back. Returns whether it did; anything else is left as it is."""
    if type(capsule).__name__ != "PyCapsule" or _capsule_name(capsule) not in _DTYPE_AT:
        return False
    name = _capsule_name(capsule)
    dtype = ctypes.cast(_capsule_pointer(capsule, name) + _DTYPE_AT[name], ctypes.POINTER(ctypes.c_uint8))
    if (dtype[0], dtype[1]) != (code, 16):
        return False
    dtype[0] = to
    return True


class _Writable:
    """The memory of a read-only array, presented writable (``__array_interface__``); keeps the
    array (and so the capsule's owner) alive while a view of it lives."""

    def __init__(self, array):
        self.array = array
        self.__array_interface__ = dict(array.__array_interface__, data=(array.ctypes.data, False))


class _Capsule:
    """A legacy DLPack capsule presented as a producer (CPU), for NumPy's ``from_dlpack``."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of ``ext_tensor``: any object with ``__dlpack__`` (a NumPy
    array, a torch tensor) or a DLPack capsule (from ``to_dlpack``). A legacy (unversioned)
    capsule (torch's ``to_dlpack`` makes one) carries no read-only flag: writable, as torch reads
    it (NumPy would import it read-only). bfloat16 crosses both ways (NumPy has no bfloat16: its
    DLPack moves the bits as uint16). BufferError (NumPy's) for a
    device or dtype NumPy cannot read; an ember tensor goes through its ``__dlpack__`` as torch's
    (a new tensor at storage offset 0; BufferError when it requires grad). RuntimeError for
    anything else (a capsule already consumed, an object that is no capsule), as torch."""
    if isinstance(ext_tensor, Tensor):
        ext_tensor = _Capsule(dlpack(ext_tensor, max_version=(1, 0)))
    elif not hasattr(ext_tensor, "__dlpack__"):
        ext_tensor = _Capsule(ext_tensor)
    elif str(getattr(ext_tensor, "dtype", "")).endswith("bfloat16"):
        ext_tensor = _Capsule(ext_tensor.__dlpack__(max_version=(1, 0)))
    bfloat16 = isinstance(ext_tensor, _Capsule) and _relabel(ext_tensor.capsule, _BFLOAT, _UINT)
    try:
        array = np.from_dlpack(ext_tensor)
    except ValueError as error:
        if not isinstance(ext_tensor, _Capsule):
            raise
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                           "consumed only once, so you might have already constructed a tensor from it "
                           "once.") from error
    if isinstance(ext_tensor, _Capsule) and not array.flags.writeable:
        array = np.asarray(_Writable(array))
    return Tensor._make(array.view(_dtype.bfloat16.np) if bfloat16 else array)


def to_dlpack(tensor):
    """A versioned DLPack capsule (DLPack 1.0, writable) of ``tensor``'s memory, consumed once
    by a ``from_dlpack`` (ember's, torch's, NumPy's)."""
    return dlpack(tensor, max_version=(1, 0))


def dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: a capsule of the memory; BufferError for a tensor that requires
    grad, as torch (``detach()`` first)."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    kwargs = {} if max_version is None else {"max_version": max_version}
    if copy is not None:
        kwargs["copy"] = copy
    if self.dtype is not _dtype.bfloat16:
        return self._data.__dlpack__(**kwargs)
    capsule = self._data.view(np.uint16).__dlpack__(**kwargs)
    _relabel(capsule, _UINT, _BFLOAT)
    return capsule


def dlpack_device(self):
    """``Tensor.__dlpack_device__``: ``(1, 0)``, DLPack's CPU device, where ember's memory is."""
    return self._data.__dlpack_device__()
