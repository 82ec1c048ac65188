"""The Weibull distribution (https://pytorch.org/docs/stable/distributions.html#weibull)."""
from .._creation import ones_like
from .._ops.special import lgamma
from . import constraints
from .exponential import Exponential
from .gumbel import _EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """``Weibull(scale, concentration)``: ``scale * E^(1 / concentration)`` for E ~
    Exponential(1); mean ``scale Gamma(1 + 1/k)``, variance ``scale^2 (Gamma(1 + 2/k) -
    Gamma(1 + 1/k)^2)``, entropy ``euler_gamma (1 - 1/k) + log(scale / k) + 1``."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale, new.concentration = self.scale.expand(batch_shape), self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration_reciprocal

    @property
    def variance(self):
        return self.scale.pow(2) * (lgamma(1 + 2 * self.concentration_reciprocal).exp()
                                    - lgamma(1 + self.concentration_reciprocal).exp().pow(2))

    def entropy(self):
        k_inverse = self.concentration_reciprocal
        return _EULER_GAMMA * (1 - k_inverse) + (self.scale * k_inverse).log() + 1
