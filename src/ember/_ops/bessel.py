"""``torch.special``'s Bessel and Airy functions, the Hurwitz zeta function, and the functions
of the standard normal distribution (``ndtr``, ``log_ndtr``, ``ndtri``, ``erfcx``) and
``entr``: https://pytorch.org/docs/stable/special.html.

Values come from SciPy's ``scipy.special`` (Cephes, the library PyTorch's kernels follow), in
float64 for float32 input and rounded once; integer and bool inputs compute in the default
float dtype. The functions PyTorch has only for float32/float64 raise its NotImplementedError
for float16 and bfloat16 (``"bessel_j0_cpu" not implemented for 'Half'``), every one for
complex input. Derivatives are PyTorch's (``tools/autograd/derivatives.yaml``) written in
ember ops, so second derivatives come free; the Bessel functions of the ``bessel_*`` and
``*modified_bessel_*`` names, ``spherical_bessel_j0`` and ``airy_ai`` have none in PyTorch, and
their results do not require grad here either.
"""
import math

import numpy as np

from .. import _backend, _dtype
from .._backend import namespace
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .args import invalid_combination, with_out
from .core import Op, _type_name, apply, elementwise_rule
from .pointwise_binary import Where
from .pointwise_unary import elementwise
from .special import _scipy

__all__ = ["ndtr", "log_ndtr", "ndtri", "erfcx", "entr", "i0e", "i1e", "bessel_j0", "bessel_j1", "bessel_y0",
           "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai", "zeta"]

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_NARROW = ("float16", "bfloat16")


def refusing(name, kernel, narrow=False):
    """``kernel`` raising PyTorch's ``"<name>_cpu" not implemented for '<dtype>'`` for complex
    arrays, and for float16/bfloat16 ones unless ``narrow`` (PyTorch has those loops)."""
    def checked(*arrays, **attrs):
        for a in arrays:
            dtype = getattr(a, "dtype", None)
            if dtype is not None and (dtype.kind == "c" or not narrow and dtype.name in _NARROW):
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_name(dtype)}'")
        return kernel(*arrays, **attrs)
    return checked


def _where(condition, input, other):
    return apply(Where, condition, input, other)


def _constant(name, fn):
    """The function ``special.<name>`` of one tensor, without a derivative (PyTorch has none):
    ``fn`` of ``scipy.special`` on the array, float32 through float64."""
    op = elementwise("".join(part.capitalize() for part in name.split("_")), refusing(name, _scipy(fn)), None,
                     uses=None)

    def special_function(input, *, out=None):
        with no_grad():
            return with_out(apply(op, input), out)
    special_function.__name__ = special_function.__qualname__ = name
    special_function.__doc__ = (f"``torch.special.{name}`` (https://pytorch.org/docs/stable/special.html"
                                f"#torch.special.{name}): SciPy's ``{fn if isinstance(fn, str) else fn.__name__}``"
                                f" elementwise. Any shape; float32/float64 (integers and bool in the default"
                                f" dtype); NotImplementedError for float16, bfloat16 and complex. No gradient"
                                f" (PyTorch defines none).")
    return special_function, op


# ---- the standard normal distribution --------------------------------------------------------------
def ndtr(input, *, out=None):
    """The standard normal CDF ``Phi(x) = (1 + erf(x / sqrt 2)) / 2``, any shape and float dtype;
    derivative the density ``exp(-x^2 / 2) / sqrt(2 pi)``."""
    return with_out(apply(Ndtr, input), out)


Ndtr = elementwise("Ndtr", refusing("ndtr", _scipy("ndtr"), narrow=True),
                   lambda x, g: g * (x * x * -0.5).exp() * _INV_SQRT_2PI)


def log_ndtr(input, *, out=None):
    """``log Phi(x)``, accurate far in the left tail (where ``Phi`` underflows); derivative
    ``exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)``. float32/float64 only (NotImplementedError for
    float16 and bfloat16, as PyTorch)."""
    return with_out(apply(LogNdtr, input), out)


