"""Eager parity, session 32 (EAGER32): the sign of zero of size-1 contractions (einsum, tensordot,
inner, complex mm, bmm, matmul of single matrices, bilinear) and NumPy arrays with Tensor's
operators (torch's decline the array: NumPy computes, or Python's TypeError), against torch."""
import operator

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(32)


def _signed(shape, zeros=False):
    """float64 values of ``shape``: +-1, or +-0.0 when ``zeros``."""
    return RNG.choice([-0.0, 0.0] if zeros else [-1.0, 1.0], size=shape)


def _same_bits(got, want):
    """Equal values, dtypes and signs of zero (real and imaginary parts)."""
    assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
    g, w = got.detach().resolve_conj(), want.detach().resolve_conj()
    if want.is_complex():
        g, w = ember.view_as_real(g), torch.view_as_real(w)
    g, w = g.float().numpy() if g.dtype in (ember.bfloat16, ember.float16) else g.numpy(), \
        w.float().numpy() if w.dtype in (torch.bfloat16, torch.float16) else w.numpy()
    np.testing.assert_array_equal(g, w)
    assert np.array_equal(np.signbit(g), np.signbit(w))


def _both(make, *arrays, dtype="float32"):
    """``make(lib, *tensors)`` for ember and torch on the same ``arrays``."""
    return [make(lib, *[lib.tensor(a).to(getattr(lib, dtype)) for a in arrays]) for lib in (ember, torch)]


CONTRACTIONS = {  # name: (make, operand shapes; the second operand holds the zeros)
    "einsum i,j": (lambda lib, a, b: lib.einsum("i,j->ij", a, b), (3,), (4,)),
    "einsum ik,kj": (lambda lib, a, b: lib.einsum("ik,kj->ij", a, b), (3, 1), (1, 4)),
    "einsum ji,jk->ki (permuted)": (lambda lib, a, b: lib.einsum("ji,jk->ki", a, b), (1, 3), (1, 4)),
    "einsum bij,bjk": (lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), (2, 3, 1), (2, 1, 4)),
    "einsum ii,j (diagonal)": (lambda lib, a, b: lib.einsum("ii,j->ij", a, b), (3, 3), (2,)),
    "tensordot dims=0": (lambda lib, a, b: lib.tensordot(a, b, dims=0), (3,), (2, 2)),
    "tensordot dims=1": (lambda lib, a, b: lib.tensordot(a, b, dims=1), (3, 1), (1, 4)),
    "inner": (lambda lib, a, b: lib.inner(a, b), (3, 1), (4, 1)),
    "bmm one matrix, 20x20": (lambda lib, a, b: lib.bmm(a, b), (1, 20, 1), (1, 1, 20)),
    "bmm one matrix, 19x21 (+0.0)": (lambda lib, a, b: lib.bmm(a, b), (1, 19, 1), (1, 1, 21)),
    "bmm of 3, 30x30 (+0.0)": (lambda lib, a, b: lib.bmm(a, b), (3, 30, 1), (3, 1, 30)),
    "matmul 4-d one matrix": (lambda lib, a, b: lib.matmul(a, b), (1, 1, 20, 1), (1, 1, 1, 30)),
    "matmul 3-d @ 2-d one matrix": (lambda lib, a, b: lib.matmul(a, b), (1, 3, 1), (1, 4)),
    "matmul 2-d @ 3-d one matrix (+0.0)": (lambda lib, a, b: lib.matmul(a, b), (3, 1), (1, 1, 4)),
    "matmul 2-d @ 3-d one matrix, 20x20": (lambda lib, a, b: lib.matmul(a, b), (20, 1), (1, 1, 20)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CONTRACTIONS))
def test_size_one_contractions_keep_torchs_signed_zeros(name, dtype):
    make, sa, sb = CONTRACTIONS[name]
    _same_bits(*_both(make, _signed(sa), _signed(sb, zeros=True), dtype=dtype))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "complex128"])
def test_einsum_outer_products_of_other_dtypes(dtype):
    a, b = _signed((3,)), _signed((4,), zeros=True)
    if dtype.startswith("complex"):
        a, b = a + 1j * _signed((3,)), b + 1j * _signed((4,), zeros=True)
    _same_bits(*_both(lambda lib, x, y: lib.einsum("i,j->ij", x, y), a, b, dtype=dtype))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_mm_outer_products(dtype):
    a, b = _signed((4, 1)) + 1j * _signed((4, 1)), _signed((1, 5), zeros=True) + 1j * _signed((1, 5), zeros=True)
    _same_bits(*_both(lambda lib, x, y: lib.mm(x, y), a, b, dtype=dtype))
    _same_bits(*_both(lambda lib, x, y: x @ y, a, b, dtype=dtype))


