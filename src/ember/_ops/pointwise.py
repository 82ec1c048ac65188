"""Elementwise ops: forward on arrays, derivative in ember ops, side by side.

Binary ops broadcast; the dispatcher sums each gradient back to its input's shape.
Derivatives follow PyTorch's ``tools/autograd/derivatives.yaml`` conventions where they
make a choice (ties of ``maximum`` split the gradient; ``abs'(0) = 0``; ``clamp`` passes the
gradient where ``min <= x <= max``).
"""
import math

import numpy as np
from scipy import special as _special

from .core import _NAMES, Op, apply

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _errstate(fn):
    def wrapped(*a, **k):
        with np.errstate(all="ignore"):
            return fn(*a, **k)
    return staticmethod(wrapped)


# ---- binary arithmetic -----------------------------------------------------------------------
class Add(Op):
    save_inputs = False

    @staticmethod
    def forward(a, b, alpha=1):
        return a + b if alpha == 1 else a + alpha * b

    @staticmethod
    def backward(ctx, g):
        alpha = ctx.attrs.get("alpha", 1)
        return g, (g if alpha == 1 else g * alpha)


class Sub(Op):
    """``a - alpha * b``; the public functions reject bool operands before promotion."""
    save_inputs = False

    @staticmethod
    def forward(a, b, alpha=1):
        return a - b if alpha == 1 else a - alpha * b

    @staticmethod
    def backward(ctx, g):
        alpha = ctx.attrs.get("alpha", 1)
        return g, (-g if alpha == 1 else g * -alpha)


class Mul(Op):
    forward = staticmethod(np.multiply)

    @staticmethod
    def backward(ctx, g):
        need_a, need_b = ctx.needs_input_grad
        return (g * ctx.input(1) if need_a else None,
                g * ctx.input(0) if need_b else None)


class Div(Op):
    promote = "float"
    forward = _errstate(np.true_divide)

    @staticmethod
    def backward(ctx, g):
        need_a, need_b = ctx.needs_input_grad
        b = ctx.input(1)
        return (g / b if need_a else None,
                -g * ctx.input(0) / (b * b) if need_b else None)


class DivRounded(Op):
    """``div(a, b, rounding_mode="floor" | "trunc")`` in the inputs' promoted dtype. Piecewise
    constant, so both gradients are zero (PyTorch's ``grad * 0``)."""
    save_inputs = False

    @staticmethod
    def forward(a, b, rounding_mode):
        with np.errstate(all="ignore"):
            if rounding_mode == "floor":
                return np.floor_divide(a, b)
            if np.result_type(a, b).kind == "f":
                return np.trunc(np.true_divide(a, b))
            # Integer quotients stay exact: floor, then step towards zero for negative inexact ones.
            q, r = np.divmod(a, b)
            return q + ((r != 0) & ((np.less(a, 0)) != np.less(b, 0)))

    @staticmethod
    def backward(ctx, g):
        return g * 0, g * 0


def _div_rounded(a, b, mode):
    return apply(DivRounded, a, b, rounding_mode=mode)


class Remainder(Op):
    """Python's ``%``: the result takes the sign of the divisor."""
    forward = _errstate(np.remainder)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        return g, (-g * _div_rounded(a, b, "floor") if ctx.needs_input_grad[1] else None)


class Fmod(Op):
    """C's ``fmod``: the result takes the sign of the dividend."""
    forward = _errstate(np.fmod)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        return g, (-g * _div_rounded(a, b, "trunc") if ctx.needs_input_grad[1] else None)


