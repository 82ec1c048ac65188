"""``torch.special``'s orthogonal polynomials ``P_n(x)`` of a tensor ``x`` and a degree ``n``
(https://pytorch.org/docs/stable/special.html): Chebyshev of the four kinds (T, U, V, W) and
their shifted forms on [0, 1] (``P_n(2x - 1)``), physicists' and probabilists' Hermite (H,
He), Laguerre (L) and Legendre (P).

``x`` and ``n`` broadcast; either may be a Python number, not both (TypeError, as PyTorch).
The result has the promoted float dtype of both (integers in the default float dtype);
float16 and bfloat16 raise NotImplementedError, as PyTorch has no such loops. ``n`` is
truncated to an integer (2.7 is 2); a negative, nan or infinite ``n`` gives 0, as PyTorch's
conversion of those to a negative int64 does. Values follow the three-term recurrences of
Abramowitz & Stegun 22.7 (SciPy's ``eval_*`` loops for Hermite, Laguerre and Legendre,
ember's own for Chebyshev, whose V and W SciPy lacks); Chebyshev polynomials of high degree inside (-1, 1) come from
their trigonometric forms (``T_n(cos t) = cos(n t)``), and ``x = +-1`` from the closed forms,
as PyTorch. No gradient (PyTorch defines none).
"""
import numpy as np

from .. import _backend
from .._backend import namespace
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .args import invalid_combination, with_out
from .bessel import refusing
from .core import Op, apply, elementwise_rule
from .names import snake_case

_SIGNATURES = (" * (Tensor x, Tensor n, *, Tensor out = None)\n"
               " * (Number x, Tensor n, *, Tensor out = None)\n"
               " * (Tensor x, Number n, *, Tensor out = None)\n")


def _degrees(n, xp):
    """``n`` truncated to int64, with nan, +-inf and out-of-range values negative (-1)."""
    n = xp.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ok = xp.isfinite(n) & (xp.abs(n) < 2.0 ** 62)
        return xp.where(ok, xp.trunc(xp.where(ok, n, 0.0)), -1).astype(np.int64)


def _recurrence(x, n, first, step, needed=None):
    """``P_n(x)`` elementwise from ``P_0 = 1``, ``P_1 = first(x)`` and
    ``P_{k+1} = step(k, x, P_k, P_{k-1})``, for arrays of equal shape (``n >= 0``). The loop
    runs to the largest ``n`` where ``needed`` (default: everywhere), and stops once every
    value still running is nan (nan stays nan)."""
    xp = namespace(x)
    previous, current = xp.ones_like(x), first(x)
    out = xp.where(n == 0, previous, current)
    degrees = n if needed is None else xp.where(needed, n, 0)
    top = int(degrees.max()) if n.size else 0
    for k in range(1, top):
        previous, current = current, step(k, x, current, previous)
        out = xp.where(n == k + 1, current, out)
        if k % 64 == 0 and bool(xp.all(xp.isnan(current) | (degrees <= k + 1))):
            return xp.where(degrees > k + 1, current, out)
    return out


def _chebyshev_step(k, x, current, previous):
    return (x + x) * current - previous


# kind: (P_1(x), the degree above which |x| < 1 takes the trigonometric form, that form
#        f(xp, n, t) with t = acos(x), and the values at x = 1 and x = -1 as f(xp, n))
_CHEBYSHEV = {
    "t": (lambda x: x, 6, lambda xp, n, t: xp.cos(n * t), lambda xp, n: 1.0,
          lambda xp, n: xp.where(n % 2 == 0, 1.0, -1.0)),
    "u": (lambda x: x + x, 8, lambda xp, n, t: xp.sin((n + 1) * t) / xp.sin(t), lambda xp, n: n + 1.0,
          lambda xp, n: xp.where(n % 2 == 0, n + 1.0, -(n + 1.0))),
    "v": (lambda x: x + x - 1, 8, lambda xp, n, t: xp.cos((n + 0.5) * t) / xp.cos(t / 2), lambda xp, n: 1.0,
          lambda xp, n: xp.where(n % 2 == 0, 2.0 * n + 1, -(2.0 * n + 1))),
    "w": (lambda x: x + x + 1, 8, lambda xp, n, t: xp.sin((n + 0.5) * t) / xp.sin(t / 2),
          lambda xp, n: 2.0 * n + 1, lambda xp, n: xp.where(n % 2 == 0, 1.0, -1.0)),
}


def _chebyshev(kind, shifted):
    first, trig_above, trig, at_one, at_minus_one = _CHEBYSHEV[kind]
    if shifted:
        trig_above = 6

    def kernel(x, n):
        xp = namespace(x)
        y = x + x - 1 if shifted else x
        with np.errstate(all="ignore"):
            trigonometric = (n > trig_above) & (xp.abs(y) < 1)
            value = _recurrence(y, n, first, _chebyshev_step, needed=~trigonometric & (xp.abs(y) != 1))
            if trigonometric.any():
                value = xp.where(trigonometric, trig(xp, n, xp.arccos(xp.where(trigonometric, y, 0))), value)
            value = xp.where(y == 1, at_one(xp, n), xp.where(y == -1, at_minus_one(xp, n), value))
        return value
    return kernel


