"""Cholesky, QR, SVD, eigh, LU, LDL and householder_product against torch 2.13 (values and
gradients, gauge-fixed for the decompositions), plus float64 gradcheck."""
import numpy as np
import pytest
from linalg_oracle import DTYPES, compare, sign_fix, spd, torch, well_conditioned

import ember
from ember._linalg_legacy import lu_unpack
from ember.autograd import gradcheck

SHAPES = [(4, 3), (3, 4), (5, 5), (2, 3, 4, 3), (2, 1, 3, 5)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dtype, upper):
    a = spd(np.random.default_rng(1), 2, 3, 4, 4)
    compare(lambda lib, x: lib.linalg.cholesky(x, upper=upper), a, dtype=dtype)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3), (2, 12, 12)])  # one, NumPy's batched, the loop
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_cholesky_reads_lower_triangle_or_upper_one(shape, dtype):
    """As torch: A's lower triangle, or with ``upper=True`` its upper one (the other is noise);
    cholesky_ex's info from the same triangle."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == np.complex128 else 0)
    a = x @ np.swapaxes(x, -1, -2).conj() + shape[-1] * np.eye(shape[-1])
    noise = rng.standard_normal(shape) * 3
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for upper in (False, True):
        noisy = (np.triu(a) + np.tril(noise, -1) if upper else np.tril(a) + np.triu(noise, 1)).astype(dtype)
        for shift in (0, 100):  # positive-definite, and not (info from the leading minors)
            e = ember.linalg.cholesky_ex(ember.tensor(noisy) - shift * ember.eye(shape[-1]), upper=upper)
            t = torch.linalg.cholesky_ex(torch.tensor(noisy) - shift * torch.eye(shape[-1]), upper=upper)
            np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
            if not shift:
                np.testing.assert_allclose(e.L.numpy(), t.L.numpy(), rtol=tol, atol=tol)


def test_cholesky_gradcheck():
    a = spd(np.random.default_rng(2), 3, 3)
    x = ember.tensor(a, requires_grad=True)
    assert gradcheck(lambda t: ember.linalg.cholesky(t @ t.mT), (x,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_reduced(dtype, shape):
    a = np.random.default_rng(4).standard_normal(shape)

    def fn(lib, x):
        q, r = lib.linalg.qr(x)
        s = lib.sign(r.diagonal(0, -2, -1)).unsqueeze(-1)
        return q * s.mT, r * s
    compare(fn, a, dtype=dtype)


@pytest.mark.parametrize("shape", [(2, 20, 18), (2, 18, 20), (3, 1, 17, 17)])  # tall, wide, square
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_qr_of_batches_of_larger_matrices(shape, dtype):
    """The LAPACK loop over a batch (matrices over 16 x 16; smaller ones go to NumPy's batched
    QR): values and gradients against torch in float64/complex128, phases fixed so that R's
    diagonal is positive (QR is unique up to them). Odd sizes put the float32 matrices of the
    batch at addresses SciPy must copy (not 8-aligned) unless ember aligns them."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == "complex128" else 0)
    w = rng.standard_normal(shape[:-1] + (min(shape[-2:]),)) * (1 + 1j)

    def run(lib, real_dtype):
        x = lib.tensor(a, dtype=getattr(lib, dtype if dtype == "complex128" else real_dtype),
                       requires_grad=True)
        q, r = lib.linalg.qr(x)
        d = r.diagonal(0, -2, -1)
        d = d / d.abs()
        q, r = q * d.unsqueeze(-2), r * d.conj().unsqueeze(-1)
        loss = (q * lib.tensor(w.real if dtype == "float32" else w, dtype=q.dtype)).real.sum() + r.abs().sum()
        loss.backward()
        return q.detach().numpy(), r.detach().numpy(), x.grad.numpy()
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == "float32" else dict(rtol=1e-9, atol=1e-9)
    for e, t in zip(run(ember, "float32"), run(torch, "float64")):
        np.testing.assert_allclose(e, t, **tol)
    e, t = ember.linalg.qr(ember.tensor(a)), torch.linalg.qr(torch.tensor(a))
    assert (e.Q.stride()[-2:], e.R.stride()[-2:]) == (t.Q.stride()[-2:], t.R.stride()[-2:])  # column-major, as torch's


