"""torch.special's normal-distribution, Bessel, Airy and zeta functions and its orthogonal
polynomials (issue 8, session 16) against torch 2.13 and float64 references.

Where torch 2.13's float64 kernels are less accurate than Cephes (``bessel_j0/j1/y0/y1`` and
``airy_ai`` to ~1e-7 relative near their zeros, ``ndtr`` below -5 where ``(1 + erf(x/sqrt 2))/2``
cancels), values are compared with mpmath at 1e-13 and with torch at the accuracy torch has."""
import mpmath
import numpy as np
import pytest
import torch

import ember
from harness import Arg, Case, P, R, V, check, inf, nan, params

EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, inf, -inf, nan]


def _unit(*shape):
    return Arg(shape, lambda rng, s: rng.uniform(0.05, 0.95, s))


def _above_one(*shape, grad=None):
    return Arg(shape, lambda rng, s: rng.uniform(1.5, 4.0, s), grad=grad)


DIFFERENTIABLE = {  # name: (draw, edge values)
    "ndtr": (R, [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, inf, -inf, nan]),
    "log_ndtr": (R, EDGE + [-30.0, 10.0]),
    "ndtri": (_unit, [0.0, 1.0, 0.5, -0.5, 1.5, nan]),
    "erfcx": (R, EDGE + [-20.0, 30.0, 1e10]),
    "entr": (P, [0.0, -0.0, -1.0, 1.0, 0.5, inf, nan]),
    "i0e": (R, EDGE + [700.0, -700.0]),
    "i1e": (R, EDGE + [700.0, -700.0]),
}


def _cases():
    cases = []
    for name, (draw, edge) in DIFFERENTIABLE.items():
        fn = lambda L, x, name=name: getattr(L.special, name)(x)
        cases += [Case(f"{name}-random", fn, draw(3, 4), grad2=True, float64_oracle=True),
                  Case(f"{name}-edge", fn, V(edge), grad=False, float64_oracle=True),
                  Case(f"{name}-empty", fn, draw(0, 3)),
                  Case(f"{name}-int", lambda L, x, name=name: getattr(L.special, name)(x.abs() + 1), I3, dtypes=(None,))]
    cases += [
        Case("i1e-at-zero", lambda L, x: L.special.i1e(x), V([0.0, 0.0]), grad2=True),
        Case("zeta", lambda L, x, q: L.special.zeta(x, q), _above_one(3, 1, grad=False), P(4), float64_oracle=True),
        Case("zeta-numbers", lambda L, q: [L.special.zeta(2.0, q), L.special.zeta(q.detach() + 1, 3)], P(3),
             float64_oracle=True),
        Case("zeta-edge", lambda L, x, q: L.special.zeta(x, q), V([1.0, 0.5, 2.0, 2.0, 2.0, 3.0, nan, 2.0]),
             V([1.0, 1.0, 0.0, -1.0, -1.5, 0.5, 1.0, nan]), grad=False, float64_oracle=True),
        Case("float16", lambda L, x: [L.special.ndtr(x), L.special.i0e(x), L.special.i1e(x), L.special.entr(x.abs())],
             R(6, dtype="float16"), dtypes=(None,), grad=False, tol=(2e-3, 2e-3)),
        Case("zeta-int", lambda L, x, q: L.special.zeta(x, q), V([2, 3]), V([1, 2]), dtypes=(None,)),
    ]
    return cases


I3 = Arg((3,), lambda rng, s: rng.integers(0, 4, s), dtype="int64", grad=False)


@pytest.mark.parametrize("case,dtype", params(_cases()))
def test_against_torch(case, dtype):
    check(case, dtype)


def test_zeta_derivative_in_its_first_argument_raises_as_torchs():
    for L in (ember, torch):
        x = L.tensor([2.0, 3.0], dtype=L.float64, requires_grad=True)
        with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
            L.autograd.grad(L.special.zeta(x, L.tensor([1.0, 2.0], dtype=L.float64)).sum(), x)
    with pytest.raises(TypeError, match="special_zeta\\(\\) received an invalid combination"):
        ember.special.zeta(2.0, 3.0)


