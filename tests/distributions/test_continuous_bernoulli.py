"""ContinuousBernoulli vs torch.distributions 2.13 in float64: log_prob, cdf, icdf, moments, entropy
(closed forms and the Taylor region around probs = 1/2) and their gradients, samples from the same
seed, sample statistics, validation errors, expand, and the KL divergences torch registers."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
TD, ED = torch.distributions, ember.distributions

# both sides of 1/2 and of the Taylor region (0.499, 0.501], and near 0 and 1
PROBS = [0.01, 0.2, 0.4989, 0.499, 0.4995, 0.5, 0.5005, 0.501, 0.5012, 0.7, 0.99]
LOGITS = [-3.0, -0.0045, -0.001, 0.0, 0.0009, 0.0015, 2.0]
VALUES = [0.0, 0.3, 0.5, 0.9, 1.0]


def pair(kind, values):
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    e = ember.tensor(values, dtype=ember.float64, requires_grad=True)
    return (t, e, TD.ContinuousBernoulli(**{kind: t[:, None]}), ED.ContinuousBernoulli(**{kind: e[:, None]}))


def close(a, b, rtol=1e-8, atol=1e-12):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("kind,values", [("probs", PROBS), ("logits", LOGITS)])
def test_values_and_gradients_match_torch(kind, values):
    tp, ep, t, e = pair(kind, values)
    xt, xe = torch.tensor(VALUES, dtype=torch.float64), ember.tensor(VALUES, dtype=ember.float64)
    u = [0.0, 0.1, 0.5, 0.77, 1.0]
    ut, ue = torch.tensor(u, dtype=torch.float64), ember.tensor(u, dtype=ember.float64)
    results = [(t.log_prob(xt), e.log_prob(xe)), (t.cdf(xt), e.cdf(xe)), (t.icdf(ut), e.icdf(ue)),
               (t.mean, e.mean), (t.variance, e.variance), (t.stddev, e.stddev), (t.entropy(), e.entropy()),
               (TD.ExponentialFamily.entropy(t), ED.ExponentialFamily.entropy(e))]
    for rt, re in results[:-1]:
        close(re, rt)
        gt, = torch.autograd.grad(rt.sum(), tp, retain_graph=True)
        ge, = ember.autograd.grad(re.sum(), ep, retain_graph=True)
        # the closed forms cancel terms of size 1/|1 - 2p|^3 just outside the Taylor region: both
        # libraries' gradients there carry ~1e-6 of rounding (torch's variance gradient at
        # p = 0.4989 is 1.4521e-4, the exact one 1.4667e-4), ordered differently
        close(ge, gt, rtol=1e-7, atol=2e-6)
    # the exponential-family entropy detaches the natural parameters: no gradient, in both
    close(*results[-1][::-1])
    for lib, r, p in ((torch, results[-1][0], tp), (ember, results[-1][1], ep)):
        with pytest.raises(RuntimeError):
            lib.autograd.grad(r.sum(), p)


def test_cdf_outside_unit_interval_and_icdf_inverts_cdf():
    t, e = TD.ContinuousBernoulli(torch.tensor(0.3, dtype=torch.float64), validate_args=False), \
        ED.ContinuousBernoulli(ember.tensor(0.3, dtype=ember.float64), validate_args=False)
    x = [-0.5, 1.5]
    close(e.cdf(ember.tensor(x, dtype=ember.float64)), t.cdf(torch.tensor(x, dtype=torch.float64)))
    x = ember.tensor([0.05, 0.4, 0.95], dtype=ember.float64)
    close(e.icdf(e.cdf(x)), torch.tensor(x.numpy()), rtol=1e-12)


def test_samples_equal_torch_for_the_same_seed_and_statistics():
    probs = [0.1, 0.5, 0.8]
    t, e = TD.ContinuousBernoulli(torch.tensor(probs)), ED.ContinuousBernoulli(ember.tensor(probs))
    torch.manual_seed(3), ember.manual_seed(3)
    st, se = t.sample((4, 2)), e.sample((4, 2))
    assert tuple(se.shape) == tuple(st.shape) == (4, 2, 3) and se.dtype == ember.float32
    np.testing.assert_allclose(se.numpy(), st.numpy(), rtol=1e-6, atol=1e-7)
    assert not e.rsample((2,)).requires_grad and tuple(e.sample().shape) == (3,)
    n = 20000
    ember.manual_seed(0)
    e64 = ED.ContinuousBernoulli(ember.tensor(probs, dtype=ember.float64))
    s = e64.sample((n,)).numpy()
    assert np.all(np.abs(s.mean(0) - e64.mean.numpy()) <= 5 * np.sqrt(e64.variance.numpy() / n))
    p = ember.tensor(probs, dtype=ember.float64, requires_grad=True)
    r = ED.ContinuousBernoulli(p).rsample((5,))
    assert r.requires_grad and bool(((r >= 0) & (r <= 1)).all())


def test_validation_errors_as_torch():
    for lib in (torch, ember):
        D = lib.distributions.ContinuousBernoulli
        for kwargs in ({}, {"probs": 0.3, "logits": 0.1}):
            with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
                D(**kwargs)
        for flag in (True, False):
            with pytest.raises(ValueError, match="The parameter probs has invalid values"):
                D(lib.tensor([0.2, 1.5]), validate_args=flag)
        D(lib.tensor([0.2, 1.5]))  # clamped first, then validated (torch's behaviour)
        with pytest.raises(ValueError, match="support"):
            D(lib.tensor([0.2])).log_prob(lib.tensor([1.2]))


def test_expand_and_shapes():
    e = ED.ContinuousBernoulli(logits=ember.tensor([0.3, -1.0]))
    x = e.expand((4, 2))
    assert type(x).__name__ == "ContinuousBernoulli" and tuple(x.batch_shape) == (4, 2)
    assert tuple(x.sample((3,)).shape) == (3, 4, 2) and x._lims == (0.499, 0.501)
    assert tuple(ED.ContinuousBernoulli(0.3).batch_shape) == ()


@pytest.mark.parametrize("q", [
    lambda L, v: L.distributions.ContinuousBernoulli(v(PROBS[::-1])),
    lambda L, v: L.distributions.Exponential(v([0.5 + i for i in range(len(PROBS))])),
    lambda L, v: L.distributions.Normal(v(PROBS[::-1]), v([0.5 + i for i in range(len(PROBS))])),
    lambda L, v: L.distributions.Uniform(v([-1.0] * len(PROBS)), v([1.5] * len(PROBS))),
    lambda L, v: L.distributions.Pareto(v([1.0] * len(PROBS)), v([2.0] * len(PROBS)))])
def test_kl_divergences_match_torch(q):
    def kl(L):
        v = (lambda x: L.tensor(x, dtype=L.float64))
        return L.distributions.kl_divergence(L.distributions.ContinuousBernoulli(v(PROBS)), q(L, v))
    close(kl(ember), kl(torch))


def test_kl_into_continuous_bernoulli_matches_torch():
    for make in (lambda L, v: L.distributions.Beta(v([0.5, 2.0, 3.0]), v([1.5, 0.7, 3.0])),
                 lambda L, v: L.distributions.Exponential(v([0.5, 2.0, 3.0])),
                 lambda L, v: L.distributions.Gamma(v([0.5, 2.0, 3.0]), v([1.0, 1.0, 2.0])),
                 # (these five raised NotImplementedError: torch registers them)
                 lambda L, v: L.distributions.Uniform(v([0.1, 0.2, -0.5]), v([0.9, 0.7, 0.5])),
                 lambda L, v: L.distributions.Normal(v([0.5, 2.0, 3.0]), v([1.0, 1.0, 2.0])),
                 lambda L, v: L.distributions.Laplace(v([0.5, 2.0, 3.0]), v([1.0, 1.0, 2.0])),
                 lambda L, v: L.distributions.Pareto(v([0.5, 2.0, 3.0]), v([1.0, 1.0, 2.0])),
                 lambda L, v: L.distributions.Gumbel(v([0.5, 2.0, 3.0]), v([1.0, 1.0, 2.0]))):
        def kl(L):
            v = (lambda x: L.tensor(x, dtype=L.float64))
            return L.distributions.kl_divergence(make(L, v), L.distributions.ContinuousBernoulli(v([0.2, 0.5, 0.9])))
        close(kl(ember), kl(torch))


def test_kl_from_the_unit_uniform_is_finite():
    # torch 2.13 returns inf for Uniform(0, 1); ContinuousBernoulli(1/2) is that uniform: KL 0
    p = ED.Uniform(ember.tensor([0.0, 0.0], dtype=ember.float64), ember.tensor([1.0, 1.0], dtype=ember.float64))
    q = ED.ContinuousBernoulli(ember.tensor([0.5, 0.2], dtype=ember.float64))
    kl = ED.kl_divergence(p, q).numpy()
    # KL(U || q) = -E_U[log q] = -(log C + (log p + log(1 - p)) / 2), C = 2 atanh(1 - 2p) / (1 - 2p)
    p2 = 0.2
    assert kl[0] == 0 and np.isclose(kl[1], -(np.log(2 * np.arctanh(1 - 2 * p2) / (1 - 2 * p2))
                                              + (np.log(p2) + np.log(1 - p2)) / 2), rtol=1e-12)


def test_kl_to_a_uniform_covering_the_unit_interval_is_finite():
    # torch 2.13 returns inf where low == 0 or high == 1; the divergence is finite there
    p = ED.ContinuousBernoulli(ember.tensor([0.3, 0.3, 0.3], dtype=ember.float64))
    q = ED.Uniform(ember.tensor([0.0, -1.0, 0.1], dtype=ember.float64), ember.tensor([1.0, 2.0, 1.0], dtype=ember.float64))
    kl = ED.kl_divergence(p, q).numpy()
    np.testing.assert_allclose(kl[:2], -p.entropy().numpy()[:2] + np.log([1.0, 3.0]), rtol=1e-12)
    assert kl[2] == np.inf


def test_float32_moments_and_log_prob_near_the_taylor_region_are_accurate():
    # torch 2.13 evaluates the closed forms in float32: its variance at p = 0.4985 is -0.30;
    # ember evaluates them in float64 and rounds once (bounds: a few float32 ulps)
    probs = [0.01, 0.3, 0.4985, 0.4989, 0.5015, 0.502, 0.9]
    x = np.linspace(0, 1, 7, dtype=np.float32)
    e32 = ED.ContinuousBernoulli(ember.tensor(probs)[:, None])
    e64 = ED.ContinuousBernoulli(ember.tensor(probs, dtype=ember.float64)[:, None])
    for a, b, atol in ((e32.mean, e64.mean, 1e-7), (e32.variance, e64.variance, 1e-7),
                       (e32.entropy(), e64.entropy(), 1e-6),
                       (e32.log_prob(ember.tensor(x)), e64.log_prob(ember.tensor(x.astype(np.float64))), 1e-6)):
        assert a.dtype == ember.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=atol)
