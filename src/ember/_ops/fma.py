"""Fused multiply-add, ``a * b + c`` rounded once, as PyTorch's CPU ``addcmul`` computes
``fma(value * tensor1, tensor2, input)`` (``native/cpu/PointwiseOpsKernel.cpp``): float64 and
float32 in their own precision, float16 and bfloat16 in float32 (its opmath) then rounded.

NumPy has no fma (``math.fma`` is Python 3.13's). A small C loop over C's ``fma``/``fmaf``
runs it, built by the compiler's toolchain on first use and cached on disk as compiled graphs
are; where there is no C compiler, NumPy computes the same correctly rounded results with
error-free transformations (:func:`fma64`, and for float32 an exact float64 product rounded to
odd), about 15 times slower.
"""
import ctypes
import functools
import math
from fractions import Fraction

import numpy as np

from .._backend import namespace

__all__ = ["addcmul", "fma64"]


def addcmul(input, tensor1, tensor2, value):
    """``fma(value * tensor1, tensor2, input)`` of floating arrays of one dtype (broadcast),
    in the array's dtype; float16 and bfloat16 computed in float32 and rounded once more."""
    wide = input.dtype == np.float64
    compute = np.float64 if wide else np.float32
    kernels = _c_kernels() if type(input) is np.ndarray else None
    with np.errstate(all="ignore"):
        if kernels is not None:
            arrays = (input, tensor1, tensor2)
            if not input.shape == tensor1.shape == tensor2.shape:
                arrays = np.broadcast_arrays(*arrays)
            # (ascontiguousarray makes a 0-d array 1-d: the result takes the operands' shape)
            s, a, b = [np.ascontiguousarray(x, dtype=compute) for x in arrays]
            out = np.empty(arrays[0].shape, compute)
            kernels[wide](s.ctypes.data, a.ctypes.data, b.ctypes.data, float(value), out.ctypes.data, out.size)
        elif wide:
            out = fma64(tensor1 if value == 1 else tensor1 * value, tensor2, input)
        else:  # float32's product is exact in float64 (48 bits); the sum rounded to odd, then to float32
            product = (tensor1.astype(np.float32) * np.float32(value)).astype(np.float64) * tensor2.astype(np.float64)
            out = _round_to_odd(*_two_sum(product, input.astype(np.float64))).astype(np.float32)
        return out if out.dtype == input.dtype else out.astype(input.dtype)


@functools.lru_cache(maxsize=None)
def _c_kernels():
    """``{False: float32 kernel, True: float64 kernel}``, built and loaded; None without a C
    compiler."""
    # (the compiler's toolchain, a layer above: loaded only when an addcmul runs)
    from ember.compiler.backends import toolchain
    argv = toolchain.find_compiler()
    if argv is None:
        return None
    try:
        lib, _, _ = toolchain.build(_C, argv)
    except (toolchain.CompileError, OSError, ValueError):
        return None
    kernels = {}
    for wide, (name, scalar) in {False: ("addcmul_f32", ctypes.c_float), True: ("addcmul_f64", ctypes.c_double)}.items():
        kernel = getattr(lib, name)
        kernel.argtypes = [ctypes.c_void_p] * 3 + [scalar, ctypes.c_void_p, ctypes.c_long]
        kernel.restype = None
        kernels[wide] = kernel
    return kernels


_C = r"""
#include <math.h>
void addcmul_f32(const float *s, const float *a, const float *b, float v, float *out, long n) {
    for (long i = 0; i < n; i++) out[i] = fmaf(v * a[i], b[i], s[i]);
}
void addcmul_f64(const double *s, const double *a, const double *b, double v, double *out, long n) {
    for (long i = 0; i < n; i++) out[i] = fma(v * a[i], b[i], s[i]);
}
"""


def _two_sum(a, b):
    """Knuth's error-free sum: ``(s, t)`` with ``s = a + b`` rounded and ``a + b = s + t`` exactly."""
    s = a + b
    z = s - a
    return s, (a - (s - z)) + (b - z)


def _round_to_odd(hi, lo):
    """``hi + lo`` (``hi`` its rounding to nearest) rounded to odd: toward zero, the last bit set
    when inexact. Rounding that to a format at least 2 bits narrower is the correct rounding of
    ``hi + lo`` (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved
    algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008)."""
    bits = hi.view(np.uint64)  # (magnitude + 1 ulp is bits + 1, for either sign)
    inexact = (lo != 0) & np.isfinite(hi)
    toward_zero = bits - (inexact & ((lo < 0) != (hi < 0))).astype(np.uint64)
    return namespace(hi).where(inexact, toward_zero | np.uint64(1), bits).view(np.float64)


_SPLIT = 2.0 ** 27 + 1  # Veltkamp's constant: splits a double into two 26-bit halves
_EXACT_PRODUCTS = (2.0 ** -968, 2.0 ** 995)  # where Dekker's product is exact: no underflow, no overflow


def fma64(a, b, c):
    """``a * b + c`` rounded once (C's ``fma``; ``math.fma`` is Python 3.13's, NumPy has none):
    Dekker's exact product ``a * b = p + e``, Knuth's exact sum ``p + c = s + t``, then
    ``s + RO(t + e)`` (Boldo and Melquiond 2008, above). Elements where a step under- or
    overflows (a product below 2**-968, a factor beyond 2**995) take exact rationals; infinite
    and nan operands follow IEEE's fma (a finite product with an infinite ``c`` is ``c``)."""
    p = a * b
    a_hi = a * _SPLIT
    a_hi = a_hi - (a_hi - a)
    b_hi = b * _SPLIT
    b_hi = b_hi - (b_hi - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s, t = _two_sum(p, c)
    out = s + _round_to_odd(*_two_sum(t, e))
    xp = namespace(a, b, c)
    out = xp.where(out == 0, s, out)  # an exact zero: the sign IEEE gives a * b + c
    finite = np.isfinite(a) & np.isfinite(b)
    out = xp.where(finite & np.isinf(c), c, out)
    magnitude = np.maximum(abs(a), abs(b))
    hard = finite & np.isfinite(c) & (((abs(p) < _EXACT_PRODUCTS[0]) & (a != 0) & (b != 0))
                                      | (magnitude > _EXACT_PRODUCTS[1]) | ~np.isfinite(out))
    if hard.any():
        out = np.array(out, copy=True)
        out[hard] = [_exact_fma(*v) for v in zip(*(x[hard].tolist() for x in np.broadcast_arrays(a, b, c)))]
    return xp.where(finite, out, p + c)


def _exact_fma(a, b, c):
    """One element of :func:`fma64` in exact rationals (Python's int division rounds once)."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c  # (IEEE's sign of an exact zero sum)
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf
