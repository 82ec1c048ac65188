"""Neural-network primitives for ``ember.nn.functional`` (its losses are in ``loss.py``).

The entries here are activations whose PyTorch derivative makes a choice at a kink
(``hardtanh`` passes no gradient at its bounds, ``hardswish`` is ``x/3 + 1/2`` at -3) that a
composition of clamps and products would not reproduce (``F.linear`` is ``addmm``/``matmul``
in ``linalg.py``, as PyTorch decomposes it).

Every derivative is written in ember ops, so gradients of gradients come free.
"""
import math

import numpy as np

from .._backend import namespace
from .core import Op, apply, elementwise_rule, like_input, zero_link
from .unimplemented import not_implemented_link
from .erf import erf
from .pointwise_binary import Where
from .pointwise_unary import SoftplusForward

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


# ---- activations -------------------------------------------------------------------------------
class LeakyRelu(Op):
    """``x`` where ``x > 0``, else ``negative_slope * x``; the slope is the gradient at 0."""
    promote = None
    infer = classmethod(like_input)
    at_float32 = True  # (torch's opmath: the slope not rounded to 16 bits)

    @staticmethod
    def forward(x, negative_slope=0.01):
        return namespace(x).where(x > 0, x, x * x.dtype.type(negative_slope))

    @staticmethod
    def backward(ctx, g):
        slope = ctx.attrs.get("negative_slope", 0.01)
        x = ctx.input(0)
        return (zero_link(apply(Where, x > 0, g, g * slope), x),)


class Elu(Op):
    """``scale * x`` for ``x > 0``, else ``scale * alpha * (exp(input_scale * x) - 1)``: ELU,
    SELU (scale, alpha fixed) and CELU (``input_scale = 1 / alpha``) are this one kernel, as
    in PyTorch's ``elu`` with its ``scale``/``input_scale`` arguments."""
    promote = None
    infer = classmethod(like_input)
    at_float32 = True  # (torch's opmath: a float16 alpha of 70000.0 would be inf)

    @staticmethod
    def forward(x, alpha=1.0, scale=1.0, input_scale=1.0):
        xp, scalar = namespace(x), x.dtype.type
        with np.errstate(over="ignore"):
            negative = xp.expm1(x * scalar(input_scale)) * scalar(alpha * scale)
        return xp.where(x < 0, negative, x * scalar(scale))  # (+-0 is x itself, as torch's: alpha inf or nan too)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        a = ctx.attrs
        alpha, scale, input_scale = a.get("alpha", 1.0), a.get("scale", 1.0), a.get("input_scale", 1.0)
        # (alpha itself for elu: a compiled function's traced float stays one, not Python's product)
        slope_at_zero = alpha if "scale" not in a and "input_scale" not in a else alpha * scale * input_scale
        # exp of the negative part only: exp(large x) would be inf, and the second derivative
        # through the unselected branch 0 * inf = nan (torch's is 0 there).
        negative_slope = (x.clamp(max=0) * input_scale).exp() * slope_at_zero
        # At x = 0 (and -0) the slope is the negative branch's value but, as in PyTorch, a
        # constant: the second derivative there is 0. NaN takes the positive slope (torch's
        # test is x <= 0).
        negative = apply(Where, x < 0, negative_slope, slope_at_zero)
        if scale == 1.0:  # (g itself: no plain 1.0 in a compiled graph equal to celu's alpha / alpha)
            return (apply(Where, x <= 0, g * negative, g),)
        return (g * apply(Where, x <= 0, negative, scale),)


class HardtanhForward(Op):
    """``clamp(x, min_val, max_val)``; unlike ``clamp`` the gradient is zero at the bounds."""
    name = "Hardtanh"
    complex_error = (NotImplementedError, "clamp is not supported for complex types")
    promote = None
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, min_val=-1.0, max_val=1.0):
        xp = namespace(x)
        out = xp.minimum(max_val, xp.maximum(min_val, x))  # x itself on a tie: -0.0 stays, as torch's
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        # Zero (not g * 0: a nan g gives 0, as torch's) at or beyond a bound; NaN passes its gradient. The
        # zero is an int: a plain float 0.0 in a compiled backward would pass for a traced float equal to 0
        # (traced_floats.note_unseen: ``hardshrink(x, lr)`` a graph per value of ``lr``).
        bound = (x <= ctx.attrs.get("min_val", -1.0)) | (x >= ctx.attrs.get("max_val", 1.0))
        return (zero_link(apply(Where, bound, 0, g), x),)


class ThresholdForward(Op):
    """``value`` where ``x <= threshold``, else ``x`` (so NaN stays NaN)."""
    name = "Threshold"
    promote = None
    infer = classmethod(like_input)
    at_float32 = True  # (torch's: a float16 1.703125 <= 1.7 is False; value rounded to 16 bits through float32)

    @staticmethod
    def forward(x, threshold, value):
        xp = namespace(x)
        return xp.where(x <= threshold, xp.asarray(value).astype(x.dtype), x)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        wide = x.float() if x.dtype.itemsize == 2 and x.dtype.is_floating_point else x  # (as the forward)
        return (zero_link(apply(Where, wide <= ctx.attrs["threshold"], 0, g), x),)


class HardsigmoidForward(Op):
    """``relu6(x + 3) / 6``; gradient ``1/6`` strictly inside (-3, 3), which torch does not
    differentiate again (:func:`~ember._ops.unimplemented.not_implemented_link`)."""
    name = "Hardsigmoid"
    promote = None
    infer = classmethod(like_input)

    @staticmethod
    def forward(x):
        xp = namespace(x)
        return (xp.minimum(xp.maximum(x + 3, 0), 6) / 6).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        # (torch's slope is 1/6 rounded to float32, a double's too; a nan g outside gives 0)
        inside = apply(Where, (x > -3) & (x < 3), g * float(np.float32(1 / 6)), 0)
        return (not_implemented_link(inside, "hardsigmoid_backward", g, x),)


