"""Elementwise functions of one tensor: each public function, then its op entry.

Most entries differ only in their kernel and derivative, so they are rows made by
:func:`elementwise`: ``Exp = elementwise("Exp", kernel("exp"), lambda out, g: g * out, uses="output")``.
The derivative is written in ember ops and reads either the input or the output, whichever
the op saves. Integer inputs of the transcendental functions compute in the default float
dtype (PyTorch's ``promote="float"``); the PyTorch page of each is
``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
import math
import sys

import numpy as np

from .. import _dtype
from .._backend import at_float32, is_bfloat16, is_floating, kernel, namespace, special
from .._tensor import Tensor
from .args import tensor_args, with_out
from .core import _NAMES, Op, elementwise_rule, apply, like_input, named, real_rule, zero_link
from .erf import erf as _erf_kernel
from .pointwise_binary import Pow, Where, rsqrt_kernel
from .refusals import refuse_unsigned

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def elementwise(name, kernel, derivative, *, uses="input", promote="float", class_name=None, complex_error=None):
    """A new op entry ``name`` (a class called ``class_name``, by default ``name``): ``kernel``
    on the array, and ``derivative(saved, g)``, the input's gradient from the output's
    gradient ``g`` and what the op saved: its input (``uses="input"``), its output
    (``"output"``) or nothing (None); ``complex_error`` as :class:`~.core.Op`'s."""
    def backward(ctx, g):
        saved = ctx.input(0) if uses == "input" else ctx.output if uses == "output" else None
        return (derivative(saved, g),)
    module = sys._getframe(1).f_globals["__name__"]  # the family file defining it, as namedtuple's
    return type(class_name or name, (Op,), {"name": name, "promote": promote, "save_inputs": uses == "input",
                                            "save_output": uses == "output", "forward": staticmethod(kernel),
                                            "infer": classmethod(elementwise_rule),
                                            "backward": staticmethod(backward), "__module__": module,
                                            "complex_error": complex_error})


def _no_bool(x, name):
    if x.dtype.kind == "b":
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


# ---- sign and magnitude --------------------------------------------------------------------------
def positive(input):
    """``+input``: ``input`` itself. RuntimeError for bool tensors
    (https://pytorch.org/docs/stable/generated/torch.positive.html)."""
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def neg(input, *, out=None):
    """``-input``. RuntimeError for bool tensors (use ``~`` or ``logical_not``)."""
    return with_out(apply(Neg, input), out)


def _neg_kernel(x):
    if x.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return -x


Neg = elementwise("Neg", _neg_kernel, lambda _, g: -g, uses=None, promote=None)
negative = neg


def abs(input, *, out=None):
    """``|input|``; the gradient at 0 is 0. NotImplementedError for bool tensors."""
    return with_out(apply(Abs, input), out)


def _abs_kernel(x):
    _no_bool(x, "abs_cpu")
    return namespace(x).abs(x)


Abs = elementwise("Abs", _abs_kernel, lambda x, g: g * x.sgn(), promote=None)
Abs.holomorphic, Abs.infer = False, classmethod(real_rule)  # |z| is real: g * z/|z| stated directly
absolute = abs


def _zero_gradient(_, g):
    """The derivative of a piecewise-constant op: zeros, also where ``g`` is inf or NaN (as
    torch's; ``g * 0`` would make NaN there)."""
    return g.new_zeros(g.shape)


def sign(input, *, out=None):
    """-1, 0 or 1 by the sign of each element (0 at NaN); zero gradient."""
    return with_out(apply(Sign, input), out)


def _sign_kernel(x):
    if x.dtype.kind == "b":
        return x.copy()
    xp = namespace(x)
    out = xp.asarray(xp.sign(x))
    if is_floating(out.dtype):  # PyTorch's sign (and so abs's gradient) is 0 at NaN, +0 at -0.0
        xp.copyto(out, 0, where=xp.isnan(out) | (out == 0))  # (ml_dtypes' bfloat16 sign keeps -0.0)
    return out


Sign = elementwise("Sign", _sign_kernel, _zero_gradient, uses=None, promote=None,
                   complex_error=(NotImplementedError, "Unlike NumPy, torch.sign is not intended to "
                                                       "support complex numbers. Please use torch.sgn instead."))


