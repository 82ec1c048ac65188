"""inv, det, slogdet, solve, solve_triangular, lstsq, pinv, matrix_rank, matrix_power,
matrix_exp, tensorinv, tensorsolve against torch 2.13 (values and gradients) and gradcheck."""
import numpy as np
import pytest
from linalg_oracle import DTYPES, compare, torch, well_conditioned

import ember
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (2, 1, 5, 5)])
def test_inv_det_slogdet(dtype, shape):
    a = well_conditioned(RNG(1), *shape)
    compare(lambda lib, x: lib.linalg.inv(x), a, dtype=dtype)
    compare(lambda lib, x: lib.linalg.det(x), a, dtype=dtype)
    compare(lambda lib, x: tuple(lib.linalg.slogdet(x)), a, dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_inv_and_solve_of_batches_of_larger_matrices(dtype):
    """The LAPACK loop (matrices over 16 x 16; each factored in place through its transpose):
    values and gradients against torch, batched and single."""
    rng = np.random.default_rng(3)
    shape = (3, 19, 19)
    a = well_conditioned(rng, *shape) + (1j * rng.standard_normal(shape) if dtype == "complex128" else 0)
    b = rng.standard_normal((3, 19, 2))
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    results = []
    for lib, real in ((ember, "float32"), (torch, "float64")):
        x = lib.tensor(a, dtype=getattr(lib, "complex128" if dtype == "complex128" else real), requires_grad=True)
        y = lib.tensor(b, dtype=x.dtype, requires_grad=True)
        inv, sol = lib.linalg.inv(x), lib.linalg.solve(x, y)
        (inv.abs().sum() + sol.abs().sum() + lib.linalg.solve(x[0], y[0]).abs().sum()).backward()
        results.append([t.detach().numpy() for t in (inv, sol, x.grad, y.grad)])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, **tol)


def test_det_gradient_of_singular_matrix():
    a = RNG(2).standard_normal((2, 4, 4))
    a[:, 3] = a[:, 0] + a[:, 1]  # rank 3: the gradient is the (nonzero) cofactor matrix
    compare(lambda lib, x: lib.linalg.det(x), a, tol=dict(rtol=1e-6, atol=1e-9))
    b = np.zeros((3, 3))
    b[0, 0] = 1.0  # rank 1: the cofactor matrix is zero
    compare(lambda lib, x: lib.linalg.det(x), b)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_det_gradient_of_a_batch_mixing_singular_and_invertible_matrices(dtype):
    """The cofactor matrix is chosen per matrix (inverse or SVD): a batch holding an invertible
    matrix, one of rank n - 1 and one of rank n - 2 (zero cofactors) equals torch's gradient;
    so does the rank n - 1 matrix alone, whose determinant is rounding noise, not 0 (its
    determinant and inverse must come from one LU for the noise to cancel)."""
    rng = RNG(5)
    a = rng.standard_normal((3, 4, 4)) + (1j * rng.standard_normal((3, 4, 4)) if dtype == "complex128" else 0)
    a[1, 3] = a[1, 0] - 2 * a[1, 1]
    a[2, 2:] = a[2, :1]
    w = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    w = w if dtype == "complex128" else w.real
    for matrices, weights in ((a, w), (a[1], w[1])):
        grads = []
        for lib in (ember, torch):
            x = lib.tensor(matrices, requires_grad=True)
            (lib.linalg.det(x) * lib.tensor(weights)).real.sum().backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)
    assert np.abs(grads[1]).max() > 0.1 and ember.linalg.det(ember.tensor(a[1])).item() != 0


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_det_gradient_compiles_into_one_graph(dtype):
    """Det's backward captures (its cofactor matrix is one op, whatever the determinants):
    a compiled loss of determinants, a singular matrix in the batch, runs as one graph with no
    break and equals eager ember and torch."""
    from ember._dynamo.utils import counters
    rng = RNG(6)
    a = rng.standard_normal((3, 4, 4)) + (1j * rng.standard_normal((3, 4, 4)) if dtype == "complex128" else 0)
    a[0, 3] = a[0, 1]

    def loss(lib, x):
        return (lib.linalg.det(x * 1.5).abs() ** 2).sum()
    ember.compiler.reset()
    compiled = ember.compile(lambda x: loss(ember, x))
    for _ in range(3):
        x = ember.tensor(a, requires_grad=True)
        value = compiled(x)
        value.backward()
    assert not counters["graph_break"] and counters["stats"]["unique_graphs"] == 1, dict(counters["graph_break"])
    eager = ember.tensor(a, requires_grad=True)
    loss(ember, eager).backward()
    t = torch.tensor(a, requires_grad=True)
    expected = loss(torch, t)
    expected.backward()
    np.testing.assert_allclose(value.item(), expected.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), eager.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 2, 2)])
def test_det_gradient_of_empty_matrices_and_batches(shape):
    """det of 0 x 0 matrices is 1 and its gradient an empty (…, 0, 0) tensor, as torch's; an
    empty batch of 2 x 2 matrices too; ember's second derivative is an empty tensor as well
    (torch's first one does not require grad here)."""
    for lib in (ember, torch):
        x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.det(x).sum(), x, create_graph=True)
        assert tuple(g.shape) == shape
        if lib is ember:
            assert tuple(ember.autograd.grad(g.sum(), x)[0].shape) == shape


