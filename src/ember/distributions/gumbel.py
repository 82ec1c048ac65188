"""The Gumbel distribution (https://pytorch.org/docs/stable/distributions.html#gumbel)."""
import math

from .._creation import full_like, ones_like
from .._dtype import finfo
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Gumbel"]

_EULER_GAMMA = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    """``Gumbel(loc, scale)``: ``loc - scale log(-log U)`` for U ~ Uniform(tiny, 1 - eps);
    ``log_prob(x) = z - exp(z) - log scale`` with ``z = (loc - x) / scale``; mean
    ``loc + scale * euler_gamma``, variance ``(pi scale)^2 / 6``."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        base = Uniform(full_like(self.loc, info.tiny), full_like(self.loc, 1 - info.eps), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)), ExpTransform().inv,
                      AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc, new.scale = self.loc.expand(batch_shape), self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + _EULER_GAMMA)
