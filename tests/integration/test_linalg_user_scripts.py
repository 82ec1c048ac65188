"""Issue 13's "done when" scripts, each written once for a library ``lib`` (ember or torch, as a
user's ``import ... as torch``) and run under both: a PCA/whitening of the digits through
``linalg.svd``, a Gaussian-process regression through Cholesky solves with its lengthscale
fitted by gradient, and layers under ``nn.utils.parametrizations.spectral_norm`` and
``orthogonal`` trained for a few steps. The results agree with torch's."""
import numpy as np
import pytest

import ember
from ember.datasets import load_digits

torch = pytest.importorskip("torch")


def pca(lib, x, k=10):
    x = lib.tensor(x)
    centered = x - x.mean(0)
    u, s, vh = lib.linalg.svd(centered, full_matrices=False)
    components = vh[:k]
    projected = centered @ components.T
    explained = s ** 2 / (x.shape[0] - 1)
    ratio = explained[:k] / explained.sum()
    whitened = projected / lib.sqrt(explained[:k])
    # Gauge: each component's sign is free; fix it by its largest entry.
    signs = lib.sign(components.gather(1, components.abs().argmax(1, keepdim=True)))
    return projected * signs.T, ratio, lib.cov(whitened.T)


def test_pca_and_whitening_of_the_digits():
    x = load_digits().x_train[:400].astype(np.float64)
    (e_p, e_r, e_c), (t_p, t_r, t_c) = pca(ember, x), pca(torch, x)
    np.testing.assert_allclose(e_p.numpy(), t_p.numpy(), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(e_r.numpy(), t_r.numpy(), rtol=1e-10)
    np.testing.assert_allclose(e_c.numpy(), np.eye(10), atol=1e-10)
    assert 0.5 < float(e_r.sum()) < 1


def gaussian_process(lib, x, y, x_new, steps=20):
    """RBF-kernel GP: the log marginal likelihood maximised over log lengthscale and noise by
    Adam, then the posterior mean and variance at ``x_new`` (Rasmussen & Williams, alg. 2.1)."""
    x, y, x_new = lib.tensor(x), lib.tensor(y), lib.tensor(x_new)
    log_scale = lib.zeros((), dtype=lib.float64, requires_grad=True)
    log_noise = lib.tensor(-2.0, dtype=lib.float64, requires_grad=True)
    opt = lib.optim.Adam([log_scale, log_noise], lr=0.05)

    def kernel(a, b):
        return lib.exp(-0.5 * lib.cdist(a, b) ** 2 / lib.exp(2 * log_scale))

    def posterior():
        k = kernel(x, x) + lib.exp(log_noise) * lib.eye(len(x), dtype=lib.float64)
        chol = lib.linalg.cholesky(k)
        alpha = lib.cholesky_solve(y.unsqueeze(1), chol)
        nll = 0.5 * (y.unsqueeze(1) * alpha).sum() + chol.diagonal().log().sum()
        return chol, alpha, nll
    for _ in range(steps):
        opt.zero_grad()
        nll = posterior()[2]
        nll.backward()
        opt.step()
    with lib.no_grad():
        chol, alpha, nll = posterior()
        k_star = kernel(x_new, x)
        mean = (k_star @ alpha).squeeze(1)
        v = lib.linalg.solve_triangular(chol, k_star.T, upper=False)
        var = 1.0 - (v ** 2).sum(0)
    return mean, var, nll, log_scale.detach(), log_scale


def test_gaussian_process_regression_through_cholesky():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (30, 1))
    y = np.sin(2 * x[:, 0]) + 0.1 * rng.standard_normal(30)
    x_new = np.linspace(-3, 3, 11)[:, None]
    e, t = gaussian_process(ember, x, y, x_new), gaussian_process(torch, x, y, x_new)
    for a, b in zip(e[:4], t[:4]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-10)
    assert np.abs(e[0].numpy() - np.sin(2 * x_new[:, 0])).max() < 0.3


def parametrized(lib, which, steps=5):
    """A layer under a parametrization from the same weights (and spectral_norm's power
    iteration from the same vectors), trained by SGD on a fixed target."""
    rng = np.random.default_rng(1)
    layer = lib.nn.Linear(6, 6, dtype=lib.float64)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(rng.standard_normal((6, 6)) / 3))
        layer.bias.copy_(lib.tensor(rng.standard_normal(6) / 3))
    if which == "spectral_norm":
        layer = lib.nn.utils.parametrizations.spectral_norm(layer)
        norm = layer.parametrizations.weight[0]
        for name in ("_u", "_v"):
            v = rng.standard_normal(6)
            getattr(norm, name).copy_(lib.tensor(v / np.linalg.norm(v)))
    else:
        layer = lib.nn.utils.parametrizations.orthogonal(layer)
    x = lib.tensor(np.linspace(-1, 1, 24).reshape(4, 6))
    opt = lib.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((layer(x) - x.flip(1)) ** 2).mean()
        loss.backward()
        opt.step()
    layer.eval()
    return layer.weight.detach(), layer(x).detach(), loss.detach()


@pytest.mark.parametrize("which", ["spectral_norm", "orthogonal"])
def test_parametrized_layers_train_as_torch(which):
    (e_w, e_y, e_l), (t_w, t_y, t_l) = parametrized(ember, which), parametrized(torch, which)
    for a, b in ((e_w, t_w), (e_y, t_y), (e_l, t_l)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7, atol=1e-9)
    if which == "orthogonal":
        np.testing.assert_allclose((e_w @ e_w.T).numpy(), np.eye(6), atol=1e-10)
    else:
        assert abs(float(ember.linalg.matrix_norm(e_w, 2)) - 1) < 0.1  # one power step per forward
