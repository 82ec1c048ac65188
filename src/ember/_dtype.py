"""dtypes and PyTorch's type-promotion rules.

Source: https://pytorch.org/docs/stable/tensor_attributes.html#type-promotion-doc
A tensor with dimensions outranks a zero-dim tensor, which outranks a Python number;
a lower-ranked operand only changes the result when it is of a higher category
(bool < integer < floating point < complex).
"""
import builtins

import numpy as np

from . import _backend

__all__ = ["dtype", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
           "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "cfloat", "cdouble", "half", "float", "double", "short", "int",
           "long",
           "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast"]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3
# dtypes, sizes and legacy type names print under PyTorch's module name ("torch.float32",
# "torch.Size([2, 3])"): programs written for PyTorch compare these strings, and a learner
# compares printouts side by side.
PRINTED_MODULE = "torch"


class dtype:
    """A tensor element type: ``ember.float32`` and friends (PyTorch's ``torch.dtype``)."""
    # is_inexact: floating point or complex, the dtypes whose tensors can require grad.
    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_inexact",
                 "is_signed", "category")

    def __init__(self, name, np_dtype, category, itemsize=None):
        self.name = name
        if np_dtype is None:  # made on first use: see _Deferred
            self.itemsize = itemsize
        else:
            self.np = np.dtype(np_dtype)
            self.itemsize = self.np.itemsize
        self.category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_inexact = category >= _FLOAT
        self.is_signed = name not in ("uint8", "uint16", "uint32", "uint64", "bool")

    def __repr__(self):
        return f"{PRINTED_MODULE}.{self.name}"

    def __reduce__(self):
        return self.name

    def to_real(self):
        """The real dtype of a complex one's parts (complex64 -> float32); others unchanged."""
        return _REAL.get(self, self)

    def to_complex(self):
        """The complex dtype with this dtype's parts (float64 -> complex128; float16 and
        bfloat16 -> complex64, as ember has no complex32); complex dtypes unchanged."""
        return _COMPLEX_OF.get(self, self)


class _Deferred(dtype):
    """bfloat16 until its NumPy dtype is first read: ``_backend.bfloat16`` imports ml_dtypes
    then (~0.6 s of CPU ``import ember`` does not pay), and the object becomes a plain
    :class:`dtype`. (A ``__getattr__`` on ``dtype`` itself would slow every dtype's attributes.)"""
    __slots__ = ()

    def __getattr__(self, name):
        if name != "np":
            raise AttributeError(f"'dtype' object has no attribute '{name}'")
        self.np = _backend.bfloat16()
        _FROM_NP[self.np] = self
        self.__class__ = dtype
        return self.np


float16 = half = dtype("float16", np.float16, _FLOAT)
# bfloat16: float32's exponent range with an 8-bit significand. NumPy has no such type; the
# ml_dtypes package registers one (its arithmetic rounds a float32 result, as PyTorch's does),
# imported when ``bfloat16.np`` is first read.
bfloat16 = _Deferred("bfloat16", None, _FLOAT, itemsize=2)
float32 = float = dtype("float32", np.float32, _FLOAT)
float64 = double = dtype("float64", np.float64, _FLOAT)
uint8 = dtype("uint8", np.uint8, _INT)
# torch 2.3's "barebones" unsigned types: creation, casts, views, indexing, printing and a few
# ops; promotion with any other non-floating dtype raises (promote_types), and the ops torch
# lacks them for raise its NotImplementedError (``_ops/core.py``, ``UNSIGNED_REFUSED``).
uint16 = dtype("uint16", np.uint16, _INT)
uint32 = dtype("uint32", np.uint32, _INT)
uint64 = dtype("uint64", np.uint64, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = short = dtype("int16", np.int16, _INT)
int32 = int = dtype("int32", np.int32, _INT)
int64 = long = dtype("int64", np.int64, _INT)
bool = dtype("bool", np.bool_, _BOOL)
complex64 = cfloat = dtype("complex64", np.complex64, _COMPLEX)
complex128 = cdouble = dtype("complex128", np.complex128, _COMPLEX)

_ALL = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool, complex64, complex128,
        uint16, uint32, uint64)
BAREBONES_UNSIGNED = frozenset((uint16, uint32, uint64))
_REAL = {complex64: float32, complex128: float64}
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}
# c10's ScalarType names, which torch's error messages use ("not implemented for 'Long'")
# the C++ names torch's messages print for a dtype (``TensorOptions(dtype=float)``, ``set_``'s)
CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
             "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>"}
SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
                     "int16": "Short", "int8": "Char", "uint8": "Byte", "uint16": "UInt16", "uint32": "UInt32",
                     "uint64": "UInt64", "bool": "Bool", "complex64": "ComplexFloat",
                     "complex128": "ComplexDouble", "bfloat16": "BFloat16"}