def relu(input, *, out=None):
    """``max(input, 0)``; the gradient passes where the output is positive or NaN.
    RuntimeError for bool tensors."""
    return with_out(apply(Relu, input), out)


def _relu_kernel(x):
    if x.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    # x where not below 0 (NumPy's maximum returns its second argument on a tie): -0.0 stays
    # -0.0, as torch's relu, and NaN stays NaN; float16's maximum returns the 0 on a tie
    xp = namespace(x)
    return xp.where(x < 0, x.dtype.type(0), x) if x.dtype == np.float16 else xp.maximum(0, x)


# Masking where the output is <= 0 (not keeping where > 0) lets NaN pass the gradient.
Relu = elementwise("Relu", _relu_kernel, lambda out, g: zero_link(apply(Where, out <= 0, g.new_zeros(()), g), out),
                   uses="output", promote=None,
                   complex_error=(NotImplementedError, "clamp is not supported for complex types"))


# ---- exponentials and logarithms -----------------------------------------------------------------
def exp(input, *, out=None):
    """``e ** input``."""
    return with_out(apply(Exp, input), out)


Exp = elementwise("Exp", kernel("exp"), lambda out, g: g * out, uses="output")


def expm1(input, *, out=None):
    """``exp(input) - 1``, accurate near 0."""
    return with_out(apply(Expm1, input), out)


Expm1 = elementwise("Expm1", kernel("expm1"), lambda out, g: g * (out + 1), uses="output")


def log(input, *, out=None):
    """Natural logarithm; -inf at 0, nan below."""
    return with_out(apply(Log, input), out)


Log = elementwise("Log", kernel("log"), lambda x, g: g / x)


def log2(input, *, out=None):
    """Base-2 logarithm."""
    return with_out(apply(Log2, input), out)


Log2 = elementwise("Log2", kernel("log2"), lambda x, g: g / (x * _LN2))


def log10(input, *, out=None):
    """Base-10 logarithm."""
    return with_out(apply(Log10, input), out)


Log10 = elementwise("Log10", kernel("log10"), lambda x, g: g / (x * _LN10))


def log1p(input, *, out=None):
    """``log(1 + input)``, accurate near 0."""
    return with_out(apply(Log1p, input), out)


Log1p = elementwise("Log1p", kernel("log1p"), lambda x, g: g / (x + 1))


def sqrt(input, *, out=None):
    """Square root; nan below 0."""
    return with_out(apply(Sqrt, input), out)


Sqrt = elementwise("Sqrt", kernel("sqrt"), lambda out, g: g / (2 * out), uses="output")


def rsqrt(input, *, out=None):
    """``1 / sqrt(input)``."""
    return with_out(apply(Rsqrt, input), out)


# (grouped as torch's formulas, -0.5 * g * out.pow(3) and -g * (out * out): a zero gradient times
# a cube or square that overflowed is nan, as torch's)
Rsqrt = elementwise("Rsqrt", rsqrt_kernel,
                    lambda out, g: g * -0.5 * (out * out * out), uses="output")


def reciprocal(input, *, out=None):
    """``1 / input`` (float result)."""
    return with_out(apply(Reciprocal, input), out)


Reciprocal = elementwise("Reciprocal", kernel("reciprocal"), lambda out, g: -g * (out * out),
                         uses="output")


def square(input, *, out=None):
    """``input * input``; bool inputs give int64, as in PyTorch. TypeError for no tensor (a NumPy array)."""
    if not isinstance(input, Tensor):
        tensor_args("square", input)
    refuse_unsigned("pow", input.dtype)
    # torch's pow(x, 2): its gradient g * (2 * x), nan where 2 * x overflows and g is 0 (g * x + g * x was 0)
    return with_out(apply(Pow, input, 2) if input.dtype.is_floating_point
                    else named(input * input, "PowBackward0") if input.dtype is not _dtype.bool
                    else input.long() * input.long(), out)


# ---- trigonometric and hyperbolic (radians) ------------------------------------------------------
def sin(input, *, out=None):
    """Sine."""
    return with_out(apply(Sin, input), out)


Sin = elementwise("Sin", kernel("sin"), lambda x, g: g * x.cos())


def cos(input, *, out=None):
    """Cosine."""
    return with_out(apply(Cos, input), out)


Cos = elementwise("Cos", kernel("cos"), lambda x, g: -g * x.sin())


