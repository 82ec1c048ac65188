"""RelaxedBernoulli and RelaxedOneHotCategorical (and their logit/log-space bases) vs
torch.distributions 2.13: log_prob on torch's samples, shapes, support, expand; rsample's
gradient against finite differences at fixed noise; sample means against torch's samples'."""
import numpy as np
import pytest

import ember
import ember.distributions.relaxed_bernoulli  # noqa: F401 (torch's module paths of the base laws)
import ember.distributions.relaxed_categorical  # noqa: F401
from ember.autograd import gradcheck

torch = pytest.importorskip("torch")
import torch.distributions.relaxed_bernoulli  # noqa: E402,F401
import torch.distributions.relaxed_categorical  # noqa: E402,F401

TD, ED = torch.distributions, ember.distributions

P = torch.tensor([[0.2, 0.7, 0.1], [0.5, 0.9, 0.4]], dtype=torch.float64)
TEMPERATURE = torch.tensor(0.7, dtype=torch.float64)


def E(t):
    return ember.tensor(t.numpy())


CASES = {
    "relaxed-bernoulli": lambda D, T: D.RelaxedBernoulli(T(TEMPERATURE), probs=T(P)),
    "relaxed-bernoulli-logits": lambda D, T: D.RelaxedBernoulli(T(TEMPERATURE * 3), logits=T(P * 4 - 2)),
    "logit-relaxed-bernoulli": lambda D, T: D.relaxed_bernoulli.LogitRelaxedBernoulli(T(TEMPERATURE), probs=T(P)),
    "relaxed-one-hot": lambda D, T: D.RelaxedOneHotCategorical(T(TEMPERATURE), probs=T(P / P.sum(-1, keepdim=True))),
    "relaxed-one-hot-logits": lambda D, T: D.RelaxedOneHotCategorical(T(TEMPERATURE / 2), logits=T(P.log())),
    "exp-relaxed-categorical": lambda D, T: D.relaxed_categorical.ExpRelaxedCategorical(T(TEMPERATURE),
                                                                                       logits=T(P.log())),
}


@pytest.mark.parametrize("name", CASES)
def test_log_prob_shapes_and_support_equal_torchs(name):
    t, e = CASES[name](TD, lambda x: x), CASES[name](ED, E)
    assert tuple(e.batch_shape) == tuple(t.batch_shape) and tuple(e.event_shape) == tuple(t.event_shape)
    assert e.has_rsample and repr(e.support) == repr(t.support).replace("torch.", "")
    torch.manual_seed(0)
    value = t.sample((4,))
    np.testing.assert_allclose(e.log_prob(E(value)).numpy(), t.log_prob(value).numpy(), rtol=1e-10, atol=1e-12)
    assert bool(e.support.check(e.sample((4,))).all())
    shape = (5,) + tuple(t.batch_shape)
    assert tuple(e.expand(shape).batch_shape) == tuple(t.expand(shape).batch_shape)
    assert type(e.expand(shape)).__name__ == type(t.expand(shape)).__name__


EXPANDED = {**CASES,
            "one-hot": lambda D, T: D.OneHotCategorical(logits=T(P.log())),
            "multinomial": lambda D, T: D.Multinomial(5, probs=T(P))}


@pytest.mark.parametrize("name", EXPANDED)
def test_an_expanded_copy_keeps_torchs_parameters(name):
    t, e = EXPANDED[name](TD, lambda x: x), EXPANDED[name](ED, E)
    shape = (4,) + tuple(t.batch_shape)
    t, e = t.expand(shape), e.expand(shape)
    for attr in ("probs", "logits", "temperature", "total_count", "param_shape"):
        if hasattr(t, attr):
            want, got = getattr(t, attr), getattr(e, attr)
            if isinstance(want, torch.Tensor):
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
            else:
                assert tuple(got) == tuple(want) if attr == "param_shape" else got == want
    torch.manual_seed(0)
    value = t.sample()
    np.testing.assert_allclose(e.log_prob(E(value)).numpy(), t.log_prob(value).numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_samples_mean_equals_torchs_samples_mean(name):
    t, e = CASES[name](TD, lambda x: x), CASES[name](ED, E)
    n = 20000
    torch.manual_seed(0)
    ts = t.sample((n,)).numpy()
    es = e.sample((n,)).numpy()
    stderr = np.sqrt(ts.var(0) / n + es.var(0) / n)
    assert np.all(np.abs(es.mean(0) - ts.mean(0)) <= 5 * stderr)


@pytest.mark.parametrize("family", ["RelaxedBernoulli", "RelaxedOneHotCategorical"])
def test_rsample_gradient_matches_finite_differences(family):
    logits = ember.tensor([0.3, -1.2, 0.8], dtype=ember.float64, requires_grad=True)

    def draw(l):
        ember.manual_seed(5)  # the same noise at every evaluation
        return getattr(ED, family)(ember.tensor(0.6, dtype=ember.float64), logits=l).rsample((2,))
    assert gradcheck(draw, (logits,))
