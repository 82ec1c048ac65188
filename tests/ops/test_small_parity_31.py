"""Small eager parity rows of session 31 (WRONG31), against torch 2.13: ``softplus``'s gradient is
torch's formula ``g * z / (z + 1)`` (sigmoid's 1.0 and 0.0 where torch's is nan and 3.78e-44), an
outer product by ``mm``/``matmul`` keeps -0.0 as torch's gemm, and NumPy arrays given to function
forms: Tensor's operators called as functions (``operator.truediv(x, nd)``) take one as ``x / nd``,
``square``/``std``/``var``/``flatten``/``inner``/``kron``/``cross``/``dist``/``equal``/``pow(nd, x)``/
``float_power`` refuse one with torch's TypeError (AttributeError, RuntimeError, ValueError or a
result before)."""
import operator
import warnings

import numpy as np
import pytest
import torch

import ember

XS = [-100.0, -20.0, -1.0, 0.0, 0.5, 19.0, 21.0, 88.0, 89.0, 100.0, 999.0, 1000.0, 1001.0,
      float("inf"), float("-inf"), float("nan")]


def _softplus_grad(lib, dtype, beta, threshold, xs=XS):
    x = lib.tensor(xs, dtype=getattr(lib, dtype), requires_grad=True)
    g, = lib.autograd.grad(lib.nn.functional.softplus(x, beta, threshold).sum(), x)
    return np.array(g.float().tolist())


@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (1.0, 1000.0), (2.5, 5.0), (0.5, 100.0)])
def test_softplus_gradient_is_torchs_formula_in_float32(beta, threshold):
    """nan where exp(beta x) overflows below the threshold (inf / inf), exp's own value far below
    (a subnormal at -100): torch's nan pattern exactly, values within 2 ulp of the formula in float64."""
    got, want = _softplus_grad(ember, "float32", beta, threshold), _softplus_grad(torch, "float32", beta, threshold)
    assert (np.isnan(got) == np.isnan(want)).all()
    x = np.array(XS, np.float32).astype(np.float64)
    bx = x * np.float64(np.float32(beta))
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.exp(bx)
        ref = np.where(bx > threshold, 1.0, z / (z + 1)).astype(np.float32)  # (float32: nan where z overflows it)
    ref[np.isnan(want)] = np.nan
    np.testing.assert_allclose(got, ref, rtol=2.4e-7, atol=1.5e-45)
    if (beta, threshold) == (1.0, 1000.0):
        assert np.isnan(got[8:12]).all() and got[12] == 1.0 and 0 < got[0] < 4e-44


@pytest.mark.parametrize("dtype, rtol", [("float16", 2 ** -10), ("bfloat16", 2 ** -7), ("float64", 1e-15)])
def test_softplus_gradient_other_dtypes(dtype, rtol):
    """16-bit: at float32, rounded once (torch's opmath); float64: overflow from 710."""
    for beta, threshold in [(1.0, 20.0), (1.0, 1000.0), (3.0, 2.0)]:
        got, want = _softplus_grad(ember, dtype, beta, threshold), _softplus_grad(torch, dtype, beta, threshold)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
        assert (np.isnan(got) == np.isnan(want)).all()


def test_softplus_second_derivative_is_torchs():
    """torch's double backward: ``gg * g * beta * s * (1 - s)`` below the threshold, 0 from it on
    (also where the first derivative is nan), nan for a nan input."""
    xs = [-30.0, -1.0, 0.0, 2.0, 19.0, 21.0, 700.0, 710.0, 1000.0, 1001.0, float("nan")]
    for beta, threshold in [(1.0, 20.0), (1.0, 1000.0), (0.5, 100.0)]:
        got = []
        for lib in (torch, ember):
            x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
            g, = lib.autograd.grad(lib.nn.functional.softplus(x, beta, threshold).sum(), x, create_graph=True)
            gg, = lib.autograd.grad((g * g).sum(), x)
            got.append(np.array(gg.tolist()))
        np.testing.assert_allclose(got[1], got[0], rtol=1e-13, atol=0, equal_nan=True)


def _products(lib, a, b):
    return [a @ b, lib.mm(a, b), lib.matmul(a, b), lib.nn.functional.linear(a, b.t()),
            lib.matmul(a.reshape(1, -1, 1).expand(2, -1, 1).contiguous(), b)]


@pytest.mark.parametrize("m, n, dtype", [(3, 3, "float32"), (3, 3, "float64"), (40, 30, "float32"), (1, 5, "float32"),
                                         (5, 1, "float64"), (3, 3, "float16"), (3, 3, "bfloat16")])
