"""Legacy typed constructors (``ember.FloatTensor([1, 2])``): each makes tensors of one dtype
and is an ``isinstance`` test for it (the names are ``_dtype.LEGACY_TYPES``)."""
from . import _dtype
from ._creation import empty, tensor
from ._tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "BFloat16Tensor"]


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype


def _legacy(name, dtype):
    def __new__(cls, *args):
        if len(args) == 1 and not isinstance(args[0], int):
            return tensor(args[0], dtype=dtype)
        return empty(*args, dtype=dtype)
    return _LegacyMeta(name, (), {"__new__": __new__, "_dtype": dtype,
                                  "__doc__": f"``{name}(data)`` or ``{name}(*sizes)``: a {dtype.name} tensor."})


FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, \
    BoolTensor, BFloat16Tensor = (_legacy(n, d) for n, d in _dtype.LEGACY_TYPES.items())