def tan(input, *, out=None):
    """Tangent."""
    return with_out(apply(Tan, input), out)


Tan = elementwise("Tan", kernel("tan"), lambda out, g: g * (1 + out * out), uses="output")


def asin(input, *, out=None):
    """Arcsine; nan outside [-1, 1]."""
    return with_out(apply(Asin, input), out)


Asin = elementwise("Asin", kernel("arcsin"), lambda x, g: g * (1 - x * x).rsqrt())
arcsin = asin


def acos(input, *, out=None):
    """Arccosine; nan outside [-1, 1]."""
    return with_out(apply(Acos, input), out)


Acos = elementwise("Acos", kernel("arccos"), lambda x, g: -g * (1 - x * x).rsqrt())
arccos = acos


def atan(input, *, out=None):
    """Arctangent."""
    return with_out(apply(Atan, input), out)


Atan = elementwise("Atan", kernel("arctan"), lambda x, g: g / (1 + x * x))
arctan = atan


def sinh(input, *, out=None):
    """Hyperbolic sine."""
    return with_out(apply(Sinh, input), out)


Sinh = elementwise("Sinh", kernel("sinh"), lambda x, g: g * x.cosh())


def cosh(input, *, out=None):
    """Hyperbolic cosine."""
    return with_out(apply(Cosh, input), out)


Cosh = elementwise("Cosh", kernel("cosh"), lambda x, g: g * x.sinh())


def tanh(input, *, out=None):
    """Hyperbolic tangent."""
    return with_out(apply(TanhForward, input), out)


TanhForward = elementwise("Tanh", kernel("tanh"), lambda out, g: g * (1 - out * out), uses="output",
                          class_name="TanhForward")


def sigmoid(input, *, out=None):
    """Logistic function ``1 / (1 + exp(-input))``."""
    return with_out(apply(SigmoidForward, input), out)


@at_float32  # (torch's opmath: bfloat16's sigmoid(-90) is 0 as float32's, SciPy's double loop gave 8.3e-40)
def _sigmoid_kernel(x):
    if x.dtype.kind == "c":
        return 1 / (1 + namespace(x).exp(-x))
    return special(x).expit(x).astype(x.dtype, copy=False)


SigmoidForward = elementwise("Sigmoid", _sigmoid_kernel, lambda out, g: g * out * (1 - out), uses="output",
                             class_name="SigmoidForward")


def erf(input, *, out=None):
    """Gauss error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``."""
    return with_out(apply(Erf, input), out)


Erf = elementwise("Erf", _erf_kernel, lambda x, g: g * _TWO_OVER_SQRT_PI * (-x * x).exp(),
                  complex_error=(NotImplementedError, "\"erf_vml_cpu\" not implemented for '{T}'"))


class SoftplusForward(Op):
    """``log1p(exp(beta x)) / beta``, linear above ``threshold`` (``F.softplus``; as torch's, inf
    where ``exp`` overflows below a ``threshold`` raised past it: ``softplus(89.0, threshold=100)``)."""
    name = "Softplus"
    infer = classmethod(elementwise_rule)
    promote = "float"
    at_float32 = True  # (torch's opmath: beta not rounded to 16 bits)

    @staticmethod
    def forward(x, beta=1.0, threshold=20.0):
        bx = x * beta
        xp = namespace(x)
        with np.errstate(over="ignore"):  # (torch's log1p(exp(bx)): inf past exp's range below a threshold raised there)
            soft = xp.log1p(xp.exp(bx)) / beta
        return xp.where(bx > threshold, x, soft).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        return (apply(SoftplusBackward, g, ctx.input(0), beta=a.get("beta", 1.0), threshold=a.get("threshold", 20.0)),)