class Pow(Op):
    save_output = True

    @staticmethod
    def forward(a, b):
        if isinstance(b, (int, np.integer)) and not isinstance(b, bool) and b < 0 \
                and getattr(a, "dtype", np.dtype(float)).kind in "iu":
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        with np.errstate(all="ignore"):
            return np.power(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            if isinstance(b, (int, float)):
                ga = g * b * a ** (b - 1) if b != 0 else g * 0
            else:
                ga = (g * b * a ** (b - 1)).masked_fill(b == 0, 0)
        if ctx.needs_input_grad[1]:
            out = ctx.output
            gb = (g * out * _log_of(a)).masked_fill((a == 0) & (b >= 0), 0)
        return ga, gb


def _log_of(a):
    from .. import _functional as F
    return F.log(a) if hasattr(a, "_data") else math.log(a) if a > 0 else float("nan")


class Atan2(Op):
    promote = "float"
    forward = staticmethod(np.arctan2)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        r = a * a + b * b
        # At the origin (or where a*a + b*b underflows) PyTorch gives a zero gradient.
        recip = r.reciprocal().masked_fill(r == 0, 0)
        return g * b * recip, -g * a * recip


class Maximum(Op):
    forward = staticmethod(np.maximum)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        return _minmax_grads(ctx, g, a < b, a > b, a == b)


class Minimum(Op):
    forward = staticmethod(np.minimum)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        return _minmax_grads(ctx, g, a > b, a < b, a == b)


def _minmax_grads(ctx, g, a_loses, b_loses, ties):
    """Ties split the gradient; a NaN (no comparison holds) passes it to both, as in PyTorch."""
    shared = apply(Where, ties, g * 0.5, g)
    zero = g.new_zeros(())
    return (apply(Where, a_loses, zero, shared) if ctx.needs_input_grad[0] else None,
            apply(Where, b_loses, zero, shared) if ctx.needs_input_grad[1] else None)


class Lerp(Op):
    """``start + weight * (end - start)``."""
    promote = "float"

    @staticmethod
    def forward(start, end, weight):
        return start + weight * (end - start)

    @staticmethod
    def backward(ctx, g):
        start, end, weight = ctx.input(0), ctx.input(1), ctx.input(2)
        return g * (1 - weight), g * weight, (g * (end - start) if ctx.needs_input_grad[2] else None)


class Where(Op):
    """``where(condition, input, other)``; the condition gets no gradient."""
    promote = None

    @staticmethod
    def forward(cond, a, b):
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        cond = ctx.input(0)
        zero = g.new_zeros(())
        return (None,
                apply(Where, cond, g, zero) if ctx.needs_input_grad[1] else None,
                apply(Where, cond, zero, g) if ctx.needs_input_grad[2] else None)


class Clamp(Op):
    """``clamp(x, min, max)``; each bound is None, a number or a broadcasting tensor. With
    ``min > max`` every element becomes ``max``. Gradients follow PyTorch: ``x`` gets it where
    ``min <= x <= max`` (ties included), a bound where it is the one that took effect."""

    @staticmethod
    def forward(x, min, max):
        if min is not None:
            x = np.maximum(x, min)
        return x if max is None else np.minimum(x, max)

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.inputs
        need_x, need_lo, need_hi = ctx.needs_input_grad
        zero = g.new_zeros(())
        keep = None
        if lo is not None:
            keep = x >= lo
        if hi is not None:
            keep = (x <= hi) if keep is None else keep & (x <= hi)
        gx = apply(Where, keep, g, zero) if need_x else None
        glo = ghi = None
        if need_lo:
            below = x < lo if hi is None else (x < lo) & (lo < hi)
            glo = apply(Where, below, g, zero)
        if need_hi:
            above = x > hi if lo is None else (x > hi) | (hi < lo)
            ghi = apply(Where, above, g, zero)
        return gx, glo, ghi


def _no_bool(x, name):
    if x.dtype.kind == "b":
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


class Relu(Op):
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x):
        if x.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        return np.maximum(x, 0)

    @staticmethod
    def backward(ctx, g):
        # Masking where the output is <= 0 (not keeping where > 0) lets NaN pass the gradient.
        return (apply(Where, ctx.output <= 0, g.new_zeros(()), g),)


# ---- unary math --------------------------------------------------------------------------------
class _Unary(Op):
    promote = "float"


class Neg(Op):
    save_inputs = False
    promote = None

    @staticmethod
    def forward(x):
        if x.dtype.kind == "b":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or `logical_not()` "
                               "operator instead.")
        return np.negative(x)

    @staticmethod
    def backward(ctx, g):
        return (-g,)


