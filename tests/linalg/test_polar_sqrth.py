"""PyTorch 2.14's linalg.polar and linalg.matrix_sqrth (not in torch 2.13, the oracle): closed
forms (U H = A, U^T U = I, H symmetric PSD; X X = A, X symmetric PD) and float64 gradients
against central finite differences."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

RNG = np.random.default_rng


@pytest.mark.parametrize("dtype,tol", [(ember.float64, 1e-12), (ember.float32, 2e-5)])
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 1, 2, 2)])
def test_polar_closed_form(dtype, tol, shape):
    a = ember.tensor(RNG(1).standard_normal(shape), dtype=dtype)
    result = ember.linalg.polar(a)
    u, h = result
    assert type(result).__name__ == "linalg_polar" and result.U is u and result.H is h
    n = shape[-1]
    scale = float(a.abs().max())
    np.testing.assert_allclose((u @ h)._data, a._data, atol=tol * scale * 10)
    np.testing.assert_allclose((u.mT @ u)._data, np.broadcast_to(np.eye(n), u.shape[:-2] + (n, n)),
                               atol=tol * 10)
    np.testing.assert_allclose(h._data, h.mT._data, atol=tol * scale)
    assert (np.linalg.eigvalsh(h._data.astype(np.float64)) > -tol * scale * 10).all()
    # U is the orthonormal-column matrix nearest to A: no small rotation gets closer
    q = np.linalg.qr(RNG(2).standard_normal((n, n)) * 1e-3 + np.eye(n))[0]
    assert ((u._data @ q - a._data) ** 2).sum() >= ((u._data - a._data) ** 2).sum() - tol


def test_polar_rejects_wide_matrices():
    with pytest.raises(RuntimeError, match=r"at least as many rows as columns.*\(2, 3\)"):
        ember.linalg.polar(ember.ones(2, 3))


def test_polar_gradcheck_full_rank_and_repeated_singular_values():
    a = ember.tensor(RNG(3).standard_normal((4, 3)), requires_grad=True)
    assert gradcheck(lambda x: tuple(ember.linalg.polar(x)), (a,))
    orthogonal = np.linalg.qr(RNG(4).standard_normal((3, 3)))[0]  # all singular values equal 1
    b = ember.tensor(orthogonal, requires_grad=True)
    assert gradcheck(lambda x: tuple(ember.linalg.polar(x)), (b,))


def test_polar_batched_gradient_matches_per_matrix():
    a = RNG(5).standard_normal((2, 3, 3))
    w = RNG(6).standard_normal((2, 3, 3))
    batched = ember.tensor(a, requires_grad=True)
    (ember.linalg.polar(batched).U * ember.tensor(w)).sum().backward()
    for i in range(2):
        single = ember.tensor(a[i], requires_grad=True)
        (ember.linalg.polar(single).U * ember.tensor(w[i])).sum().backward()
        np.testing.assert_allclose(batched.grad._data[i], single.grad._data, atol=1e-12)


def _spd(rng, *shape):
    x = rng.standard_normal(shape)
    return x @ np.swapaxes(x, -1, -2) + np.eye(shape[-1])


@pytest.mark.parametrize("dtype,tol", [(ember.float64, 1e-11), (ember.float32, 1e-4)])
def test_matrix_sqrth_closed_form(dtype, tol):
    a = _spd(RNG(7), 2, 4, 4)
    x = ember.linalg.matrix_sqrth(ember.tensor(a, dtype=dtype))
    np.testing.assert_allclose((x @ x)._data, a, rtol=tol, atol=tol * np.abs(a).max())
    np.testing.assert_allclose(x._data, x.mT._data, atol=tol)
    assert (np.linalg.eigvalsh(x._data.astype(np.float64)) > 0).all()
    np.testing.assert_allclose(ember.linalg.matrix_sqrth(ember.tensor([[2.0, 0.0], [0.0, 9.0]]))._data,
                               [[2 ** 0.5, 0], [0, 3]], rtol=1e-6)


def test_matrix_sqrth_reads_lower_triangle():
    a = _spd(RNG(8), 3, 3)
    noisy = np.tril(a) + np.triu(np.full((3, 3), 7.0), 1)
    np.testing.assert_allclose(ember.linalg.matrix_sqrth(ember.tensor(noisy))._data,
                               ember.linalg.matrix_sqrth(ember.tensor(a))._data, atol=1e-12)


def test_matrix_sqrth_gradient_finite_differences():
    base = ember.tensor(RNG(9).standard_normal((3, 3)), requires_grad=True)
    assert gradcheck(lambda b: ember.linalg.matrix_sqrth(b @ b.mT + ember.eye(3, dtype=b.dtype)),
                     (base,))
    # Repeated eigenvalues (the identity): the derivative is dA / 2, finite.
    eye = ember.eye(3, dtype=ember.float64, requires_grad=True)
    w = ember.tensor(RNG(10).standard_normal((3, 3)))
    (ember.linalg.matrix_sqrth(eye) * w).sum().backward()
    np.testing.assert_allclose(eye.grad._data, (w._data + w._data.T) / 4, atol=1e-12)
