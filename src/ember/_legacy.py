"""Legacy typed constructors (``ember.FloatTensor([1, 2])``): each makes tensors of one dtype
and is an ``isinstance`` test for it (the names are ``_dtype.LEGACY_TYPES``); and
``set_default_tensor_type``, which takes one of them."""

from . import _dtype
from ._creation import empty, tensor
from ._ops.args import warn_once
from ._tensor import Tensor

SET_DEFAULT_TENSOR_TYPE_DEPRECATED = ("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                                      "torch.set_default_dtype() and torch.set_default_device() as alternatives.")

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "BFloat16Tensor", "set_default_tensor_type"]


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype


def _legacy(name, dtype):
    def __new__(cls, *args):
        if len(args) == 1 and hasattr(args[0], "_as_tensor"):  # a storage: its memory, shared
            return args[0]._as_tensor(dtype, "argument")
        if len(args) == 1 and not isinstance(args[0], int):
            return tensor(args[0], dtype=dtype)
        return empty(*args, dtype=dtype)
    return _LegacyMeta(name, (), {"__new__": __new__, "_dtype": dtype,
                                  "__doc__": f"``{name}(data)``, ``{name}(*sizes)`` or ``{name}(storage)`` (sharing its memory): a {dtype.name} tensor."})


FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, \
    BoolTensor, BFloat16Tensor = (_legacy(n, d) for n, d in _dtype.LEGACY_TYPES.items())


def set_default_tensor_type(t):
    """Deprecated since PyTorch 2.1 (torch's UserWarning, the first time): sets the default dtype from a
    floating-point legacy type, or its name (``"torch.DoubleTensor"``). TypeError for a CUDA
    type, an integer or bool type, or an object that is neither a type nor its name
    (https://pytorch.org/docs/stable/generated/torch.set_default_tensor_type.html)."""
    warn_once(SET_DEFAULT_TENSOR_TYPE_DEPRECATED)
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module.endswith(".cuda"):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if module not in ("torch", "ember") or name not in _dtype.LEGACY_TYPES:
            raise (ModuleNotFoundError(f"No module named '{t}'") if not module else
                   AttributeError(f"module '{module}' has no attribute '{name}'"))
        t = globals()[name]
    if not isinstance(t, _LegacyMeta):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t._dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(t._dtype)
