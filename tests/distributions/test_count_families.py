"""Binomial, NegativeBinomial and Multinomial vs torch.distributions 2.13: log_prob on torch's
own samples, moments, entropy, shapes, support and validation errors (float64 parameters); the
samples' means against the law's mean within 5 standard errors (ember draws its own numbers)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
TD, ED = torch.distributions, ember.distributions


def E(t):
    return ember.tensor(t.numpy())


NAMES = ["binomial", "binomial-logits", "binomial-zero-count", "negative-binomial", "negative-binomial-logits",
         "multinomial", "multinomial-logits"]


def build(name):
    g = torch.Generator().manual_seed(3)
    p = torch.rand(3, 2, generator=g, dtype=torch.float64) * 0.9 + 0.05
    n = torch.tensor([[5.0], [3.0], [7.0]], dtype=torch.float64)
    recipes = {
        "binomial": lambda D, T: D.Binomial(T(n), probs=T(p)),
        "binomial-logits": lambda D, T: D.Binomial(6, logits=T(p * 3 - 1)),
        "binomial-zero-count": lambda D, T: D.Binomial(T(n * 0), probs=T(p)),
        "negative-binomial": lambda D, T: D.NegativeBinomial(T(n * 0.7), probs=T(p)),
        "negative-binomial-logits": lambda D, T: D.NegativeBinomial(2.5, logits=T(p * 4 - 2)),
        "multinomial": lambda D, T: D.Multinomial(5, probs=T(p.softmax(-1))),
        "multinomial-logits": lambda D, T: D.Multinomial(4, logits=T(torch.log(p))),
    }
    return recipes[name](TD, lambda t: t), recipes[name](ED, E)


def outcome(fn):
    try:
        return fn()
    except NotImplementedError:
        return NotImplementedError


@pytest.mark.parametrize("name", NAMES)
def test_log_prob_moments_and_entropy_equal_torchs(name):
    t, e = build(name)
    assert tuple(e.batch_shape) == tuple(t.batch_shape) and tuple(e.event_shape) == tuple(t.event_shape)
    torch.manual_seed(1)
    value = t.sample((5,))
    np.testing.assert_allclose(e.log_prob(E(value)).numpy(), t.log_prob(value).numpy(), rtol=1e-12, atol=1e-12)
    assert bool(e.support.check(E(value)).all())
    for attr in ("mean", "variance", "mode"):
        te, ee = outcome(lambda: getattr(t, attr)), outcome(lambda: getattr(e, attr))
        if te is NotImplementedError:
            assert ee is NotImplementedError
        else:
            np.testing.assert_allclose(ee.numpy(), te.numpy(), rtol=1e-12)
    te, ee = outcome(t.entropy), outcome(e.entropy)
    if te is NotImplementedError:
        assert ee is NotImplementedError
    elif not name.startswith("multinomial"):  # torch's Multinomial.entropy takes lgamma of an int64 n in float32
        np.testing.assert_allclose(ee.numpy(), te.numpy(), rtol=1e-12)


def test_multinomial_of_two_categories_has_the_binomials_entropy():
    p = torch.tensor([[0.3, 0.7], [0.9, 0.1]], dtype=torch.float64)
    reference = TD.Binomial(5, probs=p[:, 0]).entropy()
    np.testing.assert_allclose(ED.Multinomial(5, probs=E(p)).entropy().numpy(), reference.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_samples_have_the_laws_shape_support_and_mean(name):
    t, e = build(name)
    ember.manual_seed(0)
    samples = e.sample((4000,))
    assert tuple(samples.shape) == tuple(t.sample((4000,)).shape) and samples.dtype == ember.float64
    assert bool(e.support.check(samples).all())
    stderr = np.sqrt(t.variance.numpy() / 4000)
    assert np.all(np.abs(samples.numpy().mean(0) - t.mean.numpy()) <= 5 * stderr + 1e-12)


@pytest.mark.parametrize("call", [
    lambda D, T: D.Binomial(5, probs=T([1.5])), lambda D, T: D.Binomial(T([-1.0]), probs=T([0.5])),
    lambda D, T: D.NegativeBinomial(2.0, probs=T([1.0])), lambda D, T: D.Binomial(5, probs=T([0.5])).log_prob(T([6.0])),
    lambda D, T: D.Multinomial(3, probs=T([0.5, 0.5])).log_prob(T([2.0, 2.0])),
    lambda D, T: D.Binomial(T([2.0, 3.0]), probs=T([0.5, 0.5])).enumerate_support(),
])
def test_invalid_parameters_and_values_raise_torchs_class(call):
    with pytest.raises(Exception) as expected:
        call(TD, lambda v: torch.tensor(v, dtype=torch.float64))
    with pytest.raises(type(expected.value)):
        call(ED, lambda v: ember.tensor(v, dtype=ember.float64))


def test_binomial_kl_equals_torchs_inside_and_the_limit_at_the_edges():
    p = torch.tensor([0.3, 0.05, 0.8], dtype=torch.float64)
    q = torch.tensor([0.6, 0.5, 0.2], dtype=torch.float64)
    n = torch.tensor([5.0, 7.0, 2.0], dtype=torch.float64)
    expected = TD.kl_divergence(TD.Binomial(n, probs=p), TD.Binomial(n, probs=q))
    got = ED.kl_divergence(ED.Binomial(E(n), probs=E(p)), ED.Binomial(E(n), probs=E(q)))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
    # p = 1 and p = 0: n log(1/q) and n log(1/(1-q)); a larger count in p: inf (torch gives -inf at p = 1)
    edge = ED.kl_divergence(ED.Binomial(E(torch.tensor([5.0, 5.0, 6.0])), probs=ember.tensor([1.0, 0.0, 0.5])),
                            ED.Binomial(5.0, probs=ember.tensor([0.25, 0.25, 0.5])))
    np.testing.assert_allclose(edge.numpy(), [5 * np.log(4), 5 * np.log(4 / 3), np.inf], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        ED.kl_divergence(ED.Binomial(5, probs=ember.tensor(0.3)), ED.Binomial(6, probs=ember.tensor(0.3)))


def test_dependent_supports_and_matrix_constraints_are_torchs():
    for name in ("Binomial", "Multinomial", "Pareto"):
        t, e = getattr(TD, name).support, getattr(ED, name).support
        assert TD.constraints.is_dependent(t) and ED.constraints.is_dependent(e)
        assert (e.is_discrete, e.event_dim) == (t.is_discrete, t.event_dim)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 4))
    symmetric, psd = a + a.transpose(0, 2, 1), a @ a.transpose(0, 2, 1)
    symmetric[1] = psd[1]
    for value in (a, symmetric, psd, rng.standard_normal((2, 3, 4))):
        for name in ("square", "symmetric", "positive_semidefinite"):
            expected = getattr(TD.constraints, name).check(torch.tensor(value))
            assert getattr(ED.constraints, name).check(ember.tensor(value)).tolist() == expected.tolist()
