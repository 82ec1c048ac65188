"""The public op functions (``ember.add``, ``ember.sum``, ...) and the Tensor methods and
operators built from them.

Each function parses PyTorch's arguments (``dim`` as int or tuple, ``keepdim``, ``alpha``,
``out``), checks them with PyTorch's error classes, and applies an op entry from ``_ops``.
At the bottom, :func:`_install_methods` gives Tensor the method, in-place (``add_``) and
operator forms of the same functions, so each exists once.
"""
import builtins
import numbers

import numpy as np

from . import _dtype, _memory
from ._creation import tensor as _new_tensor, zeros, ones, eye, full
from ._ops import OPS
from ._ops.core import apply, write_into
from ._tensor import Tensor, _wrap_dim
from .autograd.grad_mode import STATE

_ = OPS  # the op table, read by name below
_Number = (int, float, bool, np.number, np.bool_)


def _t(x, like=None):
    """``x`` as a Tensor (Python numbers become 0-dim tensors of their own dtype)."""
    if isinstance(x, Tensor):
        return x
    return _new_tensor(x)


def _dims(dim, ndim):
    """``dim`` (None, int, or sequence) as a sorted tuple of non-negative axes, or None."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        axes = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {list(dim)} appears multiple times in the list of dims")
        return tuple(a for a in axes if a < ndim) if ndim else ()
    d = _wrap_dim(dim, ndim)
    return (d,) if ndim else ()


def _out(result, out):
    if out is None:
        return result
    if STATE.enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError("out=... arguments don't support automatic differentiation, but one of "
                           "the arguments requires grad.")
    if tuple(out.shape) != tuple(result.shape):
        out._data = np.empty(result.shape, out._data.dtype)
        _memory.track(out._data)
    write_into(out, result)
    return out


# ---- arithmetic --------------------------------------------------------------------------------
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion."""
    return _out(apply(OPS["Add"], input, other, alpha=alpha) if alpha != 1 else apply(OPS["Add"], input, other), out)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``; RuntimeError when either operand is bool."""
    _check_sub(input, other)
    return _out(apply(OPS["Sub"], input, other, alpha=alpha) if alpha != 1 else apply(OPS["Sub"], input, other), out)


def _is_bool(x):
    return x.dtype is _dtype.bool if isinstance(x, Tensor) else isinstance(x, (builtins.bool, np.bool_))


def _check_sub(a, b):
    # Checked before promotion, which would turn a bool operand into an integer one.
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)


def mul(input, other, *, out=None):
    return _out(apply(OPS["Mul"], input, other), out)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    """True division (float result), or rounded with ``rounding_mode`` "trunc" or "floor"."""
    if rounding_mode is None:
        return _out(apply(OPS["Div"], input, other), out)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    if _is_int_zero_division(input, other):
        raise RuntimeError("ZeroDivisionError")
    return _out(apply(OPS["DivRounded"], input, other, rounding_mode=rounding_mode), out)


divide = true_divide = div


def floor_divide(input, other, *, out=None):
    """``div(input, other, rounding_mode="floor")`` (Python's ``//``)."""
    return div(input, other, rounding_mode="floor", out=out)


def _is_int_zero_division(input, other):
    dt = _dtype.result_type(input, other)
    if dt.is_floating_point:
        return False
    d = other._data if isinstance(other, Tensor) else other
    return bool(np.any(np.asarray(d) == 0))


def remainder(input, other, *, out=None):
    if _is_int_zero_division(input, other):
        raise RuntimeError("ZeroDivisionError")
    return _out(apply(OPS["Remainder"], input, other), out)


def fmod(input, other, *, out=None):
    if _is_int_zero_division(input, other):
        raise RuntimeError("ZeroDivisionError")
    return _out(apply(OPS["Fmod"], input, other), out)


def pow(input, exponent, *, out=None):
    if not isinstance(input, Tensor):
        input = full((), input, dtype=_dtype.result_type(input, exponent)
                     if isinstance(exponent, Tensor) else None)
    return _out(apply(OPS["Pow"], input, exponent), out)


def float_power(input, exponent):
    return pow(_t(input).double(), exponent.double() if isinstance(exponent, Tensor) else exponent)


def atan2(input, other, *, out=None):
    return _out(apply(OPS["Atan2"], input, other), out)


arctan2 = atan2


def maximum(input, other, *, out=None):
    return _out(apply(OPS["Maximum"], input, other), out)


def minimum(input, other, *, out=None):
    return _out(apply(OPS["Minimum"], input, other), out)


def fmax(input, other):
    return where(other.isnan(), input, where(input.isnan(), other, maximum(input, other)))


def fmin(input, other):
    return where(other.isnan(), input, where(input.isnan(), other, minimum(input, other)))


def lerp(input, end, weight, *, out=None):
    return _out(apply(OPS["Lerp"], input, end, weight), out)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``."""
    prod = tensor1 * tensor2
    return _out(input + (prod if value == 1 else prod * value), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2``; RuntimeError for integer tensor1 and tensor2."""
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future "
                           "release addcdiv will perform a true division of tensor1 and tensor2.")
    q = tensor1 / tensor2
    return _out(input + (q if value == 1 else q * value), out)


