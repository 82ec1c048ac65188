"""The gamma distribution (https://pytorch.org/docs/stable/distributions.html#gamma)."""
from numbers import Number

from .._dtype import finfo
from .._ops.random import standard_gamma
from .._ops.special import digamma, igamma, lgamma, xlogy
from .._size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """``Gamma(concentration, rate)``: density ``rate^a x^(a-1) e^(-rate x) / Gamma(a)`` for
    ``x > 0``, ``a = concentration``; both positive, broadcast together. ``rsample`` is
    differentiable in both (implicit reparameterisation, see ``ember._standard_gamma``);
    samples are at least the dtype's smallest normal number."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_params = (("concentration", 0), ("rate", 0))

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(Size() if scalar else self.concentration.size(), validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)  # the division may underflow to 0
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, rate = self.concentration, self.rate
        return xlogy(a, rate) + xlogy(a - 1, value) - rate * value - lgamma(a)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return igamma(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()
