"""DLPack, the array-exchange protocol (https://dmlc.github.io/dlpack/latest/): ``torch.from_dlpack``,
``torch.utils.dlpack.to_dlpack`` and ``Tensor.__dlpack__``/``__dlpack_device__``. Ember's
memory is a NumPy array, and NumPy speaks DLPack, so a round trip shares memory: a tensor made
from a NumPy array (or a torch tensor) sees the writes made through the other, and back
(https://pytorch.org/docs/stable/dlpack.html)."""
import numpy as np

from ._tensor import Tensor


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
    it (NumPy would import it read-only). BufferError (NumPy's) for a
    device or dtype NumPy cannot read; an ember tensor goes through its ``__dlpack__`` as torch's
    (a new tensor at storage offset 0; BufferError when it requires grad). RuntimeError for
    anything else (a capsule already consumed, an object that is no capsule), as torch."""
    if isinstance(ext_tensor, Tensor):
        return Tensor._make(np.from_dlpack(_Capsule(dlpack(ext_tensor, max_version=(1, 0)))))
    if not hasattr(ext_tensor, "__dlpack__"):
        ext_tensor = _Capsule(ext_tensor)
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
    return Tensor._make(array)


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
    return self._data.__dlpack__(**kwargs)


def dlpack_device(self):
    """``Tensor.__dlpack_device__``: ``(1, 0)``, DLPack's CPU device, where ember's memory is."""
    return self._data.__dlpack_device__()