def _cofactors_by_minors(b):
    n = b.shape[-1]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(b, i, 0), j, 1)) for j in range(n)]
                     for i in range(n)])


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_det_second_derivative_at_singular_and_nearly_singular_matrices(dtype):
    """det's second derivative (Cofactor's adjoint) has no 1/det: the gradient of
    sum |cofactor(A)|² at an exactly singular 2x2, invertible / rank n-1 / rank n-2 4x4 and a
    nearly singular one (det ~ 1e-6 times its cofactors: dividing by det loses its digits)
    equals central differences of that sum from the cofactors as minors (real and imaginary
    directions), and torch's for real matrices (was NaN / noise; torch's complex one is off at
    rank n-1, 292i where differences give 312i)."""
    rng = RNG(8)
    cplx = dtype == "complex128"
    a = rng.standard_normal((3, 4, 4)) + (1j * rng.standard_normal((3, 4, 4)) if cplx else 0)
    a[1, 3] = a[1, 0] - 2 * a[1, 1]
    a[2, 2:] = a[2, :1]
    near = rng.standard_normal((4, 4)) + (1j * rng.standard_normal((4, 4)) if cplx else 0)
    near[3] = near[0] + 1e-6 * near[1]
    for m in (np.array([[1.0, 2.0], [2.0, 4.0]], dtype), *a, near):
        second = []
        for lib in (ember, torch):
            x = lib.tensor(m, requires_grad=True)
            (g,) = lib.autograd.grad(lib.linalg.det(x).real.sum(), x, create_graph=True)
            second.append(lib.autograd.grad((g * g.conj()).real.sum(), x)[0].numpy())
        if not cplx:
            np.testing.assert_allclose(second[0], second[1], rtol=1e-7, atol=1e-9)
        h, fd = 1e-6, np.zeros(m.shape, dtype)
        for k in range(m.size):
            for direction in (1, 1j) if cplx else (1,):
                e = np.zeros(m.shape, dtype)
                e.flat[k] = h * direction
                step = ((np.abs(_cofactors_by_minors(m + e)) ** 2).sum()
                        - (np.abs(_cofactors_by_minors(m - e)) ** 2).sum()) / (2 * h)
                fd.flat[k] += step * direction
        np.testing.assert_allclose(second[0], fd, rtol=1e-6, atol=1e-8)


