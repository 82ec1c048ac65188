"""ember's vector math (runtime/ember_math.h) against float64/long-double references.

Grids are dense over the ranges activations take and reach into the tails, the subnormals,
the overflow thresholds, +-inf and nan. Errors are in units in the last place (ulp) of the
result dtype; the bounds are the measured maxima rounded up, and the header states the same.
"""
import ctypes

import numpy as np
import pytest
import torch
from scipy import special

import ember
from ember.compiler.backends import toolchain

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

FUNCS = ("exp", "log", "tanh", "sigmoid", "erf", "expm1", "log1p", "sinh", "cosh", "asinh", "acosh", "atanh",
         "atan", "asin", "acos", "tan")
INVERSE_TRIG = ("atan", "asin", "acos")  # float: Cephes polynomials; double: libm
# (function, dtype) -> max error in ulp, measured on this grid and stated in the header
# (measured: exp 0.99 / 2.34, log 1.94 / 1.95, tanh 1.20 / 1.55, sigmoid 2.47 / 3.55, erf 0.72 (float
# arithmetic; 0.72 over all 2^32 float32 too, see test_erff_every_float) / 3.0 where the double erf
# is libm's and the reference SciPy's; expm1 1.75 / 3.87, log1p 3.31 / 3.49,
# sinh 3.55 / 6.81, cosh 2.89 / 5.17 (e^a as exp(a/2) squared), asinh 3.34 / 3.82, acosh 2.64 / 2.77,
# atanh 3.42 / 3.40; atan 2.11 / 0.51, asin 2.15 / 0.51, acos 1.05 / 0.51 where the double ones
# are libm's; every float32 input of their domains: see test_inverse_trig_sweep_of_float32)
BOUNDS = {("exp", "f"): 1, ("log", "f"): 2, ("tanh", "f"): 2, ("sigmoid", "f"): 3, ("erf", "f"): 1,
          ("expm1", "f"): 2, ("log1p", "f"): 4, ("sinh", "f"): 4, ("cosh", "f"): 3, ("asinh", "f"): 4,
          ("acosh", "f"): 3, ("atanh", "f"): 4, ("expm1", "d"): 4, ("log1p", "d"): 4, ("sinh", "d"): 7,
          ("cosh", "d"): 6, ("asinh", "d"): 4, ("acosh", "d"): 3, ("atanh", "d"): 4,
          ("exp", "d"): 3, ("log", "d"): 2, ("tanh", "d"): 2, ("sigmoid", "d"): 4, ("erf", "d"): 3,
          ("atan", "f"): 3, ("asin", "f"): 3, ("acos", "f"): 2, ("atan", "d"): 1, ("asin", "d"): 1, ("acos", "d"): 1,
          ("tan", "f"): 1, ("tan", "d"): 1, ("tan_near", "f"): 4}


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    src = ['#include "ember_math.h"']
    for name in FUNCS:
        for t, s in (("float", "f"), ("double", "")):
            src.append(f"void t_{name}{s}(const {t}* restrict x, {t}* restrict y, long n) "
                       f"{{ for (long i = 0; i < n; i++) y[i] = em_{name}{s}(x[i]); }}")
    src.append("void t_tan_nearf(const float* restrict x, float* restrict y, long n) "
               "{ for (long i = 0; i < n; i++) y[i] = em_tanf_near(x[i]); }")
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
        if name in ("expm1", "log1p", "sinh", "cosh", "tan"):
            return getattr(np, name)(x)
        if name in ("asinh", "acosh", "atanh") + INVERSE_TRIG:
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


