"""Student's t distribution (https://pytorch.org/docs/stable/distributions.html#studentt)."""
import math
from numbers import Number

from .._creation import empty
from .._ops.special import digamma, lgamma
from .._size import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """``StudentT(df, loc=0.0, scale=1.0)``: ``loc + scale * Z / sqrt(V / df)`` for a standard
    normal Z and a chi-squared V with ``df`` degrees of freedom (drawn in that order, as
    PyTorch draws them). The mean is nan for df <= 1; the variance inf for 1 < df <= 2, nan
    for df <= 1."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_params = (("df", 0), ("loc", 0), ("scale", 0))

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        scalar = all(isinstance(v, Number) for v in (df, loc, scale))
        super().__init__(Size() if scalar else self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return self.loc.clone().masked_fill(self.df <= 1, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.df.clone()
        m = (self.scale.pow(2) * m / (m - 2)).masked_fill((self.df <= 2) & (self.df > 1), math.inf)
        return m.masked_fill(self.df <= 1, math.nan)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        z = empty(shape, dtype=self.df.dtype).normal_()
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * (v / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self):
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
