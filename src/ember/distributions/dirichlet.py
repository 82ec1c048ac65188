"""The Dirichlet distribution (https://pytorch.org/docs/stable/distributions.html#dirichlet)."""
import numpy as np

from .._dtype import finfo, float64
from .._ops.positions import one_hot
from .._ops.random import standard_gamma
from .._ops.special import digamma, lgamma, xlogy
from .._size import Size
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """``Dirichlet(concentration)``: a point of the probability simplex with density
    proportional to ``prod x_i^(a_i - 1)``; ``concentration`` (..., K), positive, at least 1-d
    (ValueError otherwise); the last dim is the event. ``rsample`` normalises K standard gamma
    draws (PyTorch's numbers for the same seed) and differentiates through them, so its
    gradient is an implicit reparameterisation gradient (PyTorch's per-sample gradient uses
    another transport map: the two agree in expectation, not draw by draw)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _expand_params = (("concentration", 1),)

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        concentration = self.concentration.expand(self._extended_shape(sample_shape))
        gammas = standard_gamma(concentration.to(float64))  # normalised in float64, as PyTorch's
        value = (gammas / gammas.sum(-1, keepdim=True)).to(concentration.dtype)
        dtype = value.dtype
        # inside the open simplex, as PyTorch keeps its samples
        value.detach().clamp_(min=finfo(dtype).tiny, max=float(np.nextafter(dtype.np.type(1), dtype.np.type(0))))
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return xlogy(a - 1.0, value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentration_m1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentration_m1 / concentration_m1.sum(-1, True)
        # where every a_i < 1 the density peaks at the vertices: PyTorch names the first one
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = one_hot(mode[mask].argmax(-1), concentration_m1.shape[-1]).to(mode.dtype)
        return mode

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a = self.concentration
        total = a.sum(-1)
        return lgamma(a).sum(-1) - lgamma(total) - (k - total) * digamma(total) - ((a - 1.0) * digamma(a)).sum(-1)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