def test_inverse_and_det_second_order():
    x = ember.tensor(well_conditioned(RNG(3), 3, 3), requires_grad=True)
    assert gradcheck(ember.linalg.inv, (x,))
    assert gradgradcheck(ember.linalg.det, (x,))
    assert gradgradcheck(lambda t: ember.linalg.slogdet(t).logabsdet, (x,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_broadcast_vector_and_left(dtype):
    rng = RNG(4)
    a = well_conditioned(rng, 2, 1, 3, 3)
    compare(lambda lib, x, y: lib.linalg.solve(x, y), a, rng.standard_normal((4, 3, 2)), dtype=dtype)
    compare(lambda lib, x, y: lib.linalg.solve(x, y), a[0, 0], rng.standard_normal(3), dtype=dtype)
    compare(lambda lib, x, y: lib.linalg.solve(x, y), a[:, 0], rng.standard_normal((2, 3)), dtype=dtype)
    compare(lambda lib, x, y: lib.linalg.solve(x, y, left=False), a, rng.standard_normal((2, 3)),
            dtype=dtype)
    compare(lambda lib, x, y: lib.linalg.solve_ex(x, y).result, a, rng.standard_normal((3, 1)),
            dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(dtype, upper, left, unit):
    rng = RNG(5)
    a = well_conditioned(rng, 2, 4, 4)
    b = rng.standard_normal((2, 4, 3) if left else (2, 3, 4))
    compare(lambda lib, x, y: lib.linalg.solve_triangular(x, y, upper=upper, left=left,
                                                          unitriangular=unit), a, b, dtype=dtype)


def test_solve_triangular_zero_diagonal_gives_inf_as_torch():
    a, b = np.triu(np.ones((3, 3))), np.ones((3, 1))
    a[2, 2] = 0
    compare(lambda lib, x, y: lib.linalg.solve_triangular(x, y, upper=True), a, b, grad=False)


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("shape", [(6, 3), (3, 5)])
def test_lstsq(driver, shape):
    rng = RNG(6)
    a = rng.standard_normal((2,) + shape)
    b = rng.standard_normal((2, shape[0], 2))
    if driver == "gels" and shape[0] < shape[1]:
        return  # gels needs full column rank
    compare(lambda lib, x, y: lib.linalg.lstsq(x, y, driver=driver).solution, a, b)
    e = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for field in ("residuals", "rank", "singular_values"):
        x, y = getattr(e, field), getattr(t, field)
        assert tuple(x.shape) == tuple(y.shape), field
        np.testing.assert_allclose(x._data, y.numpy(), rtol=1e-8, atol=1e-10)


def test_lstsq_vector_rhs_and_float32():
    rng = RNG(7)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal(6)
    compare(lambda lib, x, y: lib.linalg.lstsq(x, y).solution, a, b)
    compare(lambda lib, x, y: lib.linalg.lstsq(x, y).solution, a, b, dtype=np.float32)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_pinv(shape):
    a = RNG(8).standard_normal((2,) + shape)
    compare(lambda lib, x: lib.linalg.pinv(x), a)
    sym = RNG(9).standard_normal((4, 4))
    compare(lambda lib, x: lib.linalg.pinv(x + x.mT, hermitian=True), sym)
    rank_deficient = a[0] @ np.diag([1.0, 1.0, 0.0] + [0.0] * (shape[1] - 3))[:shape[1], :shape[1]]
    compare(lambda lib, x: lib.linalg.pinv(x, atol=1e-8), rank_deficient, grad=False)


def test_matrix_rank():
    a = RNG(10).standard_normal((3, 5, 4))
    a[1] = a[1] @ np.diag([1.0, 1.0, 0.0, 0.0])
    for kwargs in ({}, {"atol": 1.0}, {"rtol": 0.5}):
        e = ember.linalg.matrix_rank(ember.tensor(a), **kwargs)
        t = torch.linalg.matrix_rank(torch.tensor(a), **kwargs)
        assert e.tolist() == t.tolist() and e.dtype == ember.int64
    sym = a[0] @ a[0].T
    assert ember.linalg.matrix_rank(ember.tensor(sym), hermitian=True).item() == 4


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(n):
    compare(lambda lib, x: lib.linalg.matrix_power(x, n), well_conditioned(RNG(11), 2, 3, 3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_exp(dtype):
    a = RNG(12).standard_normal((2, 4, 4))
    compare(lambda lib, x: lib.linalg.matrix_exp(x), a, dtype=dtype)
    x = ember.tensor(a[0], requires_grad=True)
    assert gradcheck(ember.linalg.matrix_exp, (x,))


def test_tensorinv_tensorsolve():
    rng = RNG(13)
    a = well_conditioned(rng, 6, 6).reshape(2, 3, 6)
    compare(lambda lib, x: lib.linalg.tensorinv(x, ind=2), a)
    a4 = well_conditioned(rng, 6, 6).reshape(6, 2, 3)
    compare(lambda lib, x, y: lib.linalg.tensorsolve(x, y), a4, rng.standard_normal(6))
    a5 = np.moveaxis(a4, 0, 2)
    compare(lambda lib, x, y: lib.linalg.tensorsolve(x, y, dims=(0, 1)), a5, rng.standard_normal(6))


def test_inv_ex_and_solve_ex_report_info():
    a = np.stack([np.eye(3), np.diag([1.0, 0.0, 1.0])])
    e, t = ember.linalg.inv_ex(ember.tensor(a)), torch.linalg.inv_ex(torch.tensor(a))
    assert e.info.tolist() == t.info.tolist() and e.info.dtype == ember.int32
    np.testing.assert_allclose(e.inverse._data[0], np.eye(3))
    e = ember.linalg.solve_ex(ember.tensor(a), ember.ones(2, 3, 1, dtype=ember.float64))
    assert e.info.tolist() == [0, 2]


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (2, 4, 4)])
def test_det_third_and_fourth_derivatives_as_torchs(shape):
    """det's second derivative (CofactorAdjoint) differentiates as its closed form at an
    invertible matrix: third and fourth derivatives equal torch's (to 1e-8 relative, 1e-10 of
    the largest derivative absolute: a 4 x 4's condition number costs digits in both)."""
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape)
    w1, w2 = rng.standard_normal(shape), rng.standard_normal(shape)
    results = []
    for L in (torch, ember):
        x = L.tensor(a, requires_grad=True)
        (g1,) = L.autograd.grad(L.linalg.det(x).sum(), x, create_graph=True)
        (g2,) = L.autograd.grad((g1 * L.tensor(w1)).sum(), x, create_graph=True)
        (g3,) = L.autograd.grad((g2 * L.tensor(w2)).sum(), x, create_graph=True)
        (g4,) = L.autograd.grad((g3 * g3).sum(), x)
        results.append((g2, g3, g4))
    scale = max(abs(t).max().item() for t in results[0])  # (a 2 x 2's third derivative is 0: rounding)
    for e, t in zip(results[1], results[0]):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-8, atol=1e-10 * scale)


def test_det_third_derivative_of_complex_matrices_raises_a_clear_error():
    a = ember.tensor([[2.0 + 1j, 1.0], [1.0, 3.0]], dtype=ember.complex128, requires_grad=True)
    (g,) = ember.autograd.grad(ember.linalg.det(a).real, a, create_graph=True)
    (h,) = ember.autograd.grad((g * g.conj()).real.sum(), a, create_graph=True)
    with pytest.raises(RuntimeError, match="order 3 or higher"):
        ember.autograd.grad((h * h.conj()).real.sum(), a)
