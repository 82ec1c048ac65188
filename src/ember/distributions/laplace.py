"""The Laplace distribution (https://pytorch.org/docs/stable/distributions.html#laplace)."""
import math

from .._creation import empty
from .._dtype import finfo
from .._size import Size
from .normal import _LocScale

__all__ = ["Laplace"]


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
