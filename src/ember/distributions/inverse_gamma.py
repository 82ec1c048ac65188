"""The inverse-gamma distribution (https://pytorch.org/docs/stable/distributions.html#inversegamma):
``1 / X`` for ``X ~ Gamma(concentration, rate)``, density
``rate^a / Gamma(a) x^(-a-1) exp(-rate / x)`` on x > 0 (a the concentration)."""
import math

from .._ops.pointwise_binary import where
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution, base_parameter
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """``InverseGamma(concentration, rate)``: mean ``rate / (a - 1)`` (inf for a <= 1), mode
    ``rate / (a + 1)``, variance ``rate^2 / ((a - 1)^2 (a - 2))`` (inf for a <= 2)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True
    concentration = base_parameter("concentration")
    rate = base_parameter("rate")

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(InverseGamma, _instance))

    @property
    def mean(self):
        a = self.concentration
        return where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        return where(a > 2, self.rate.square() / ((a - 1).square() * (a - 2)), math.inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