# NumPy dtype -> ember dtype (bfloat16's entry is added when its NumPy dtype is made). Tensor
# reads it for every result: from_numpy_dtype adds bfloat16 when an array brings it first.
_FROM_NP = {d.np: d for d in _ALL if d is not bfloat16}
_FROM_NAME = {d.name: d for d in _ALL}
_default = [float32]


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; TypeError for dtypes ember does not have."""
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        if _backend.is_bfloat16(np.dtype(np_dtype)):  # an ml_dtypes array before ember's first bfloat16
            return _FROM_NP[bfloat16.np]  # (reading bfloat16.np enters it: _Deferred)
        kind = np.dtype(np_dtype).type  # named as NumPy's scalar type (numpy.str_), as torch does
        raise TypeError(f"can't convert np.ndarray of type {kind.__module__}.{kind.__name__}. The only supported "
                        "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
                        "int8, uint64, uint32, uint16, uint8, and bool.")


def get_default_dtype():
    """The floating-point dtype used for Python floats and ``zeros``/``rand`` (initially float32)."""
    return _default[0]


def set_default_dtype(d):
    """Sets the default floating-point dtype; TypeError unless ``d`` is float16, float32 or float64."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def promote_types(a, b):
    """The smallest dtype to which both ``a`` and ``b`` can be cast (``torch.promote_types``)."""
    if a is b:
        return a
    if (a in BAREBONES_UNSIGNED or b in BAREBONES_UNSIGNED) and not (a.is_floating_point or b.is_floating_point):
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                           f"promote {SCALAR_TYPE_NAMES[a.name]} and {SCALAR_TYPE_NAMES[b.name]}")
    if a.category != b.category:
        high, low = (a, b) if a.category > b.category else (b, a)
        if high.is_complex and low.is_floating_point:  # complex64 with float64 needs complex128
            return promote_types(high.to_real(), low).to_complex()
        return high
    return _FROM_NP[np.promote_types(a.np, b.np)]


def scalar_dtype(value):
    """The dtype a Python number takes when it stands alone as a tensor."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return bool
    if isinstance(value, (builtins.int, np.integer)):
        return int64
    if isinstance(value, (builtins.complex, np.complexfloating)):
        return _default[0].to_complex()
    return _default[0]


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None or higher.category >= lower.category:
        return higher
    if lower.is_complex:  # a lower-ranked complex operand keeps a float operand's precision
        return higher.to_complex() if higher.is_floating_point else lower
    return promote_types(higher, lower)


def result_type(*operands):
    """PyTorch's result dtype of an op over ``operands`` (Tensors, NumPy arrays and Python
    numbers)."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        elif type(x) is np.ndarray:
            # torch hands an op with a NumPy array operand (0-d too) to NumPy, which gives the
            # result its own promotion: tensors count as arrays, Python numbers as weak scalars.
            return from_numpy_dtype(np.result_type(*(
                y._data.dtype if isinstance(getattr(y, "dtype", None), dtype) else y for y in operands
                if y is not None)))
        elif x is not None:
            d = scalar_dtype(x)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine(dim, _combine(zero, wrapped))


def can_cast(from_, to):
    """False only where a cast would lose the category (complex to float, float to int, int to
    bool): ``torch.can_cast``."""
    return from_.category <= to.category


# The legacy tensor types' names (``tensor.type()``, ``ember.FloatTensor``) and their dtypes.
LEGACY_TYPES = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16,
                "LongTensor": int64, "IntTensor": int32, "ShortTensor": int16, "CharTensor": int8,
                "ByteTensor": uint8, "BoolTensor": bool, "BFloat16Tensor": bfloat16}
# complex tensors have legacy names too (``tensor.type()``), but no classes in the module
_TYPE_NAMES = {**LEGACY_TYPES, "ComplexFloatTensor": complex64, "ComplexDoubleTensor": complex128,
               "UInt16Tensor": uint16, "UInt32Tensor": uint32, "UInt64Tensor": uint64}


def legacy_type_name(dtype):
    """``"torch.FloatTensor"`` for float32, and so on: PyTorch's legacy type names, which
    ``tensor.type()`` returns."""
    return f"{PRINTED_MODULE}." + next(k for k, v in _TYPE_NAMES.items() if v is dtype)


def dtype_of_legacy_type(name):
    """The dtype of a legacy type name such as ``"torch.LongTensor"``; ValueError otherwise."""
    short = name.rsplit(".", 1)[-1]
    if short not in _TYPE_NAMES:
        raise ValueError(f"invalid type: '{name}'")
    return _TYPE_NAMES[short]


class finfo:
    """The machine limits of a floating dtype (``torch.finfo``,
    https://pytorch.org/docs/stable/type_info.html): ``bits``, ``eps`` (1 ulp above 1.0),
    ``max``, ``min``, ``tiny`` = ``smallest_normal``, ``resolution`` (10 ** -decimal digits)
    and ``dtype`` (its name). A complex dtype gives its parts' limits; no argument, the default
    dtype's. TypeError for a non-floating dtype."""

    def __init__(self, type=None):
        type = get_default_dtype() if type is None else type.to_real()
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        info = _backend.finfo(type.np)
        self.bits, self.dtype = info.bits, type.name
        self.eps, self.max, self.min = builtins.float(info.eps), builtins.float(info.max), builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -builtins.int(-np.log10(self.eps))  # torch's: whole decimal digits

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __repr__(self):
        fields = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")
        return f"finfo({', '.join(f'{k}={getattr(self, k):.6g}' for k in fields)}, dtype={self.dtype})"


class iinfo:
    """The limits of an integer dtype (``torch.iinfo``): ``bits``, ``max``, ``min`` and
    ``dtype`` (its name). TypeError for a floating or bool dtype."""

    def __init__(self, type):
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_inexact:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.max, self.min, self.dtype = info.bits, builtins.int(info.max), builtins.int(info.min), type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __repr__(self):
        return f"iinfo(min={self.min:.6g}, max={self.max:.6g}, dtype={self.dtype})"
