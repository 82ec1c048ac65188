"""KL divergences across families that torch 2.13 registers (into Gumbel and Pareto, from Pareto,
Beta into Exponential/Gamma, Bernoulli into Poisson, and the infinite pairs): values and
gradients vs torch on broadcast random parameters, and values vs float64 numerical quadrature
(SciPy) of E_p[log p - log q] with SciPy's own densities."""
import numpy as np
import pytest
from scipy import integrate, stats

import ember

torch = pytest.importorskip("torch")
from test_distributions import close  # noqa: E402

# Each side maps two parameter tensors (x, y), x and y in [0.3, 3], to a distribution of library D,
# and the same floats to SciPy's distribution.
SIDES = {
    "Bernoulli": (lambda D, x, y: D.Bernoulli(x / 3.5), lambda x, y: stats.bernoulli(x / 3.5)),
    "Poisson": (lambda D, x, y: D.Poisson(x), lambda x, y: stats.poisson(x)),
    "Beta": (lambda D, x, y: D.Beta(x, y), lambda x, y: stats.beta(x, y)),
    "Exponential": (lambda D, x, y: D.Exponential(x), lambda x, y: stats.expon(scale=1 / x)),
    "Gamma": (lambda D, x, y: D.Gamma(x, y), lambda x, y: stats.gamma(x, scale=1 / y)),
    "Gumbel": (lambda D, x, y: D.Gumbel(x - 1, y), lambda x, y: stats.gumbel_r(x - 1, y)),
    "Normal": (lambda D, x, y: D.Normal(x - 1, y), lambda x, y: stats.norm(x - 1, y)),
    "Uniform": (lambda D, x, y: D.Uniform(x - 1, x - 1 + y), lambda x, y: stats.uniform(x - 1, y)),
    # alpha > 2: the mean and variance a Normal q needs are finite
    "Pareto": (lambda D, x, y: D.Pareto(x, y + 2), lambda x, y: stats.pareto(y + 2, scale=x)),
}
FINITE = [("Bernoulli", "Poisson"), ("Beta", "Exponential"), ("Beta", "Gamma"), ("Exponential", "Gumbel"),
          ("Gamma", "Gumbel"), ("Gumbel", "Gumbel"), ("Gumbel", "Normal"), ("Normal", "Gumbel"),
          ("Uniform", "Gumbel"), ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"),
          ("Pareto", "Pareto"), ("Uniform", "Pareto")]
INFINITE = [("Beta", "Pareto"), ("Exponential", "Pareto"), ("Gamma", "Pareto"), ("Gumbel", "Beta"),
            ("Gumbel", "Exponential"), ("Gumbel", "Gamma"), ("Gumbel", "Pareto"), ("Gumbel", "Uniform"),
            ("Laplace", "Pareto"), ("Normal", "Pareto"), ("Pareto", "Beta"), ("Pareto", "Uniform"),
            ("Poisson", "Bernoulli"), ("Poisson", "Binomial")]
SIDES["Laplace"] = (lambda D, x, y: D.Laplace(x, y), None)
SIDES["Binomial"] = (lambda D, x, y: D.Binomial(10, x / 3.5), None)

RNG = np.random.default_rng(8)
P_PARAMS = RNG.uniform(0.3, 3.0, (2, 3))      # p's batch shape (3,)
Q_PARAMS = RNG.uniform(0.3, 3.0, (2, 2, 1))   # q's (2, 1): the KL broadcasts to (2, 3)


# torch 2.13 raises IndexError for these when q's batch shape is larger than p's (it masks the
# broadcast result with p's shape); ember broadcasts, and torch is given p's parameters expanded.
TORCH_NEEDS_P_EXPANDED = [("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal")]


def kl_and_gradients(L, pair, dtype="float64", expand_p=False):
    leaves = [L.tensor(a, dtype=getattr(L, dtype), requires_grad=True) for a in (*P_PARAMS, *Q_PARAMS)]
    D = L.distributions
    p_params = [x.expand(2, 3) for x in leaves[:2]] if expand_p else leaves[:2]
    kl = D.kl_divergence(SIDES[pair[0]][0](D, *p_params), SIDES[pair[1]][0](D, *leaves[2:]))
    grads = L.autograd.grad(kl[kl.isfinite()].sum(), leaves, allow_unused=True)
    return [kl] + [g if g is not None else L.zeros_like(x) for g, x in zip(grads, leaves)]


