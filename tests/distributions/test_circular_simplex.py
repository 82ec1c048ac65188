"""VonMises, LogisticNormal and StickBreakingTransform vs torch.distributions 2.13 and float64
closed forms: log_prob (on torch's samples), moments, gradients, shapes, validation; samples
equal torch's for a seed, and their statistics meet stated bounds."""
import math

import numpy as np
import pytest
import scipy.special

import ember

torch = pytest.importorskip("torch")
TD, ED = torch.distributions, ember.distributions


def E(t):
    return ember.tensor(t.detach().numpy())


LOC = torch.tensor([[-2.5, 0.0, 1.0], [3.0, -0.3, 0.7]], dtype=torch.float64)
KAPPA = torch.tensor([[1e-6, 0.3, 2.0], [3.75, 10.0, 500.0]], dtype=torch.float64)


def _log_i0(k):
    return np.log(scipy.special.i0e(k)) + k


def test_von_mises_log_prob_and_variance_meet_the_bessel_closed_form():
    x = torch.linspace(-7, 7, 8, dtype=torch.float64).reshape(8, 1, 1)
    k, loc = KAPPA.numpy(), LOC.numpy()
    want = k * np.cos(x.numpy() - loc) - math.log(2 * math.pi) - _log_i0(k)
    # Abramowitz & Stegun's polynomials: relative error below 2e-7 in I_0, so in log I_0 too
    for dtype, bound in ((torch.float64, 2e-7), (torch.float32, 2e-7 + 4e-7 * 510)):
        e = ED.VonMises(E(LOC.to(dtype)), E(KAPPA.to(dtype)))
        got = e.log_prob(E(x.to(dtype))).numpy()
        assert got.dtype == np.dtype(str(dtype).split(".")[1])
        assert np.abs(got - want).max() <= bound
    e, t = ED.VonMises(E(LOC), E(KAPPA)), TD.VonMises(LOC, KAPPA)
    variance = 1 - scipy.special.i1e(k) / scipy.special.i0e(k)
    # A&S: relative errors below 1.9e-7 (I_0) and 2.2e-7 (I_1) above 3.75, so below 4.1e-7 in I_1 / I_0
    assert np.abs(e.variance.numpy() - variance).max() <= 4.2e-7
    np.testing.assert_allclose(e.variance.numpy(), t.variance.numpy(), rtol=1e-12)
    np.testing.assert_allclose(e.log_prob(E(x)).numpy(), t.log_prob(x).numpy(), rtol=1e-12)
    assert e.mean.equal(E(LOC)) and e.mode.equal(E(LOC)) and repr(e.support) == repr(t.support)


def test_von_mises_gradients_equal_torchs():
    grads = []
    for lib, wrap in ((torch, lambda a: a), (ember, E)):
        loc, kappa = wrap(LOC.clone()).requires_grad_(), wrap(KAPPA[:, 1:].clone()).requires_grad_()
        d = lib.distributions.VonMises(loc[:, 1:], kappa)
        value = wrap(torch.tensor([[0.4, -1.2], [2.0, 0.1]], dtype=torch.float64))
        (d.log_prob(value).sum() + d.variance.sum()).backward()
        grads.append((loc.grad.numpy(), kappa.grad.numpy()))
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