class Abs(Op):
    promote = None

    @staticmethod
    def forward(x):
        _no_bool(x, "abs_cpu")
        return np.abs(x)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.input(0).sign(),)


class Sign(Op):
    promote = None

    @staticmethod
    def forward(x):
        if x.dtype.kind == "b":
            return x.copy()
        out = np.asarray(np.sign(x))
        if out.dtype.kind == "f":
            # PyTorch's sign (and so abs's gradient) is 0 at NaN.
            np.copyto(out, 0, where=np.isnan(out))
        return out

    @staticmethod
    def backward(ctx, g):
        return (g * 0,)


class Exp(_Unary):
    save_inputs = False
    save_output = True
    forward = _errstate(np.exp)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.output,)


class Expm1(_Unary):
    save_inputs = False
    save_output = True
    forward = _errstate(np.expm1)

    @staticmethod
    def backward(ctx, g):
        return (g * (ctx.output + 1),)


class Log(_Unary):
    forward = _errstate(np.log)

    @staticmethod
    def backward(ctx, g):
        return (g / ctx.input(0),)


class Log2(_Unary):
    forward = _errstate(np.log2)

    @staticmethod
    def backward(ctx, g):
        return (g / (ctx.input(0) * _LN2),)


class Log10(_Unary):
    forward = _errstate(np.log10)

    @staticmethod
    def backward(ctx, g):
        return (g / (ctx.input(0) * _LN10),)


class Log1p(_Unary):
    forward = _errstate(np.log1p)

    @staticmethod
    def backward(ctx, g):
        return (g / (ctx.input(0) + 1),)


class Sqrt(_Unary):
    save_inputs = False
    save_output = True
    forward = _errstate(np.sqrt)

    @staticmethod
    def backward(ctx, g):
        return (g / (2 * ctx.output),)


class Rsqrt(_Unary):
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x):
        with np.errstate(all="ignore"):
            return 1 / np.sqrt(x)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return (g * -0.5 * out * out * out,)


class Reciprocal(_Unary):
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x):
        with np.errstate(all="ignore"):
            return np.reciprocal(x)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return (-g * out * out,)


class Sin(_Unary):
    forward = _errstate(np.sin)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.input(0).cos(),)


class Cos(_Unary):
    forward = _errstate(np.cos)

    @staticmethod
    def backward(ctx, g):
        return (-g * ctx.input(0).sin(),)


class Tan(_Unary):
    save_inputs = False
    save_output = True
    forward = _errstate(np.tan)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return (g * (1 + out * out),)


class Asin(_Unary):
    forward = _errstate(np.arcsin)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        return (g * (1 - x * x).rsqrt(),)


class Acos(_Unary):
    forward = _errstate(np.arccos)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        return (-g * (1 - x * x).rsqrt(),)


class Atan(_Unary):
    forward = staticmethod(np.arctan)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        return (g / (1 + x * x),)


class Sinh(_Unary):
    forward = _errstate(np.sinh)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.input(0).cosh(),)


class Cosh(_Unary):
    forward = _errstate(np.cosh)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.input(0).sinh(),)


class Tanh(_Unary):
    save_inputs = False
    save_output = True
    forward = staticmethod(np.tanh)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return (g * (1 - out * out),)


class Sigmoid(_Unary):
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x):
        # SciPy has no float16 loop; keep the input's dtype as PyTorch does.
        return _special.expit(x).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return (g * out * (1 - out),)


# erf below double precision, as NumPy arithmetic: SciPy's float32 loop costs ~20 ns an
# element, which made GELU a third of a GPT training step. Two pieces, each written so that
# float32 rounding in its polynomials is damped (max error 1.3 ulp against float64 erf over
# all float32, PyTorch's own is 1 ulp):
#   |x| <= 1:  erf(x) = x + x * V(x^2), V = erf(x)/x - 1 a polynomial (|V| <= 0.16);
#   1 < |x|:   erf(x) = erf(1) + sign(x) * (erfc(1) - exp(-t^2) * erfcx(t)), t = min(|x|, 4),
#              erfcx(t) = exp(t^2) erfc(t) a rational function; erfc(t) <= erfc(1) = 0.16, and
#              beyond 4 erf rounds to +-1.
# Coefficients: minimax fits (relative error 1.2e-9 for V, 2.4e-8 for erfcx) made for ember.
_ERF_SPLIT, _ERF_SATURATED = np.float32(1.0), np.float32(4.0)
_ERF_V = tuple(np.float32(c) for c in (
    0.12837916612625122, -0.3761262595653534, 0.1128358542919159, -0.026853810995817184,
    0.00518832728266716, -0.0008010187302716076, 7.853838906157762e-05))
