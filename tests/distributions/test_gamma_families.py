"""The gamma-based families (Gamma, Chi2, Beta, Dirichlet), Poisson, ExponentialFamily and the
KL divergences between families, vs torch.distributions 2.13; the standard gamma sampler and
its implicit reparameterisation gradient vs torch and vs float64 finite differences of the
inverse incomplete gamma function (SciPy)."""

import numpy as np
import pytest
from scipy import special

import ember

torch = pytest.importorskip("torch")
from test_distributions import both, close  # noqa: E402

SHAPES = [0.0, 1e-4, 0.01, 0.3, 0.5, 0.999, 1.0, 2.0, 7.5, 100.0, 1e4]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_draws_torchs_numbers(dtype):
    def run(L, D):
        a = L.tensor(SHAPES * 3, dtype=getattr(L, dtype)).reshape(3, -1)
        return [L._standard_gamma(a), L._standard_gamma(a[:, ::2]), L.randn(3)]  # the stream after
    t, e = both(run)
    # float64: bit for bit; float32: PyTorch computes those in float32 (a few ulps apart, more
    # below shape 1, where U^(1/a) magnifies them)
    close(e, t, rtol=0 if dtype == "float64" else 1e-5, atol=0)


def test_sample_dirichlet_draws_torchs_numbers():
    def run(L, D):
        a = L.tensor([[1e-3, 1e-3, 1e-3], [0.3, 2.0, 5.0], [0.02, 0.01, 3.0]], dtype=L.float64)
        return [L._sample_dirichlet(a), L._sample_dirichlet(a.float()), L.rand(2)]
    t, e = both(run)
    close(e[0], t[0], rtol=0, atol=0)
    close(e[1:], t[1:], rtol=1e-6, atol=0)


def test_standard_gamma_gradient_is_the_implicit_derivative():
    """dx/da at a fixed quantile u: central differences of SciPy's gammaincinv (float64) agree
    to 1e-6; torch's approximation to 1e-3."""
    a = np.array([0.01, 0.3, 0.5, 1.0, 2.0, 7.5, 100.0, 1000.0, 3.0, 3.0, 0.5])
    u = np.array([0.3, 0.5, 0.9, 0.1, 0.7, 0.5, 0.2, 0.99, 0.999999, 1e-6, 1e-9])
    x = special.gammaincinv(a, u)
    h = 1e-6 * a
    reference = (special.gammaincinv(a + h, u) - special.gammaincinv(a - h, u)) / (2 * h)
    ours = ember._standard_gamma_grad(ember.tensor(a), ember.tensor(x)).numpy()
    np.testing.assert_allclose(ours, reference, rtol=1e-6)
    np.testing.assert_allclose(ours, torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy(), rtol=1e-3)
    # and autograd reaches it through a sample
    alpha = ember.tensor([0.4, 3.0], dtype=ember.float64, requires_grad=True)
    sample = ember._standard_gamma(alpha)
    sample.sum().backward()
    expected = ember._standard_gamma_grad(alpha.detach(), sample.detach())
    assert sample.grad_fn.name() == "StandardGammaBackward0"
    np.testing.assert_allclose(alpha.grad.numpy(), expected.numpy(), rtol=1e-12)


def params(L, dtype):
    dt = getattr(L, dtype)
    return (L.tensor([0.5, 2.0, 7.0], dtype=dt, requires_grad=True),
            L.tensor([1.5, 0.3, 0.8], dtype=dt, requires_grad=True))


FAMILIES = {
    "Gamma": lambda D, a, b: D.Gamma(a, b),
    "Chi2": lambda D, a, b: D.Chi2(a),
    "Beta": lambda D, a, b: D.Beta(a, b),
    "Dirichlet": lambda D, a, b: D.Dirichlet(a.unsqueeze(0) + b.unsqueeze(1)),
    "Poisson": lambda D, a, b: D.Poisson(a),
}


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_families_as_torch(name, dtype):
    """Samples for the same seed, log_prob, entropy, moments, mode and their gradients."""
    def run(L, D):
        a, b = params(L, dtype)
        d = FAMILIES[name](D, a, b)
        s = d.sample((4,))
        out = [s, d.log_prob(s), d.mean, d.variance, d.mode, tuple(d.batch_shape), tuple(d.event_shape),
               repr(d), d.expand((2,) + tuple(d.batch_shape)).sample()]
        if name != "Poisson":
            out.append(d.entropy())
        loss = sum(o.sum() for o in out if isinstance(o, (torch.Tensor, ember.Tensor)) and o.requires_grad)
        out += list(L.autograd.grad(loss, [a, b], allow_unused=True))
        if name in ("Gamma", "Chi2"):  # differentiable in the value only, as torch's igamma
            value = s.clone().requires_grad_()
            cdf = FAMILIES[name](D, a.detach(), b.detach()).cdf(value)
            out += [cdf, L.autograd.grad(cdf.sum(), value)[0]]
        return out
    t, e = both(run)
    # torch's digamma is an approximation (about 1e-9 relative in float64), SciPy's is not;
    # the gradients of log_prob and entropy in the concentration go through it
    tight = dtype == "float64"
    close(e, t, rtol=1e-8 if tight else 1e-4, atol=1e-10 if tight else 1e-5)


