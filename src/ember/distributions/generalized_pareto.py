"""The generalized Pareto distribution
(https://pytorch.org/docs/stable/distributions.html#generalizedpareto; Pickands, "Statistical
inference using extreme order statistics", Ann. Statist. 1975).

For ``z = (x - loc) / scale`` and concentration ``c``, the survival function is
``(1 + c z)^(-1/c)`` (``exp(-z)`` at c = 0), on ``z >= 0`` (and ``z <= -1/c`` for c < 0).
Special cases: c = 0 the exponential, c = -1 the uniform on [loc, loc + scale], c > 0 a shifted
Pareto. A concentration within 1e-8 of zero (PyTorch's ``isclose`` test) takes the c = 0 form.
"""
import math
from numbers import Number

from .._ops.compare import isclose
from .._ops.pointwise_binary import where
from .._sampling import rand
from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """``GeneralizedPareto(loc, scale, concentration)``: the law above, shapes broadcast; samples
    are reparameterised through the inverse cdf. Mean ``loc + scale / (1 - c)`` (nan for c >= 1),
    variance ``scale^2 / ((1 - c)^2 (1 - 2c))`` (nan for c >= 1/2), entropy
    ``log scale + c + 1``. ValueError for a non-positive scale (validation on)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True
    _expand_params = (("loc", 0), ("scale", 0), ("concentration", 0))

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        negative = self.concentration < 0
        c = where(negative, self.concentration, -1.0)  # no division by zero in the unused branch
        return constraints.interval(self.loc, where(negative, self.loc - self.scale / c, math.inf))

    def _zero_and_safe_concentration(self):
        """Where c counts as 0, and c with 1 there (keeps the c != 0 branch finite)."""
        zero = isclose(self.concentration, self.concentration.new_zeros(()))
        return zero, where(zero, 1.0, self.concentration)

    def rsample(self, sample_shape=Size()):
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.loc.dtype))

    def log_prob(self, value):
        """``-log scale - (1/c + 1) log1p(c z)`` (``-log scale - z`` at c = 0; ``-log scale``
        at c = -1); values outside the support are not masked (PyTorch's values)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._zero_and_safe_concentration()
        y = 1 / c + 1
        return -self.scale.log() - where(zero, z, where(y == 0, y, y * (c * z).log1p()))

    def log_survival_function(self, value):
        """``log P(X > value) = -log1p(c z) / c`` (``-z`` at c = 0)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._zero_and_safe_concentration()
        return where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        """``log P(X <= value) = log1p(-exp(log_survival_function(value)))``."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        """``loc + scale expm1(-c log1p(-u)) / c`` (``loc - scale log1p(-u)`` at c = 0)."""
        zero, c = self._zero_and_safe_concentration()
        log_q = (-value).log1p()
        return where(zero, self.loc - self.scale * log_q, self.loc + self.scale / c * (-c * log_q).expm1())

    @property
    def mean(self):
        valid = self.concentration < 1
        c = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        c = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).broadcast_to(tuple(self._batch_shape))