def test_von_mises_samples_are_torchs_and_their_statistics_hold():
    for dtype in (torch.float32, torch.float64):
        t, e = TD.VonMises(LOC.to(dtype), KAPPA.to(dtype)), ED.VonMises(E(LOC.to(dtype)), E(KAPPA.to(dtype)))
        torch.manual_seed(7)
        ember.manual_seed(7)
        want, got = t.sample((4,)), e.sample((4,))
        assert tuple(got.shape) == (4, 2, 3) and str(got.dtype) == str(dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    ember.manual_seed(0)
    n = 40000
    draws = ED.VonMises(E(LOC), E(KAPPA)).sample((n,)).numpy()
    assert draws.min() >= -math.pi and draws.max() < math.pi
    # mean resultant vector: E[cos(x - loc)] = I_1(k) / I_0(k), E[sin(x - loc)] = 0; each of
    # cos and sin has variance at most 1/2 + 1/2 = 1, so 5 standard errors are 5 / sqrt(n)
    k = KAPPA.numpy()
    c, s = np.cos(draws - LOC.numpy()).mean(0), np.sin(draws - LOC.numpy()).mean(0)
    assert np.abs(c - scipy.special.i1e(k) / scipy.special.i0e(k)).max() <= 5 / math.sqrt(n)
    assert np.abs(s).max() <= 5 / math.sqrt(n)


def test_von_mises_validation_expand_and_missing_methods_as_torchs():
    for lib, wrap in ((torch, lambda a: a), (ember, E)):
        with pytest.raises(ValueError):
            lib.distributions.VonMises(wrap(LOC), wrap(-KAPPA))
        d = lib.distributions.VonMises(wrap(LOC[0]), wrap(KAPPA[0]))
        wide = d.expand((4, 3))
        assert tuple(wide.batch_shape) == (4, 3) and tuple(wide.sample().shape) == (4, 3)
        assert type(wide).__name__ == "VonMises" and not d.has_rsample
        for missing in (d.entropy, d.rsample):
            with pytest.raises(NotImplementedError):
                missing()


def test_stick_breaking_transform_equals_torchs():
    x = torch.randn(5, 4, dtype=torch.float64) * 3
    t, e = TD.transforms.StickBreakingTransform(), ED.transforms.StickBreakingTransform()
    y = t(x)
    np.testing.assert_allclose(e(E(x)).numpy(), y.numpy(), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(e.inv(E(y)).numpy(), t.inv(y).numpy(), rtol=1e-9)
    np.testing.assert_allclose(e.log_abs_det_jacobian(E(x), E(y)).numpy(), t.log_abs_det_jacobian(x, y).numpy(),
                               rtol=1e-12)
    assert e.forward_shape((5, 4)) == tuple(t.forward_shape((5, 4))) == (5, 5)
    assert e.inverse_shape((5, 4)) == tuple(t.inverse_shape((5, 4))) == (5, 3)
    assert e == ED.transforms.StickBreakingTransform() and e.bijective
    assert repr(e.codomain) == repr(t.codomain) and e.domain.event_dim == t.domain.event_dim == 1
    for fn in (lambda tr: tr.forward_shape(()), lambda tr: tr.inverse_shape(())):
        with pytest.raises(ValueError, match="Too few dimensions on input"):
            fn(e)


def test_logistic_normal_matches_torch_on_its_samples():
    loc = torch.tensor([[0.3, -1.0, 2.0], [0.0, 0.5, -0.5]], dtype=torch.float64)
    scale = torch.tensor([[0.5, 1.5, 0.8], [1.0, 0.2, 2.0]], dtype=torch.float64)
    t, e = TD.LogisticNormal(loc, scale), ED.LogisticNormal(E(loc), E(scale))
    assert (tuple(e.batch_shape), tuple(e.event_shape)) == (tuple(t.batch_shape), tuple(t.event_shape)) == ((2,), (4,))
    assert repr(e.support) == repr(t.support) and e.loc.equal(E(loc)) and e.scale.equal(E(scale))
    torch.manual_seed(1)
    ember.manual_seed(1)
    value = t.rsample((6,))
    np.testing.assert_allclose(e.rsample((6,)).numpy(), value.numpy(), rtol=1e-12)
    np.testing.assert_allclose(e.log_prob(E(value)).numpy(), t.log_prob(value).numpy(), rtol=1e-10)
    scalar = ED.LogisticNormal(0.5, 2.0), TD.LogisticNormal(torch.tensor(0.5), torch.tensor(2.0))
    assert [(tuple(d.batch_shape), tuple(d.event_shape)) for d in scalar] == [((), (2,))] * 2
    wide = e.expand((3, 2))
    assert type(wide).__name__ == "LogisticNormal" and tuple(wide.sample().shape) == (3, 2, 4)
    for d in (e, t):
        for moment in ("mean", "variance"):
            with pytest.raises(NotImplementedError):
                getattr(d, moment)
        with pytest.raises(ValueError):  # off the simplex
            d.log_prob(type(value)([0.5, 0.6, 0.1, 0.1]) if d is t else ember.tensor([0.5, 0.6, 0.1, 0.1]))
        with pytest.raises(ValueError):
            type(d)(d.loc, -d.scale)


def test_logistic_normal_gradients_and_sample_statistics():
    grads = []
    for lib, wrap in ((torch, lambda a: a), (ember, E)):
        loc = wrap(torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64)).requires_grad_()
        scale = wrap(torch.tensor([0.5, 1.5, 0.8], dtype=torch.float64)).requires_grad_()
        d = lib.distributions.LogisticNormal(loc, scale)
        lib.manual_seed(2)
        draw = d.rsample((3,))
        (d.log_prob(draw.detach()).sum() + (draw * wrap(torch.arange(4.0, dtype=torch.float64))).sum()).backward()
        grads.append((loc.grad.numpy(), scale.grad.numpy()))
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    # the draws' stick-breaking preimages are the base normal's: mean loc within 5 standard errors
    loc, scale, n = np.array([0.3, -1.0, 2.0]), np.array([0.5, 1.5, 0.8]), 20000
    ember.manual_seed(0)
    draws = ED.LogisticNormal(ember.tensor(loc), ember.tensor(scale)).sample((n,))
    assert np.allclose(draws.sum(-1).numpy(), 1) and bool((draws > 0).all())
    base = ED.transforms.StickBreakingTransform().inv(draws).numpy()
    assert np.all(np.abs(base.mean(0) - loc) <= 5 * scale / math.sqrt(n))
