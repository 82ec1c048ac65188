"""The Pareto type 1 distribution (https://pytorch.org/docs/stable/distributions.html#pareto)."""
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """``Pareto(scale, alpha)``: ``scale * exp(E)`` for E ~ Exponential(alpha), values >=
    ``scale``; mean ``alpha scale / (alpha - 1)`` (inf for alpha <= 1), variance
    ``scale^2 alpha / ((alpha - 1)^2 (alpha - 2))`` (inf for alpha <= 2), entropy
    ``log(scale / alpha) + 1 + 1 / alpha``."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [ExpTransform(), AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale, new.alpha = self.scale.expand(batch_shape), self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