@pytest.mark.parametrize("name", ["Gamma", "Chi2"])
def test_gamma_rsample_gradient_is_torchs_to_its_approximation(name):
    def run(L, D):
        a, b = params(L, "float64")
        x = FAMILIES[name](D, a, b).rsample((5,))
        return [x] + list(L.autograd.grad(x.sum(), [a, b], allow_unused=True))
    t, e = both(run)
    close(e[0], t[0], rtol=1e-12, atol=0)
    close(e[1:], t[1:], rtol=2e-3, atol=1e-8)


def test_dirichlet_and_beta_rsample_gradients_are_unbiased():
    """d/da E[x_0] = d/da (a_0 / sum a), estimated from 4000 draws within 5 standard errors;
    the draws themselves are torch's."""
    a = ember.tensor([0.7, 2.0, 1.5], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(1)
    x = ember.distributions.Dirichlet(a).rsample((4000,))[:, 0]
    per_draw = np.stack([ember.autograd.grad(v, a, retain_graph=True)[0].numpy() for v in x[:400]])
    (mean_grad,) = ember.autograd.grad(x.mean(), a)
    total = 4.2
    exact = np.array([1 / total - 0.7 / total ** 2, -0.7 / total ** 2, -0.7 / total ** 2])
    spread = per_draw.std(0) / np.sqrt(4000)
    assert np.all(np.abs(mean_grad.numpy() - exact) < 5 * spread + 1e-3)
    torch.manual_seed(1)
    np.testing.assert_array_equal(x.detach().numpy(), torch.distributions.Dirichlet(
        torch.tensor([0.7, 2.0, 1.5], dtype=torch.float64)).rsample((4000,))[:, 0].numpy())
    c1 = ember.tensor(2.0, dtype=ember.float64, requires_grad=True)
    beta = ember.distributions.Beta(c1, ember.tensor(3.0, dtype=ember.float64)).rsample((4000,))
    (g,) = ember.autograd.grad(beta.mean(), c1)
    assert abs(g.item() - 3.0 / 25.0) < 0.02


def test_exponential_family_entropy_and_bregman_kl():
    """The generic ExponentialFamily entropy and KL (from the log-normaliser by autograd) equal
    each family's closed forms."""
    D = ember.distributions
    cases = [(D.Normal(ember.tensor([0.5, -1.0]), ember.tensor([1.5, 0.3])), D.Normal(0.2, 2.0)),
             (D.Gamma(ember.tensor([0.5, 3.0]), ember.tensor([2.0, 0.7])), D.Gamma(1.5, 1.0)),
             (D.Exponential(ember.tensor([0.5, 3.0])), D.Exponential(2.0)),
             (D.Beta(ember.tensor([0.5, 3.0]), 2.0), D.Beta(1.5, 1.0)),
             (D.Dirichlet(ember.tensor([[0.5, 3.0, 1.0]])), D.Dirichlet(ember.tensor([1.0, 1.0, 2.0]))),
             (D.Bernoulli(ember.tensor([0.2, 0.7])), D.Bernoulli(0.4))]
    for p, q in cases:
        assert isinstance(p, D.ExponentialFamily)
        if not isinstance(p, (D.Beta, D.Dirichlet)):  # their carrier measures are not constant (torch: no entropy)
            np.testing.assert_allclose(D.ExponentialFamily.entropy(p).detach().numpy(), p.entropy().numpy(),
                                       rtol=1e-5, atol=1e-6)
        bregman = D.kl.kl_divergence.__globals__["_kl_expfamily_expfamily"](p, q)
        np.testing.assert_allclose(bregman.detach().numpy(), D.kl_divergence(p, q).numpy(), rtol=1e-4, atol=1e-6)
    D_t = torch.distributions
    t = D_t.kl_divergence(D_t.Poisson(torch.tensor([0.5, 3.0])), D_t.Poisson(2.0))
    e = D.kl_divergence(D.Poisson(ember.tensor([0.5, 3.0])), D.Poisson(2.0))
    close(e, t)


def test_kl_between_families_as_torch():
    def run(L, D):
        a, b = params(L, "float64")
        lo = L.tensor([0.1, 0.2, 0.3], dtype=L.float64)
        p = {"N": D.Normal(a, b), "L": D.Laplace(a, b), "U": D.Uniform(lo, lo + b / 2),
             "Uneg": D.Uniform(-lo, b), "E": D.Exponential(b), "G": D.Gamma(a, b), "B": D.Beta(a, b),
             "P": D.Poisson(a)}
        pairs = [("G", "G"), ("B", "B"), ("P", "P"), ("E", "G"), ("G", "E"), ("N", "L"), ("L", "N"),
                 ("U", "N"), ("E", "N"), ("G", "N"), ("B", "N"), ("U", "E"), ("Uneg", "E"), ("U", "G"),
                 ("U", "B"), ("Uneg", "B"), ("B", "U"), ("N", "U"), ("N", "E"), ("L", "E"), ("E", "U"),
                 ("N", "G"), ("G", "U"), ("L", "B")]
        kls = [D.kl_divergence(p[x], p[y]) for x, y in pairs]
        kls.append(D.kl_divergence(D.Dirichlet(a.unsqueeze(0) + b.unsqueeze(1)), D.Dirichlet(a)))
        grads = L.autograd.grad(sum(k[k.isfinite()].sum() for k in kls), [a, b])
        return kls + list(grads)
    t, e = both(run)
    close(e, t, rtol=1e-7, atol=1e-10)  # closed forms derived apart: cancellation differs


@pytest.mark.parametrize("build", [
    lambda L, D: D.Gamma(-1.0, 1.0),
    lambda L, D: D.Gamma(L.tensor([1.0, 0.0]), 1.0),
    lambda L, D: D.Gamma(1.0, 1.0).log_prob(L.tensor(-1.0)),
    lambda L, D: D.Dirichlet(L.tensor(1.0)),
    lambda L, D: D.Dirichlet(L.tensor([1.0, -1.0])),
    lambda L, D: D.Dirichlet(L.tensor([1.0, 2.0])).log_prob(L.tensor([0.5, 0.6])),
    lambda L, D: D.Beta(0.0, 1.0),
    lambda L, D: D.Beta(1.0, 1.0).log_prob(L.tensor(1.5)),
    lambda L, D: D.Poisson(-1.0),
    lambda L, D: D.Poisson(2.0).log_prob(L.tensor(0.5)),
    lambda L, D: D.Poisson(2.0).entropy(),
])
def test_errors_are_torchs(build):
    with pytest.raises(Exception) as t:
        build(torch, torch.distributions)
    with pytest.raises(Exception) as e:
        build(ember, ember.distributions)
    assert type(e.value) is type(t.value)
    assert str(e.value) == str(t.value)


def test_kl_across_exponential_families_without_a_pair_raises():
    D = ember.distributions
    with pytest.raises(NotImplementedError, match="cross KL-divergence between different exponential families"):
        D.kl_divergence(D.Poisson(1.0), D.Gamma(1.0, 1.0))
    with pytest.raises(NotImplementedError):
        torch.distributions.kl_divergence(torch.distributions.Poisson(1.0), torch.distributions.Gamma(1.0, 1.0))


def test_igamma_and_igammac_as_torch():
    def run(L, D):
        a = L.tensor([[0.5], [2.0], [30.0]], dtype=L.float64)
        x = L.tensor([0.0, 0.3, 2.5, 40.0, float("inf")], dtype=L.float64, requires_grad=True)
        out = [L.igamma(a, x), L.igammac(a, x)]
        return out + list(L.autograd.grad((out[0] * 2 + out[1]).sum(), [x])) + [
            L.special.gammainc(a.float(), x[:4].float().detach()), L.special.gammaincc(a.float(), L.tensor(3.0))]
    t, e = both(run)
    close(e[:3], t[:3], rtol=1e-12, atol=1e-14)
    close(e[3:], t[3:], rtol=1e-6, atol=1e-7)  # float32: SciPy's and torch's kernels, an ulp apart
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="igamma: input"):
        ember.igamma(a, ember.tensor([1.0, 1.0])).sum().backward()
