"""Tensor creation: from data, filled and ranges (PyTorch's creation ops,
https://pytorch.org/docs/stable/torch.html#creation-ops; the random draws are in
``_sampling``, linspace and logspace in ``_spacing``). Every function accepts ``dtype``, ``device`` and ``requires_grad`` where
PyTorch does; sizes may be given as ``f(2, 3)`` or ``f((2, 3))``."""
import builtins
import math
import numbers
import warnings

import numpy as np

from . import _dtype, _layout, _memory_format
from ._backend import as_array, cast, dense, empty_strided_like, int_operand, namespace, quiet, restore
from ._backend.shared import own_span
from ._backend.sparse import SparseCOO, SparseUnsupported, unsupported_message
from ._backend.meta import MetaArray, NO_DATA, meta_array
from ._device import check_device, device as _device_cls, device_type
from ._meta import placed, to_meta
from ._ops.core import Op, apply
from ._ops.outs import factory_out
from ._ops.parser import method_refusal
from ._ops.refusals import check_attribute, refuse_unsigned
from ._size import sizes_arg
from ._python_ints import LONG_LONG, check_fits, first_sizes, is_sequence, listed, refuse_first_elements, refuse_ragged, unsigned64
from ._tensor import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "asarray", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "eye", "scalar_tensor"]


def _finish(data, requires_grad=False):
    if data.size == 0 and data.ndim and not any(data.strides):
        # NumPy gives a new empty array zero strides; torch, the contiguous ones (a size of 0
        # counted as 1), which its views then carry (empty(0, 3).t() has strides (1, 3))
        steps = np.cumprod((1,) + tuple(max(n, 1) for n in data.shape[:0:-1]))[::-1]
        data = empty_strided_like(data, tuple(int(k) * data.itemsize for k in steps))
    t = Tensor._make(data)
    if requires_grad:
        if not t.dtype.is_inexact:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _infer(data, dtype=None):
    """A NumPy array of ``data`` in the dtype PyTorch would infer for it (an int past int64's range
    straight in a float, complex or bool ``dtype``, as torch reads it: past float64's, OverflowError)."""
    data = listed(data)
    if isinstance(data, Tensor):
        return data._data.copy()
    if isinstance(data, (np.ndarray, np.generic)):
        _dtype.from_numpy_dtype(data.dtype)
        return np.array(data)
    dt, has_tensors = _sequence_dtype(data) if isinstance(data, (list, tuple)) else (_type_dtype(type(data)), False)
    if has_tensors:
        data = _tensors_to_arrays(data)
    try:
        return np.array(data, dtype=dt.np)
    except OverflowError:  # an int beyond int64's range (uint64 reads them: see tensor)
        if dtype is not None and dtype.category != _dtype._INT:
            return np.array(data, dtype=dtype.np)
        raise ValueError(LONG_LONG) from None
    except ValueError:  # (a number: no sizes, nothing ragged)
        sizes = first_sizes(data)
        if 0 in sizes:  # no element to store: torch reads no further (``[[], [1]]`` is (2, 0))
            return np.empty(sizes, dtype=_dtype.get_default_dtype().np)
        refuse_ragged(data, dt.category == _dtype._INT or dt is _dtype.bool)
        raise


def _sequence_dtype(data):
    """PyTorch's rule for nested sequences (lists, tuples and any other sequence: a ``Size``, a
    range, a deque): every element keeps its own dtype (a Python float the default float, a
    NumPy scalar, array (a nested sequence, or a number where 0-d) or one-element tensor its
    own), and those are promoted. Scans element types set-wise so long lists of numbers stay fast."""
    refuse_first_elements(data)
    dt, has_tensors = None, False
    stack = [data]
    while stack:
        seq = stack.pop()
        for typ in set(map(type, seq)):
            if typ is list or typ is tuple or is_sequence(typ):
                stack.extend(x for x in seq if type(x) is typ)
                continue
            if issubclass(typ, Tensor) or typ is np.ndarray:
                has_tensors = has_tensors or typ is not np.ndarray
                for x in seq:
                    if type(x) is typ:
                        if typ is not np.ndarray and x._data.size != 1:
                            raise ValueError("only one element tensors can be converted to Python scalars")
                        d = _dtype.from_numpy_dtype(x.dtype) if typ is np.ndarray else x.dtype
                        dt = d if dt is None else _dtype.promote_types(dt, d)
                continue
            d = _type_dtype(typ)
            dt = d if dt is None else _dtype.promote_types(dt, d)
    return dt or _dtype.get_default_dtype(), has_tensors


