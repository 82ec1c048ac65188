"""The binomial distribution (https://pytorch.org/docs/stable/distributions.html#binomial)."""

from .._creation import arange
from .._sampling import rand
from .._ops.special import lgamma
from .._size import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import softplus
from . import constraints
from .distribution import Distribution
from .utils import SuccessProbability, broadcast_all

__all__ = ["Binomial"]


class Binomial(SuccessProbability, Distribution):
    """``Binomial(total_count=1, probs=None, logits=None)``: the number of successes in
    ``total_count`` independent trials, each a success with probability ``probs`` (=
    sigmoid(logits)); ``total_count`` broadcasts with the parameter.

    ``log_prob(k) = log C(n, k) + k logits - n softplus(logits)``. Samples count uniform draws
    below ``probs`` (the same law as torch.binomial, not its numbers for a seed).
    ``entropy``/``enumerate_support`` need one ``total_count`` for the whole batch
    (NotImplementedError otherwise, as in torch).
    """
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True
    _expand_params = (("total_count", 0), ("probs", 0), ("logits", 0), ("_param", 0))

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        batch_shape, (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(batch_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        trials = int(self.total_count.max()) if self.total_count.numel() else 0
        with no_grad():
            success = rand(tuple(shape) + (trials,), dtype=self.probs.dtype) < self.probs.expand(shape).unsqueeze(-1)
            counted = arange(trials) < self.total_count.expand(shape).unsqueeze(-1)
            return (success & counted).sum(-1).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits, k = broadcast_all(self.total_count, self.logits, value)
        log_choose = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)
        return log_choose + k * logits - n * softplus(logits)

    def entropy(self):
        support = self.enumerate_support(expand=False)
        log_pmf = self.log_prob(support)
        return -(log_pmf.exp() * log_pmf).sum(0)

    def enumerate_support(self, expand=True):
        total = int(self.total_count.max()) if self.total_count.numel() else 0
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = arange(1 + total, dtype=self._param.dtype).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