class SoftplusBackward(Op):
    """torch's ``softplus_backward(g, x, beta, threshold)``: ``g`` where ``x * beta > threshold``,
    else ``g * z / (z + 1)``, ``z = exp(x * beta)`` (at float32 for 16-bit inputs, rounded once):
    nan where ``z`` overflows below a raised threshold (inf / inf: float32 from 89 with
    ``threshold=1000``), ``z`` itself far below (3.8e-44 at -100 in float32), not ``sigmoid``'s
    1.0 and 0.0. Its own derivative is torch's: the same for ``g``, ``g * beta * s * (1 - s)`` for
    ``x`` below the threshold (``s = sigmoid(x * beta)``), 0 from it on."""
    promote = None
    infer = classmethod(like_input)
    at_float32 = True  # (torch's opmath)

    @staticmethod
    def forward(g, x, beta=1.0, threshold=20.0):
        xp = namespace(x)
        bx = x * x.dtype.type(beta)
        with np.errstate(over="ignore", invalid="ignore"):
            z = xp.exp(bx)
            return xp.where(bx > threshold, g, g * z / (z + 1)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.input(0), ctx.input(1)
        beta, threshold = ctx.attrs.get("beta", 1.0), ctx.attrs.get("threshold", 20.0)
        need_g, need_x = ctx.needs_input_grad[:2]
        bx = x * beta
        s = bx.sigmoid()
        return (apply(SoftplusBackward, gg, x, beta=beta, threshold=threshold) if need_g else None,
                gg * g * (1 - s) * s * (bx < threshold) * beta if need_x else None)


# ---- rounding: piecewise constant, so zero gradients; integers pass unchanged, bools are refused
def _rounding(name, fn, kernel_name, complex_error):
    def kernel(x, decimals=0):
        _no_bool(x, kernel_name)
        if decimals:
            return namespace(x).round(x, decimals)
        return fn(x) if is_floating(x.dtype) else x.copy()
    return elementwise(name, kernel, _zero_gradient, uses=None, promote=None, complex_error=complex_error)


def floor(input, *, out=None):
    """Largest integer <= input."""
    return with_out(apply(Floor, input), out)


Floor = _rounding("Floor", kernel("floor"), "floor_vml_cpu",
                  complex_error=(NotImplementedError, "floor is not supported for complex inputs"))


def ceil(input, *, out=None):
    """Smallest integer >= input."""
    return with_out(apply(Ceil, input), out)


Ceil = _rounding("Ceil", kernel("ceil"), "ceil_vml_cpu",
                 complex_error=(NotImplementedError, "ceil is not supported for complex inputs"))


def trunc(input, *, out=None):
    """Rounds toward zero."""
    return with_out(apply(Trunc, input), out)


Trunc = _rounding("Trunc", kernel("trunc"), "trunc_vml_cpu",
                  complex_error=(NotImplementedError, "trunc is not supported for complex inputs"))
fix = trunc


def round(input, *, decimals=0, out=None):
    """Rounds half to even (as PyTorch does), optionally to ``decimals`` places;
    NotImplementedError for ``decimals`` with an integer tensor, as PyTorch's kernel."""
    if decimals and not input.dtype.is_inexact:
        raise NotImplementedError(f"\"round_cpu\" not implemented for '{_NAMES[input.dtype.name]}'")
    return with_out(apply(Round, input, decimals=decimals) if decimals else apply(Round, input), out)


Round = _rounding("Round", kernel("round"), "round_cpu",
                  complex_error=(NotImplementedError, "\"round_vml_cpu\" not implemented for '{T}'"))


def frac(input, *, out=None):
    """``input - trunc(input)``; NotImplementedError for integer tensors."""
    return with_out(apply(Frac, input), out)


def _frac_kernel(x):
    if not is_floating(x.dtype):
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{_NAMES[x.dtype.name]}'")
    with np.errstate(invalid="ignore"):
        return x - namespace(x).trunc(x)


Frac = elementwise("Frac", _frac_kernel, lambda _, g: g, uses=None, promote=None,
                   complex_error=(NotImplementedError, "\"frac_cpu\" not implemented for '{T}'"))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (the dtype's largest
    and lowest finite values by default); the gradient passes where ``input`` is finite."""
    return with_out(apply(NanToNum, input, nan=nan, posinf=posinf, neginf=neginf), out)


class NanToNum(Op):
    infer = classmethod(elementwise_rule)
    promote = None

    @staticmethod
    def forward(x, nan=0.0, posinf=None, neginf=None):
        xp = namespace(x)
        if is_bfloat16(x.dtype):  # NumPy takes bfloat16 for no float: it kept nan and +-inf
            largest = _dtype.finfo(_dtype.bfloat16).max
            posinf, neginf = largest if posinf is None else posinf, -largest if neginf is None else neginf
            return xp.nan_to_num(x.astype(np.float32), nan=nan, posinf=posinf, neginf=neginf).astype(x.dtype)
        return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.input(0).isfinite(),)
