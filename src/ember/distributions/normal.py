"""The normal (Gaussian) distribution (https://pytorch.org/docs/stable/distributions.html#normal)."""
import math
from numbers import Number

from .._creation import empty
from .._sampling import normal
from .._ops.special import erfinv
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Normal"]


class _LocScale(Distribution):
    """A location-scale family over the reals: ``loc`` and ``scale`` broadcast to the batch."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    _expand_params = (("loc", 0), ("scale", 0))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class Normal(ExponentialFamily, _LocScale):
    """``Normal(loc, scale)``: density exp(-(x - loc)^2 / (2 scale^2)) / (scale sqrt(2 pi)).
    ``loc``/``scale`` are tensors or numbers, broadcast together; ``scale > 0``."""

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=Size()):
        eps = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).normal_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-((value - self.loc) ** 2) / (2 * self.scale ** 2) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
