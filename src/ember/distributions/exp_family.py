"""``ExponentialFamily``: distributions whose density is
``p(x; θ) = exp(<t(x), θ> - F(θ) + k(x))`` for natural parameters ``θ``, sufficient statistic
``t``, log-normaliser ``F`` and carrier measure ``k``
(https://pytorch.org/docs/stable/distributions.html#exponentialfamily).

Families say what ``θ`` (``_natural_params``), ``F`` (``_log_normalizer``) and ``E[k(x)]``
(``_mean_carrier_measure``) are; the entropy and the KL divergence between two members of
one family then follow from ``F`` and its gradient, computed by autograd (the Bregman
divergence of ``F``; Nielsen & Nock, "Entropies and cross-entropies of exponential families",
2010).
"""
from ..autograd import grad
from ..autograd.grad_mode import enable_grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base of exponential-family distributions: ``entropy`` and the KL divergence within a
    family from the log-normaliser ``F`` (the module docstring gives the formulas;
    https://pytorch.org/docs/stable/distributions.html#exponentialfamily)."""

    @property
    def _natural_params(self):
        """The tuple of natural parameters θ (tensors of the batch shape and event shape)."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """F(θ), one value per batch element."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """E[k(x)] under the distribution."""
        raise NotImplementedError

    def _log_normalizer_and_gradients(self):
        """F(θ) and ∇F(θ) = E[t(x)], with θ detached, the gradient kept differentiable."""
        with enable_grad():
            params = [p.detach().requires_grad_() for p in self._natural_params]
            value = self._log_normalizer(*params)
            gradients = grad(value.sum(), params, create_graph=True)
        return params, value, gradients

    def entropy(self):
        """H = F(θ) - <θ, ∇F(θ)> - E[k(x)], per batch element."""
        params, value, gradients = self._log_normalizer_and_gradients()
        result = value - self._mean_carrier_measure
        for theta, mean_t in zip(params, gradients):
            result = result - (theta * mean_t).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