_ERFCX_NUMERATOR = tuple(np.float32(c) for c in (
    1.0015530586242676, 0.7563449144363403, 0.24930700659751892, -6.528893572976813e-05))
_ERFCX_DENOMINATOR = tuple(np.float32(c) for c in (
    1.0, 1.8939228057861328, 1.3606334924697876, 0.43958938121795654))


def _polynomial(coefficients, v):
    """``sum(c[i] * v**i)`` by Horner's rule, in ``v``'s dtype."""
    out = v * coefficients[-1]
    out += coefficients[-2]
    for c in coefficients[-3::-1]:
        out *= v
        out += c
    return out


def _erf_near_zero(x):
    """The first piece, for float32 ``x`` in [-1, 1]."""
    out = _polynomial(_ERF_V, x * x)
    out *= x
    out += x
    return out


# 1 - erf(1) as the first piece rounds it, so that the pieces meet and saturate at exactly 1.
_ERFC_SPLIT = np.float32(1) - _erf_near_zero(np.full(1, _ERF_SPLIT))[0]


def _erf_float32(x):
    out = _erf_near_zero(np.clip(x, -_ERF_SPLIT, _ERF_SPLIT))
    # The second piece only where it is not zero: typical activations mostly lie within the
    # split, and the gather and scatter cost less than ~25 full-size passes.
    far = np.flatnonzero(np.abs(x) > _ERF_SPLIT)
    if far.size:
        x_far = x.reshape(-1)[far]
        t = np.abs(x_far)
        np.minimum(t, _ERF_SATURATED, out=t)
        tail = t * t
        np.negative(tail, out=tail)
        np.exp(tail, out=tail)
        tail *= _polynomial(_ERFCX_NUMERATOR, t)
        tail /= _polynomial(_ERFCX_DENOMINATOR, t)
        np.subtract(_ERFC_SPLIT, tail, out=tail)
        np.copysign(tail, x_far, out=tail)
        out.reshape(-1)[far] += tail
    return out


# Below this many elements the ~40 NumPy calls of the float32 pieces cost more than SciPy's
# loop (a decoder's one-position GELU has a few hundred).
_ERF_NUMPY_FROM = 16384


def erf(x):
    """The error function of an array, in its dtype: SciPy's for double precision, complex
    numbers and small arrays; otherwise (float32 and narrower) computed in float32 to within
    1.3 ulp."""
    if x.dtype.kind != "f" or x.dtype.itemsize > 4 or x.size < _ERF_NUMPY_FROM:
        return _special.erf(x).astype(x.dtype, copy=False)
    with np.errstate(invalid="ignore"):
        # C order, so that the pieces' flat indices address the result in place.
        x32 = np.ascontiguousarray(x, dtype=np.float32)
        return _erf_float32(x32).astype(x.dtype, copy=False)


class Erf(_Unary):
    @staticmethod
    def forward(x):
        return erf(x)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        return (g * _TWO_OVER_SQRT_PI * (-x * x).exp(),)


