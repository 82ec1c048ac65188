"""What the public linalg functions share: PyTorch's input checks and named-tuple results."""

from .._ops.args import result_type, with_out as _write_out
from .._ops.lapack import LinAlgError

__all__ = ["LinAlgError", "out", "result_type", "check_matrix", "check_square", "check_same_dtype",
           "batch_broadcast", "renamed"]

_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def out(result, destination):
    """``result``, or written into the ``out=`` tensor (a tuple of tensors for named-tuple
    results, returned as that named tuple) when one is given."""
    if destination is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(destination, (tuple, list)) or len(destination) != len(result):
            raise TypeError(f"out must be a tuple of {len(result)} tensors")
        return type(result)(*(_write_out(r, d) for r, d in zip(result, destination)))
    return _write_out(result, destination)


def type_name(dtype):
    return _TYPE_NAMES.get(dtype.name, dtype.name)


def renamed(error, name):
    """The LinAlgError ``error`` of the function a wrapper calls, naming the wrapper ``name``
    instead (torch's ``_ex`` forms and legacy names report themselves)."""
    return LinAlgError(f"{name}: {str(error).split(': ', 1)[1]}")


def check_matrix(A, name, arg="A"):
    """RuntimeError unless ``A`` is a float32/float64 tensor with at least 2 dims."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if A.dtype.name in ("float16", "bfloat16"):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {type_name(A.dtype)}")
    if not A.dtype.is_inexact:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {type_name(A.dtype)}")


def check_square(A, name, arg="A"):
    check_matrix(A, name, arg)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def check_same_dtype(name, A, B, names=("A", "B")):
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected {names[0]} and {names[1]} to have the same dtype, but "
                           f"found {names[0]} of type {type_name(A.dtype)} and {names[1]} of type "
                           f"{type_name(B.dtype)} instead")


def batch_broadcast(a_batch, b_batch):
    """The broadcast of two batch shapes, or torch's RuntimeError naming the mismatched sizes."""
    n = max(len(a_batch), len(b_batch))
    a = (1,) * (n - len(a_batch)) + tuple(a_batch)
    b = (1,) * (n - len(b_batch)) + tuple(b_batch)
    out = []
    for d, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {d}")
        out.append(max(x, y) if x and y else 0)
    return tuple(out)