def _with_scipy(name, first, step):
    """``P_n(x)`` by ``scipy.special.<name>`` (the recurrence in C), and at x = +-inf by the
    recurrence itself: PyTorch's loop there meets inf - inf and gives nan where SciPy gives
    the limit."""
    def kernel(x, n):
        xp = namespace(x)
        value = getattr(_backend.special(x), name)(n, x)
        infinite = xp.isinf(x)
        if infinite.any():
            value = xp.where(infinite, _recurrence(x, n, first, step, needed=infinite), value)
        return value
    return kernel


_hermite_h = _with_scipy("eval_hermite", lambda x: x + x, lambda k, x, p, q: (x + x) * p - 2 * k * q)
_hermite_he = _with_scipy("eval_hermitenorm", lambda x: x, lambda k, x, p, q: x * p - k * q)
_laguerre = _with_scipy("eval_laguerre", lambda x: 1 - x,
                        lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1))
_legendre = _with_scipy("eval_legendre", lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1))


def _laguerre_l(x, n):
    return namespace(x).where(x == 0, 1.0, _laguerre(x, n))


def _legendre_p(x, n):
    xp = namespace(x)
    return xp.where(x == 1, 1.0, xp.where(x == -1, xp.where(n % 2 == 0, 1.0, -1.0), _legendre(x, n)))


def _polynomial_op(name, kernel):
    def forward(x, n):
        xp = namespace(x, n)
        dtype = np.result_type(getattr(x, "dtype", x), getattr(n, "dtype", n))
        x, n = xp.broadcast_arrays(xp.asarray(x, dtype), _degrees(n, xp))
        with np.errstate(all="ignore"):
            value = kernel(x.astype(np.float64), n)
        return xp.where(n < 0, 0.0, value).astype(dtype, copy=False)
    return type(name, (Op,), {"name": name, "promote": "float", "infer": classmethod(elementwise_rule),
                              "forward": staticmethod(refusing(snake_case(name), forward)), "__module__": __name__})


def _public(name, op, what):
    def polynomial(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(invalid_combination(f"special_{name}", (input, n), _SIGNATURES))
        with no_grad():
            return with_out(apply(op, input, n), out)
    polynomial.__name__ = polynomial.__qualname__ = name
    polynomial.__doc__ = (f"{what} ``P_n(input)`` elementwise (``torch.special.{name}``, "
                          f"https://pytorch.org/docs/stable/special.html#torch.special.{name}); ``input`` "
                          f"and ``n`` broadcast, see this module's notes for dtypes, ``n`` and errors.")
    return polynomial


def _define(name, kernel, what):
    op = _polynomial_op("".join(part.capitalize() for part in name.split("_")), kernel)
    return _public(name, op, what), op


chebyshev_polynomial_t, ChebyshevPolynomialT = _define(
    "chebyshev_polynomial_t", _chebyshev("t", False), "The Chebyshev polynomial of the first kind")
chebyshev_polynomial_u, ChebyshevPolynomialU = _define(
    "chebyshev_polynomial_u", _chebyshev("u", False), "The Chebyshev polynomial of the second kind")
chebyshev_polynomial_v, ChebyshevPolynomialV = _define(
    "chebyshev_polynomial_v", _chebyshev("v", False), "The Chebyshev polynomial of the third kind")
chebyshev_polynomial_w, ChebyshevPolynomialW = _define(
    "chebyshev_polynomial_w", _chebyshev("w", False), "The Chebyshev polynomial of the fourth kind")
shifted_chebyshev_polynomial_t, ShiftedChebyshevPolynomialT = _define(
    "shifted_chebyshev_polynomial_t", _chebyshev("t", True), "The shifted Chebyshev polynomial T*_n(x) = T_n(2x - 1)")
shifted_chebyshev_polynomial_u, ShiftedChebyshevPolynomialU = _define(
    "shifted_chebyshev_polynomial_u", _chebyshev("u", True), "The shifted Chebyshev polynomial U*_n(x) = U_n(2x - 1)")
shifted_chebyshev_polynomial_v, ShiftedChebyshevPolynomialV = _define(
    "shifted_chebyshev_polynomial_v", _chebyshev("v", True), "The shifted Chebyshev polynomial V*_n(x) = V_n(2x - 1)")
shifted_chebyshev_polynomial_w, ShiftedChebyshevPolynomialW = _define(
    "shifted_chebyshev_polynomial_w", _chebyshev("w", True), "The shifted Chebyshev polynomial W*_n(x) = W_n(2x - 1)")
hermite_polynomial_h, HermitePolynomialH = _define(
    "hermite_polynomial_h", _hermite_h, "The physicists' Hermite polynomial H")
hermite_polynomial_he, HermitePolynomialHe = _define(
    "hermite_polynomial_he", _hermite_he, "The probabilists' Hermite polynomial He")
laguerre_polynomial_l, LaguerrePolynomialL = _define(
    "laguerre_polynomial_l", _laguerre_l, "The Laguerre polynomial L")
legendre_polynomial_p, LegendrePolynomialP = _define(
    "legendre_polynomial_p", _legendre_p, "The Legendre polynomial P")