class LogNdtr(Op):
    """d/dx log Phi(x) = phi(x) / Phi(x), computed as ``exp(-(log Phi(x) + x^2 / 2)) / sqrt(2 pi)``
    (PyTorch's form, finite where Phi underflows)."""
    name = "LogNdtr"
    infer = classmethod(elementwise_rule)
    promote = "float"
    save_inputs = save_output = True
    forward = staticmethod(refusing("log_ndtr", _scipy("log_ndtr")))

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        return (g * (-(ctx.output + x * x * 0.5)).exp() * _INV_SQRT_2PI,)


def ndtri(input, *, out=None):
    """The standard normal quantile, ``Phi^-1(p)``: -inf at 0, inf at 1, nan outside [0, 1];
    derivative ``sqrt(2 pi) exp(ndtri(p)^2 / 2)``. float32/float64 only."""
    return with_out(apply(Ndtri, input), out)


Ndtri = elementwise("Ndtri", refusing("ndtri", _scipy("ndtri")),
                    lambda out, g: g * (out * out * 0.5).exp() * _SQRT_2PI, uses="output")


def erfcx(input, *, out=None):
    """The scaled complementary error function ``exp(x^2) erfc(x)``, finite where erfc
    underflows; derivative ``2 x erfcx(x) - 2 / sqrt(pi)``. float32/float64 only."""
    return with_out(apply(Erfcx, input), out)


class Erfcx(Op):
    name = "Erfcx"
    infer = classmethod(elementwise_rule)
    promote = "float"
    save_inputs = save_output = True
    forward = staticmethod(refusing("erfcx", _scipy("erfcx")))

    @staticmethod
    def backward(ctx, g):
        return (g * (2 * ctx.input(0) * ctx.output - 2 / math.sqrt(math.pi)),)


def entr(input, *, out=None):
    """Elementwise entropy ``-x log x``: 0 at 0, -inf below 0, nan at nan; derivative
    ``-(1 + log x)``. Any float dtype."""
    return with_out(apply(Entr, input), out)


def _entr_kernel(x):
    xp = namespace(x)
    with np.errstate(all="ignore"):
        body = -x * xp.log(xp.where(x > 0, x, 1))
        return xp.where(x > 0, body, xp.where(x == 0, 0, xp.where(x < 0, -np.inf, x))).astype(x.dtype, copy=False)


Entr = elementwise("Entr", refusing("entr", _entr_kernel, narrow=True), lambda x, g: g * -(1 + x.log()))


# ---- Bessel functions with derivatives ---------------------------------------------------------------
def i0e(input, *, out=None):
    """The exponentially scaled modified Bessel function ``exp(-|x|) I0(x)``; derivative
    ``i1e(x) - sgn(x) i0e(x)``. Any float dtype."""
    return with_out(apply(I0e, input), out)


I0e = elementwise("I0e", refusing("i0e", _scipy("i0e"), narrow=True),
                  lambda x, g: g * (apply(I1e, x) - x.sgn() * apply(I0e, x)))


def _i1e_derivative(x, g):
    # within the dtype's epsilon of 0 the slope is its limit 1/2; the formula is evaluated at a
    # safe point there, so that its own derivative (a second derivative) is finite, as PyTorch's
    eps = _dtype.finfo(x.dtype).eps
    tiny = x.abs() <= eps
    safe = _where(tiny, x.new_full((), eps), x)
    slope = apply(I0e, safe) - apply(I1e, safe) * (safe.sgn() + safe.reciprocal())
    return g * _where(tiny, slope.new_full((), 0.5), slope)


def i1e(input, *, out=None):
    """The exponentially scaled modified Bessel function ``exp(-|x|) I1(x)``; derivative
    ``i0e(x) - i1e(x) (sgn(x) + 1 / x)``, 1/2 at 0. Any float dtype."""
    return with_out(apply(I1e, input), out)


I1e = elementwise("I1e", refusing("i1e", _scipy("i1e"), narrow=True), _i1e_derivative)