def test_qr_complete_and_r_modes():
    a = np.random.default_rng(5).standard_normal((2, 5, 3))
    compare(lambda lib, x: lib.linalg.qr(x, mode="complete")[1].abs(), a, grad=False)
    q, _ = ember.linalg.qr(ember.tensor(a), mode="complete")
    np.testing.assert_allclose((q.mT @ q)._data, np.broadcast_to(np.eye(5), (2, 5, 5)), atol=1e-12)
    q, r = ember.linalg.qr(ember.tensor(a, requires_grad=True), mode="r")
    assert q.numel() == 0 and tuple(r.shape) == (2, 3, 3)
    with pytest.raises(RuntimeError, match="mode='r'"):
        r.sum().backward()
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        ember.linalg.qr(ember.tensor(a, requires_grad=True), mode="complete")[0].sum().backward()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_svd_gauge_fixed(dtype, shape):
    a = np.random.default_rng(6).standard_normal(shape)

    def fn(lib, x):
        u, s, vh = lib.linalg.svd(x, full_matrices=False)
        return (s,) + sign_fix(lib, u, vh)
    compare(fn, a, dtype=dtype)


def test_svd_full_matrices_and_svdvals():
    a = np.random.default_rng(7).standard_normal((2, 5, 3))
    u, s, vh = ember.linalg.svd(ember.tensor(a))
    assert tuple(u.shape) == (2, 5, 5) and tuple(vh.shape) == (2, 3, 3)
    np.testing.assert_allclose((u[..., :3] * s.unsqueeze(-2) @ vh)._data, a, atol=1e-12)
    compare(lambda lib, x: lib.linalg.svdvals(x), a)
    compare(lambda lib, x: lib.linalg.svd(x)[1], a)

    def first_vectors(lib, x):  # full matrices: gradients through the first k vectors, as torch
        u, s, vh = lib.linalg.svd(x)
        return (s,) + sign_fix(lib, u[..., :3], vh[..., :3, :])
    compare(first_vectors, a)
    compare(first_vectors, np.swapaxes(a, -1, -2).copy())


def test_svdvals_gradient_with_repeated_values_is_finite():
    x = ember.eye(3, dtype=ember.float64, requires_grad=True)
    ember.linalg.svdvals(x).sum().backward()
    np.testing.assert_allclose(x.grad._data, np.eye(3))


def test_svd_vectors_gradient_nan_on_repeated_values_as_torch():
    e = ember.eye(3, dtype=ember.float64, requires_grad=True)
    t = torch.eye(3, dtype=torch.float64, requires_grad=True)
    ember.linalg.svd(e)[0].sum().backward()
    torch.linalg.svd(t)[0].sum().backward()
    assert np.isnan(e.grad._data).any() == torch.isnan(t.grad).any().item()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, uplo):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 4, 4))

    def fn(lib, x):
        w, q = lib.linalg.eigh(x, UPLO=uplo)
        return (w,) + sign_fix(lib, q)
    compare(fn, a, dtype=dtype)
    compare(lambda lib, x: lib.linalg.eigvalsh(x, UPLO=uplo), a, dtype=dtype)


def test_eigh_gradcheck_symmetric_input():
    x = ember.tensor(np.random.default_rng(9).standard_normal((3, 3)), requires_grad=True)

    def f(t):
        w, q = ember.linalg.eigh(t + t.mT)
        return w, q * ember.sign(q[..., :1, :])
    assert gradcheck(f, (x,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_factor_lu_and_lu_solve(dtype):
    rng = np.random.default_rng(10)
    a, b = well_conditioned(rng, 2, 4, 4), rng.standard_normal((2, 4, 2))
    compare(lambda lib, x: lib.linalg.lu_factor(x).LU, a, dtype=dtype)
    compare(lambda lib, x: tuple(lib.linalg.lu(x)), a, dtype=dtype)
    for adjoint in (False, True):
        compare(lambda lib, x, y: lib.linalg.lu_solve(*lib.linalg.lu_factor(x), y, adjoint=adjoint),
                a, b, dtype=dtype)
    compare(lambda lib, x, y: lib.linalg.lu_solve(*lib.linalg.lu_factor(x), y.mT, left=False),
            a, b, dtype=dtype)
    e, t = ember.linalg.lu_factor(ember.tensor(a)), torch.linalg.lu_factor(torch.tensor(a))
    assert e.pivots.dtype == ember.int32 and e.pivots.tolist() == t.pivots.tolist()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 5, 3), (2, 3, 5)])
