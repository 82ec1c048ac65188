"""ember's vector math (runtime/ember_math.h) against float64/long-double references.

Grids are dense over the ranges activations take and reach into the tails, the subnormals,
the overflow thresholds, +-inf and nan. Errors are in units in the last place (ulp) of the
result dtype; the bounds are the measured maxima rounded up, and the header states the same.
"""
import ctypes

import numpy as np
import pytest
from scipy import special

from ember.compiler.backends import toolchain

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

FUNCS = ("exp", "log", "tanh", "sigmoid", "erf", "expm1", "log1p", "sinh", "cosh", "asinh", "acosh", "atanh")
# (function, dtype) -> max error in ulp, measured on this grid and stated in the header
# (measured: exp 0.99 / 2.34, log 1.94 / 1.95, tanh 1.20 / 1.55, sigmoid 2.47 / 3.55, erf 0.72 (float
# arithmetic; 0.72 over all 2^32 float32 too, see test_erff_every_float) / 3.0 where the double erf is libm's and the reference SciPy's; expm1 1.75 / 3.87, log1p 3.31 / 3.49,
# sinh 3.55 / 6.81, cosh 2.89 / 5.17 (e^a as exp(a/2) squared), asinh 3.34 / 3.82, acosh 2.64 / 2.77,
# atanh 3.42 / 3.40)
BOUNDS = {("exp", "f"): 1, ("log", "f"): 2, ("tanh", "f"): 2, ("sigmoid", "f"): 3, ("erf", "f"): 1,
          ("expm1", "f"): 2, ("log1p", "f"): 4, ("sinh", "f"): 4, ("cosh", "f"): 3, ("asinh", "f"): 4,
          ("acosh", "f"): 3, ("atanh", "f"): 4, ("expm1", "d"): 4, ("log1p", "d"): 4, ("sinh", "d"): 7,
          ("cosh", "d"): 6, ("asinh", "d"): 4, ("acosh", "d"): 3, ("atanh", "d"): 4,
          ("exp", "d"): 3, ("log", "d"): 2, ("tanh", "d"): 2, ("sigmoid", "d"): 4, ("erf", "d"): 3}


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    src = ['#include "ember_math.h"']
    for name in FUNCS:
        for t, s in (("float", "f"), ("double", "")):
            src.append(f"void t_{name}{s}(const {t}* restrict x, {t}* restrict y, long n) "
                       f"{{ for (long i = 0; i < n; i++) y[i] = em_{name}{s}(x[i]); }}")
    library = toolchain.build("\n".join(src), toolchain.find_compiler())[0]
    return library


def _run(lib, name, x):
    y = np.empty_like(x)
    fn = getattr(lib, f"t_{name}" + ("f" if x.dtype == np.float32 else ""))
    fn(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data), ctypes.c_long(x.size))
    return y


def _reference(name, x):
    x = x.astype(np.longdouble)
    with np.errstate(all="ignore"):
        if name == "exp":
            return np.exp(x)
        if name == "log":
            return np.log(x)
        if name == "tanh":
            return np.tanh(x)
        if name in ("expm1", "log1p", "sinh", "cosh"):
            return getattr(np, name)(x)
        if name in ("asinh", "acosh", "atanh"):
            return getattr(np, "arc" + name[1:])(x)
        if name == "sigmoid":
            return 1 / (1 + np.exp(-x))
        return special.erf(x.astype(np.float64)).astype(np.longdouble)


def _grid(dtype, name):
    info = np.finfo(dtype)
    dense = np.linspace(-20, 20, 400_001)
    magnitudes = 2.0 ** np.linspace(np.log2(float(info.tiny)) - 20, np.log2(float(info.max)) - 1e-9, 200_000)
    wide = np.concatenate([magnitudes, -magnitudes])
    edges = [0.0, -0.0, info.tiny, info.smallest_subnormal, 1.0, 0.625, -0.625, np.log(info.max),
             np.log(info.tiny), 88.72, -87.33, -103.9, 709.78, -745.1]
    parts = [dense, wide, edges]
    if name in ("log", "log1p"):  # the reduction's seams and the neighbourhood of 1 (of 0 for log1p)
        near = 1 + np.arange(-500, 500) * float(info.eps)
        parts += [np.linspace(0.5, 2, 200_001) - (name == "log1p"), near - (name == "log1p")]
    return np.concatenate(parts).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", FUNCS)
def test_error_bound(lib, name, dtype):
    x = _grid(dtype, name)
    y = _run(lib, name, x)
    ref = _reference(name, x)
    with np.errstate(all="ignore"):
        finite = np.isfinite(ref) & (np.abs(ref) <= np.finfo(dtype).max)
        # one ulp of the correctly rounded result; subnormal results count in the smallest ulp
        ulp = np.maximum(np.spacing(np.abs(ref[finite].astype(dtype))),
                         np.finfo(dtype).smallest_subnormal).astype(np.longdouble)
        err = np.abs(y[finite].astype(np.longdouble) - ref[finite]) / ulp
    assert err.max() <= BOUNDS[name, np.dtype(dtype).char], (name, float(err.max()), x[finite][err.argmax()])
    # outside the finite range: infinities and overflow agree exactly with the reference
    over = ~finite & ~np.isnan(ref)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y[over], ref[over].astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", FUNCS)
def test_special_values(lib, name, dtype):
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0], dtype)
    y = _run(lib, name, x)
    with np.errstate(all="ignore"):
        ref = _reference(name, x).astype(dtype)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    np.testing.assert_allclose(y[~np.isnan(ref)], ref[~np.isnan(ref)], rtol=4 * np.finfo(dtype).eps, atol=0)


def test_erff_every_float(lib):
    """Every float32 in [0.5, 1) (where erf's two ranges meet at 0.75, results in [0.52, 0.85)),
    every 7th in [1, 2) and every 997th bit pattern of the rest, both signs, against the float64 reference: at most
    0.72 ulp (the maximum of the sweep of all 2^32 bit patterns stated in ember_math.h), and
    erf(-x) is exactly -erf(x)."""
    half, one, two = (np.float32(v).view(np.int32) for v in (0.5, 1.0, 2.0))
    bits = np.concatenate([np.arange(half, one, dtype=np.int32), np.arange(one, two, 7, dtype=np.int32),
                           np.arange(0, 0x7f800001, 997, dtype=np.int32)])
    x = bits.view(np.float32)
    y = _run(lib, "erf", x)
    np.testing.assert_array_equal(_run(lib, "erf", -x), -y)
    ref = special.erf(x.astype(np.float64))
    ulp = np.maximum(np.spacing(np.abs(ref.astype(np.float32))), np.finfo(np.float32).smallest_subnormal)
    ulp = np.where(np.abs(ref) > 0.5, 2.0 ** -24, ulp)  # below 1.0, for results that round up to it
    err = np.abs(y - ref) / ulp
    assert err.max() <= 0.72, (float(err.max()), x[err.argmax()])
