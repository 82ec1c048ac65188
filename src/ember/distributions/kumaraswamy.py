"""The Kumaraswamy distribution (https://pytorch.org/docs/stable/distributions.html#kumaraswamy;
Kumaraswamy 1980, "A generalized probability density function for double-bounded random
processes")."""
from .._creation import full_like
from .._ops.special import digamma, lgamma
from . import constraints
from .gumbel import _EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Kumaraswamy"]


def _moment(a, b, n):
    """``E[X^n] = b B(1 + n/a, b)``."""
    shifted = 1 + n / a
    return b * (lgamma(shifted) + lgamma(b) - lgamma(shifted + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """``Kumaraswamy(concentration1, concentration0)`` (a, b): values in (0, 1) with density
    ``a b x^(a-1) (1 - x^a)^(b-1)``, sampled as ``(1 - U^(1/b))^(1/a)``; mode
    ``((a - 1) / (a b - 1))^(1/a)`` (nan unless a, b >= 1); entropy
    ``(1 - 1/b) + (1 - 1/a) H_b - log(a b)``, H_b the harmonic number digamma(b + 1) + euler_gamma."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        return ((a - 1) / (a * b - 1)).pow(a.reciprocal()).masked_fill((a < 1) | (b < 1), float("nan"))

    @property
    def variance(self):
        return _moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic = digamma(b + 1) + _EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - (a * b).log()
