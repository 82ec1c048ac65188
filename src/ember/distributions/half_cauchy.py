"""The half-Cauchy distribution (https://pytorch.org/docs/stable/distributions.html#halfcauchy)."""
import math

from .._creation import full
from .._ops.pointwise_binary import where
from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution, base_parameter
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """``HalfCauchy(scale)``: ``|X|`` for ``X ~ Cauchy(0, scale)``, density
    ``2 / (pi scale (1 + (x / scale)^2))`` on x >= 0; infinite mean and variance."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    scale = base_parameter("scale")

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(HalfCauchy, _instance))

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self):
        return self.scale.new_zeros(self.scale.shape)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
