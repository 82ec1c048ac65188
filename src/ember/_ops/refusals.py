"""The input dtypes an op refuses, with PyTorch's error class and message.

Two kinds, one check the dispatcher makes before the kernel runs (``core.apply``: each input
array's dtype kind against the op's ``refused_kinds``, then :func:`refuse`): a complex input array where the op sets
``complex_error`` (``"lt_cpu" not implemented for 'ComplexFloat'``), and the "barebones"
unsigned dtypes uint16, uint32 and uint64, which torch (since 2.3) stores, casts, views,
indexes, prints and compares for equality, but has no kernels for in most arithmetic:
:data:`UNSIGNED_KERNELS` names torch's kernel for each op that refuses them (their promotion
with another non-floating dtype is refused in ``_dtype.promote_types``). Functions that are not
one op (``arange``, ``nonzero``, ``masked_fill``...) call :func:`refuse_unsigned` themselves.
An op's float attribute beyond its dtype's range is refused by :func:`check_attribute`.
Source: torch 2.13's behaviour, probed op by op (tests/ops/test_uint16_32_64.py).
"""
import math

import numpy as np

from .._backend import int_operand
from .._dtype import BAREBONES_UNSIGNED, CPP_NAMES, SCALAR_TYPE_NAMES, from_numpy_dtype

__all__ = ["UNSIGNED_KERNELS", "float_only", "refuse_unsigned", "refused_kinds", "refuse"]


def _clamp_kernel(x, min, max):
    if getattr(min, "ndim", 0) or getattr(max, "ndim", 0):
        return "clamp_cpu"
    return "clamp_min_scalar_cpu" if max is None else "clamp_max_scalar_cpu" if min is None else "clamp_scalar_cpu"


def _matmul_kernel(a, b):
    return "dot" if a.ndim == b.ndim == 1 else "addmm_impl_cpu_"


def _flip_kernel(x, dims):
    """torch flips uint16/32/64 by copying whole rows (None: no refusal) where its innermost
    dim (the least nonzero stride of the dims longer than 1) has stride 1 and is not flipped, or no dim
    longer than 1 is flipped; otherwise its typed kernel, which has no unsigned types."""
    long = [d for d in range(x.ndim) if x.shape[d] > 1]
    flipped = [d % x.ndim for d in dims if x.shape[d] > 1]
    if not flipped or x.size == 0:
        return None
    inner = min([d for d in long if x.strides[d]] or long, key=lambda d: abs(x.strides[d]))  # (not a broadcast dim)
    return None if x.strides[inner] == x.itemsize and inner not in flipped else "flip_cpu"


# op name -> torch's kernel name (or a function of the op's arrays and attributes giving it)
UNSIGNED_KERNELS = {
    "Add": "add_stub", "Sub": "add_stub", "Remainder": "remainder_cpu", "Fmod": "fmod_cpu", "Pow": "pow",
    "DivRounded": lambda a, b, rounding_mode: f"div_{rounding_mode}_cpu",
    "Lt": "lt_cpu", "Le": "le_cpu", "Gt": "gt_cpu", "Ge": "ge_cpu", "Neg": "neg_cpu", "Abs": "abs_cpu",
    "Sign": "sign_cpu", "BitwiseNot": "bitwise_not_cpu", "BitwiseLeftShift": "lshift_cpu",
    "BitwiseRightShift": "rshift_cpu", "Maximum": "maximum_cpu", "Minimum": "minimum_cpu", "Clamp": _clamp_kernel,
    "Max": "max_all", "Min": "min_all", "Amax": "max_values_cpu", "Amin": "min_values_cpu",
    "MaxAlongDim": "max_cpu", "MinAlongDim": "min_cpu", "Argmax": "argmax_cpu", "Argmin": "argmin_cpu",
    "Cummax": "cummax_cpu", "Cummin": "cummin_cpu", "Topk": "topk_cpu", "Flip": _flip_kernel,
    "Gather": "scatter_gather_tensor_cpu", "Scatter": "scatter_gather_tensor_cpu", "Matmul": _matmul_kernel,
}


