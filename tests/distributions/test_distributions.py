"""ember.distributions vs torch.distributions 2.13: samples for the same seed, log_prob, cdf,
icdf, entropy, moments, KL divergences and their gradients, printed forms and errors."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def both(build):
    """``build(lib, D)`` with lib torch and ember (same seed), D its distributions module."""
    out = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        out.append(build(lib, lib.distributions))
    return out


def close(e, t, rtol=1e-5, atol=1e-6):
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            close(a, b, rtol, atol)
    elif isinstance(t, torch.Tensor):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype), (e, t)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
    else:
        assert e == t


def params(L, dtype="float32"):
    dt = getattr(L, dtype)
    loc = L.tensor([0.5, -1.0, 2.0], dtype=dt, requires_grad=True)
    scale = L.tensor([1.5, 0.3, 0.8], dtype=dt, requires_grad=True)
    return loc, scale


CONTINUOUS = {
    "Normal": lambda L, D, loc, scale: D.Normal(loc, scale),
    "Laplace": lambda L, D, loc, scale: D.Laplace(loc, scale),
    "Uniform": lambda L, D, loc, scale: D.Uniform(loc, loc + scale),
    "Exponential": lambda L, D, loc, scale: D.Exponential(scale),
}


@pytest.mark.parametrize("name", CONTINUOUS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_continuous_samples_densities_and_gradients(name, dtype):
    def run(L, D):
        loc, scale = params(L, dtype)
        d = CONTINUOUS[name](L, D, loc, scale)
        x = d.rsample((4, 2))
        value = x.detach()
        out = [x, d.sample((2,)), d.log_prob(value), d.entropy(), d.mean, d.variance, d.stddev,
               d.icdf(L.tensor([0.3, 0.6, 0.9], dtype=getattr(L, dtype)))]
        if name != "Uniform":  # torch's Uniform.cdf is not differentiable in the same way
            out.append(d.cdf(value))
        loss = sum(o.sum() for o in out if o.requires_grad)
        return out + list(L.autograd.grad(loss, [loc, scale], allow_unused=True))
    t, e = both(run)
    close(e, t, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6 if dtype == "float32" else 1e-12)


def test_normal_sample_and_shapes():
    def run(L, D):
        d = D.Normal(L.zeros(2), 1.0)
        return [d.sample(), d.sample((3,)), d.sample_n(2), d.expand((4, 2)).sample(), d.mode,
                D.Normal(0.0, 1.0).sample((2, 2)), D.Normal(0.0, 1.0).perplexity(),
                tuple(d.batch_shape), tuple(d.event_shape)]
    t, e = both(run)
    close(e, t)


def test_bernoulli():
    def run(L, D):
        p = L.tensor([0.2, 0.5, 0.9], requires_grad=True)
        d = D.Bernoulli(p)
        s = d.sample((4,))
        by_logits = D.Bernoulli(logits=L.tensor([-1.0, 0.0, 3.0], requires_grad=True))
        out = [s, d.log_prob(s), d.entropy(), d.mode, d.variance, d.logits, d.enumerate_support(),
               d.enumerate_support(expand=False), by_logits.probs, by_logits.log_prob(L.ones(3)),
               by_logits.entropy(), D.Bernoulli(probs=0.3).logits, D.Bernoulli(0.3).sample((2,))]
        return out + list(L.autograd.grad(d.log_prob(s).sum() + d.entropy().sum(), [p]))
    t, e = both(run)
    close(e, t)


def test_categorical_and_one_hot():
    def run(L, D):
        logits = L.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, -2.0]], requires_grad=True)
        c = D.Categorical(logits=logits)
        s = c.sample((5,))
        o = D.OneHotCategorical(probs=L.tensor([0.2, 0.3, 0.5]))
        os = o.sample((3,))
        out = [s, c.log_prob(s), c.entropy(), c.probs, c.logits, c.mode, c.mean, c.variance,
               c.enumerate_support(), c.param_shape, D.Categorical(L.tensor([1.0, 3.0])).probs,
               D.Categorical(L.tensor([[0.1, 0.9]])).sample((2, 2)),
               os, o.log_prob(os), o.entropy(), o.mode, o.enumerate_support(), o.variance]
        return out + list(L.autograd.grad(c.log_prob(s).sum() + c.entropy().sum(), [logits]))
    t, e = both(run)
    close(e, t)


def test_one_hot_categorical_straight_through():
    def run(L, D):
        probs = L.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], requires_grad=True)
        d = D.OneHotCategoricalStraightThrough(probs=probs)
        s = d.rsample((4,))
        w = L.arange(3.0)
        return [s, d.log_prob(s.detach()), d.has_rsample, tuple(d.batch_shape)] + list(
            L.autograd.grad((s * w).sum(), [probs]))
    t, e = both(run)
    close(e, t)


def test_multivariate_normal_and_independent():
    def run(L, D):
        loc = L.tensor([0.5, -1.0], requires_grad=True)
        cov = L.tensor([[2.0, 0.3], [0.3, 1.0]], requires_grad=True)
        m = D.MultivariateNormal(loc, covariance_matrix=cov)
        x = m.rsample((4,))
        by_precision = D.MultivariateNormal(L.zeros(2), precision_matrix=L.tensor([[1.0, 0.2], [0.2, 2.0]]))
        batched = D.MultivariateNormal(L.zeros(3, 2), scale_tril=L.tensor([[1.0, 0.0], [0.5, 2.0]]))
        ind = D.Independent(D.Normal(L.zeros(2, 3), L.ones(2, 3)), 1)
        s = ind.sample()
        out = [x, m.log_prob(x), m.entropy(), m.variance, m.scale_tril, m.precision_matrix,
               by_precision.covariance_matrix, by_precision.sample((2,)), batched.log_prob(L.ones(2)),
               batched.entropy(), tuple(batched.batch_shape), tuple(batched.event_shape),
               s, ind.log_prob(s), ind.entropy(), tuple(ind.batch_shape), tuple(ind.event_shape)]
        return out + list(L.autograd.grad(x.sum() + m.log_prob(x.detach()).sum() + m.entropy(), [loc, cov]))
    t, e = both(run)
    close(e, t)


def test_kl_divergences_and_their_gradients():
    def run(L, D):
        loc, scale = params(L)
        m = D.MultivariateNormal(loc[:2], covariance_matrix=L.tensor([[2.0, 0.3], [0.3, 1.0]]))
        m2 = D.MultivariateNormal(L.zeros(2), precision_matrix=L.tensor([[1.0, 0.2], [0.2, 2.0]]))
        kls = [D.kl_divergence(D.Normal(loc, scale), D.Normal(0.0, 1.0)),
               D.kl_divergence(D.Laplace(loc, scale), D.Laplace(0.0, 1.0)),
               D.kl_divergence(D.Exponential(scale), D.Exponential(2.0)),
               D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(L.tensor([-1.0, 0.5]), 2.0)),
               D.kl_divergence(D.Bernoulli(L.tensor([0.2, 0.0, 1.0])), D.Bernoulli(L.tensor([0.5, 0.3, 0.0]))),
               D.kl_divergence(D.Categorical(L.tensor([[0.2, 0.8, 0.0], [0.5, 0.25, 0.25]])),
                               D.Categorical(L.tensor([0.3, 0.3, 0.4]))),
               D.kl_divergence(D.OneHotCategorical(L.tensor([0.2, 0.8])), D.OneHotCategorical(L.tensor([0.5, 0.5]))),
               D.kl_divergence(m, m2),
               D.kl_divergence(D.Independent(D.Normal(L.zeros(2, 3), 1.0), 1),
                               D.Independent(D.Normal(L.ones(2, 3), 2.0), 1))]
        grads = L.autograd.grad(sum(k[k.isfinite()].sum() for k in kls), [loc, scale])
        return kls + list(grads)
    t, e = both(run)
    close(e, t)


def test_register_kl_picks_the_closest_pair():
    D = ember.distributions

    class MyNormal(D.Normal):
        pass

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == pytest.approx(0.5)

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return ember.tensor(-1.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == -1.0
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(ember.tensor([0.5, 0.5])))


def test_printed_forms():
    def run(L, D):
        return [repr(d) for d in (
            D.Normal(0.0, 1.0), D.Normal(L.zeros(2), 1.0), D.Categorical(probs=L.tensor([0.2, 0.8])),
            D.Bernoulli(logits=L.zeros(3)), D.MultivariateNormal(L.zeros(2), L.eye(2)),
            D.Independent(D.Normal(L.zeros(2, 3), 1.0), 1), D.OneHotCategorical(probs=L.tensor([0.2, 0.8])),
            D.Uniform(0.0, 2.0), D.Exponential(L.ones(2)), D.Laplace(0.0, 2.0))] + [
            repr(c) for c in (D.constraints.positive, D.constraints.interval(0, 1), D.constraints.simplex,
                              D.constraints.real, D.constraints.integer_interval(0, 3),
                              D.constraints.independent(D.constraints.real, 1), D.constraints.boolean,
                              D.constraints.unit_interval, D.constraints.nonnegative_integer,
                              D.constraints.lower_cholesky, D.constraints.positive_definite,
                              D.constraints.nonnegative, D.Uniform(0.0, 2.0).support)]
    t, e = both(run)
    assert e == t


@pytest.mark.parametrize("build", [
    lambda L, D: D.Normal(0.0, -1.0),
    lambda L, D: D.Normal(0.0, 1.0).log_prob(1.0),
    lambda L, D: D.Categorical(probs=L.tensor([0.2, 0.8])).log_prob(L.tensor(2)),
    lambda L, D: D.Normal(L.zeros(2), 1.0).log_prob(L.zeros(3)),
    lambda L, D: D.Categorical(probs=L.tensor([0.2, 0.8]), logits=L.zeros(2)),
    lambda L, D: D.Bernoulli(),
    lambda L, D: D.Uniform(1.0, 0.0),
    lambda L, D: D.Categorical(probs=L.tensor(0.5)),
    lambda L, D: D.MultivariateNormal(L.zeros(2)),
    lambda L, D: D.MultivariateNormal(L.zeros(2), -L.eye(2)),
    lambda L, D: D.Exponential(L.ones(2)).log_prob(-L.ones(2)),
    lambda L, D: D.Independent(D.Normal(L.zeros(2), 1.0), 2),
    lambda L, D: D.Bernoulli(L.tensor([0.2, 1.5])),
])
def test_errors_are_torchs(build):
    with pytest.raises(Exception) as t:
        both(build)  # torch first: it raises before ember runs
    with pytest.raises(Exception) as e:
        build(ember, ember.distributions)
    assert type(e.value) is type(t.value)
    assert str(e.value) == str(t.value)


def test_validation_can_be_turned_off():
    D = ember.distributions
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Normal(0.0, -1.0).scale.item() == -1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    assert math.isnan(D.Normal(0.0, -1.0, validate_args=False).log_prob(ember.tensor(0.0)).item())


EXPANDS = [
    (lambda L, D: D.Normal(L.zeros(2), 1.0), (3, 2)), (lambda L, D: D.Laplace(0.0, 1.0), (3,)),
    (lambda L, D: D.Bernoulli(L.tensor([0.2, 0.7])), (3, 2)),
    (lambda L, D: D.Bernoulli(logits=L.tensor([0.2, 0.7])), (4, 2)),
    (lambda L, D: D.Categorical(L.tensor([[0.2, 0.8], [0.5, 0.5]])), (3, 2)),
    (lambda L, D: D.Categorical(logits=L.tensor([0.1, 0.3, 0.2])), (2,)),
    (lambda L, D: D.OneHotCategorical(L.tensor([0.2, 0.8])), (3,)),
    (lambda L, D: D.Uniform(L.zeros(2), 2.0), (4, 2)), (lambda L, D: D.Exponential(L.ones(2)), (5, 2)),
    (lambda L, D: D.MultivariateNormal(L.zeros(2), L.eye(2)), (3,)),
    (lambda L, D: D.Independent(D.Normal(L.zeros(2, 3), 1.0), 1), (4, 2)),
]


@pytest.mark.parametrize("build, shape", EXPANDS)
def test_expand_as_torch(build, shape):
    """Every family expands (only Normal and Laplace did): shapes, samples, log_prob, repr."""
    def run(L, D):
        d = build(L, D).expand(shape)
        s = d.sample()
        return [tuple(d.batch_shape), tuple(d.event_shape), s, d.log_prob(s), repr(d)]
    t, e = both(run)
    close(e, t)
