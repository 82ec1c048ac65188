"""The geometric distribution (https://pytorch.org/docs/stable/distributions.html#geometric)."""
from numbers import Number

from .._creation import empty
from .._dtype import finfo
from .._size import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution
from .utils import SuccessProbability, broadcast_all, one_of

__all__ = ["Geometric"]


class Geometric(SuccessProbability, Distribution):
    """``Geometric(probs=None, logits=None)``: the number of failures before the first success
    of Bernoulli(probs) trials, k = 0, 1, ...; ``0 < probs <= 1``."""
    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = Size() if isinstance(given, Number) else (self.probs if probs is not None else self.logits).size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs.data
            valid = value > 0  # the interval constraint admits 0; a geometric law needs p > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) of "
                    f"distribution {self!r} to be positive but found invalid values:\n{value[~valid]}")

    @property
    def _expand_params(self):
        return (("probs", 0),) if "probs" in self.__dict__ else (("logits", 0),)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs.new_zeros(self.probs.shape)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone().masked_fill((probs == 1) & (value == 0), 0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
