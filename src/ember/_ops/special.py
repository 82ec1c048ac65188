"""Special functions of one or two tensors: inverse hyperbolics, the error, gamma and Bessel
families, ``exp2``, ``logit``, ``sinc``, ``xlogy``, ``logaddexp`` and angle conversions.

Kernels come from the inputs' namespace and its ``scipy.special`` (``_backend.special``;
float16 computes in float32 and rounds back, as SciPy has no half loops); derivatives are
written in ember ops, so second derivatives come free. Integer
 and bool inputs compute in the default float dtype. The PyTorch page of each
is ``https://pytorch.org/docs/stable/generated/torch.<name>.html``; the derivatives follow
PyTorch's ``tools/autograd/derivatives.yaml`` where it chooses a value at a special point.
"""
import math

import numpy as np

from .. import _backend, _dtype
from .._backend import kernel as _kernel, namespace
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from .args import tensor_args, with_out
from .core import Op, apply, elementwise_rule
from .pointwise_binary import Where
from .pointwise_unary import elementwise
from .refusals import float_only

_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _scipy(fn):
    """``fn(x, *args)`` on an array ``x`` in its own dtype (float16 through float32); a string
    names the function of ``x``'s ``scipy.special`` (``_backend.special(x)``)."""
    def kernel(x, *args):
        f = getattr(_backend.special(x), fn) if isinstance(fn, str) else fn
        if x.dtype == np.float16:
            return f(x.astype(np.float32), *args).astype(np.float16)
        return namespace(x).asarray(f(x, *args), dtype=x.dtype)
    return kernel


def _dtype_of(v):
    """An array's dtype, or a Python number itself (NumPy's weak-scalar promotion takes both)."""
    return getattr(v, "dtype", v)


def _where(condition, input, other):
    return apply(Where, condition, input, other)


# ---- inverse hyperbolic functions ----------------------------------------------------------------
def asinh(input, *, out=None):
    """Inverse hyperbolic sine; derivative ``1 / sqrt(x^2 + 1)``."""
    return with_out(apply(Asinh, input), out)


Asinh = elementwise("Asinh", _kernel("arcsinh"), lambda x, g: g * (x * x + 1).rsqrt())
arcsinh = asinh


def acosh(input, *, out=None):
    """Inverse hyperbolic cosine; nan below 1; derivative ``1 / sqrt(x^2 - 1)``."""
    return with_out(apply(Acosh, input), out)


Acosh = elementwise("Acosh", _kernel("arccosh"), lambda x, g: g * (x * x - 1).rsqrt())
arccosh = acosh


def atanh(input, *, out=None):
    """Inverse hyperbolic tangent; +-inf at +-1, nan outside [-1, 1]; derivative ``1/(1 - x^2)``."""
    return with_out(apply(Atanh, input), out)


Atanh = elementwise("Atanh", _kernel("arctanh"), lambda x, g: g / (1 - x * x))
arctanh = atanh


# ---- exponentials and the error function family ---------------------------------------------------
def exp2(input, *, out=None):
    """``2 ** input``."""
    return with_out(apply(Exp2, input), out)


Exp2 = elementwise("Exp2", _kernel("exp2"), lambda out, g: g * out * math.log(2.0), uses="output")


def erfc(input, *, out=None):
    """Complementary error function ``1 - erf(input)``, accurate where erf is near 1."""
    return with_out(apply(Erfc, input), out)


Erfc = elementwise("Erfc", _scipy("erfc"),
                   lambda x, g: g * -_TWO_OVER_SQRT_PI * (-x * x).exp(),
                   complex_error=(NotImplementedError, "\"erfc_vml_cpu\" not implemented for '{T}'"))


def erfinv(input, *, out=None):
    """Inverse error function on [-1, 1] (+-inf at +-1, nan outside); derivative
    ``sqrt(pi)/2 * exp(erfinv(x)^2)``."""
    return with_out(apply(Erfinv, input), out)


