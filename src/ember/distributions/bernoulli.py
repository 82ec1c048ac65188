"""The Bernoulli distribution (https://pytorch.org/docs/stable/distributions.html#bernoulli).

Given ``probs`` or ``logits`` (ValueError for both or neither), it derives the other on first
use; sampling draws PyTorch's numbers for the same seed.
"""
from .._creation import arange
from .._sampling import bernoulli
from .._size import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import SuccessProbability, broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(SuccessProbability, ExponentialFamily):
    """``Bernoulli(probs=None, logits=None)``: 1 with probability ``probs`` (= sigmoid(logits)),
    else 0; samples are floats of the parameter's dtype."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _expand_params = (("probs", 0), ("logits", 0), ("_param", 0))

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape, _ = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return x.clamp(min=0) + (-x.abs()).exp().log1p()