def where(condition, input=None, other=None, *, out=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``; with one argument,
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    condition = _t(condition)
    if condition.dtype is not _dtype.bool:
        if condition.dtype is _dtype.uint8:
            condition = condition.bool()
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {_type_name(condition.dtype)}")
    dt = _dtype.result_type(input, other)
    a = input.to(dt) if isinstance(input, Tensor) else input
    b = other.to(dt) if isinstance(other, Tensor) else other
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = full((), a, dtype=dt)
    r = apply(OPS["Where"], condition, a, b)
    return _out(r if r.dtype is dt else r.to(dt), out)


def _type_name(dtype):
    from ._ops.core import _type_name as name
    return name(dtype)


def clamp(input, min=None, max=None, *, out=None):
    """Limits ``input`` to [min, max]; bounds may be numbers or broadcasting tensors.
    RuntimeError if both are None."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _out(apply(OPS["Clamp"], input, min, max), out)


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def _unary(name, op_name, doc):
    op = OPS[op_name]

    def fn(input, *, out=None):
        return _out(apply(op, input), out)
    fn.__name__ = name
    fn.__doc__ = doc
    return fn


_UNARY = {
    "neg": ("Neg", "``-input``; RuntimeError for bool tensors (use ``~``)."),
    "abs": ("Abs", "``|input|``; the gradient at 0 is 0."),
    "sign": ("Sign", "-1, 0 or 1 by the sign of each element."),
    "exp": ("Exp", "``e ** input``; integer inputs give the default float dtype."),
    "expm1": ("Expm1", "``exp(input) - 1``, accurate near 0."),
    "log": ("Log", "Natural logarithm; -inf at 0, nan below."),
    "log2": ("Log2", "Base-2 logarithm."),
    "log10": ("Log10", "Base-10 logarithm."),
    "log1p": ("Log1p", "``log(1 + input)``, accurate near 0."),
    "sqrt": ("Sqrt", "Square root; nan below 0."),
    "rsqrt": ("Rsqrt", "``1 / sqrt(input)``."),
    "reciprocal": ("Reciprocal", "``1 / input`` (float result)."),
    "sin": ("Sin", "Sine (radians)."), "cos": ("Cos", "Cosine (radians)."),
    "tan": ("Tan", "Tangent (radians)."), "asin": ("Asin", "Arcsine."),
    "acos": ("Acos", "Arccosine."), "atan": ("Atan", "Arctangent."),
    "sinh": ("Sinh", "Hyperbolic sine."), "cosh": ("Cosh", "Hyperbolic cosine."),
    "tanh": ("Tanh", "Hyperbolic tangent."),
    "sigmoid": ("Sigmoid", "Logistic function ``1 / (1 + exp(-input))``."),
    "erf": ("Erf", "Gauss error function."),
    "floor": ("Floor", "Largest integer <= input (zero gradient)."),
    "ceil": ("Ceil", "Smallest integer >= input (zero gradient)."),
    "trunc": ("Trunc", "Rounds toward zero (zero gradient)."),
    "frac": ("Frac", "``input - trunc(input)``."),
    "relu": ("Relu", "``max(input, 0)``."),
    "isnan": ("IsNan", "True where the element is NaN."),
    "isinf": ("IsInf", "True where the element is +inf or -inf."),
    "isfinite": ("IsFinite", "True where the element is neither inf nor NaN."),
    "logical_not": ("LogicalNot", "Elementwise NOT, as bool."),
    "bitwise_not": ("BitwiseNot", "Bitwise NOT of integer or bool tensors."),
}
for _name, (_op, _doc) in _UNARY.items():
    globals()[_name] = _unary(_name, _op, _doc)
negative, absolute, fix = neg, abs, trunc
arcsin, arccos, arctan, arcsinh = asin, acos, atan, None
del arcsinh


def round(input, *, decimals=0, out=None):
    """Rounds half to even (as PyTorch does), optionally to ``decimals`` places."""
    return _out(apply(OPS["Round"], input, decimals=decimals) if decimals else apply(OPS["Round"], input), out)


def square(input, *, out=None):
    return _out(input * input if input.dtype is not _dtype.bool else input.long() * input.long(), out)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return _out(apply(OPS["NanToNum"], input, nan=nan, posinf=posinf, neginf=neginf), out)


def _binary(name, op_name, doc):
    op = OPS[op_name]

    def fn(input, other, *, out=None):
        return _out(apply(op, input, other), out)
    fn.__name__ = name
    fn.__doc__ = doc
    return fn


_BINARY = {
    "eq": ("Eq", "``input == other`` elementwise, as bool."),
    "ne": ("Ne", "``input != other`` elementwise, as bool."),
    "lt": ("Lt", "``input < other``."), "le": ("Le", "``input <= other``."),
    "gt": ("Gt", "``input > other``."), "ge": ("Ge", "``input >= other``."),
    "logical_and": ("LogicalAnd", "Elementwise AND of truth values."),
    "logical_or": ("LogicalOr", "Elementwise OR of truth values."),
    "logical_xor": ("LogicalXor", "Elementwise XOR of truth values."),
    "bitwise_and": ("BitwiseAnd", "Bitwise AND of integer or bool tensors."),
    "bitwise_or": ("BitwiseOr", "Bitwise OR of integer or bool tensors."),
    "bitwise_xor": ("BitwiseXor", "Bitwise XOR of integer or bool tensors."),
}
for _name, (_op, _doc) in _BINARY.items():
    globals()[_name] = _binary(_name, _op, _doc)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise."""
    return apply(OPS["IsClose"], input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """True when both have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and builtins.bool((input == other).all())


# ---- reductions --------------------------------------------------------------------------------
def _dtype_arg(input, dtype):
    return input if dtype is None else input.to(dtype)


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over ``dim`` (int, tuple or None for all); integer and bool inputs sum to int64."""
    input = _dtype_arg(input, dtype)
    return _out(apply(OPS["Sum"], input, dim=_dims(dim, input.ndim), keepdim=keepdim), out)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    return sum(input.nan_to_num(0.0, float("inf"), float("-inf")) if input.is_floating_point()
               else input, dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean over ``dim``; RuntimeError for integer inputs without a float ``dtype``."""
    input = _dtype_arg(input, dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_type_name(input.dtype)}")
    dims = _dims(dim, input.ndim)
    n = _count(input.shape, dims)
    return _out(apply(OPS["Sum"], input, dim=dims, keepdim=keepdim) / n if n else
                apply(OPS["Sum"], input, dim=dims, keepdim=keepdim) * float("nan"), out)


def _count(shape, dims):
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return n


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    keep = ~input.isnan()
    return nansum(input, dim, keepdim, dtype=dtype) / keep.sum(dim, keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over one ``dim`` (or all elements); integer inputs give int64."""
    input = _dtype_arg(input, dtype)
    return apply(OPS["Prod"], input, dim=_dims(dim, input.ndim), keepdim=keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` is 0)."""
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    dims = _dims(dim, input.ndim)
    c = _correction(unbiased, correction)
    n = _count(input.shape, dims)
    centered = input - mean(input, dims, keepdim=True)
    ss = sum(centered * centered, dims, keepdim)
    # With no degrees of freedom left PyTorch returns nan (inf for a nonzero sum), not an error.
    return _out(ss / (n - c) if n - c > 0 else ss / 0.0, out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation: ``sqrt(var(...))`` with the same arguments; its gradient is zero
    where it is zero, as in PyTorch."""
    return _out(_sqrt_zero_grad(var(input, dim, unbiased, keepdim, correction=correction)), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over ``dim`` (all dims when empty); ties share the gradient evenly."""
    return _out(apply(OPS["Amax"], input, dim=_dims(dim, input.ndim), keepdim=keepdim), out)


def amin(input, dim=(), keepdim=False, *, out=None):
    return _out(apply(OPS["Amin"], input, dim=_dims(dim, input.ndim), keepdim=keepdim), out)


class _ValuesIndices(tuple):
    """The ``(values, indices)`` named tuple of ``max``, ``min``, ``sort``, ``topk``..."""
    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        return f"{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def _vi(name, values, indices):
    r = _ValuesIndices((values, indices))
    r._name = f"ember.return_types.{name}"
    return r


def _extreme(name, arg, input, dim, keepdim, other):
    if isinstance(dim, Tensor):
        other, dim = dim, None
    if other is not None:
        return maximum(input, other) if name == "max" else minimum(input, other)
    if dim is None:
        return apply(OPS["Max" if name == "max" else "Min"], input)
    d = _wrap_dim(dim, input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    idx = apply(OPS[arg], input, dim=d if input.ndim else None, keepdim=True)
    values = input.gather(d, idx) if input.ndim else input.clone()
    if not keepdim and input.ndim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return _vi(name, values, idx)


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """Largest element; with ``dim`` the ``(values, indices)`` along it; with a tensor, the
    elementwise ``maximum``."""
    return _extreme("max", "Argmax", input, dim, keepdim, other)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    return _extreme("min", "Argmin", input, dim, keepdim, other)


def argmax(input, dim=None, keepdim=False):
    """Index of the first maximal element (over the flattened input when ``dim`` is None);
    NaN counts as the maximum. RuntimeError for bool input."""
    return _arg_extreme("argmax", "Argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    return _arg_extreme("argmin", "Argmin", input, dim, keepdim)


def _arg_extreme(name, op_name, input, dim, keepdim):
    if input.dtype is _dtype.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    d = None if dim is None else _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return zeros((), dtype=_dtype.int64)
    return apply(OPS[op_name], input, dim=d, keepdim=keepdim)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))``, computed stably (finite for large inputs)."""
    return _out(apply(OPS["Logsumexp"], input, dim=_dims(dim, input.ndim) or tuple(range(input.ndim)), keepdim=keepdim), out)


def cumsum(input, dim, *, dtype=None, out=None):
    input = _dtype_arg(input, dtype)
    return _out(apply(OPS["Cumsum"], input, dim=_wrap_dim(dim, input.ndim)) if input.ndim else input.clone(), out)


def cumprod(input, dim, *, dtype=None, out=None):
    input = _dtype_arg(input, dtype)
    return _out(apply(OPS["Cumprod"], input, dim=_wrap_dim(dim, input.ndim)) if input.ndim else input.clone(), out)


def all(input, dim=None, keepdim=False, *, out=None):
    """True where every element along ``dim`` is nonzero (bool result)."""
    return _out(_bool_reduce(np.all, input, dim, keepdim), out)


def any(input, dim=None, keepdim=False, *, out=None):
    return _out(_bool_reduce(np.any, input, dim, keepdim), out)


def _bool_reduce(fn, input, dim, keepdim):
    dims = _dims(dim, input.ndim)
    r = np.asarray(fn(input._data, axis=dims, keepdims=keepdim))
    # PyTorch keeps uint8 for uint8 inputs (the pre-bool convention); everything else gives bool.
    return Tensor._make(r.astype(np.uint8) if input.dtype is _dtype.uint8 else r)


def count_nonzero(input, dim=None):
    return (input != 0).sum(dim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    """Vector p-norm over ``dim`` (Frobenius/2-norm by default); see ``linalg.vector_norm``."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("nuclear norm is not supported by ember")
    return _out(vector_norm(input, p, dim, keepdim, dtype=dtype), out)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """``(sum |x|^ord)^(1/ord)`` over ``dim``; ord may be inf, -inf or 0 (``torch.linalg.vector_norm``).
    RuntimeError for integer input without a float ``dtype``, and for ord < 0 or inf over no
    elements (those norms have no identity)."""
    if not x.dtype.is_floating_point and dtype is None:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_type_name(x.dtype)}")
    x = _dtype_arg(x, dtype)
    dims = _dims(dim, x.ndim)
    if x.numel() == 0 and (ord < 0 or ord == float("inf")):
        if dims is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty tensor "
                               "because the operation does not have an identity")
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on the dimension "
                                   f"{d}because this dimension is empty and the operation does not have an identity")
    return _out(apply(OPS["VectorNorm"], x, ord=ord, dim=dims, keepdim=keepdim), out)


def _sqrt_zero_grad(s):
    if not (s.requires_grad and STATE.enabled):
        return s.sqrt()
    zero = s == 0
    safe = s.masked_fill(zero, 1.0).sqrt()
    return safe.masked_fill(zero, 0.0)


def dist(input, other, p=2):
    return vector_norm(input - other, p)


# ---- shape ---------------------------------------------------------------------------------------
def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(map(int, shape))


def _infer_shape(shape, numel, input_shape):
    if -1 not in shape and _prod(shape) == numel and builtins.min(shape, default=0) >= 0:
        return tuple(shape)  # nothing to infer and nothing wrong: the common case, kept short
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(_shape_text(shape))}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _shape_text(shape):
    return shape


def reshape(input, *shape):
    """Same elements in a new ``shape`` (one entry may be -1); a view when strides allow."""
    shape = _infer_shape(_shape_arg(shape), input.numel(), input.shape)
    if shape == input._data.shape:
        return apply(OPS["View"], input, shape=shape) if input.requires_grad else input._alias()
    return apply(OPS["View"], input, shape=shape)


def view(input, *shape):
    """A view with a new ``shape``; RuntimeError when the strides do not allow one (use
    ``reshape``). ``view(dtype)`` is not supported."""
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported by ember")
    shape = _infer_shape(_shape_arg(shape), input.numel(), input.shape)
    if not input._data.flags.c_contiguous:  # a contiguous array always has the view
        probe = input._data.view()
        try:
            probe.shape = shape
        except AttributeError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                               "least one dimension spans across two contiguous subspaces). Use "
                               ".reshape(...) instead.") from None
    return apply(OPS["View"], input, shape=shape)


def view_as(input, other):
    return view(input, other.shape)


def reshape_as(input, other):
    return reshape(input, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input.shape
    return reshape(input, tuple(shape[:s]) + (-1 if input.numel() else _prod(shape[s:e + 1]),) + tuple(shape[e + 1:]))


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def ravel(input):
    return reshape(input, -1)


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.ndim)
    sizes = list(sizes)
    if -1 in sizes:
        known = _prod(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = input.shape[d] // known if known else 0
    if _prod(sizes) != input.shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {dim} ({input.shape[d]}) in the input tensor")
    return reshape(input, tuple(input.shape[:d]) + tuple(sizes) + tuple(input.shape[d + 1:]))


def squeeze(input, dim=None):
    """Removes size-1 dimensions (only those in ``dim`` when given)."""
    shape = input.shape
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = _dims(dim, input.ndim) or ()
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return apply(OPS["Squeeze"], input, shape=new)


def unsqueeze(input, dim):
    d = _wrap_dim(dim, input.ndim + 1)
    shape = tuple(input.shape)
    return apply(OPS["Unsqueeze"], input, shape=shape[:d] + (1,) + shape[d:])


def permute(input, *dims):
    dims = _shape_arg(dims)
    if sorted(dims) == list(range(input.ndim)):
        return apply(OPS["Permute"], input, dims=dims)  # valid as given: non-negative, distinct
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() "
                           f"= {input.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(OPS["Permute"], input, dims=dims)


def transpose(input, dim0, dim1):
    n = input.ndim
    if n < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return input._alias() if not input.requires_grad else apply(OPS["View"], input, shape=tuple(input.shape))
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    dims = list(range(n))
    dims[d0], dims[d1] = d1, d0
    return apply(OPS["Permute"], input, dims=tuple(dims))


swapaxes = swapdims = transpose


def t(input):
    """Transpose of a tensor with at most 2 dimensions; RuntimeError otherwise."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = input.ndim
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(d, n) for d in dst]
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, tuple(order))


moveaxis = movedim


def expand(input, *sizes):
    """Broadcast view to ``sizes`` (-1 keeps a dimension); RuntimeError naming both shapes."""
    sizes = _shape_arg(sizes)
    shape = tuple(input.shape)
    if len(sizes) < len(shape):
        from ._legacy import type_name
        raise RuntimeError(f"expand({type_name(input.dtype)}{{{list(shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}")
            target.append(s)
        else:
            cur = shape[i - lead]
            if s == -1:
                target.append(cur)
            elif cur == 1 or cur == s:
                target.append(s)
            else:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                                   f"({cur}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                                   f"Tensor sizes: {list(shape)}")
    target = tuple(target)
    if target == shape:
        return input._alias() if not input.requires_grad else apply(OPS["View"], input, shape=shape)
    return apply(OPS["Expand"], input, shape=target)


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, shape):
    return expand(input, shape)


def broadcast_shapes(*shapes):
    try:
        return np.broadcast_shapes(*[tuple(s) if not isinstance(s, int) else (s,) for s in shapes])
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: {list(shapes)}") from None


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(expand(t, shape) for t in tensors)


def sum_to_size(input, *size):
    """Sums ``input`` down to ``size`` (the inverse of broadcasting to ``input``'s shape)."""
    size = _shape_arg(size)
    shape = tuple(input.shape)
    if size == shape:
        return input
    lead = len(shape) - len(size)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size) if s == 1 and shape[i + lead] != 1)
    r = apply(OPS["Sum"], input, dim=dims, keepdim=True) if dims else input
    return reshape(r, size) if lead else r


def repeat(input, *sizes):
    sizes = _shape_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    x = reshape(input, (1,) * (len(sizes) - input.ndim) + tuple(input.shape))
    # Interleave a new axis of each repeat count before each dim, expand, then merge.
    shape = tuple(x.shape)
    inter = []
    for r, s in zip(sizes, shape):
        inter += [1, s]
    expanded = expand(reshape(x, inter), [v for r, s in zip(sizes, shape) for v in (r, s)])
    # Materialised first: repeat always returns new storage, even when every count is 1.
    return reshape(apply(OPS["Clone"], expanded), tuple(r * s for r, s in zip(sizes, shape)))


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats, dim=None):
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = _wrap_dim(dim, input.ndim)
    reps = repeats.tolist() if isinstance(repeats, Tensor) else repeats
    idx = np.repeat(np.arange(input.shape[d]), reps)
    return index_select(input, d, _new_tensor(idx))


def cat(tensors, dim=0, *, out=None):
    """Concatenates along ``dim``; all other sizes must match (RuntimeError naming them)."""
    tensors = [t for t in tensors]
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = next((t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)), tensors[0])
    d = _wrap_dim(dim, ref.ndim)
    parts = [t for t in tensors if t is ref or not (t.ndim == 1 and t.shape[0] == 0)]
    ref_shape = ref._data.shape
    for i, t in enumerate(parts):
        shape = t._data.shape
        if shape == ref_shape:
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for k in range(ref.ndim):
            if k != d and shape[k] != ref_shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                                   f"size {ref.shape[k]} but got size {t.shape[k]} for tensor "
                                   f"number {i} in the list.")
    if len(parts) == 1:
        return _out(parts[0].clone(), out)
    return _out(apply(OPS["Cat"], *parts, dim=d), out)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape) + 1)
    return cat([unsqueeze(t, d) for t in tensors], d, out=out)


def hstack(tensors):
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([t.reshape(1, -1) if t.ndim == 1 else t for t in tensors], 0)


def narrow(input, dim, start, length):
    d = _wrap_dim(dim, input.ndim)
    start = int(start)
    if start < 0:
        start += input.shape[d]
    if start < 0 or start + length > input.shape[d] or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({input.shape[d]}).")
    index = (slice(None),) * d + (slice(start, start + length),)
    return apply(OPS["Slice"], input, index=index)


def select(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    return apply(OPS["Slice"], input, index=(slice(None),) * d + (index,))


def split(tensor, split_size_or_sections, dim=0):
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller) or of the listed sizes."""
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [n]
        if n == 0:
            sizes = [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                               f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    out, offset = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, offset, s))
        offset += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    if n == 0:
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


def tensor_split(input, indices_or_sections, dim=0):
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
    else:
        bounds = [0] + list(indices_or_sections) + [n]
        sizes = [builtins.max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
    return split(input, sizes, d)


def unbind(input, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def flip(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return apply(OPS["Flip"], input, dims=tuple(_wrap_dim(d, input.ndim) for d in dims))


def fliplr(input):
    return flip(input, (1,))


def flipud(input):
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    if dims is None:
        return reshape(roll(input.reshape(-1), shifts, 0), input.shape)
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else shifts
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else dims
    return apply(OPS["Roll"], input, shifts=shifts, dims=dims)


def tril(input, diagonal=0, *, out=None):
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _out(apply(OPS["Tril"], input, diagonal=diagonal), out)


def triu(input, diagonal=0, *, out=None):
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _out(apply(OPS["Triu"], input, diagonal=diagonal), out)


def diagonal(input, offset=0, dim1=0, dim2=1):
    n = input.ndim
    return apply(OPS["Diagonal"], input, offset=offset, dim1=_wrap_dim(dim1, n), dim2=_wrap_dim(dim2, n))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    n = input.ndim
    return apply(OPS["DiagonalScatter"], input, src, offset=offset, dim1=_wrap_dim(dim1, n), dim2=_wrap_dim(dim2, n))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input.shape[-1] + builtins.abs(offset)
    base = zeros(tuple(input.shape[:-1]) + (n, n), dtype=input.dtype)
    return diagonal_scatter(base, input, offset, -2, -1).movedim((-2, -1), (dim1, dim2)) \
        if (dim1, dim2) != (-2, -1) else diagonal_scatter(base, input, offset, -2, -1)


def diag(input, diagonal=0):
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    return globals()["diagonal"](input, diagonal)


def trace(input):
    return diagonal(input).sum()


def contiguous(input, memory_format=None):
    if input._data.flags.c_contiguous:
        return input
    return apply(OPS["Clone"], input)


def clone(input, *, memory_format=None):
    return apply(OPS["Clone"], input, contiguous=memory_format is not None and memory_format != "preserve_format")


# ---- indexing ------------------------------------------------------------------------------------
def _index_arg(index):
    """``index`` with Tensors turned into arrays; also says whether it is basic (a view)."""
    if not isinstance(index, tuple):
        index = (index,)
    out, basic = [], True
    for i in index:
        kind = type(i)
        if kind is int:
            out.append(i)
            continue
        if kind is slice and (i.step is None or i.step > 0):
            out.append(i)
            continue
        if isinstance(i, Tensor):
            if i.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            a = i._data
            if a.dtype == np.uint8:
                a = a.astype(bool)
            if a.ndim == 0 and a.dtype != np.bool_:
                out.append(int(a))
                continue
            out.append(a)
            basic = False
        elif isinstance(i, (list, np.ndarray)):
            a = np.asarray([x.item() if isinstance(x, Tensor) else x for x in i] if isinstance(i, list) else i)
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(a)
            basic = False
        elif isinstance(i, builtins.bool):
            out.append(i)
            basic = False
        elif i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)):
            if isinstance(i, slice) and i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
            out.append(i)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(i).__name__})")
    return tuple(out), basic


def _getitem(self, index):
    index, basic = _index_arg(index)
    try:
        return apply(OPS["Slice"] if basic else OPS["Index"], self, index=index)
    except IndexError as e:
        raise _index_error(e, self) from None


def _index_error(e, self):
    """NumPy's IndexError in PyTorch's words."""
    text = str(e)
    if text.startswith("too many indices"):
        if self.ndim == 0:
            return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                              "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        return IndexError(f"too many indices for tensor of dimension {self.ndim}")
    return IndexError(text.replace("axis", "dimension"))


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` written (or added, ``accumulate=True``) at ``indices``."""
    index = indices if isinstance(indices, tuple) and builtins.all(not isinstance(i, Tensor) for i in indices) \
        and _is_array_index(indices) else _index_arg(indices)[0]
    if not isinstance(values, Tensor):
        values = full((), values, dtype=input.dtype)
    elif values.dtype is not input.dtype:
        values = values.to(input.dtype)
    try:
        return apply(OPS["IndexPut"], input, values, index=index, accumulate=accumulate)
    except IndexError as e:
        raise _index_error(e, input) from None
    except RuntimeError:
        target = np.shape(input._data[index])
        if _is_array_index(index) and not builtins.any(isinstance(i, np.ndarray) for i in index):
            expand(values, target)  # basic indexing: PyTorch reports the failed expand
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(target)}") from None


def _is_array_index(index):
    return builtins.all(isinstance(i, (np.ndarray, slice, int, type(None), type(Ellipsis))) for i in index)


def index_put_(input, indices, values, accumulate=False):
    return _inplace_result(input, index_put(input, indices, values, accumulate))


def _setitem(self, index, value):
    _inplace_result(self, index_put(self, _index_arg(index)[0], value))


def _inplace_result(self, result):
    if STATE.enabled and self.requires_grad:
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if not result.requires_grad:
            # The new value does not depend on the old one (eq_, fill_): PyTorch keeps ``self``
            # in the graph with a zero gradient rather than leaving its old history attached.
            result = apply(OPS["Where"], _TRUE, result.to(self.dtype), self)
    write_into(self, result)
    return self


_TRUE = Tensor._make(np.array(True))


def _check_index_tensor(name, input, dim, index):
    if not isinstance(index, Tensor) or index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor")
    n = input.shape[dim] if input.ndim else 1
    if index.numel() and (index._data.max() >= n or index._data.min() < -n):
        bad = index._data.max() if index._data.max() >= n else index._data.min()
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[i][index[i][j]]`` (for dim=1): picks along ``dim`` (index int64)."""
    if input.ndim == 0:
        return _out(gather(input.reshape(1), 0, index.reshape(1)).reshape(index.shape), out)
    d = _wrap_dim(dim, input.ndim)
    _check_index_tensor("gather", input, d, index)
    for k in range(input.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} "
                               f"to be smaller than self {list(input.shape)} apart from dimension {d}")
    return _out(apply(OPS["Gather"], input, dim=d, index=index._data % builtins.max(input.shape[d], 1)), out)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """``input`` with ``src`` (or ``value``) written along ``dim`` at ``index``."""
    d = _wrap_dim(dim, input.ndim)
    _check_index_tensor("scatter", input, d, index)
    if reduce is not None:
        if reduce in ("add", "sum"):
            return scatter_add(input, dim, index, src if src is not None else full(index.shape, value, dtype=input.dtype))
        raise NotImplementedError(f"scatter reduce='{reduce}' is not supported by ember")
    if src is None:
        src = value
    if isinstance(src, Tensor):
        src = src.to(input.dtype)
    return apply(OPS["Scatter"], input, src, dim=d, index=index._data % builtins.max(input.shape[d], 1))


def scatter_add(input, dim, index, src):
    d = _wrap_dim(dim, input.ndim)
    _check_index_tensor("scatter_add", input, d, index)
    return apply(OPS["ScatterAdd"], input, src.to(input.dtype), dim=d, index=index._data % builtins.max(input.shape[d], 1))


def index_select(input, dim, index, *, out=None):
    """Entries along ``dim`` at the 1-D (int64/int32) ``index``."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    return _out(_getitem(input, (slice(None),) * d + (index.reshape(-1),)), out)


def index_add(input, dim, index, source, *, alpha=1):
    d = _wrap_dim(dim, input.ndim)
    src = source if alpha == 1 else source * alpha
    return index_put(input, (slice(None),) * d + (index._data,), src, accumulate=True)


def index_fill(input, dim, index, value):
    d = _wrap_dim(dim, input.ndim)
    return index_put(input, (slice(None),) * d + (index._data,), value)


def index_copy(input, dim, index, source):
    d = _wrap_dim(dim, input.ndim)
    return index_put(input, (slice(None),) * d + (index._data,), source)


def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` (bool, broadcastable) is True."""
    if not isinstance(mask, Tensor) or mask.dtype is not _dtype.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_c_type(mask.dtype) if isinstance(mask, Tensor) else type(mask).__name__}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        v = value.to(input.dtype)
    else:
        v = full((), value, dtype=input.dtype)
    return apply(OPS["Where"], mask, v, input)


def masked_select(input, mask):
    shape = broadcast_shapes(input.shape, mask.shape)
    return _getitem(expand(input, shape), expand(mask, shape))


def masked_scatter(input, mask, source):
    n = builtins.int(mask._data.sum())
    return index_put(input, (np.broadcast_to(mask._data, input.shape),), source.reshape(-1)[:n])


def take(input, index):
    return _getitem(input.reshape(-1), index.reshape(-1)).reshape(index.shape)


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = _wrap_dim(dim, input.ndim)
    shape_in = list(input.shape)
    shape_idx = list(indices.shape)
    shape_in[d] = shape_idx[d] = 1
    b = broadcast_shapes(shape_in, shape_idx)
    si, sx = list(b), list(b)
    si[d], sx[d] = indices.shape[d], input.shape[d]
    return gather(expand(input, sx), d, expand(indices, si))


def nonzero(input, *, as_tuple=False):
    """Indices of nonzero elements: (N, ndim) int64, or a tuple of 1-D index tensors."""
    idx = np.nonzero(input._data if input.ndim else input._data.reshape(1))
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in idx)
    return Tensor._make(np.stack(idx, axis=1).astype(np.int64) if input.ndim else
                        np.zeros((int(bool(input._data)), 0), np.int64))


argwhere = nonzero


# ---- products ----------------------------------------------------------------------------------
def matmul(input, other, *, out=None):
    """Matrix product with PyTorch's rules for 1-D and batched operands. RuntimeError naming
    both shapes when they do not fit, or both dtypes when they differ."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not {type(other).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_c_type(input.dtype)} != {_c_type(other.dtype)}")
    a, b = input.shape, other.shape
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and {other.ndim}D")
    k1 = a[-1]
    k2 = b[-2] if other.ndim > 1 else b[0]
    if k1 != k2:
        if input.ndim <= 2 and other.ndim <= 2:
            if input.ndim == 1 and other.ndim == 1:
                raise RuntimeError(f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] "
                                   "to have the same number of elements, but got "
                                   f"{a[0]} and {b[0]} elements respectively")
            if other.ndim == 1:
                raise RuntimeError(f"size mismatch, got input ({a[0]}), mat ({_mat_text(a)}), vec ({b[0]})")
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({_mat_text(a)} and {_mat_text(b)})")
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{', '.join(map(str, (b[0] if other.ndim > 2 else 1, k1)))}] but got: "
                           f"[{', '.join(map(str, b[:2] if other.ndim > 2 else (1, k2)))}].")
    try:
        np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({list(a)}) must match the size of tensor b "
                           f"({list(b)}) at non-singleton batch dimensions") from None
    return _out(apply(OPS["Matmul"], input, other), out)


def _mat_text(shape):
    return "x".join(map(str, shape if len(shape) == 2 else (1,) + tuple(shape)))


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}


def _c_type(dtype):
    return _C_NAMES[dtype.name]


def mm(input, mat2, *, out=None):
    """2-D matrix product; RuntimeError unless both are 2-D."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    return matmul(input, mat2, out=out)


def bmm(input, mat2, *, out=None):
    """Batched product of (B, N, M) and (B, M, P) tensors."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
    expected = (input.shape[0], input.shape[2])
    if tuple(mat2.shape[:2]) != expected:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"{list(expected)} but got: {list(mat2.shape[:2])}.")
    return matmul(input, mat2, out=out)


def mv(input, vec):
    return matmul(input, vec)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    return _out(prod + (input if beta == 1 else input * beta) if beta != 0 else prod, out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    prod = bmm(batch1, batch2)
    if alpha != 1:
        prod = prod * alpha
    return prod + (input if beta == 1 else input * beta) if beta != 0 else prod


def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return matmul(input, other)


inner = vdot = dot


def outer(input, vec2):
    """``input[i] * vec2[j]`` for 1-D tensors; RuntimeError otherwise."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


ger = outer


def einsum(equation, *operands):
    """Einstein summation over ``operands`` (also given as one list); implicit output when
    ``->`` is absent, ``...`` broadcasting as in NumPy."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    equation = equation.replace(" ", "")
    if "..." in equation:
        equation = _expand_ellipsis(equation, operands)
    if "->" not in equation:
        letters = equation.replace(",", "")
        equation += "->" + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    dt = operands[0].dtype
    for op in operands:
        if op.dtype is not dt:
            raise RuntimeError(f"expected scalar type {_type_name(dt)} but found {_type_name(op.dtype)}")
    return apply(OPS["Einsum"], *operands, equation=equation)


def _expand_ellipsis(equation, operands):
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    used = set(equation)
    spare = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    n_ell = builtins.max((op.ndim - (len(t) - 3) for t, op in zip(terms, operands) if "..." in t), default=0)
    ell = "".join(spare[:n_ell])
    new_terms = []
    for t, op in zip(terms, operands):
        if "..." in t:
            k = op.ndim - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k:])
        new_terms.append(t)
    if arrow:
        rhs = rhs.replace("...", ell)
    else:
        letters = "".join(new_terms).replace("", "")
        rest = "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
        rhs = ell + rest
    return ",".join(new_terms) + "->" + rhs


def tensordot(a, b, dims=2):
    if isinstance(dims, int):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = [list(x) if isinstance(x, (list, tuple)) else [x] for x in dims]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(da, db):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in da] + [c for j, c in enumerate(sb) if j not in db]
    return einsum("".join(sa) + "," + "".join(sb) + "->" + "".join(out), a, b)


# ---- softmax, sorting ----------------------------------------------------------------------------
def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    """``exp(x) / sum(exp(x))`` along ``dim``, shifted by the max so it never overflows.
    NotImplementedError for integer input without a float ``dtype``, as in PyTorch."""
    return _softmax("Softmax", "softmax", input, dim, dtype)


def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    """``x - logsumexp(x)`` along ``dim``; finite for logits of any size."""
    return _softmax("LogSoftmax", "log_softmax", input, dim, dtype)


def _softmax(op_name, kernel, input, dim, dtype):
    input = _dtype_arg(input, dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    d = _wrap_dim(dim, input.ndim)
    if not input.dtype.is_floating_point:
        last = "_lastdim" if d == builtins.max(input.ndim - 1, 0) else ""
        raise NotImplementedError(f"\"{kernel}{last}_kernel_impl\" not implemented for '{_type_name(input.dtype)}'")
    if input.ndim == 0:
        return apply(OPS[op_name], input.reshape(1), dim=0).reshape(())
    return apply(OPS[op_name], input, dim=d)


def argsort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        return zeros((), dtype=_dtype.int64)
    return apply(OPS["Argsort"], input, dim=_wrap_dim(dim, input.ndim), descending=descending)


def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim``; values carry the gradient."""
    if input.ndim == 0:
        return _vi("sort", input.clone(), zeros((), dtype=_dtype.int64))
    idx = argsort(input, dim, descending)
    return _vi("sort", gather(input, _wrap_dim(dim, input.ndim), idx), idx)


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    d = _wrap_dim(dim, input.ndim) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range")
    if input.ndim == 0:
        return _vi("topk", input.clone(), zeros((), dtype=_dtype.int64))
    idx = narrow(argsort(input, d, descending=largest), d, 0, k).contiguous()
    return _vi("topk", gather(input, d, idx), idx)


def kthvalue(input, k, dim=-1, keepdim=False):
    d = _wrap_dim(dim, input.ndim)
    idx = narrow(argsort(input, d), d, k - 1, 1).contiguous()
    values = gather(input, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return _vi("kthvalue", values, idx)


def median(input, dim=None, keepdim=False):
    """Lower median (PyTorch's rule for even counts); with ``dim``, ``(values, indices)``."""
    if dim is None:
        flat = input.reshape(-1)
        return kthvalue(flat, (flat.numel() + 1) // 2, 0).values
    n = input.shape[_wrap_dim(dim, input.ndim)]
    r = kthvalue(input, (n + 1) // 2, dim, keepdim)
    return _vi("median", r[0], r[1])


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Sorted distinct elements (no gradient), optionally with inverse indices and counts."""
    res = np.unique(input._data, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if not isinstance(res, tuple):
        return Tensor._make(res)
    out = [Tensor._make(res[0])]
    rest = list(res[1:])
    if return_inverse:
        out.append(Tensor._make(rest.pop(0).reshape(input.shape if dim is None else -1).astype(np.int64)))
    if return_counts:
        out.append(Tensor._make(rest.pop(0).astype(np.int64)))
    return tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    flat = input._data.reshape(-1)
    if flat.size == 0:
        return Tensor._make(flat.copy())
    starts = np.concatenate([[True], flat[1:] != flat[:-1]])
    out = [Tensor._make(flat[starts])]
    if return_inverse:
        out.append(Tensor._make((np.cumsum(starts) - 1).reshape(input.shape).astype(np.int64)))
    if return_counts:
        bounds = np.flatnonzero(np.concatenate([starts, [True]]))
        out.append(Tensor._make(np.diff(bounds).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    w = None if weights is None else weights._data
    return Tensor._make(np.bincount(input._data, w, minlength))


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None):
    side = side or ("right" if right else "left")
    v = values._data if isinstance(values, Tensor) else values
    r = np.searchsorted(sorted_sequence._data, v, side=side)
    return Tensor._make(np.asarray(r, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input, bins=100, min=0, max=0):
    lo, hi = (min, max) if (min, max) != (0, 0) else (input._data.min(), input._data.max())
    h, _ = np.histogram(input._data, bins=bins, range=(lo, hi))
    return Tensor._make(h.astype(input._data.dtype))


def one_hot(tensor, num_classes=-1):
    """(…) int64 class indices to (…, num_classes) int64 one-hot rows. RuntimeError for
    non-int64 input, negative classes, or classes >= num_classes."""
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if num_classes == -1:
        num_classes = int(data.max()) + 1 if data.size else 0
        if not data.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((data[..., None] == np.arange(num_classes)).astype(np.int64))


def cartesian_prod(*tensors):
    grids = np.meshgrid(*[t._data for t in tensors], indexing="ij")
    return Tensor._make(np.stack([g.reshape(-1) for g in grids], axis=1)) if len(tensors) > 1 else tensors[0].clone()


def meshgrid(*tensors, indexing="ij"):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    n = len(tensors)
    shape = [t.numel() for t in tensors]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(tensors):
        view_shape = [1] * n
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        view_shape[pos] = -1
        out.append(expand(t.reshape(view_shape), shape))
    return tuple(out)


# ---- dtype conversion ----------------------------------------------------------------------------
def to(input, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``: a tensor with the
    requested dtype (``input`` itself when nothing changes and ``copy`` is False)."""
    from ._device import check_device, device as device_cls
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, device_cls)) or a is None:
            device = a
        elif isinstance(a, builtins.bool):
            non_blocking = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    check_device(device)
    if dtype is None or dtype is input.dtype:
        return input.clone() if copy else input
    return apply(OPS["ToDtype"], input, dtype=dtype)


def type_(input, dtype=None, non_blocking=False):
    """``type()`` gives the legacy type name ("ember.FloatTensor"); ``type(dtype)`` converts."""
    if dtype is None:
        from ._legacy import type_name
        return type_name(input.dtype)
    if isinstance(dtype, str):
        from ._legacy import dtype_of_name
        dtype = dtype_of_name(dtype)
    return to(input, dtype)


def _cast(dtype):
    def cast(self, memory_format=None):
        return to(self, dtype)
    cast.__doc__ = f"``self.to({dtype!r})``."
    return cast


# ---- random in-place -------------------------------------------------------------------------
def _fill_random(self, array):
    with _no_grad():
        write_into(self, Tensor._make(np.asarray(array, dtype=self._data.dtype)))
    return self


class _no_grad:
    def __enter__(self):
        self.prev = STATE.enabled
        STATE.enabled = False

    def __exit__(self, *exc):
        STATE.enabled = self.prev


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    from ._random import rng
    return _fill_random(self, rng(generator).uniform(a, b, self.shape))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    from ._random import rng
    return _fill_random(self, mean + std * rng(generator).standard_normal(self.shape))


def bernoulli_(self, p=0.5, *, generator=None):
    from ._random import rng
    probs = p._data if isinstance(p, Tensor) else p
    return _fill_random(self, rng(generator).random(self.shape) < probs)


def random_(self, from_=0, to=None, *, generator=None):
    from ._random import rng
    if to is None:
        from_, to = 0, from_ if from_ else 2 ** 24
    return _fill_random(self, rng(generator).integers(from_, to, self.shape))


def exponential_(self, lambd=1.0, *, generator=None):
    from ._random import rng
    return _fill_random(self, rng(generator).exponential(1.0 / lambd, self.shape))


def fill_(self, value):
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return _inplace_result(self, expand(value.to(self.dtype), self.shape))
    return _inplace_result(self, Tensor._make(np.full(self._data.shape, value, self._data.dtype)))


def zero_(self):
    return fill_(self, 0)


def copy_(self, src, non_blocking=False):
    """Copies ``src`` (broadcast, cast) into ``self``; differentiable w.r.t. ``src``."""
    if STATE.enabled and self.requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if not isinstance(src, Tensor):
        src = _new_tensor(src)
    result = src if src.dtype is self.dtype else src.to(self.dtype)
    if result._data.shape != self._data.shape:
        result = expand(result, self.shape)
    elif result is src and src.requires_grad:
        # ``self`` takes the result's history: src's own node must not become self's.
        result = apply(OPS["Clone"], src)
    write_into(self, result)
    return self


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return _new_tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new(fn):
    def new(self, *size, dtype=None, device=None, requires_grad=False):
        return fn(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)
    new.__name__ = "new_" + fn.__name__
    return new


new_zeros, new_ones, new_empty = _new(zeros), _new(ones), _new(zeros)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


# ---- Tensor methods --------------------------------------------------------------------------------
_METHODS = """add sub mul div true_divide floor_divide remainder fmod pow atan2 arctan2 maximum minimum
fmax fmin lerp addcmul addcdiv clamp clip clamp_min clamp_max neg negative abs absolute sign exp expm1
log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan asin acos atan arcsin arccos arctan sinh cosh
tanh sigmoid erf floor ceil trunc fix frac round relu square nan_to_num isnan isinf isfinite
logical_not logical_and logical_or logical_xor bitwise_not bitwise_and bitwise_or bitwise_xor eq ne lt
le gt ge greater greater_equal less less_equal not_equal isclose allclose equal sum nansum mean
nanmean prod var std amax amin max min argmax argmin logsumexp cumsum cumprod all any count_nonzero
norm dist reshape view view_as reshape_as flatten ravel unflatten squeeze unsqueeze permute transpose
swapaxes swapdims t movedim moveaxis expand expand_as broadcast_to sum_to_size repeat tile
repeat_interleave narrow select split chunk tensor_split unbind flip fliplr flipud roll tril triu
diagonal diagonal_scatter diag_embed diag trace contiguous clone index_put gather scatter scatter_add
index_select index_add index_fill index_copy masked_fill masked_select masked_scatter take
take_along_dim nonzero argwhere matmul mm bmm mv addmm baddbmm dot inner outer ger softmax
log_softmax argsort sort msort topk kthvalue median unique bincount histc to new_zeros new_ones
new_empty new_full new_tensor subtract multiply divide rsub float_power""".split()

_INPLACE = """add sub mul div true_divide floor_divide remainder fmod pow atan2 lerp addcmul addcdiv
clamp clip clamp_min clamp_max neg abs sign exp expm1 log log2 log10 log1p sqrt rsqrt reciprocal
sin cos tan asin acos atan sinh cosh tanh sigmoid erf floor ceil trunc frac round relu square
nan_to_num logical_not logical_and logical_or bitwise_and bitwise_or bitwise_xor eq ne lt le gt
ge tril triu scatter scatter_add index_add index_fill index_copy masked_fill masked_scatter
subtract multiply divide cumsum cumprod""".split()


def _inplace(fn):
    def method_(self, *args, **kwargs):
        src = self
        if STATE.enabled and (self.requires_grad or builtins.any(getattr(a, "requires_grad", False) for a in args)):
            # The op may save its input for backward; give it the old value, not the storage
            # about to be overwritten (PyTorch keeps the original self the same way).
            src = self._snapshot()
        return _inplace_result(self, fn(src, *args, **kwargs))
    method_.__name__ = fn.__name__ + "_"
    method_.__doc__ = f"In-place ``{fn.__name__}``: writes the result into ``self`` and returns it."
    return method_


def _install_methods():
    g = globals()
    for name in _METHODS:
        setattr(Tensor, name, g[name])
    for name in _INPLACE:
        setattr(Tensor, name + "_", _inplace(g[name]))
    for name in ("index_put_", "uniform_", "normal_", "bernoulli_", "random_", "exponential_",
                 "fill_", "zero_", "copy_"):
        setattr(Tensor, name, g[name])
    Tensor.type = type_
    Tensor.where = lambda self, condition, other: where(condition, self, other)
    Tensor.T = property(lambda self: permute(self, tuple(reversed(range(self.ndim)))))
    Tensor.mT = property(_matrix_transpose)
    Tensor.H = Tensor.T
    Tensor.mH = Tensor.mT
    for name, dt in (("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
                     ("long", _dtype.int64), ("int", _dtype.int32), ("short", _dtype.int16),
                     ("char", _dtype.int8), ("byte", _dtype.uint8), ("bool", _dtype.bool)):
        setattr(Tensor, name, _cast(dt))
    Tensor.cpu = lambda self, memory_format=None: self
    Tensor.cuda = _no_cuda
    Tensor.pin_memory = lambda self: self
    Tensor.share_memory_ = lambda self: self
    Tensor.is_shared = lambda self: False
    Tensor.__getitem__ = _getitem
    Tensor.__setitem__ = _setitem
    Tensor.__matmul__ = matmul
    Tensor.__rmatmul__ = lambda self, other: matmul(other, self)
    _install_operators()


def _matrix_transpose(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _no_cuda(self, *args, **kwargs):
    raise AssertionError("Torch not compiled with CUDA enabled")


def _install_operators():
    add_op, sub_op, mul_op, div_op = OPS["Add"], OPS["Sub"], OPS["Mul"], OPS["Div"]
    Tensor.__add__ = lambda self, other: apply(add_op, self, other)
    Tensor.__radd__ = lambda self, other: apply(add_op, other, self)
    Tensor.__sub__ = lambda self, other: _check_sub(self, other) or apply(sub_op, self, other)
    Tensor.__rsub__ = lambda self, other: _check_sub(other, self) or apply(sub_op, other, self)
    Tensor.__mul__ = lambda self, other: apply(mul_op, self, other)
    Tensor.__rmul__ = lambda self, other: apply(mul_op, other, self)
    Tensor.__truediv__ = lambda self, other: apply(div_op, self, other)
    Tensor.__rtruediv__ = lambda self, other: apply(div_op, other, self)
    Tensor.__floordiv__ = floor_divide
    Tensor.__rfloordiv__ = lambda self, other: floor_divide(other, self)
    Tensor.__mod__ = remainder
    Tensor.__rmod__ = lambda self, other: remainder(other, self)
    Tensor.__pow__ = pow
    Tensor.__rpow__ = lambda self, other: pow(other, self)
    Tensor.__neg__ = neg
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = abs
    Tensor.__invert__ = lambda self: logical_not(self) if self.dtype is _dtype.bool else bitwise_not(self)
    Tensor.__and__ = bitwise_and
    Tensor.__or__ = bitwise_or
    Tensor.__xor__ = bitwise_xor
    Tensor.__rand__ = lambda self, other: bitwise_and(other, self)
    Tensor.__ror__ = lambda self, other: bitwise_or(other, self)
    Tensor.__rxor__ = lambda self, other: bitwise_xor(other, self)
    Tensor.__eq__ = eq
    Tensor.__ne__ = ne
    Tensor.__lt__ = lt
    Tensor.__le__ = le
    Tensor.__gt__ = gt
    Tensor.__ge__ = ge
    Tensor.__hash__ = object.__hash__
    for name, fn in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                     ("__itruediv__", "div_"), ("__ifloordiv__", "floor_divide_"),
                     ("__imod__", "remainder_"), ("__ipow__", "pow_"), ("__iand__", "bitwise_and_"),
                     ("__ior__", "bitwise_or_"), ("__ixor__", "bitwise_xor_")):
        setattr(Tensor, name, getattr(Tensor, fn))


_install_methods()