# ---- functions without a derivative: mpmath, torch, dtypes, errors ---------------------------------------
WITHOUT_GRAD = {  # name: mpmath's function of one mpf
    "bessel_j0": lambda x: mpmath.besselj(0, x), "bessel_j1": lambda x: mpmath.besselj(1, x),
    "bessel_y0": lambda x: mpmath.bessely(0, x), "bessel_y1": lambda x: mpmath.bessely(1, x),
    "modified_bessel_i0": lambda x: mpmath.besseli(0, x), "modified_bessel_i1": lambda x: mpmath.besseli(1, x),
    "modified_bessel_k0": lambda x: mpmath.besselk(0, x), "modified_bessel_k1": lambda x: mpmath.besselk(1, x),
    "scaled_modified_bessel_k0": lambda x: mpmath.exp(x) * mpmath.besselk(0, x),
    "scaled_modified_bessel_k1": lambda x: mpmath.exp(x) * mpmath.besselk(1, x),
    "spherical_bessel_j0": lambda x: mpmath.sin(x) / x if x else mpmath.mpf(1), "airy_ai": mpmath.airyai,
}
_X = np.random.default_rng(16).uniform(-12.0, 12.0, 40)
_POSITIVE_ONLY = ("bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                  "scaled_modified_bessel_k1")


@pytest.mark.parametrize("name", sorted(WITHOUT_GRAD))
def test_bessel_and_airy_equal_mpmath_and_torch(name):
    x = np.abs(_X) + 0.1 if name in _POSITIVE_ONLY else _X
    fn = getattr(ember.special, name)
    with mpmath.workdps(30):
        reference = np.array([float(WITHOUT_GRAD[name](mpmath.mpf(float(v)))) for v in x])
    got = fn(ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, reference, rtol=1e-13, atol=1e-300)
    # torch's float64 kernels: the same function, to their own accuracy (1e-7 near the zeros)
    np.testing.assert_allclose(got, getattr(torch.special, name)(torch.tensor(x)).numpy(), rtol=2e-6, atol=5e-6)
    # float32: the float64 value of the float32 input, rounded once (bound: 1 ulp)
    x32 = x.astype(np.float32)
    with mpmath.workdps(30):
        reference32 = np.array([float(WITHOUT_GRAD[name](mpmath.mpf(float(v)))) for v in x32])
    np.testing.assert_allclose(fn(ember.tensor(x32)).numpy(), reference32.astype(np.float32), rtol=1.2e-7, atol=1e-38)
    edge = torch.tensor([0.0, -0.0, -1.0, inf, -inf, nan, 1e-300, 700.0, -700.0], dtype=torch.float64)
    np.testing.assert_allclose(fn(ember.tensor(edge.numpy())).numpy(), getattr(torch.special, name)(edge).numpy(),
                               rtol=1e-6, atol=1e-300, equal_nan=True)


def test_airy_ai_far_out_is_finite_as_torchs():
    """Past |x| ~ 5e6 SciPy's airy gives nan: Ai is 0 on the right and oscillates on the left.
    Bound: the phase 2/3 z^1.5 is rounded in float64 (ulp 4e-6 at z = 2e7), so 1e-4 relative."""
    x = np.array([-2e7, -1e7, -5e6 - 0.5, 5e6, 1e7, 1e10])
    with mpmath.workdps(40):
        reference = np.array([float(mpmath.airyai(mpmath.mpf(float(v)))) for v in x])
    for dtype in (ember.float64, ember.float32):
        got = ember.special.airy_ai(ember.tensor(x, dtype=dtype)).double().numpy()
        np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-12)
    ends = [inf, -inf, nan, -1e300]  # torch: nan (the phase overflows at -1e300)
    assert np.isnan(ember.special.airy_ai(ember.tensor(ends, dtype=ember.float64)).numpy()).all()
    assert np.isnan(torch.special.airy_ai(torch.tensor(ends, dtype=torch.float64)).numpy()).all()


@pytest.mark.parametrize("name", ["bessel_j0", "modified_bessel_k1", "airy_ai", "log_ndtr", "erfcx", "ndtri",
                                  "chebyshev_polynomial_t", "zeta"])
def test_dtypes_and_errors_as_torchs(name):
    two = name in ("chebyshev_polynomial_t", "zeta")
    for dtype in ("float16", "bfloat16", "complex64"):
        messages = []
        for L in (ember, torch):
            x = L.ones(2, dtype=getattr(L, dtype))
            with pytest.raises(NotImplementedError) as error:
                getattr(L.special, name)(*((x, 2) if two else (x,)))
            messages.append(str(error.value))
        assert messages[0] == messages[1]
    for L in (ember, torch):
        x = L.tensor([1, 2])
        y = getattr(L.special, name)(*((x, 3) if two else (x,)))
        assert str(y.dtype).split(".")[1] == "float32"
        z = getattr(L.special, name)(*((x, L.tensor(2.0, dtype=L.float64)) if two else (x.double(),)))
        assert str(z.dtype).split(".")[1] == "float64"