def refuse_unsigned(kernel, dtype):
    """NotImplementedError (torch's ``"kernel" not implemented for 'UInt16'``) when ``dtype``
    (an ember or NumPy dtype) is uint16, uint32 or uint64; nothing otherwise."""
    if getattr(dtype, "kind", None) is not None:  # a NumPy dtype
        if dtype.kind != "u" or dtype.itemsize == 1:
            return
        dtype = from_numpy_dtype(dtype)
    if dtype in BAREBONES_UNSIGNED:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_TYPE_NAMES[dtype.name]}'")


def refused_kinds(name, complex_error):
    """The NumPy dtype kinds (``"c"``, ``"u"``) of input arrays the dispatcher must look at
    before running op ``name`` (an op's ``refused_kinds``): complex where it has a
    ``complex_error``, unsigned where it is in :data:`UNSIGNED_KERNELS`."""
    return ("c" if complex_error else "") + ("u" if name in UNSIGNED_KERNELS else "")


def refuse(op, a, arrays, attrs):
    """Raises PyTorch's error for op ``op`` on input array ``a`` of a kind it refuses (the
    dispatcher checked the kind): its ``complex_error`` (``(exception class, message)``, ``{T}``
    standing for the dtype) for a complex array, the NotImplementedError naming torch's kernel
    for a uint16/32/64 one; nothing for a Python complex number or a uint8 array."""
    if isinstance(a, complex):  # a Python number (NumPy's complex scalars are complex too)
        return
    if a.dtype.kind == "c":
        error, message = op.complex_error
        raise error(message.replace("{T}", SCALAR_TYPE_NAMES[a.dtype.name]))
    kernel = UNSIGNED_KERNELS[op.name]
    kernel = kernel if isinstance(kernel, str) else kernel(*arrays, **attrs)
    if kernel is not None:  # (None: torch has a path for these dtypes too)
        refuse_unsigned(kernel, a.dtype)


def float_only(input, kernel):
    """NotImplementedError, as PyTorch's kernels raise, for integer or bool inputs (``input``:
    a tensor, or the dtype a kernel would compute in)."""
    dtype = getattr(input, "dtype", input)
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_TYPE_NAMES[dtype.name]}'")


# the largest finite value of each floating dtype (the range of an op's float attribute)
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
             "float64": 1.7976931348623157e308}


def check_attribute(value, dtype):
    """``value``, an op's float attribute (``hardtanh``'s bounds, ``celu``'s alpha) as torch's
    checked conversion to ``dtype``'s C type takes it (a complex number's real part), or its error:
    RuntimeError for a complex number with an imaginary part, and for a float32, float16 or
    bfloat16 op a finite number beyond the dtype's range (``F.hardtanh(x_float32, 1e300)``);
    OverflowError, as torch's parser, for an int outside [-2**63, 2**64). One plain comparison: a
    compiled function's traced float is guarded by its outcome (``compiler/float_attributes.py``'s
    ``AS_USER``), which inf shares with the values in range (``m + (m - m)`` is ``m`` where finite,
    NaN at inf), as torch keeps them on one graph."""
    if isinstance(value, int) and not isinstance(value, bool):
        int_operand(int.__int__(value))  # (an int subclass unseen: a compiled function's ``round(lr)``)
    elif isinstance(value, (complex, np.complexfloating)):
        if value.imag:
            raise RuntimeError(f"value cannot be converted to type {CPP_NAMES[dtype.name]} without overflow")
        value = value.real
    top = FLOAT_MAX.get(dtype.name) if dtype.name != "float64" else None
    if top is not None:
        magnitude = abs(value)
        if magnitude + (magnitude - magnitude) > top:
            raise RuntimeError(f"value cannot be converted to type {CPP_NAMES[dtype.name]} without overflow")
    return value


def check_rrelu_bounds(lower, upper):
    """torch's RuntimeErrors for ``rrelu``'s bounds: each finite (NaN refused), ``lower <= upper``.
    Plain comparisons, as :func:`check_attribute`'s."""
    for name, bound in (("lower", lower), ("upper", upper)):
        if not -math.inf < bound < math.inf:
            raise RuntimeError(f"rrelu: {name} bound must be finite, got {float(bound)}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