# ---- Bessel and Airy functions without derivatives ----------------------------------------------------
def _spherical_j0(x):
    xp = namespace(x)
    with np.errstate(all="ignore"):
        return xp.where(xp.isinf(x), 0.0, xp.where(x == 0, 1.0, xp.sin(x) / xp.where(x == 0, 1.0, x)))


def _airy_ai(x):
    """Ai(x) by SciPy's ``airy``, which gives nan past |x| ~ 5e6: there Ai is 0 for x > 0 (it
    underflows from x ~ 105) and, for x = -z < 0, its asymptotic form (DLMF 9.7.9)
    ``pi^-1/2 z^-1/4 sin(2/3 z^3/2 + pi/4)``, nan once the phase overflows, as torch."""
    xp = namespace(x)
    value = _backend.special(x).airy(x)[0]
    lost = xp.isnan(value) & xp.isfinite(x)
    if not lost.any():
        return value
    with np.errstate(all="ignore"):
        z = xp.abs(x).astype(np.float64)  # the phase needs float64 even for float32 x
        tail = xp.sin(2.0 / 3.0 * z ** 1.5 + np.pi / 4) / (np.sqrt(np.pi) * z ** 0.25)
    return xp.where(lost, xp.where(x > 0, 0.0, tail), value).astype(value.dtype, copy=False)


bessel_j0, BesselJ0 = _constant("bessel_j0", "j0")
bessel_j1, BesselJ1 = _constant("bessel_j1", "j1")
bessel_y0, BesselY0 = _constant("bessel_y0", "y0")
bessel_y1, BesselY1 = _constant("bessel_y1", "y1")
modified_bessel_i0, ModifiedBesselI0 = _constant("modified_bessel_i0", "i0")
modified_bessel_i1, ModifiedBesselI1 = _constant("modified_bessel_i1", "i1")
modified_bessel_k0, ModifiedBesselK0 = _constant("modified_bessel_k0", "k0")
modified_bessel_k1, ModifiedBesselK1 = _constant("modified_bessel_k1", "k1")
scaled_modified_bessel_k0, ScaledModifiedBesselK0 = _constant("scaled_modified_bessel_k0", "k0e")
scaled_modified_bessel_k1, ScaledModifiedBesselK1 = _constant("scaled_modified_bessel_k1", "k1e")
spherical_bessel_j0, SphericalBesselJ0 = _constant("spherical_bessel_j0", _spherical_j0)
airy_ai, AiryAi = _constant("airy_ai", _airy_ai)


# ---- the Hurwitz zeta function -----------------------------------------------------------------------
_NUMBER_SIGNATURES = (" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                      " * (Number self, Tensor other, *, Tensor out = None)\n"
                      " * (Tensor input, Number other, *, Tensor out = None)\n")


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function ``zeta(x, q) = sum_{k >= 0} (k + q)^-x`` of ``input`` (x) and
    ``other`` (q), broadcast; either may be a Python number, not both (TypeError, as PyTorch).
    inf at x = 1, nan for x < 1; float32/float64 (NotImplementedError for float16/bfloat16).
    Differentiable in ``other`` (``-x zeta(x + 1, q)``); the derivative in ``input`` raises
    NotImplementedError, as PyTorch's."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(invalid_combination("special_zeta", (input, other), _NUMBER_SIGNATURES))
    return with_out(apply(Zeta, input, other), out)


def _zeta_kernel(x, q):
    xp = namespace(x, q)
    dtype = np.result_type(getattr(x, "dtype", x), getattr(q, "dtype", q))
    wide = np.float64
    special = _backend.special(x if hasattr(x, "dtype") else q)
    value = special.zeta(xp.asarray(x, wide), xp.asarray(q, wide))
    return xp.asarray(value).astype(dtype, copy=False)


class Zeta(Op):
    infer = classmethod(elementwise_rule)
    promote = "float"
    forward = staticmethod(refusing("zeta", _zeta_kernel))

    @staticmethod
    def backward(ctx, g):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        x, q = ctx.input(0), ctx.input(1)
        return None, g * -x * zeta(x + 1.0, q)