def test_bfloat16_as_torchs():
    values = [-3.0, -0.5, 0.0, 0.25, 2.0, 9.0]
    for name in ("ndtr", "i0e", "i1e", "entr"):
        e = getattr(ember.special, name)(ember.tensor(values, dtype=ember.bfloat16))
        t = getattr(torch.special, name)(torch.tensor(values, dtype=torch.bfloat16))
        assert e.dtype is ember.bfloat16
        np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=8e-3, atol=1e-3, equal_nan=True)


def test_functions_without_derivative_do_not_require_grad():
    x = ember.tensor([0.5, 2.0], requires_grad=True)
    for name in ("bessel_j0", "modified_bessel_k0", "airy_ai", "spherical_bessel_j0", "hermite_polynomial_h"):
        args = (x, 3) if "polynomial" in name else (x,)
        assert not getattr(ember.special, name)(*args).requires_grad
    assert ember.special.ndtr(x).requires_grad


# ---- orthogonal polynomials -----------------------------------------------------------------------------
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_equal_torch(name):
    rng = np.random.default_rng(len(name))
    # (torch's value at x = nan is whatever its loop left, -inf for some kinds: nan is left out)
    x = np.concatenate([rng.uniform(-1.5, 1.5, 120), [0.0, 1.0, -1.0, 0.5, -0.5, inf, -inf, 2.0, -2.0, 1e-17]])
    n = rng.integers(-2, 25, x.size).astype(np.float64)
    n[:6] = [nan, inf, -inf, -0.5, 2.7, 30.0]
    e, t = getattr(ember.special, name), getattr(torch.special, name)
    got = e(ember.tensor(x), ember.tensor(n)).numpy()
    np.testing.assert_allclose(got, t(torch.tensor(x), torch.tensor(n)).numpy(), rtol=1e-9, atol=1e-12)
    # float32 against the float64 value of the float32 input (bound: 1e-5 of the value, or 1e-6
    # absolute: the recurrence cancels near the roots)
    x32, exact = x.astype(np.float32), e(ember.tensor(x.astype(np.float32).astype(np.float64)), ember.tensor(n))
    got32 = e(ember.tensor(x32), ember.tensor(n.astype(np.float32)))
    assert got32.dtype is ember.float32
    finite = np.isfinite(exact.numpy()) & (np.abs(exact.numpy()) < 1e30)
    np.testing.assert_allclose(got32.numpy()[finite], exact.numpy()[finite], rtol=1e-5, atol=1e-6)
    # broadcasting, a Python number on either side, a transposed x, empty input
    xs, ns = torch.tensor(rng.uniform(-1, 1, (3, 1))), torch.tensor([0.0, 1.0, 4.0, 11.0], dtype=torch.float64)
    for args in ((xs, ns), (xs.t(), 5), (0.3, ns), (xs[:0], ns)):
        mine = e(*[ember.tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args])
        theirs = t(*args)
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)
    with pytest.raises(TypeError, match=f"special_{name}\\(\\) received an invalid combination"):
        e(0.5, 2)


def test_polynomials_closed_forms():
    """A float64 reference torch does not share: T_n(cos t) = cos(n t), H_3 = 8x^3 - 12x,
    L_2 = (x^2 - 4x + 2) / 2, P_2 = (3x^2 - 1) / 2."""
    t = ember.linspace(0.1, 3.0, 7, dtype=ember.float64)
    x = t.cos()
    S = ember.special
    assert np.allclose(S.chebyshev_polynomial_t(x, 9).numpy(), (9 * t).cos().numpy(), rtol=0, atol=1e-13)
    assert np.allclose(S.hermite_polynomial_h(t, 3).numpy(), (8 * t ** 3 - 12 * t).numpy(), rtol=1e-14)
    assert np.allclose(S.laguerre_polynomial_l(t, 2).numpy(), ((t * t - 4 * t + 2) / 2).numpy(), rtol=1e-13)
    assert np.allclose(S.legendre_polynomial_p(x, 2).numpy(), ((3 * x * x - 1) / 2).numpy(), rtol=1e-13)


def test_polynomials_of_high_degree_equal_torch_float64():
    """n = 10^6: the trigonometric forms and SciPy's C loops, not a Python loop per degree.
    (x >= 0: L_n(x) for x < 0 overflows, inf in SciPy's loop and nan in torch's.)"""
    x = torch.tensor([0.3, 0.7, 0.0, 0.99], dtype=torch.float64)
    for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_w", "legendre_polynomial_p", "laguerre_polynomial_l"):
        got = getattr(ember.special, name)(ember.tensor(x.numpy()), 10 ** 6).numpy()
        np.testing.assert_allclose(got, getattr(torch.special, name)(x, 10 ** 6).numpy(), rtol=1e-6, atol=1e-9)
