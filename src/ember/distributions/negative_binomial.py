"""The negative binomial distribution (https://pytorch.org/docs/stable/distributions.html#negativebinomial)."""

from .._ops.special import lgamma
from .._random import poisson
from .._size import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import logsigmoid
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import SuccessProbability, broadcast_all

__all__ = ["NegativeBinomial"]


class NegativeBinomial(SuccessProbability, Distribution):
    """``NegativeBinomial(total_count, probs=None, logits=None)``: the number of successes
    before ``total_count`` failures of independent trials, each a success with probability
    ``probs`` (= sigmoid(logits)); ``total_count > 0`` need not be an integer.

    ``log_prob(k) = lgamma(r + k) - lgamma(k + 1) - lgamma(r) + r logsigmoid(-logits) +
    k logsigmoid(logits)``. Samples are Poisson draws at Gamma(r, exp(-logits)) rates (the
    gamma-Poisson mixture torch uses). Source: torch.distributions.NegativeBinomial's page.
    """
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_params = (("total_count", 0), ("probs", 0), ("logits", 0), ("_param", 0))

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        batch_shape, (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=Size()):
        with no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False).sample(sample_shape)
            return poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r, logits, k = broadcast_all(self.total_count, self.logits, value)
        log_normalizer = (lgamma(r + k) - lgamma(k + 1) - lgamma(r)).masked_fill(r + k == 0, 0.0)
        return log_normalizer + r * logsigmoid(-logits) + k * logsigmoid(logits)