def _type_dtype(typ):
    if issubclass(typ, (bool, np.bool_)):
        return _dtype.bool
    if issubclass(typ, np.generic):
        return _dtype.from_numpy_dtype(np.dtype(typ))
    if issubclass(typ, numbers.Integral):
        return _dtype.int64
    if issubclass(typ, numbers.Real):
        return _dtype.get_default_dtype()
    if issubclass(typ, numbers.Complex):
        return _dtype.get_default_dtype().to_complex()
    if issubclass(typ, str):
        raise TypeError("new(): invalid data type 'str'")
    raise RuntimeError(f"Could not infer dtype of {typ.__name__}")


def _tensors_to_arrays(data):
    if isinstance(data, Tensor):
        return data._data.reshape(())
    if isinstance(data, (list, tuple)):
        return [_tensors_to_arrays(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor that copies ``data`` (a number, nested lists, a NumPy array or a Tensor;
    of a storage, a 1-d tensor on its memory, as torch's: an untyped storage's bytes read as
    whole elements of ``dtype``, int64 by default). The dtype is inferred as PyTorch does
    (floats: the default dtype; ints: int64; bools: bool; arrays keep theirs) unless ``dtype``
    is given. Raises TypeError for data of no numeric type, RuntimeError for list values outside
    an integer ``dtype``'s range, ValueError for a Python int beyond int64's; uint64 reads Python
    ints as unsigned 64-bit (OverflowError below 0 or from 2**64, TypeError for floats, as torch)."""
    check_device(device)
    if hasattr(data, "_as_tensor"):  # a storage: a tensor on its memory, as torch's
        return _finish(data._as_tensor(dtype, "tensor")._data, requires_grad)
    data = listed(data)
    if dtype is _dtype.uint64 and isinstance(data, (builtins.int, builtins.float, list, tuple)):
        inferred = _sequence_dtype([data])
        if inferred == (_dtype.int64, False):
            return _finish(unsigned64(data), requires_grad)
        if inferred[0].is_inexact and np.size(np.array(data, dtype=object)):  # only Python ints, as torch
            raise TypeError("an integer is required")
    token = quiet()  # a float past the dtype's range is inf, silently, as in torch
    try:
        arr = _infer(data, dtype)
        if dtype is not None:
            if isinstance(data, (list, tuple, numbers.Real)) and dtype.category == _dtype._INT and arr.size:
                check_fits(arr, dtype)
            if (arr.dtype.kind == "f" and dtype.np.itemsize > arr.dtype.itemsize and arr.size
                    and isinstance(data, (list, tuple, float))):
                # Python floats are doubles, converted straight to a wider dtype (tensor([0.1], dtype=float64))
                arr = np.array(_tensors_to_arrays(data), dtype=dtype.np)
            arr = cast(arr, dtype.np) if arr.dtype != dtype.np else arr
    finally:
        restore(token)
    return _finish(arr, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor`, but shares memory with a Tensor or NumPy array when no conversion
    is needed."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or dtype is data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == dtype.np):
        _dtype.from_numpy_dtype(data.dtype)
        return Tensor._make(data)
    return tensor(data, dtype=dtype)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (same shape and strides) whose storage is the
    span of its elements from the first, as torch's (``storage_offset()`` 0). TypeError for a
    non-array or a dtype ember lacks; ValueError for a negative stride, with torch's message
    (https://pytorch.org/docs/stable/generated/torch.from_numpy.html)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    return Tensor._make(own_span(ndarray))


def _size(size, name=None, call=None, position=1, sequence=False):
    """The ints of ``size`` (a factory's sizes, :func:`ember._size.sizes_arg`, ``sequence`` too): torch's errors for a missing
    size of ``name`` (zeros, ...), a negative one, and the others naming ``call`` (default ``name``)."""
    if name is not None and not size:
        raise TypeError(f"{name}() missing 1 required positional arguments: \"size\"")
    size = sizes_arg(size, call or name or "empty", position=position, sequence=sequence) if size else ()
    if any(s < 0 for s in size):
        if name == "zeros":  # PyTorch's zeros words this one differently
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    return size


def _sizes(sizes, size, name):
    """The size given positionally (``zeros(2, 3)``) or as ``size=``, a sequence (``zeros(size=2)``: torch's TypeError)."""
    if size is not None and sizes:
        raise TypeError("received both positional sizes and size=; give one")
    return sizes if size is None else (sizes_arg((size,), name, position=None, sequence=True),)


def _np(dtype):
    return (dtype or _dtype.get_default_dtype()).np


def _sparse_or_dense(name, layout):
    """True for ``layout=torch.sparse_coo`` (an empty sparse tensor is made), False for a dense
    one; TypeError for what is not a layout, RuntimeError for a filled sparse tensor."""
    if layout is None or layout is _layout.strided:
        return False
    if not isinstance(layout, _layout.layout):
        raise TypeError(f"{name}(): argument 'layout' must be torch.layout, not {type(layout).__name__}")
    if layout is not _layout.sparse_coo:
        raise NotImplementedError(f"ember has dense and sparse COO tensors only, not layout={layout}")
    if name not in ("zeros", "empty"):
        raise RuntimeError("full(...) is not implemented for sparse layout")
    return True


def _empty_sparse(shape, dtype, requires_grad):
    """A sparse COO tensor of ``shape`` without entries (``torch.zeros(..., layout=sparse_coo)``)."""
    storage = SparseCOO(np.zeros((len(shape), 0), np.int64), np.zeros(0, dtype), shape, coalesced=True)
    return _finish(storage, requires_grad)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """A tensor of zeros of ``size`` (the default float dtype unless ``dtype``); with
    ``layout=torch.sparse_coo`` a sparse tensor without entries
    (https://pytorch.org/docs/stable/generated/torch.zeros.html)."""
    check_device(device)
    shape = _size(_sizes(sizes, size, "zeros"), "zeros")
    if _sparse_or_dense("zeros", layout):
        return _empty_sparse(shape, _np(dtype), requires_grad)
    return _finish(np.zeros(shape, _np(dtype)), requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """A tensor of ones of ``size`` (the default float dtype unless ``dtype``)
    (https://pytorch.org/docs/stable/generated/torch.ones.html)."""
    check_device(device)
    _sparse_or_dense("ones", layout)
    return _finish(np.ones(_size(_sizes(sizes, size, "ones"), "ones"), _np(dtype)), requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          memory_format=None, pin_memory=False):
    """An uninitialised tensor of ``size``; ember gives zeros (a sparse tensor without entries
    for ``layout=torch.sparse_coo``) laid out as ``memory_format``; TypeError for a non-format,
    RuntimeError for ``preserve_format`` or a channels-last format of another rank, as torch
    (https://pytorch.org/docs/stable/generated/torch.empty.html)."""
    check_device(device)
    shape = _size(_sizes(sizes, size, "empty"), "empty")
    if _sparse_or_dense("empty", layout):
        return _empty_sparse(shape, _np(dtype), requires_grad)
    return _finish(_memory_format.for_empty(np.empty(shape, _np(dtype)), memory_format), requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """An uninitialised tensor of ``size`` with the element ``stride`` given, over storage
    just large enough for it (https://pytorch.org/docs/stable/generated/torch.empty_strided.html)."""
    check_device(device)
    size = sizes_arg((size,), "empty_strided", position=1, sequence=True)
    stride = sizes_arg((stride,), "empty_strided", "stride", position=2, sequence=True)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    dt = np.dtype(_np(dtype))
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    storage = np.zeros(extent, dt)
    view = np.lib.stride_tricks.as_strided(storage, size, tuple(s * dt.itemsize for s in stride))
    return _finish(view, requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the memory of a Python buffer (``bytearray``, ``array``, ``mmap``...),
    sharing it: ``count`` elements of ``dtype`` from byte ``offset`` (all that fit when -1)
    (https://pytorch.org/docs/stable/generated/torch.frombuffer.html). ValueError when the
    buffer is empty or the counts do not fit, as PyTorch's."""
    length = memoryview(buffer).nbytes
    if length <= 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    itemsize = dtype.np.itemsize
    if count < 0 and (length - offset) % itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                         f"multiple of element size ({itemsize})")
    return _finish(np.frombuffer(buffer, dtype.np, count, offset), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """``size`` filled with ``fill_value``; the dtype follows the value (bool, int64 or the
    default float) unless given."""
    check_device(device)
    _sparse_or_dense("full", layout)
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    shape = _size((size,), call="full", sequence=True)
    return _finish(np.full(shape, _fill_value(fill_value, dtype, shape), dtype.np), requires_grad)


def _fill_value(value, dtype, shape):
    """``value`` as :func:`real_if_fits` takes it, and checked for float16 and bfloat16 unless
    ``shape`` holds one element: torch's ``fill_`` converts checked, but sets one element
    unchecked (inf)."""
    value = real_if_fits(value, dtype)
    if math.prod(shape) != 1:
        check_narrow(value, dtype)
    return value


_SCALAR_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "int64": "int64_t",
                "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
                "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t", "uint16": "uint16_t",
                "uint32": "uint32_t", "uint64": "uint64_t", "bool": "bool"}


def real_if_fits(value, dtype):
    """``value`` for a tensor of ``dtype``, RuntimeError where PyTorch's checked conversion of
    a number refuses it: a complex number with an imaginary part into a real dtype (else its
    real part is stored); NaN, +-inf or a number outside the range into an integer dtype
    (an unsigned dtype takes -max..-1 as two's complement: -1 is 255 in uint8, as torch); a finite number
    beyond float32's (complex64's) range into it. float16, bfloat16 and bool take anything
    (out of range: +-inf, nonzero: True); see :func:`check_narrow`. OverflowError, as torch's parser, for an int
    outside [-2**63, 2**64)."""
    if isinstance(value, builtins.int) and not -(1 << 63) <= builtins.int.__int__(value) < 1 << 64:
        int_operand(builtins.int.__int__(value))  # (an int subclass too: a compiled function's ``round(lr)``)
    if dtype is _dtype.bool:
        return builtins.bool(value)
    if isinstance(value, (builtins.complex, np.complexfloating)) and not dtype.is_complex:
        if value.imag:
            _overflow(dtype)
        value = value.real
    if _overflows(value, dtype):
        _overflow(dtype)
    if dtype.np.kind == "u" and isinstance(value, (builtins.int, np.integer)) and value < 0:
        value += 1 << (8 * dtype.itemsize)
    return value


def check_narrow(value, dtype):
    """RuntimeError where torch's checked conversion refuses a real number for float16 or
    bfloat16: finite and beyond the largest (65504.5 is refused, not rounded). ``masked_fill``
    checks so, and ``full`` (``fill_``, ``full_like``, ``new_full``) of any number of elements
    but one (torch gives inf there, 0 or 2 elements raise)."""
    if dtype in (_dtype.float16, _dtype.bfloat16) and isinstance(value, (builtins.int, builtins.float, np.integer,
                                                                          np.floating)):
        check_attribute(value, dtype)  # (comparisons: a compiled function's traced float guarded by them)


def _overflow(dtype):
    raise RuntimeError(f"value cannot be converted to type {_SCALAR_TYPE.get(dtype.name, dtype.name)} "
                       "without overflow")


def _overflows(value, dtype):
    if dtype in (_dtype.bool, _dtype.float16, _dtype.bfloat16, _dtype.float64, _dtype.complex128) \
            or not isinstance(value, (builtins.int, builtins.float, builtins.complex, np.number)) \
            or isinstance(value, (builtins.bool, np.bool_)):
        return False
    if dtype.is_inexact:  # float32, complex64: finite parts within float32's range
        limit = float(np.finfo(np.float32).max)
        return any(math.isfinite(p) and abs(p) > limit for p in (value.real, value.imag))
    info = np.iinfo(dtype.np)
    if isinstance(value, (builtins.int, np.integer)):
        lowest = -info.max if info.min == 0 else info.min
        return not lowest <= value <= info.max
    value = float(value)  # compared as doubles, as c10 does (2.0**63 fits int64 and wraps)
    return value != value or value < info.min or value > float(info.max)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding ``s`` (the default float dtype unless ``dtype``)
    (https://pytorch.org/docs/stable/generated/torch.scalar_tensor.html)."""
    return full((), s, dtype=dtype or _dtype.get_default_dtype(), requires_grad=requires_grad)


def _beside(t, fill, size, dtype, requires_grad, *value, device=None):
    """A new tensor of ``size`` (the arguments' sizes, as ``zeros(*size)`` takes them) and
    ``dtype``, made by ``fill`` ("zeros", "ones", "empty", "full")
    in the array namespace of tensor ``t``: a tensor made from another stays on its device (a
    sparse one gives a sparse tensor without entries, or NotImplementedError for a fill),
    unless ``device`` names one ("meta", or "cpu" for a meta ``t``)."""
    if (type(t._data) is MetaArray) if device is None else device_type(device) == "meta":
        return to_meta(_finish(meta_array(_size(size, fill, "new_" + fill), dtype.np), requires_grad))
    if device is not None and type(t._data) is MetaArray:
        return _finish(getattr(np, fill)(_size(size, fill, "new_" + fill), *value, dtype=dtype.np), requires_grad)
    if t.is_sparse:
        if fill not in ("zeros", "empty"):
            raise SparseUnsupported(unsupported_message("fill_"))
        return _empty_sparse(_size(size, fill, "new_" + fill), dtype.np, requires_grad)
    array = getattr(namespace(t._data), fill)(_size(size, fill, "new_" + fill), *value, dtype=dtype.np)
    return _finish(array, requires_grad)


def _in_format(out, input, memory_format, fn):
    """``out``, a new dense tensor shaped as ``input``, laid out as ``memory_format``;
    ``preserve_format`` keeps the strides of a dense ``input``, else orders the dims as its
    strides do (torch's). TypeError/RuntimeError as torch's ``fn``."""
    fmt, data = _memory_format.checked(memory_format, fn), input._data
    if out.is_sparse or input.is_sparse or MetaArray in (type(out._data), type(data)):
        return out  # (no strides to lay out)
    if fmt is _memory_format.preserve_format and type(data) is np.ndarray:
        if not dense(data):
            ordered = np.empty_like(data, dtype=out._data.dtype, order="K")
            ordered[...] = out._data
            out._data = ordered
        out._data = _memory_format.preserved(out._data, data)
        return out
    fmt = _memory_format.suggested(data) if fmt is _memory_format.preserve_format else fmt
    if fmt is not _memory_format.contiguous_format:
        _memory_format.channels_order(fmt, input.ndim)
        out._data = _memory_format.laid_out(out._data, fmt, namespace(out._data))
    return out


def _like(fill):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=_memory_format.preserve_format,
             layout=None):
        out = _beside(input, fill, (input.shape,), dtype or input.dtype, requires_grad, device=device)
        return _in_format(out, input, memory_format, like.__name__)
    like.__name__ = like.__qualname__ = fill + "_like"  # (Python's errors name it)
    like.__doc__ = (f"``{fill}`` with the shape (and, unless given, dtype) of ``input``, on its device, laid out as "
                    "``memory_format`` (by default as a channels-last ``input`` is).")
    return like


zeros_like = _like("zeros")
ones_like = _like("ones")
empty_like = _like("empty")


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=_memory_format.preserve_format):
    """``full`` with ``input``'s shape and (unless given) dtype, on its device, laid out as
    ``memory_format`` (https://pytorch.org/docs/stable/generated/torch.full_like.html)."""
    dtype = dtype or input.dtype
    out = _beside(input, "full", (input.shape,), dtype, requires_grad, _fill_value(fill_value, dtype, input.shape),
                  device=device)
    return _in_format(out, input, memory_format, "full_like")


@factory_out("aten::arange", warn_count=True)
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None):
    """Values ``start, start + step, ...`` below ``end``; int64 when all bounds are integers,
    else the default float. RuntimeError for a zero step or a step of the wrong sign."""
    check_device(device)
    start, end = (0, start) if end is None else (start, end)
    start, end, step = vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = _dtype.int64 if all(_integral(v) for v in vals) else _dtype.get_default_dtype()
    refuse_unsigned("arange_cpu", dtype)
    if not dtype.is_floating_point and all(_integral(v) for v in vals):
        return _finish(np.arange(start, end, step, dtype=dtype.np), requires_grad)
    n = max(int(np.ceil((end - start) / step)), 0)
    return _finish((start + np.arange(n, dtype=np.float64) * step).astype(dtype.np), requires_grad)


@factory_out("aten::range", deprecation="torch.range is deprecated and will be removed in a future release because "
             "its behavior is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
             "values in [start, end).")
def range_inclusive(start, end, step=1, *, dtype=None, device=None, requires_grad=False, out=None):
    """``start, start + step, ...`` up to and including ``end``, in the default float dtype
    unless given; deprecated in PyTorch for ``arange`` (which stops before ``end``), with its
    warning (https://pytorch.org/docs/stable/generated/torch.range.html)."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    dtype = dtype or _dtype.get_default_dtype()
    n = int(builtins.max(math.floor((end - start) / step) + 1, 0))
    return _finish((start + np.arange(n, dtype=np.float64) * step).astype(dtype.np), requires_grad)


def _integral(value):
    # int first: the ABC check costs more than the rest of a one-element arange.
    return type(value) is int or isinstance(value, numbers.Integral)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    """A 2-d tensor with ones on the diagonal, (n, m) with m = n by default
    (https://pytorch.org/docs/stable/generated/torch.eye.html)."""
    check_device(device)
    refuse_unsigned("eye", dtype)
    return _finish(np.eye(n, n if m is None else m, dtype=_np(dtype)), requires_grad)


# ---- dtype conversion and new_* -------------------------------------------------------------------
def to(input, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None, **unknown):
    """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``: a tensor with the requested
    dtype (``input`` itself when nothing changes and ``copy`` is False); else torch's TypeError."""
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, _device_cls)) or a is None:
            device = a
        elif isinstance(a, builtins.bool):
            non_blocking = a
        else:
            unknown[None] = a  # (an argument no signature takes: refused below, with the keywords)
    if unknown:
        raise TypeError(method_refusal("to", args, {k: v for k, v in unknown.items() if k is not None}))
    if device is not None and device_type(device) == "meta":
        return to_meta(input, dtype)
    if type(input._data) is MetaArray and device is not None:
        raise NotImplementedError(NO_DATA)
    check_device(device)
    fmt = None if memory_format is None else _memory_format.checked(memory_format, "to")
    fmt = None if fmt is _memory_format.preserve_format else fmt
    if fmt not in (None, _memory_format.contiguous_format):
        _memory_format.channels_order(fmt, input.ndim)
    if dtype is None or dtype is input.dtype:
        # torch's to() returns the tensor itself when its strides suggest the format asked for
        if fmt is not None and (copy or _memory_format.suggested(input._data) is not fmt):
            return input.clone(memory_format=fmt)
        return input.clone() if copy else input
    if not (dtype.is_floating_point or getattr(dtype, "is_complex", False)):
        input = input.detach()  # integer and bool results carry no gradient, as in PyTorch
    out = apply(ToDtype, input, dtype=dtype)  # (in the input's layout)
    if fmt is not None and out._data.strides != _memory_format.strides(out.shape, out._data.itemsize, fmt):
        out = out.clone(memory_format=fmt)  # torch's strides for the format
    return out


class ToDtype(Op):
    """Cast to another dtype; the gradient is cast back (and dropped for integer inputs)."""
    promote = None
    save_inputs = False

    infer = classmethod(lambda cls, x, dtype: (tuple(x.shape), dtype))

    @staticmethod
    def forward(x, dtype):
        if x.dtype.kind == "c" and dtype is _dtype.bool:
            return x != 0  # true where either part is nonzero, as torch (and C++'s bool(z))
        real = x.dtype.kind == "c" and not dtype.is_complex
        if real:
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning)
        return _memory_format.preserved(cast(x.real if real else x, dtype.np), x)  # (preserve_format's strides)

    @staticmethod
    def backward(ctx, g):
        # A complex result of a real input: the input's gradient is the real part.
        return ((g.real if g.dtype.is_complex and not ctx.dtypes[0].is_complex else g).to(ctx.dtypes[0]),)


def cast_to(dtype):
    """The Tensor method ``float()``, ``long()``, ...: ``self.to(dtype)``."""
    def method(self, memory_format=None):
        return to(self, dtype)
    method.__doc__ = f"``self.to({dtype!r})``."
    return method


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor from ``data`` with ``self``'s dtype unless ``dtype`` is given, on
    ``self``'s device (in its array namespace)."""
    out = tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)
    out._data = as_array(out._data, self._data)
    return out


def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    """Zeros of ``size`` with ``self``'s dtype unless ``dtype`` is given, on ``self``'s device."""
    return _beside(self, "zeros", _sizes(sizes, size, "new_zeros"), dtype or self.dtype, requires_grad)


def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    """Ones of ``size`` with ``self``'s dtype unless ``dtype`` is given, on ``self``'s device."""
    return _beside(self, "ones", _sizes(sizes, size, "new_ones"), dtype or self.dtype, requires_grad)


def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of ``size`` (ember gives zeros) with ``self``'s dtype."""
    return _beside(self, "zeros", _sizes(sizes, size, "new_empty"), dtype or self.dtype, requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``fill_value`` everywhere in ``size``, with ``self``'s dtype unless ``dtype`` is given."""
    dtype = dtype or self.dtype
    return _beside(self, "full", (size,), dtype, requires_grad, _fill_value(fill_value, dtype, _size((size,), call="new_full", sequence=True)))


# Factories that place their result on the meta device when asked (the ``*_like`` and
# ``new_*`` forms follow their tensor through ``_beside``).
tensor, zeros, ones, full, empty, empty_strided, arange, eye, scalar_tensor = (
    placed(f) for f in (tensor, zeros, ones, full, empty, empty_strided, arange, eye, scalar_tensor))