def test_an_outer_product_keeps_torchs_signed_zeros(m, n, dtype):
    """Inner size 1: -1 * 0 is -0.0 in torch's gemm (m, n > 1, float32 and float64), +0.0 in its
    gemv (m or n 1) and 16-bit products."""
    rng = np.random.default_rng(m * n)
    a, b = rng.choice([-1.0, 0.0, 2.0, -0.0], (m, 1)), rng.choice([0.0, -3.0, 1.0, -0.0], (1, n))
    signs = []
    for lib in (torch, ember):
        got = _products(lib, lib.tensor(a, dtype=getattr(lib, dtype)), lib.tensor(b, dtype=getattr(lib, dtype)))
        signs.append([np.signbit(np.array(t.float().tolist())).tolist() for t in got])
    assert signs[1] == signs[0]
    assert any(map(np.any, signs[0])) or m == 1 or n == 1 or dtype in ("float16", "bfloat16")


OPERATORS = ["truediv", "floordiv", "mod", "pow", "and_", "or_", "xor", "lshift", "rshift", "add", "sub", "mul"]


@pytest.mark.parametrize("name", OPERATORS)
def test_operators_called_as_functions_take_an_array(name):
    """``operator.truediv(x, nd)`` is ``x / nd`` (torch takes both); ``torch.div(x, nd)`` refuses it."""
    for dtype in ("int64", "float32"):
        if name in ("and_", "or_", "xor", "lshift", "rshift") and dtype == "float32":
            continue
        nd = np.array([[3, 2, 1], [1, 2, 3]], dtype)
        got, want = (getattr(operator, name)(lib.tensor([[1, 2, 3], [4, 5, 6]], dtype=getattr(lib, dtype)), nd)
                     for lib in (ember, torch))
        if name != "truediv" or dtype == "float32":  # (torch hands ``int / nd`` to NumPy: float64)
            assert got.dtype == ember.float32 if dtype == "float32" else got.dtype == ember.int64
            assert got.tolist() == want.tolist()
        if name != "truediv" or dtype == "float32":  # (``x_int /= nd``: ember's RuntimeError, as for a tensor)
            x = ember.tensor([[1, 2, 3], [4, 5, 6]], dtype=getattr(ember, dtype))
            assert getattr(operator, f"i{name.rstrip('_')}")(x, nd).tolist() == got.tolist()
    with pytest.raises(TypeError, match=r"div\(\): argument 'other' \(position 2\) must be Tensor, not numpy.ndarray"):
        ember.div(ember.ones(2), np.ones(2))


def _refusals():
    return {"square": lambda L, x, nd: L.square(nd), "flatten": lambda L, x, nd: L.flatten(nd),
            "std": lambda L, x, nd: L.std(nd), "var": lambda L, x, nd: L.var(nd, dim=1),
            "var_mean": lambda L, x, nd: L.var_mean(nd, correction=0), "std_mean": lambda L, x, nd: L.std_mean(nd),
            "inner": lambda L, x, nd: L.inner(nd, x), "inner2": lambda L, x, nd: L.inner(x, nd),
            "kron": lambda L, x, nd: L.kron(x, nd), "cross": lambda L, x, nd: L.cross(nd, x),
            "cross2": lambda L, x, nd: L.cross(x, nd, dim=1), "dist": lambda L, x, nd: L.dist(x, nd),
            "equal": lambda L, x, nd: L.equal(nd, x), "equal2": lambda L, x, nd: L.equal(x, nd),
            "pow": lambda L, x, nd: L.pow(nd, x), "float_power": lambda L, x, nd: L.float_power(nd, x),
            "float_power2": lambda L, x, nd: L.float_power(x, nd), "square_int": lambda L, x, nd: L.square(2),
            "kron_int": lambda L, x, nd: L.kron(x, 2)}


@pytest.mark.parametrize("name", sorted(_refusals()))
def test_functions_refuse_an_array_in_torchs_words(name):
    call, found = _refusals()[name], []
    for lib in (torch, ember):
        x = lib.arange(1.0, 7.0).reshape(2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError) as error:
                call(lib, x, x.numpy().copy())
        found.append(str(error.value))
    assert found[1] == found[0]


@pytest.mark.parametrize("method", ["dist", "equal", "kron", "inner", "cross", "float_power"])
def test_methods_refuse_an_array(method):
    x = ember.arange(1.0, 7.0).reshape(2, 3)
    with pytest.raises(TypeError, match="must be Tensor, not numpy.ndarray|invalid combination"):
        getattr(x, method)(x.numpy().copy())