@pytest.mark.parametrize("batch, in1, in2, out", [(30, 1, 1, 30), (1, 1, 1, 400), (3, 2, 1, 5), (4, 3, 2, 3)])
def test_bilinear_signs_and_gradients(batch, in1, in2, out):
    x1, x2, w = _signed((batch, in1)), _signed((batch, in2)), _signed((out, in1, in2), zeros=True)
    results, g = [], _signed((batch, out))
    for lib in (ember, torch):
        a = lib.tensor(x1, dtype=lib.float32, requires_grad=True)
        weight = lib.tensor(w, dtype=lib.float32, requires_grad=True)
        y = lib.nn.functional.bilinear(a, lib.tensor(x2, dtype=lib.float32), weight, lib.full((out,), -0.0))
        y.backward(lib.tensor(g, dtype=lib.float32))
        results.append((y, a.grad, weight.grad))
    for got, want in zip(*results):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    _same_bits(results[0][0], results[1][0])


def test_einsum_outer_product_gradients():
    a, b, g = _signed((3,)), _signed((4,), zeros=True), _signed((3, 4))
    grads = []
    for lib in (ember, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        lib.einsum("i,j->ij", x, y).backward(lib.tensor(g))
        grads.append((x.grad, y.grad))
    for got, want in zip(*grads):
        _same_bits(got, want)


# ---- NumPy arrays with operators ----------------------------------------------------------------
def _outcome(code, lib):
    """What ``code`` gives with ``lib`` as torch: (type, dtype, values, signs) or (exception, message)."""
    scope = {"torch": lib, "np": np, "operator": operator,
             "x": lib.tensor([1.0, -2.0, 3.0]), "xg": lib.tensor([1.0, -2.0, 3.0], requires_grad=True),
             "xi": lib.tensor([1, -2, 3]), "xb": lib.tensor([True, False, True]), "m": lib.ones(3, 3),
             "nd": np.array([2.0, 0.0, -1.0]), "nf": np.array([2.0, 0.0, -1.0], dtype=np.float32),
             "ni": np.array([2, 3, 1]), "nb": np.array([True, True, False]), "nm": np.ones((3, 3))}
    try:
        with np.errstate(all="ignore"):
            exec(code, scope)
        r = scope["r"]
    except Exception as e:  # noqa: BLE001 (the exception is the outcome compared)
        return type(e).__name__, str(e).split("\n")[0]
    if type(r).__name__ == "Tensor":
        v = r.detach().numpy()
        return "Tensor", str(r.dtype), str(v.tolist()), np.signbit(v).tolist(), scope["x"].tolist()
    return type(r).__name__, r


NUMPY_OPERATORS = [
    "r = xg + nd", "r = xg * nd", "r = xg / nd", "r = nd * xg", "r = x + nd", "r = x + nf", "r = x - nd",
    "r = x * nd", "r = x / nd", "r = x // nd", "r = x % nd", "r = x ** nd", "r = xi & ni", "r = xi | ni",
    "r = xi ^ ni", "r = xi << ni", "r = xi >> ni", "r = xb & nb", "r = xb | nb",
    "r = x != nd", "r = x == nd", "r = nd == x", "r = nd != x", "r = xg == nd",
    "r = x < nd", "r = x <= nd", "r = x > nd", "r = x >= nd", "r = nd < x", "r = nd >= x",
    "r = nd + x", "r = nd - x", "r = nd * x", "r = nd / x", "r = nd // x", "r = nd % x", "r = nd ** x",
    "r = nd @ x", "r = ni & xi", "r = x @ nd", "r = m @ nm",
    "r = xi / ni", "r = xi // ni", "r = xi ** ni", "r = xi ** -ni", "r = xi * 1.5 + nd",
    "r = x + np.array(2.0)", "r = x < np.array(2.0)", "r = np.array(2.0) + x", "r = x + np.float64(2.0)",
    "x /= nd; r = x", "xi /= nd; r = xi", "m @= nm; r = m", "xg += nd; r = xg",
    "r = operator.add(x, nd)", "r = operator.lt(x, nd)", "r = x.__add__(nd)", "r = x.__radd__(nd)",
    "r = x.__rsub__(nd)", "r = x.__matmul__(nd)", "r = x.__ne__(nd)", "r = x.__lt__(nd)", "r = x.__rtruediv__(nd)",
    "r = np.sin(x)", "r = np.asarray(xg)", "r = np.add(x, nd)",
    "with torch.no_grad(): r = torch.tensor(xg.numpy())",
]


@pytest.mark.parametrize("code", NUMPY_OPERATORS)
def test_numpy_arrays_with_operators_as_torch(code):
    assert _outcome(code, ember) == _outcome(code, torch)
