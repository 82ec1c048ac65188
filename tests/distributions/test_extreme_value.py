"""Gumbel, Weibull, Pareto and Kumaraswamy vs torch.distributions 2.13: log_prob on torch's samples, moments,
entropy, support, expand; ember's samples put through torch's cdf are uniform (mean 1/2 within
5 standard errors)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
TD, ED = torch.distributions, ember.distributions

A = torch.tensor([0.5, 1.5, 3.0], dtype=torch.float64)
B = torch.tensor([2.0, 0.7, 1.2], dtype=torch.float64)


def E(t):
    return ember.tensor(t.numpy())


@pytest.mark.parametrize("name", ["Gumbel", "Weibull", "Pareto", "Kumaraswamy"])
def test_log_prob_moments_entropy_and_samples_match_torch(name):
    t, e = getattr(TD, name)(A, B), getattr(ED, name)(E(A), E(B))
    torch.manual_seed(0)
    value = t.sample((6,))
    np.testing.assert_allclose(e.log_prob(E(value)).numpy(), t.log_prob(value).numpy(), rtol=1e-12)
    for attr in ("mean", "variance", "stddev") + (("mode",) if name != "Kumaraswamy" else ()):
        np.testing.assert_allclose(getattr(e, attr).numpy(), getattr(t, attr).numpy(), rtol=1e-10)
    np.testing.assert_allclose(e.entropy().numpy(), t.entropy().numpy(), rtol=1e-12)
    assert repr(e.support) == repr(t.support)
    assert type(e.expand((2, 3))).__name__ == name and tuple(e.expand((2, 3)).batch_shape) == (2, 3)
    ember.manual_seed(0)
    samples = e.sample((20000,))
    assert bool(e.support.check(samples).all())
    u = t.cdf(torch.tensor(samples.numpy())).numpy()
    assert np.all(np.abs(u.mean(0) - 0.5) <= 5 * np.sqrt(1 / 12 / 20000))


def test_invalid_parameters_raise_valueerror_as_torch():
    for lib in (torch, ember):
        for name in ("Gumbel", "Weibull", "Pareto", "Kumaraswamy"):
            with pytest.raises(ValueError):
                getattr(lib.distributions, name)(lib.tensor([1.0]), lib.tensor([-1.0]), validate_args=True)


def test_kumaraswamy_mode_is_where_the_density_peaks():
    # torch 2.13's mode takes log1p(-b), nan for every b > 1; ember's is ((a-1)/(ab-1))^(1/a)
    e = ED.Kumaraswamy(ember.tensor([3.0, 1.5, 0.5], dtype=ember.float64),
                       ember.tensor([1.2, 2.0, 2.0], dtype=ember.float64))
    mode = e.mode.numpy()
    assert np.isnan(mode[2])
    grid = np.linspace(1e-4, 1 - 1e-4, 20001)
    density = e.log_prob(ember.tensor(np.repeat(grid[:, None], 3, 1))).numpy()
    np.testing.assert_allclose(mode[:2], grid[density[:, :2].argmax(0)], atol=1e-4)
