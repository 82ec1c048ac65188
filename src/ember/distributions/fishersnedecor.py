"""The Fisher-Snedecor F distribution
(https://pytorch.org/docs/stable/distributions.html#fishersnedecor): ``(X1 / df1) / (X2 / df2)``
for independent chi-squared X1, X2 with ``df1`` and ``df2`` degrees of freedom, drawn as
``Gamma(df / 2, df)`` variables (already divided by df), first then second, as PyTorch draws them."""
import math
from numbers import Number

from .._dtype import finfo
from .._size import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """``FisherSnedecor(df1, df2)``: density
    ``Gamma((d1+d2)/2) / (Gamma(d1/2) Gamma(d2/2)) (d1/d2)^(d1/2) x^(d1/2-1) (1 + d1 x/d2)^(-(d1+d2)/2)``
    on x > 0. Mean nan for df2 <= 2, mode nan for df1 <= 2, variance nan for df2 <= 4
    (PyTorch's values)."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _expand_params = (("df1", 0), ("df2", 0))

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1, self._gamma2 = Gamma(self.df1 * 0.5, self.df1), Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(Size() if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2.masked_fill(self.df2 <= 2, math.nan)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return mode.masked_fill(self.df1 <= 2, math.nan)

    @property
    def variance(self):
        df2 = self.df2.masked_fill(self.df2 <= 4, math.nan)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        tiny = finfo(x1.dtype).tiny
        x2 = self._gamma2.rsample(sample_shape).view(shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        normalizer = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        return normalizer + half1 * ratio.log() + (half1 - 1) * value.log() - (half1 + half2) * (ratio * value).log1p()
