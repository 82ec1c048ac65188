"""The error function on float32 arrays at NumPy speed, for ``erf`` and exact GELU.

The float32 pieces below are NumPy's CPU path (as ``_backend.matmul``'s BLAS threads): only
NumPy arrays reach them; :func:`erf` sends every other library's to its ``special.erf``."""
import numpy as np

from .. import _backend

__all__ = ["erf"]

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
    """The error function of an array, in its dtype: SciPy's (or the array library's own
    ``special``) for double precision, complex numbers, small arrays and arrays other than
    NumPy's; otherwise (float32 and narrower) computed in float32 to within 1.3 ulp."""
    if (x.dtype.kind != "f" or x.dtype.itemsize > 4 or x.size < _ERF_NUMPY_FROM
            or type(x) is not np.ndarray):
        return _backend.special(x).erf(x).astype(x.dtype, copy=False)
    with np.errstate(invalid="ignore"):
        # C order, so that the pieces' flat indices address the result in place.
        x32 = np.ascontiguousarray(x, dtype=np.float32)
        return _erf_float32(x32).astype(x.dtype, copy=False)