@pytest.mark.parametrize("name", INVERSE_TRIG)
def test_inverse_trig_sweep_of_float32(lib, name):
    """Every 509th float32 bit pattern (8.4 million inputs: all exponents, both signs, NaN, inf,
    the subnormals), against float64 NumPy: within the bound the header states (measured here:
    atan 2.17, asin 2.24, acos 1.08 ulp; over all 2^32 patterns, once: 2.30, 2.36, 1.12); NaN exactly
    where the reference has it (outside [-1, 1] for asin/acos), -0.0 kept."""
    x = (np.arange(0, 1 << 32, 509, dtype=np.uint64).astype(np.uint32)).view(np.float32)
    y = _run(lib, name, x)
    with np.errstate(all="ignore"):
        ref = getattr(np, "arc" + name[1:])(x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    ok = ~np.isnan(ref)
    ulp = np.maximum(np.spacing(np.abs(ref[ok].astype(np.float32))), np.finfo(np.float32).smallest_subnormal)
    err = np.abs(y[ok].astype(np.float64) - ref[ok]) / ulp.astype(np.float64)
    assert err.max() <= BOUNDS[name, "f"], (name, float(err.max()), x[ok][err.argmax()])
    zero = ok & (ref == 0)
    np.testing.assert_array_equal(np.signbit(y[zero]), np.signbit(ref[zero]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inverse_trig_compiled_in_c_as_torch(dtype, monkeypatch, capfd, tmp_path):
    """asin, acos and atan inside a compiled graph are ember_math.h's functions in the fused loop
    (no NumPy call): values within the header's bound of torch's on random, strided inputs,
    torch's NaN/inf/-0.0 results, gradients as eager's."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()

    def fn(x):
        return ember.asin(x) * 2, ember.acos(x) + 1, ember.atan(x * 3)

    rng = np.random.default_rng(5)
    x0 = rng.uniform(-1.2, 1.2, (64, 33)).astype(dtype)
    x0[0, :9] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-30, -1e30]
    compiled = ember.compile(fn, fullgraph=True)
    try:
        for _ in range(3):
            x = ember.tensor(x0, requires_grad=True)
            outs = compiled(x[:, ::2])
        sum(o[o == o].sum() for o in outs).backward()
        source = capfd.readouterr().err
        assert "= F_asin" not in source and "= F_acos" not in source and "= F_atan" not in source
        assert f"em_asin{'f' if dtype == np.float32 else ''}(" in source
        t = torch.tensor(x0[:, ::2])
        for a, e in zip(outs, (torch.asin(t) * 2, torch.acos(t) + 1, torch.atan(t * 3))):
            a, e = a.detach().numpy(), e.numpy()
            np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
            np.testing.assert_array_equal(np.signbit(a[a == 0]), np.signbit(e[a == 0]))
            # 3 ulp of ours (float32), 1 of torch's, and the rounding of the product or sum after
            np.testing.assert_allclose(a, e, rtol=5 * np.finfo(dtype).eps, atol=0)
        x = ember.tensor(x0, requires_grad=True)
        outs = fn(x[:, ::2])
        sum(o[o == o].sum() for o in outs).backward()
        eager_grad = x.grad.numpy()
        x = ember.tensor(x0, requires_grad=True)
        outs = compiled(x[:, ::2])
        sum(o[o == o].sum() for o in outs).backward()
        np.testing.assert_allclose(x.grad.numpy(), eager_grad, rtol=4 * np.finfo(dtype).eps, atol=0)
    finally:
        ember.compiler.reset()


def test_tan_sweep_of_float32(lib):
    """Every 509th float32 bit pattern (all exponents up to 2^127, where the reduction is
    Payne-Hanek's; both signs, NaN, inf, the subnormals) against float64 NumPy: within 1 ulp
    (measured 0.50), NaN exactly where the reference has it (inf, NaN), -0.0 kept; and the
    float32 numbers nearest a multiple of pi/2 up to 2^24, where the reduction cancels most."""
    x = (np.arange(0, 1 << 32, 509, dtype=np.uint64).astype(np.uint32)).view(np.float32)
    multiples = (np.arange(1, 1 << 14) * (np.pi / 2) * np.float64(2) ** np.arange(0, 11)[:, None]).ravel()
    near = multiples.astype(np.float32)
    x = np.concatenate([x, near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(0))])
    y = _run(lib, "tan", x)
    with np.errstate(all="ignore"):
        ref = np.tan(x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    ok = ~np.isnan(ref)
    ulp = np.maximum(np.spacing(np.abs(ref[ok].astype(np.float32))), np.finfo(np.float32).smallest_subnormal)
    err = np.abs(y[ok].astype(np.float64) - ref[ok]) / ulp.astype(np.float64)
    assert err.max() <= BOUNDS["tan", "f"], (float(err.max()), x[ok][err.argmax()])
    zero = ok & (ref == 0)
    np.testing.assert_array_equal(np.signbit(y[zero]), np.signbit(ref[zero]))



def test_tanf_near_sweep_below_4096(lib):
    """em_tanf_near, the all-float tan of compiled graphs for |x| < 4096: every 97th float32 bit
    pattern below 4096, both signs, and the float32 numbers nearest each multiple of pi/2 below
    it (where the reduction cancels most), against float64 NumPy: within 4 ulp (the bound
    ember_math.h states; over every 3rd float32 below 4096: 3.41), -0.0 kept, NaN for NaN."""
    x = np.arange(0, 0x45800000, 97, dtype=np.uint32).view(np.float32)
    near = (np.arange(1, 2608) * (np.pi / 2)).astype(np.float32)
    x = np.concatenate([x, near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(0))])
    x = np.concatenate([x, -x, [np.nan]]).astype(np.float32)
    y = _run(lib, "tan_near", x)
    ref = np.tan(x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    ok = ~np.isnan(ref)
    ulp = np.maximum(np.spacing(np.abs(ref[ok].astype(np.float32))), np.finfo(np.float32).smallest_subnormal)
    err = np.abs(y[ok].astype(np.float64) - ref[ok]) / ulp.astype(np.float64)
    assert err.max() <= BOUNDS["tan_near", "f"], (float(err.max()), x[ok][err.argmax()])
    np.testing.assert_array_equal(np.signbit(y[ok & (ref == 0)]), np.signbit(ref[ok & (ref == 0)]))


@pytest.mark.parametrize("scale", [3.0, 1e5])
def test_tan_compiled_in_c(scale, monkeypatch, capfd, tmp_path):
    """float32 tan inside a compiled graph is the fused loop's C, not NumPy's: em_tanf_near
    when a first pass finds every argument below 4096 (scale 3), em_tanf, exact to 1 ulp for
    every float32, when one is not (scale 1e5); within those bounds of float64 NumPy (the
    product by 2 after is exact), NaN and -0.0 kept; the gradient as eager's, whose tan is
    NumPy's SVML tanf: 2 (1 + tan^2), within the two tans' errors."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    x0 = (np.random.default_rng(7).standard_normal((37, 65)) * scale).astype(np.float32)
    x0[0, :3] = [np.nan, -0.0, 0.0]

    def fn(x):
        return ember.tan(x * 1.0) * 2

    def run(f):
        x = ember.tensor(x0, requires_grad=True)
        y = f(x)
        ember.nan_to_num(y, 0.0).sum().backward()
        return y.detach().numpy(), x.grad.numpy()
    try:
        compiled = ember.compile(fn)
        run(compiled)  # (the call that captures runs eagerly)
        (y, grad), (_, eager_grad) = run(compiled), run(fn)
        source = capfd.readouterr().err
        assert "= F_tan" not in source and "em_tanf_near(" in source and "em_tanf(" in source
        ref = np.tan(x0.astype(np.float64)) * 2
        np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
        np.testing.assert_array_equal(np.signbit(y[0, 1:3]), [True, False])
        ok = ~np.isnan(ref)
        ulp = np.spacing(np.abs(ref[ok]).astype(np.float32)).astype(np.float64)
        bound = BOUNDS["tan_near" if scale < 4096 else "tan", "f"]
        assert (np.abs(y[ok] - ref[ok]) / ulp).max() <= bound
        # d/dx = 2 (1 + tan^2): twice tan's relative error, ours and NumPy's (measured 2.4 ulp)
        np.testing.assert_allclose(grad[ok], eager_grad[ok], rtol=2 * (bound + 3 + 1) * 2.0 ** -24)
    finally:
        ember.compiler.reset()


def test_tan_in_place_checks_before_writing(monkeypatch, capfd, tmp_path):
    """``x.add_(tan(x))`` stores into x, which the loop reads: the pass over tan's arguments
    runs before the loop writes (else one beyond 4096 would be read back already overwritten
    by the exact loop's second run); x then equals x + tan(x) to float32 rounding."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    x0 = (np.random.default_rng(1).standard_normal((16, 9)) * 3).astype(np.float32)
    x0[2, 3] = 1e6

    def fn(x):
        x.add_(ember.tan(x))
        return x * 1
    compiled = ember.compile(fn)
    try:
        compiled(ember.tensor(x0))  # (the call that captures runs eagerly)
        x = ember.tensor(x0)
        out = compiled(x)
        assert "    if (!wide) {" in capfd.readouterr().err
        tan = np.tan(x0.astype(np.float64))
        # tan's error (1 ulp: em_tanf, as one argument is beyond 4096) and the sum's rounding
        bound = 2.0 ** -24 * ((1 + BOUNDS["tan", "f"]) * np.abs(tan) + np.abs(x0 + tan) + np.abs(x0))
        assert (np.abs(x.numpy() - (x0 + tan)) <= bound).all()
        np.testing.assert_array_equal(out.numpy(), x.numpy())
    finally:
        ember.compiler.reset()
