"""GeneralizedPareto vs torch.distributions 2.13 in float64: icdf, moments (nan where undefined),
entropy, support and their gradients; log_prob, log_survival_function, cdf vs scipy and finite
differences; concentrations below, at (and within isclose of) and above 0, including -1 (uniform); samples from the same seed,
sample statistics, validation errors, expand."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
TD, ED = torch.distributions, ember.distributions

LOC = [0.5, -1.0, 0.0, 2.0, 0.3, 1.0, -0.2]
SCALE = [1.5, 0.7, 2.0, 1.0, 0.4, 3.0, 1.1]
CONC = [0.4, -0.3, 0.0, 1e-9, -1.0, 0.7, 1.2]
Z = [0.0, 0.2, 0.9]  # inside every support: value = loc + z * scale
U = [0.0, 0.25, 0.9]


def make(L, values):
    return [L.tensor(v, dtype=L.float64, requires_grad=True) for v in values]


def close(a, b, rtol=1e-8, atol=1e-12):
    a, b = (v.detach().numpy() if hasattr(v, "detach") else v for v in (a, b))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def quantities(L, params):
    d = L.distributions.GeneralizedPareto(*(p[:, None] for p in params))
    x = d.loc + L.tensor(Z, dtype=L.float64) * d.scale
    u = L.tensor(U, dtype=L.float64)
    return d, x, [d.icdf(u), d.mean, d.variance, d.stddev, d.mode, d.entropy()]


def test_icdf_moments_entropy_and_gradients_match_torch():
    pt, pe = make(torch, (LOC, SCALE, CONC)), make(ember, (LOC, SCALE, CONC))
    (t, _, rt), (e, _, re) = quantities(torch, pt), quantities(ember, pe)
    for a, b in zip(re, rt):
        close(a, b)
        finite = torch.isfinite(b).all(1) if b.ndim > 1 else torch.isfinite(b)
        b, a = b[finite], a[ember.tensor(finite.numpy())]
        gt = torch.autograd.grad(b.sum(), pt, retain_graph=True, allow_unused=True)
        ge = ember.autograd.grad(a.sum(), pe, retain_graph=True, allow_unused=True)
        for g1, g2 in zip(ge, gt):
            assert (g1 is None) == (g2 is None)
            if g2 is not None:
                close(g1, g2, rtol=1e-7)
    assert repr(e.support).startswith("Interval(")
    close(e.support.upper_bound, t.support.upper_bound)


def test_densities_match_scipy_and_finite_differences():
    # torch 2.13's log_prob/log_survival_function/cdf raise RuntimeError ("Double did not match
    # Float") on float64 parameters (isclose against a float32 zero): scipy's genpareto is the
    # oracle there, float64 central differences for the gradients
    stats = pytest.importorskip("scipy.stats")
    pe = make(ember, (LOC, SCALE, CONC))
    d, x, _ = quantities(ember, pe)
    loc, scale, c = (np.array(v)[:, None] for v in (LOC, SCALE, CONC))
    xs = loc + np.array(Z) * scale
    ref = stats.genpareto(c, loc, scale)
    # the concentration 1e-9 counts as 0 (torch's isclose): off scipy's by ~c z, 1e-9 relative
    close(d.log_prob(x), ref.logpdf(xs), rtol=1e-8)
    close(d.log_survival_function(x), ref.logsf(xs), rtol=1e-8)
    close(d.cdf(x), ref.cdf(xs), rtol=1e-8)
    close(d.log_cdf(x[:, 1:]), ref.logcdf(xs[:, 1:]), rtol=1e-8)
    for name in ("log_prob", "log_survival_function"):
        grads = ember.autograd.grad(getattr(d, name)(x.detach()).sum(), pe, retain_graph=True)
        for i, g in enumerate(grads):
            for j in (0, 1, 5, 6):  # away from the c = 0 switch (c = 0, 1e-9) and c = -1
                h, value = 1e-6, []
                for sign in (1, -1):
                    args = [list(v) for v in (LOC, SCALE, CONC)]
                    args[i][j] += sign * h
                    dd = ED.GeneralizedPareto(*(ember.tensor(a, dtype=ember.float64)[:, None] for a in args),
                                              validate_args=False)
                    value.append(getattr(dd, name)(x.detach()).sum().item())
                assert abs(g[j].item() - (value[0] - value[1]) / (2 * h)) <= 1e-6 * (1 + abs(g[j].item()))


def test_closed_forms_at_special_concentrations():
    x = ember.tensor([0.0, 0.3, 0.8], dtype=ember.float64)
    expo = ED.GeneralizedPareto(0.0, 2.0, 0.0)
    close(expo.log_prob(x), ED.Exponential(0.5).log_prob(x), rtol=1e-14)
    uniform = ED.GeneralizedPareto(ember.tensor(0.0, dtype=ember.float64), 1.0, -1.0)
    close(uniform.cdf(x), x, rtol=1e-14)


def test_samples_equal_torch_for_the_same_seed_and_statistics():
    args = ([0.5, -1.0, 0.0], [1.5, 0.7, 2.0], [0.2, -0.3, 0.0])
    t = TD.GeneralizedPareto(*(torch.tensor(a) for a in args))
    e = ED.GeneralizedPareto(*(ember.tensor(a) for a in args))
    torch.manual_seed(5), ember.manual_seed(5)
    st, se = t.sample((4, 2)), e.rsample((4, 2))
    assert tuple(se.shape) == (4, 2, 3) and se.dtype == ember.float32
    np.testing.assert_allclose(se.numpy(), st.numpy(), rtol=1e-5, atol=1e-6)
    n = 20000
    e64 = ED.GeneralizedPareto(*(ember.tensor(a, dtype=ember.float64) for a in args))
    ember.manual_seed(1)
    s = e64.sample((n,)).numpy()
    assert np.all(np.abs(s.mean(0) - e64.mean.numpy()) <= 5 * np.sqrt(e64.variance.numpy() / n))
    assert bool(e64.support.check(ember.tensor(s)).all())


def test_validation_errors_and_expand_as_torch():
    for lib in (torch, ember):
        D = lib.distributions.GeneralizedPareto
        with pytest.raises(ValueError, match="scale"):
            D(0.0, lib.tensor([-1.0]), 0.1)
        with pytest.raises(ValueError, match="support"):
            D(lib.tensor([0.0]), 1.0, -0.5).log_prob(lib.tensor([2.5]))
        with pytest.raises(ValueError, match="support"):
            D(lib.tensor([0.0]), 1.0, 0.5).log_prob(lib.tensor([-0.5]))
        d = D(lib.tensor([0.0, 1.0]), 1.0, 0.5).expand((3, 2))
        assert tuple(d.batch_shape) == (3, 2) and tuple(d.sample((4,)).shape) == (4, 3, 2)
        assert tuple(D(0.0, 1.0, 0.5).entropy().shape) == ()