Erfinv = elementwise("Erfinv", _scipy("erfinv"),
                     lambda out, g: g * _SQRT_PI_OVER_TWO * (out * out).exp(), uses="output",
                     complex_error=(NotImplementedError, "\"erfinv_vml_cpu\" not implemented for '{T}'"))


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to ``[eps, 1 - eps]`` and the
    gradient is 0 outside that interval (PyTorch's choice); without it, value and gradient are
    nan outside [0, 1]."""
    return with_out(apply(Logit, input) if eps is None else apply(Logit, input, eps=eps), out)


class Logit(Op):
    """d/dp logit(p) = 1 / (p (1 - p)), zero where ``eps`` clamped ``p``."""
    complex_error = (NotImplementedError, "\"logit_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    promote = "float"

    @staticmethod
    def forward(x, eps=None):
        dtype = x.dtype  # (bfloat16 clipped by Python floats comes back float32)
        if eps is not None:
            x = x.clip(eps, 1 - eps)
        return namespace(x).log(x / (1 - x)).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, eps = ctx.input(0), ctx.attrs.get("eps")
        if eps is not None and STATE.enabled:  # torch's own entry, whose derivative is torch's
            return (apply(LogitBackward, g, x, eps=eps),)
        grad = g / (x * (1 - x))
        if eps is None:
            return (_where((x < 0) | (x > 1), grad.new_full((), math.nan), grad),)
        return (_where((x >= eps) & (x <= 1 - eps), grad, grad.new_zeros(())),)  # (0 at nan, as torch)


class LogitBackward(Op):
    """logit's gradient with ``eps``, ``g / (x (1 - x))`` inside ``[eps, 1 - eps]`` and 0 outside,
    as an entry of its own under ``create_graph``: torch's derivative of it multiplies by the
    0/1 mask, so outside the interval it is nan where ``(x (1 - x))^2`` under- or overflows
    (x = 1e-160, 1, inf; where-based algebra gave 0) and +-0 elsewhere."""
    infer = classmethod(elementwise_rule)
    promote = None

    @staticmethod
    def forward(g, x, eps):
        inside = (x >= eps) & (x <= 1 - eps)  # (False at nan: 0, as torch)
        return namespace(x).where(inside, g / (x * (1 - x)), g.dtype.type(0))

    @staticmethod
    def backward(ctx, gg):
        g, x, eps = ctx.input(0), ctx.input(1), ctx.attrs["eps"]
        mask = ((x >= eps) & (x <= 1 - eps)).to(x.dtype)
        return apply(LogitBackward, gg, x, eps=eps), gg * g * ((2 * x - 1) / (x * (1 - x)).pow(2)) * mask


def sinc(input, *, out=None):
    """Normalized sinc ``sin(pi x) / (pi x)``, 1 at 0; the derivative at 0 is 0."""
    return with_out(apply(Sinc, input), out)


def _sinc_derivative(x, g):
    px = x * math.pi
    denominator = px * x
    slope = (px * px.cos() - px.sin()) / denominator
    # where pi x^2 underflows (|x| < 1e-154 in float64) the slope -pi^2 x / 3 is 0 too
    return g * _where(denominator == 0, slope.new_zeros(()), slope)


def _sinc_kernel(x):
    """NumPy's sinc, narrow floats taken in float64 and rounded once: float32's pi x is off by
    an ulp of pi x (sinc(1) 3e-8, not 4e-17) and overflows past 1e38 (nan, not ~0). bfloat16,
    which torch computes in float32, keeps that overflow: nan where float32's pi x is inf."""
    xp = namespace(x)
    wide = x if x.dtype.kind == "c" or x.dtype == np.float64 else x.astype(np.float64)
    with np.errstate(all="ignore"):
        result = xp.sinc(wide)
        if _backend.is_bfloat16(x.dtype):
            overflow = xp.isinf(x.astype(np.float32) * np.float32(math.pi)) & xp.isfinite(x)
            result = xp.where(overflow, math.nan, result)
        return result.astype(x.dtype, copy=False)


Sinc = elementwise("Sinc", _sinc_kernel, _sinc_derivative)


# ---- gamma and Bessel functions --------------------------------------------------------------------
def lgamma(input, *, out=None):
    """``log |Gamma(input)|``; inf at 0 and the negative integers; derivative ``digamma``."""
    return with_out(apply(Lgamma, input), out)


def _lgamma_kernel(x):
    xp = namespace(x)
    r = xp.where(x == -np.inf, np.inf, _backend.special(x).gammaln(x))
    if x.dtype == np.float64:  # SciPy's gammaln is inf at subnormals: there lgamma(x) = -log|x|
        subnormal = (xp.abs(x) < np.finfo(np.float64).tiny) & (x != 0)
        if subnormal.any():
            r = xp.where(subnormal, -xp.log(xp.abs(xp.where(subnormal, x, 1.0))), r)
    return r.astype(x.dtype, copy=False)


Lgamma = elementwise("Lgamma", _scipy(_lgamma_kernel), lambda x, g: g * digamma(x),
                     complex_error=(NotImplementedError, "\"lgamma_vml_cpu\" not implemented for '{T}'"))


def digamma(input, *, out=None):
    """``d/dx log Gamma(x)``: -inf at +0, inf at -0, nan at the negative integers (PyTorch's
    values); derivative ``polygamma(1, x)``."""
    return with_out(apply(Digamma, input), out)


Digamma = elementwise("Digamma", _scipy("psi"), lambda x, g: g * polygamma(1, x),
                      complex_error=(NotImplementedError, "\"digamma\" not implemented for '{T}'"))


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(input - j / 2)``
    (https://pytorch.org/docs/stable/generated/torch.mvlgamma.html); differentiable."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    total = lgamma(input)
    for j in range(1, p):
        total = total + lgamma(input - j / 2)
    return with_out(total + p * (p - 1) / 4 * math.log(math.pi), out)


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of ``digamma`` (``n >= 0``; RuntimeError for negative ``n``);
    derivative ``polygamma(n + 1, x)``. At its poles the values are PyTorch's: for ``n = 1``
    the large finite ``pi^2 / sin^2(pi x)`` of the dtype's rounding of ``pi x`` (inf at 0, nan
    at -inf), for ``n >= 2`` +-inf; and nan at +inf for ``n >= 2``."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return with_out(apply(Polygamma, input, n=n) if n else apply(Digamma, input), out)


class Polygamma(Op):
    infer = classmethod(elementwise_rule)
    promote = "float"

    @staticmethod
    def forward(x, n):
        return _scipy(lambda a: _polygamma_kernel(n, a))(x)

    @staticmethod
    def backward(ctx, g):
        return (g * polygamma(ctx.attrs["n"] + 1, ctx.input(0)),)


def _polygamma_kernel(n, x):
    xp, special = namespace(x), _backend.special(x)
    out = xp.asarray(special.polygamma(n, x), dtype=x.dtype)
    if n >= 2:
        out[x == np.inf] = np.nan
        return out
    poles = (x <= 0) & (xp.floor(x) == x)
    if poles.any():
        # PyTorch's trigamma reflects x < 1/2 with pi^2 / sin^2(pi x), evaluated in the dtype:
        # at a pole sin(pi x) is the rounding error of pi x, so the value is finite and large.
        at, pi = x[poles], x.dtype.type(math.pi)
        with np.errstate(divide="ignore", invalid="ignore"):
            sin = xp.sin((pi * at).astype(np.float64)).astype(x.dtype)
            reflected = (pi * pi) / (sin * sin)
            out[poles] = reflected.astype(np.float64) - special.polygamma(1, 1 - at.astype(np.float64))
    return out


def i0(input, *, out=None):
    """Modified Bessel function of the first kind, order 0; derivative ``i1``."""
    return with_out(apply(I0, input), out)


I0 = elementwise("I0", _scipy("i0"), lambda x, g: g * apply(I1, x),
                 complex_error=(NotImplementedError, "\"i0_vml_cpu\" not implemented for '{T}'"))


def _i1_derivative(x, g):
    # I1'(x) = I0(x) - I1(x) / x, with the limit 1/2 at 0.
    slope = apply(I0, x) - apply(I1, x) / x
    return g * _where(x == 0, slope.new_full((), 0.5), slope)


def i1(input, *, out=None):
    """Modified Bessel function of the first kind, order 1 (``torch.special.i1``); derivative
    ``i0(x) - i1(x) / x``, 1/2 at 0."""
    return with_out(apply(I1, input), out)


I1 = elementwise("I1", _scipy("i1"), _i1_derivative)


# ---- angles ------------------------------------------------------------------------------------------
def deg2rad(input, *, out=None):
    """Degrees to radians (``input * pi / 180``)."""
    return with_out(apply(Deg2Rad, input), out)


Deg2Rad = elementwise("Deg2Rad", lambda x: x * x.dtype.type(math.pi / 180),
                      lambda _, g: g * (math.pi / 180), uses=None,
                      complex_error=(RuntimeError, "deg2rad is not supported for complex tensors."))


def rad2deg(input, *, out=None):
    """Radians to degrees (``input * 180 / pi``)."""
    return with_out(apply(Rad2Deg, input), out)


Rad2Deg = elementwise("Rad2Deg", lambda x: x * x.dtype.type(180 / math.pi),
                      lambda _, g: g * (180 / math.pi), uses=None,
                      complex_error=(RuntimeError, "rad2deg is not supported for complex tensors."))


# ---- two inputs ---------------------------------------------------------------------------------------
def xlogy(input, other, *, out=None):
    """``input * log(other)``, 0 where ``input == 0`` unless ``other`` is nan; either argument
    may be a Python number. The gradient of ``input`` is ``log(other)``, 0 where ``input == 0``
    and ``other <= 0`` (PyTorch's values)."""
    return with_out(apply(Xlogy, input, other), out)


class Xlogy(Op):
    complex_error = (NotImplementedError, "\"xlogy_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    promote = "float"

    shift = 0  # x * log(y + shift)

    @staticmethod
    def forward(x, y):
        return _x_log(x, y, "log")

    @classmethod
    def backward(cls, ctx, g):
        return _x_log_grads(ctx, g, cls.shift)


def xlog1py(input, other, *, out=None):
    """``input * log1p(other)``, 0 where ``input == 0`` unless ``other`` is nan
    (https://pytorch.org/docs/stable/special.html#torch.special.xlog1py).

    Shapes broadcast; either argument may be a Python number (not both: TypeError, as
    PyTorch); integer and bool inputs give the default float dtype. The gradient of ``input``
    is ``log1p(other)``, 0 where ``input == 0`` and ``other <= -1``; that of ``other`` is
    ``input / (1 + other)`` (PyTorch's values)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"special_xlog1py() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected one of: "
                        f"(Tensor input, Tensor other), (Number self, Tensor other), (Tensor input, Number other)")
    return with_out(apply(Xlog1py, input, other), out)


class Xlog1py(Op):
    complex_error = (NotImplementedError, "\"xlog1py_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    promote = "float"

    shift = 1

    @staticmethod
    def forward(x, y):
        return _x_log(x, y, "log1p")

    @classmethod
    def backward(cls, ctx, g):
        return _x_log_grads(ctx, g, cls.shift)


def _x_log(x, y, log):
    """``x * log(y)`` (``log`` "log") or ``x * log1p(y)`` ("log1p"), 0 where ``x == 0`` unless
    ``y`` is nan; a Python number takes the other input's dtype."""
    dtype = np.result_type(_dtype_of(x), _dtype_of(y))
    xp = namespace(x, y)
    out = x * getattr(xp, log)(xp.asarray(y, dtype))
    return xp.where((x == 0) & ~xp.isnan(y), 0, out).astype(dtype, copy=False)


def _x_log_grads(ctx, g, shift):
    """The gradients of ``x * log(y + shift)``: ``log(y + shift)`` for ``x``, 0 where ``x == 0``
    and ``y + shift <= 0`` (PyTorch's values), and ``x / (y + shift)`` for ``y``."""
    x, y = ctx.input(0), ctx.input(1)
    need_x, need_y = ctx.needs_input_grad
    if need_x and not isinstance(y, Tensor):
        y = g.new_full((), y)
    log_y = _where((x == 0) & (y <= -shift), g.new_zeros(()), y.log1p() if shift else y.log())
    return g * log_y if need_x else None, g * x / (y + shift if shift else y) if need_y else None


def igamma(input, other, *, out=None):
    """The regularised lower incomplete gamma function ``P(input, other)`` (``torch.igamma``,
    ``torch.special.gammainc``): the probability that a Gamma(input, 1) variable is at most
    ``other``. Differentiable in ``other`` only (density ``x^(a-1) e^-x / Gamma(a)``); the
    derivative in ``input`` raises, as PyTorch's. TypeError for a Python number; NotImplementedError
    when both are integer or bool tensors (torch's kernel has no such dtype)."""
    tensor_args("igamma", input, other)
    float_only(_dtype.result_type(input, other), "igamma_cpu")
    return with_out(apply(Igamma, input, other), out)


def igammac(input, other, *, out=None):
    """The regularised upper incomplete gamma function ``Q(input, other) = 1 - P(input, other)``
    (``torch.igammac``, ``torch.special.gammaincc``), accurate where P is near 1. TypeError
    for a Python number."""
    tensor_args("igammac", input, other)
    float_only(_dtype.result_type(input, other), "igammac_cpu")
    return with_out(apply(Igammac, input, other), out)


class Igamma(Op):
    infer = classmethod(elementwise_rule)
    promote = "float"
    sign = 1
    kernel = "gammainc"

    @classmethod
    def forward(cls, a, x):
        dtype, xp = np.result_type(_dtype_of(a), _dtype_of(x)), namespace(a, x)
        a = xp.asarray(a, dtype)
        kernel = getattr(_backend.special(a), cls.kernel)
        return _scipy(lambda v: kernel(v, xp.asarray(x, v.dtype)))(a)

    @classmethod
    def backward(cls, ctx, g):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{cls.name.lower()}: input' is not implemented.")
        a, x = ctx.input(0), ctx.input(1)
        density = ((a - 1) * x.log() - x - lgamma(a)).exp()
        return None, cls.sign * g * density


class Igammac(Igamma):
    sign = -1
    kernel = "gammaincc"