class HardswishForward(Op):
    """``x * relu6(x + 3) / 6``; gradient 0 up to -3, ``x/3 + 1/2`` on (-3, 3), else 1."""
    name = "Hardswish"
    promote = None
    infer = classmethod(like_input)

    @staticmethod
    def forward(x):
        xp = namespace(x)
        w = x.astype(np.float32) if x.dtype.itemsize == 2 else x  # (16-bit: torch's float32 opmath, 6e4 stays finite)
        with np.errstate(invalid="ignore"):
            return (w * xp.minimum(xp.maximum(w + 3, 0), 6) / 6).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        slope = apply(Where, x < 3, x / 3 + 0.5, 1.0)
        return (apply(Where, x <= -3, 0, g * slope),)  # (a nan g up to -3: 0, as torch's)


def _normal_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt(2))) / 2 of a float array, in its dtype."""
    out = erf(x * _SQRT_HALF)
    out += 1
    out *= 0.5
    return out


class Gelu(Op):
    """``x * Phi(x)`` with Phi the standard normal CDF, or its tanh approximation
    (``approximate="tanh"``; Hendrycks & Gimpel, https://arxiv.org/abs/1606.08415).

    The output is saved too (the next layer usually keeps it alive anyway): the first-order
    backward reads Phi(x) back as ``output / x`` instead of evaluating erf again, unless the
    output was modified in place since.
    """
    promote = None
    infer = classmethod(like_input)
    save_output = True
    at_float32 = True  # (torch's opmath: in float16 the tail below -3 rounded to 0)

    @staticmethod
    def forward(x, approximate="none"):
        with np.errstate(invalid="ignore", over="ignore"):
            if approximate == "tanh":
                inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
                return (0.5 * x * (1 + namespace(x).tanh(inner))).astype(x.dtype, copy=False)
            out = _normal_cdf(x)
            out *= x
            return out

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        if ctx.attrs.get("approximate", "none") == "tanh":
            half = x.dtype.itemsize == 2  # (torch's float32 opmath: x * x overflowed float16 from 256)
            x, wide = (x.float(), g.float()) if half else (x, g)
            x_sq = x * x
            t = ((x + _GELU_CUBIC * x_sq * x) * _SQRT_2_OVER_PI).tanh()
            d_inner = (1 + 3 * _GELU_CUBIC * x_sq) * _SQRT_2_OVER_PI
            return ((wide * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner)).to(g.dtype),)
        try:
            out = ctx.output
        except RuntimeError:  # modified in place since: GeluBackward evaluates Phi(x) again
            out = None
        return (apply(GeluBackward, g, x, out),)


class GeluBackward(Op):
    """The gradient of exact GELU, ``g * (Phi(x) + x * phi(x))``, as one array computation
    (eight ember ops otherwise, measurably slower in a GPT step). Phi(x) is read back as
    ``output / x`` when the forward's ``output`` is given, instead of evaluating erf again.
    Its own derivative: ``phi(x) * (2 - x**2)`` for ``x``, the bracket for ``g``."""
    promote = None
    infer = classmethod(like_input)
    at_float32 = True  # (as the forward)

    @staticmethod
    def forward(g, x, output):
        xp = namespace(x)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if output is None:
                cdf = _normal_cdf(x)
            else:
                cdf = xp.divide(output, x, out=xp.full_like(x, 0.5), where=x != 0)
            grad = xp.multiply(x, x, out=xp.empty_like(x))  # an array even when 0-d
            grad *= -0.5
            xp.exp(grad, out=grad)
            grad *= x
            grad *= _INV_SQRT_2PI
            grad += cdf
            grad *= g
        return grad

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.input(0), ctx.input(1)
        need_g, need_x = ctx.needs_input_grad[:2]
        cdf = ((x * _SQRT_HALF).erf() + 1) * 0.5
        pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
        return (gg * (cdf + x * pdf) if need_g else None,
                gg * g * pdf * (2 - x * x) if need_x else None,
                None)


class LogSigmoidForward(Op):
    """``log(sigmoid(x)) = -log(1 + exp(-x))``, finite for any finite ``x``."""
    name = "LogSigmoid"
    promote = "float"
    infer = classmethod(elementwise_rule)

    @staticmethod
    def forward(x):
        with np.errstate(invalid="ignore"):
            return -namespace(x).logaddexp(x.dtype.type(0), -x)

    @staticmethod
    def backward(ctx, g):
        return (g * (-ctx.input(0)).sigmoid(),)


class MishForward(Op):
    """``x tanh(softplus(x))`` (Misra, 2019, ``F.mish``). Its gradient is torch's formula in
    ember ops, ``tanh(s) + x sigmoid(x) (1 - tanh(s)^2)`` with ``s = log1p(exp(x))``, so its
    derivative is torch's too: nan from about x = 710 up (float64), where exp(x) is inf and
    the derivative of log1p of it inf / inf (the composite through softplus's linear branch
    gave 0 there)."""
    name = "Mish"
    promote = None
    infer = classmethod(like_input)

    @staticmethod
    def forward(x):
        return x * namespace(x).tanh(SoftplusForward.forward(x))

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        tanh_s = x.exp().log1p().tanh()
        return (g * (tanh_s + x * x.sigmoid() * (1 - tanh_s * tanh_s)),)
