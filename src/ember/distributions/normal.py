"""The normal (Gaussian) and Laplace distributions
(https://pytorch.org/docs/stable/distributions.html#normal, #laplace)."""
import math
from numbers import Number

from .._creation import empty, normal
from .._dtype import finfo
from .._ops.special import erfinv
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Normal", "Laplace"]


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


class Normal(_LocScale):
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


class Laplace(_LocScale):
    """``Laplace(loc, scale)``: density exp(-|x - loc| / scale) / (2 scale); ``scale > 0``."""

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    @property
    def variance(self):
        return 2 * self.scale ** 2

    def rsample(self, sample_shape=Size()):
        # u uniform on (-1, 1); the inverse CDF of its magnitude, with its sign
        u = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).uniform_(
            finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
