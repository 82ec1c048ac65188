"""Distributions at the edges of their supports (log_prob and cdf at the bounds, icdf at 0 and
1, moments where they are infinite or undefined): torch 2.13's values, and no RuntimeWarning
even with warnings turned into errors (torch is silent; NumPy would warn of the log of 0 and
the 0/0 inside ember's kernels)."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember

inf = math.inf


def _families(lib):
    """name -> (distribution, values of its support's edges to score), in float64 (float32 for
    GeneralizedPareto: torch 2.13's own log_prob and cdf raise "Double did not match Float"
    on float64 parameters)."""
    D = lib.distributions

    def t(*values):
        return lib.tensor(values, dtype=lib.float64)

    def f(*values):
        return lib.tensor(values)

    return {
        "Normal": (D.Normal(t(0.0, 1.0), t(1.0, 2.0)), (-inf, inf)),
        "LogNormal": (D.LogNormal(t(0.0), t(1.0)), (0.0, inf)),
        "HalfNormal": (D.HalfNormal(t(1.0)), (0.0, inf)),
        "HalfCauchy": (D.HalfCauchy(t(1.0)), (0.0, inf)),
        "Cauchy": (D.Cauchy(t(0.0), t(1.0)), (-inf, inf)),
        "Laplace": (D.Laplace(t(0.0), t(1.0)), (-inf, inf)),
        "Exponential": (D.Exponential(t(2.0)), (0.0, inf)),
        "Gamma": (D.Gamma(t(0.5, 2.0), t(1.0, 1.0)), (0.0, inf)),
        "Chi2": (D.Chi2(t(1.0, 3.0)), (0.0, inf)),
        "Beta": (D.Beta(t(0.5, 2.0), t(0.5, 3.0)), (0.0, 1.0)),
        "Uniform": (D.Uniform(t(0.0), t(1.0)), (0.0, 1.0)),
        "Pareto": (D.Pareto(t(1.0), t(2.0)), (1.0, inf)),
        "GeneralizedPareto-heavy": (D.GeneralizedPareto(f(0.5), f(2.0), f(0.3)), (0.5, inf)),
        "GeneralizedPareto-exponential": (D.GeneralizedPareto(f(0.5), f(2.0), f(0.0)), (0.5, inf)),
        "GeneralizedPareto-bounded": (D.GeneralizedPareto(f(0.5), f(2.0), f(-0.5)), (0.5, 4.5)),
        "GeneralizedPareto-uniform": (D.GeneralizedPareto(f(0.5), f(2.0), f(-1.0)), (0.5, 2.5)),
        "Gumbel": (D.Gumbel(t(0.0), t(1.0)), (-inf, inf)),
        "Weibull": (D.Weibull(t(1.0), t(0.5)), (0.0, inf)),
        "Kumaraswamy": (D.Kumaraswamy(t(0.5), t(2.0)), (0.0, 1.0)),
        "InverseGamma": (D.InverseGamma(t(2.0), t(1.0)), (0.0, inf)),
        "StudentT": (D.StudentT(t(3.0)), (-inf, inf)),
        "FisherSnedecor": (D.FisherSnedecor(t(1.0), t(2.0)), (0.0, inf)),
        "ContinuousBernoulli": (D.ContinuousBernoulli(t(0.3, 0.5)), (0.0, 1.0)),
        "VonMises": (D.VonMises(t(0.0), t(1.0)), (-math.pi, math.pi)),
        "Bernoulli": (D.Bernoulli(probs=t(0.0, 1.0, 0.5)), (0.0, 1.0)),
        "Geometric": (D.Geometric(probs=t(1.0, 0.5)), (0.0, 5.0)),
        "Binomial": (D.Binomial(3, probs=t(0.0, 1.0)), (0.0, 3.0)),
        "NegativeBinomial": (D.NegativeBinomial(3, probs=t(0.0, 0.5)), (0.0, 3.0)),
        "Poisson": (D.Poisson(t(0.0, 2.0)), (0.0, 3.0)),
        "Categorical": (D.Categorical(probs=t(0.0, 1.0)), (0.0, 1.0)),
        "RelaxedBernoulli": (D.RelaxedBernoulli(t(0.5), probs=t(0.3)), (0.0, 1.0)),
    }


def _evaluate(lib, name):
    """Each method's results as float64 arrays, or the name of the exception it raised; with
    every warning an error."""
    d, edges = _families(lib)[name]
    dtype = lib.float32 if name.startswith("GeneralizedPareto") else lib.float64
    calls = {"log_prob": [lambda v=v: d.log_prob(lib.tensor(v, dtype=dtype)) for v in edges],
             "cdf": [lambda v=v: d.cdf(lib.tensor(v, dtype=dtype)) for v in edges],
             "icdf": [lambda p=p: d.icdf(lib.tensor(p, dtype=dtype)) for p in (0.0, 1.0)],
             "entropy": [d.entropy]}
    calls.update({m: [lambda m=m: getattr(d, m)] for m in ("mean", "variance", "stddev", "mode")})
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method, thunks in calls.items():
            try:
                results[method] = [np.asarray(thunk().numpy(), dtype=np.float64) for thunk in thunks]
            except (NotImplementedError, ValueError) as error:  # a method torch lacks or refuses
                results[method] = type(error).__name__
    return results


@pytest.mark.parametrize("name", list(_families(torch)))
def test_edges_match_torch_without_warnings(name):
    expected, got = _evaluate(torch, name), _evaluate(ember, name)
    rtol = 1e-6 if name.startswith("GeneralizedPareto") else 1e-12
    for method, want in expected.items():
        if isinstance(want, str):
            assert got[method] == want, (method, got[method])
            continue
        for w, g in zip(want, got[method], strict=True):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0, equal_nan=True, err_msg=method)
