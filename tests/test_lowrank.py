"""torch.svd_lowrank and torch.pca_lowrank against torch 2.13: the same seed draws the same
test matrix, so singular values, the gauge-invariant reconstruction U S V^H and gradients
agree (singular vectors up to sign: the SVDs of the small projection come from different
LAPACK builds); errors as torch's."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape,q,niter", [((50, 20), 6, 2), ((20, 50), 5, 3), ((3, 40, 30), 4, 1)],
                         ids=["tall", "wide", "batched"])
def test_svd_lowrank_matches_torch(shape, q, niter):
    rng = np.random.default_rng(0)
    rank3 = rng.standard_normal(shape[:-1] + (3,)) @ rng.standard_normal(shape[:-2] + (3, shape[-1]))
    a = rank3 + 1e-6 * rng.standard_normal(shape)  # minus M: rank 4 and noise
    mean = rng.standard_normal(shape[-1:])
    results = []
    for lib in (ember, torch):
        lib.manual_seed(3)
        x = lib.tensor(a, requires_grad=True)
        U, S, V = lib.svd_lowrank(x, q=q, niter=niter, M=lib.tensor(mean))
        low = U @ (S.unsqueeze(-1) * V.mH)
        (low * lib.tensor(np.cos(a))).sum().backward()
        results.append((S.detach().numpy(), low.detach().numpy(), x.grad.numpy(), U.detach().numpy()))
    (e_s, e_low, e_grad, e_u), (t_s, t_low, t_grad, t_u) = results
    np.testing.assert_allclose(e_s, t_s, rtol=1e-10)
    np.testing.assert_allclose(e_low, t_low, atol=1e-10)
    np.testing.assert_allclose(e_grad, t_grad, atol=1e-8)
    np.testing.assert_allclose(np.abs(np.einsum("...ij,...ij->...j", e_u, t_u)), 1, atol=1e-6)
    np.testing.assert_allclose(np.linalg.svd(a - mean, compute_uv=False)[..., :4], e_s[..., :4], rtol=1e-6)


def test_pca_lowrank_matches_torch_and_checks_arguments():
    x = np.random.default_rng(1).standard_normal((40, 8)) @ np.diag([5, 4, 3, 2, 1, .1, .1, .1])
    results = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        U, S, V = lib.pca_lowrank(lib.tensor(x, dtype=lib.float32))
        assert tuple(U.shape) == (40, 6) and tuple(V.shape) == (8, 6) and U.dtype == lib.float32
        results.append(((U * S) @ V.mT).numpy())
    np.testing.assert_allclose(*results, atol=1e-4)
    for kwargs in (dict(q=9), dict(q=-1), dict(niter=-1)):
        with pytest.raises(ValueError) as t:
            torch.pca_lowrank(torch.zeros(5, 8), **kwargs)
        with pytest.raises(ValueError) as e:
            ember.pca_lowrank(ember.zeros(5, 8), **kwargs)
        assert str(e.value) == str(t.value)