def test_lu_rectangular(shape):
    a = np.random.default_rng(11).standard_normal(shape)
    compare(lambda lib, x: tuple(lib.linalg.lu(x)), a)
    compare(lambda lib, x: lib.linalg.lu_factor(x).LU, a)
    e = lu_unpack(*ember.linalg.lu_factor(ember.tensor(a)))
    t = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(a)))
    for x, y in zip(e, t):
        np.testing.assert_allclose(x._data, y.numpy(), atol=1e-12)


def test_lu_factor_ex_reports_zero_pivot():
    a = np.zeros((2, 3, 3))
    a[0] = np.eye(3)
    e, t = ember.linalg.lu_factor_ex(ember.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
    assert e.info.tolist() == t.info.tolist()
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[1,1\] is zero"):
        ember.linalg.lu_factor(ember.tensor(a))


def test_ldl_factor_and_solve():
    rng = np.random.default_rng(12)
    a = rng.standard_normal((2, 4, 4))
    a = a + np.swapaxes(a, -1, -2)
    b = rng.standard_normal((2, 4, 3))
    compare(lambda lib, x: tuple(lib.linalg.ldl_factor(x))[0], a, grad=False)
    e, t = ember.linalg.ldl_factor(ember.tensor(a)), torch.linalg.ldl_factor(torch.tensor(a))
    assert e.pivots.tolist() == t.pivots.tolist()
    x = ember.linalg.ldl_solve(e.LD, e.pivots, ember.tensor(b))
    np.testing.assert_allclose(x._data, np.linalg.solve(a, b), atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_householder_product(dtype):
    rng = np.random.default_rng(13)
    a, tau = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 3))
    compare(lambda lib, x, t: lib.linalg.householder_product(x, t), a, tau, dtype=dtype)
    geqrf = torch.geqrf(torch.tensor(a))
    q = ember.linalg.householder_product(ember.tensor(geqrf.a.numpy()), ember.tensor(geqrf.tau.numpy()))
    np.testing.assert_allclose(q._data, torch.linalg.qr(torch.tensor(a)).Q.numpy(), atol=1e-12)


def test_empty_batches():
    for name in ("cholesky", "inv", "det", "eigvalsh", "svdvals", "matrix_exp"):
        e = getattr(ember.linalg, name)(ember.zeros(0, 3, 3))
        t = getattr(torch.linalg, name)(torch.zeros(0, 3, 3))
        assert tuple(e.shape) == tuple(t.shape), name
    for fn in (lambda lib, x: lib.linalg.svd(x), lambda lib, x: lib.linalg.qr(x),
               lambda lib, x: lib.linalg.eigh(x), lambda lib, x: lib.linalg.lu_factor(x)):
        e, t = fn(ember, ember.zeros(0, 3, 3)), fn(torch, torch.zeros(0, 3, 3))
        assert [tuple(x.shape) for x in e] == [tuple(x.shape) for x in t]
    e, t = ember.linalg.qr(ember.zeros(0, 3, 2), mode="r"), torch.linalg.qr(torch.zeros(0, 3, 2), mode="r")
    assert tuple(e.R.shape) == tuple(t.R.shape)


def test_result_types_print_as_torch():
    r = ember.linalg.eigh(ember.eye(2))
    assert repr(r).startswith("ember.return_types.linalg_eigh(\neigenvalues=tensor(")
    assert r.eigenvalues is r[0] and type(r).__name__ == "linalg_eigh"


def test_factors_carry_torchs_node_and_single_factor_gradients_match():
    """Each factor is a result of the decomposition's own node (LinalgQrBackward0, ...), as in
    torch; a loss reading one factor differentiates with the others' gradients absent."""
    a = well_conditioned(np.random.default_rng(7), 2, 4, 4)
    sym = a + np.swapaxes(a, -1, -2)
    for fn, x in [(lambda lib, t: lib.linalg.qr(t), a), (lambda lib, t: lib.linalg.svd(t), a),
                  (lambda lib, t: lib.linalg.eigh(t), sym)]:
        for pick in range(len(fn(torch, torch.tensor(x)))):
            e_x, t_x = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            e, t = fn(ember, e_x), fn(torch, t_x)
            assert [type(f.grad_fn).__name__ for f in e] == [type(f.grad_fn).__name__ for f in t]
            # gauge-invariant losses: |factor| entries (signs) for vectors, the values for S/L/R
            e[pick].abs().pow(3).sum().backward()
            t[pick].abs().pow(3).sum().backward()
            np.testing.assert_allclose(e_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-8, atol=1e-10)