class Softplus(_Unary):
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (``F.softplus``)."""

    @staticmethod
    def forward(x, beta=1.0, threshold=20.0):
        bx = x * beta
        with np.errstate(over="ignore"):
            soft = np.logaddexp(0, bx) / beta
        return np.where(bx > threshold, x, soft).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        beta, threshold = ctx.attrs.get("beta", 1.0), ctx.attrs.get("threshold", 20.0)
        bx = x * beta
        return (g * bx.sigmoid().masked_fill(bx > threshold, 1.0),)


class _Rounding(Op):
    """floor/ceil/round/trunc: piecewise constant, so the gradient is zero. Integer inputs
    come back unchanged; bool inputs are rejected, as in PyTorch."""
    promote = None
    save_inputs = False

    @staticmethod
    def backward(ctx, g):
        return (g * 0,)


class Floor(_Rounding):
    @staticmethod
    def forward(x):
        _no_bool(x, "floor_vml_cpu")
        return np.floor(x) if x.dtype.kind == "f" else x.copy()


class Ceil(_Rounding):
    @staticmethod
    def forward(x):
        _no_bool(x, "ceil_vml_cpu")
        return np.ceil(x) if x.dtype.kind == "f" else x.copy()


class Trunc(_Rounding):
    @staticmethod
    def forward(x):
        _no_bool(x, "trunc_vml_cpu")
        return np.trunc(x) if x.dtype.kind == "f" else x.copy()


class Round(_Rounding):
    @staticmethod
    def forward(x, decimals=0):
        _no_bool(x, "round_cpu")
        return np.round(x, decimals)


class Frac(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x):
        if x.dtype.kind != "f":
            raise NotImplementedError(f"\"frac_cpu\" not implemented for '{_NAMES[x.dtype.name]}'")
        with np.errstate(invalid="ignore"):
            return x - np.trunc(x)

    @staticmethod
    def backward(ctx, g):
        return (g,)


class NanToNum(Op):
    promote = None

    @staticmethod
    def forward(x, nan=0.0, posinf=None, neginf=None):
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.input(0).isfinite(),)


# ---- comparisons and logic (no gradient) ----------------------------------------------------------
class _Compare(Op):
    differentiable = False


class Eq(_Compare):
    forward = staticmethod(np.equal)


class Ne(_Compare):
    forward = staticmethod(np.not_equal)


class Lt(_Compare):
    forward = staticmethod(np.less)


class Le(_Compare):
    forward = staticmethod(np.less_equal)


class Gt(_Compare):
    forward = staticmethod(np.greater)


class Ge(_Compare):
    forward = staticmethod(np.greater_equal)


class LogicalAnd(_Compare):
    promote = None
    forward = staticmethod(np.logical_and)


class LogicalOr(_Compare):
    promote = None
    forward = staticmethod(np.logical_or)


class LogicalXor(_Compare):
    promote = None
    forward = staticmethod(np.logical_xor)


class LogicalNot(_Compare):
    promote = None
    forward = staticmethod(np.logical_not)


class _Bitwise(_Compare):
    """Bitwise ops exist for integer and bool tensors only."""

    @classmethod
    def _check(cls, *arrays):
        for a in arrays:
            kind = a.dtype if isinstance(a, np.ndarray) else np.result_type(a)
            if kind.kind == "f":
                raise NotImplementedError(f"\"{cls.kernel}\" not implemented for '{_NAMES[kind.name]}'")


class BitwiseAnd(_Bitwise):
    kernel = "bitwise_and_cpu"

    @staticmethod
    def forward(a, b):
        BitwiseAnd._check(a, b)
        return np.bitwise_and(a, b)


class BitwiseOr(_Bitwise):
    kernel = "bitwise_or_cpu"

    @staticmethod
    def forward(a, b):
        BitwiseOr._check(a, b)
        return np.bitwise_or(a, b)


class BitwiseXor(_Bitwise):
    kernel = "bitwise_xor_cpu"

    @staticmethod
    def forward(a, b):
        BitwiseXor._check(a, b)
        return np.bitwise_xor(a, b)


class BitwiseNot(_Bitwise):
    promote = None
    kernel = "bitwise_not_cpu"

    @staticmethod
    def forward(a):
        BitwiseNot._check(a)
        return np.invert(a)


class IsNan(_Compare):
    promote = None
    forward = staticmethod(np.isnan)


class IsInf(_Compare):
    promote = None
    forward = staticmethod(np.isinf)


class IsFinite(_Compare):
    promote = None
    forward = staticmethod(np.isfinite)


class IsClose(_Compare):
    @staticmethod
    def forward(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