@pytest.mark.parametrize("pair", FINITE, ids="-".join)
def test_closed_forms_and_gradients_equal_torchs(pair):
    t, e = kl_and_gradients(torch, pair, expand_p=pair in TORCH_NEEDS_P_EXPANDED), kl_and_gradients(ember, pair)
    assert tuple(e[0].shape) == (2, 3)
    assert e[0].isfinite().any()
    close(e, t, rtol=1e-7, atol=1e-10)  # derived apart from torch's (and digamma's derivative): rounding differs
    e32 = kl_and_gradients(ember, pair, "float32")
    assert e32[0].dtype == ember.float32
    close([x.double() for x in e32], t, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("pair", TORCH_NEEDS_P_EXPANDED, ids="-".join)
def test_torch_fails_to_broadcast_these_and_ember_does(pair):
    with pytest.raises(IndexError):
        kl_and_gradients(torch, pair)
    for a, b in zip(kl_and_gradients(ember, pair), kl_and_gradients(ember, pair, expand_p=True)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-14)  # sums reassociate


def quadrature_kl(p, q):
    """E_p[log p(X) - log q(X)] by adaptive quadrature over p's support (a sum for p on counts)."""
    if hasattr(p, "pmf"):
        xs = np.arange(p.support()[1] + 1)
        return float(np.sum(p.pmf(xs) * (p.logpmf(xs) - q.logpmf(xs))))

    def integrand(x):
        lp = p.logpdf(x)  # a Gumbel's overflows to -inf far left: p(x) is 0 there
        return 0.0 if np.exp(lp) == 0 else np.exp(lp) * (lp - q.logpdf(x))
    lo, hi = p.support()
    with np.errstate(over="ignore"):
        return integrate.quad(integrand, lo, hi, epsabs=1e-13, epsrel=1e-12, limit=400)[0]


@pytest.mark.parametrize("pair", FINITE, ids="-".join)
def test_closed_forms_equal_quadrature(pair):
    kl = kl_and_gradients(ember, pair)[0].detach().numpy()
    checked = 0
    for i, j in [(0, 0), (0, 2), (1, 1)]:
        px, py = P_PARAMS[:, j]
        qx, qy = Q_PARAMS[:, i, 0]
        want = quadrature_kl(SIDES[pair[0]][1](px, py), SIDES[pair[1]][1](qx, qy))
        if np.isfinite(kl[i, j]):
            np.testing.assert_allclose(kl[i, j], want, rtol=1e-8, atol=1e-10)
            checked += 1
        else:  # q misses part of p's support: SciPy's log q is -inf there
            assert want == np.inf
    assert checked


@pytest.mark.parametrize("pair", INFINITE, ids="-".join)
def test_support_mismatches_are_infinite_in_ps_batch_shape(pair):
    def run(L):
        D = L.distributions
        x = L.tensor(P_PARAMS, requires_grad=True)
        return D.kl_divergence(SIDES[pair[0]][0](D, *x), SIDES[pair[1]][0](D, *L.tensor(Q_PARAMS)))
    t, e = run(torch), run(ember)
    close(e, t)
    assert tuple(e.shape) == (3,) and bool((e == float("inf")).all()) and not e.requires_grad


@pytest.mark.parametrize("p_scale, alpha", [(1.0, 0.7), (1.0, 1.0), (1.5, 1.8), (2.0, 2.0), (0.5, 3.0)])
def test_pareto_moments_and_supports_at_their_edges(p_scale, alpha):
    """Infinite where p's mean (into Exponential, Gamma) or variance (into Normal) is, or where p's
    support starts below q's scale (Pareto, Uniform into Pareto), as torch."""
    def run(L):
        D = L.distributions
        p = D.Pareto(L.tensor(p_scale, dtype=L.float64), L.tensor(alpha, dtype=L.float64))
        q_pareto = D.Pareto(L.tensor([0.5, 1.0, 1.2], dtype=L.float64), L.tensor(2.5, dtype=L.float64))
        u = D.Uniform(L.tensor([0.4, 1.0, 1.3], dtype=L.float64), L.tensor(2.5, dtype=L.float64))
        return [D.kl_divergence(p, D.Exponential(L.tensor(1.5, dtype=L.float64))),
                D.kl_divergence(p, D.Gamma(L.tensor(2.0, dtype=L.float64), L.tensor(1.5, dtype=L.float64))),
                D.kl_divergence(p, D.Normal(L.tensor(1.0, dtype=L.float64), L.tensor(2.0, dtype=L.float64))),
                D.kl_divergence(p, q_pareto), D.kl_divergence(u, D.Pareto(L.tensor(1.0, dtype=L.float64), 2.0))]
    t, e = run(torch), run(ember)
    close(e, t, rtol=1e-12, atol=1e-12)
    assert (bool(e[0].isinf()) == (alpha <= 1)) and (bool(e[2].isinf()) == (alpha <= 2))


def test_bernoulli_into_poisson_at_the_edges():
    """probs 0 and 1 give the finite limits (as torch); against rate 0 the divergence is 0 for
    probs 0 (both a point mass at 0) where torch 2.13 gives nan, and inf otherwise."""
    D = ember.distributions
    probs = ember.tensor([0.0, 1.0, 0.3], dtype=ember.float64)
    kl = D.kl_divergence(D.Bernoulli(probs), D.Poisson(ember.tensor(1.5, dtype=ember.float64))).numpy()
    np.testing.assert_allclose(kl, [1.5, 1.5 - np.log(1.5), quadrature_kl(stats.bernoulli(0.3), stats.poisson(1.5))],
                               rtol=1e-14)
    at_zero = D.kl_divergence(D.Bernoulli(probs), D.Poisson(ember.zeros(3, dtype=ember.float64))).numpy()
    assert at_zero.tolist() == [0.0, np.inf, np.inf]
