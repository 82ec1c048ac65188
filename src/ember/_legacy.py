"""Legacy typed constructors (``ember.FloatTensor([1, 2])``) and ``tensor.type()`` names."""
from . import _dtype

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "BFloat16Tensor", "type_name", "dtype_of_name"]

_NAMES = {"FloatTensor": _dtype.float32, "DoubleTensor": _dtype.float64, "HalfTensor": _dtype.float16,
          "LongTensor": _dtype.int64, "IntTensor": _dtype.int32, "ShortTensor": _dtype.int16,
          "CharTensor": _dtype.int8, "ByteTensor": _dtype.uint8, "BoolTensor": _dtype.bool,
          "BFloat16Tensor": _dtype.bfloat16}


def type_name(dtype):
    """``"torch.FloatTensor"`` for float32, and so on (PyTorch's names)."""
    return f"{_dtype.PRINTED_MODULE}." + next(k for k, v in _NAMES.items() if v is dtype)


def dtype_of_name(name):
    """The dtype of a legacy type name such as ``"torch.LongTensor"``; ValueError otherwise."""
    short = name.rsplit(".", 1)[-1]
    if short not in _NAMES:
        raise ValueError(f"invalid type: '{name}'")
    return _NAMES[short]


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        from ._tensor import Tensor
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype


def _legacy(name, dtype):
    def __new__(cls, *args):
        from ._creation import tensor, empty
        if len(args) == 1 and not isinstance(args[0], int):
            return tensor(args[0], dtype=dtype)
        return empty(*args, dtype=dtype)
    return _LegacyMeta(name, (), {"__new__": __new__, "_dtype": dtype,
                                  "__doc__": f"``{name}(data)`` or ``{name}(*sizes)``: a {dtype.name} tensor."})


FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, \
    BoolTensor, BFloat16Tensor = (_legacy(n, d) for n, d in _NAMES.items())
