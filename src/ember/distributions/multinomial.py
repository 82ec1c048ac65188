"""The multinomial distribution (https://pytorch.org/docs/stable/distributions.html#multinomial)."""
from .._creation import zeros
from .._ops.special import lgamma
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .binomial import Binomial
from .categorical import CategoryProbabilities
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(CategoryProbabilities, Distribution):
    """``Multinomial(total_count=1, probs=None, logits=None)``: counts of each of K categories
    in ``total_count`` (an int) draws from Categorical(probs or logits); events are vectors of
    the last dim's size K.

    ``log_prob(x) = lgamma(n + 1) - sum lgamma(x_i + 1) + sum x_i logits_i`` (n = sum x_i);
    ``entropy = -lgamma(n + 1) - n sum p_i log p_i + sum_i E[lgamma(X_i + 1)]`` with
    X_i ~ Binomial(n, p_i). ``sample`` needs one ``total_count``; ``log_prob`` accepts any
    count vector.
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    _carried = ("total_count",)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        batch_shape, event_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        with no_grad():
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)  # (n, *sample, *batch)
            counts = zeros(self._extended_shape(sample_shape), dtype=self.probs.dtype)
            ones = counts.new_ones(tuple(draws.shape[1:]) + (1,)).expand(tuple(draws.shape[1:]) + (1,))
            for d in draws:
                counts.scatter_add_(-1, d.unsqueeze(-1), ones)
            return counts

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone().masked_fill((value == 0) & (logits == -float("inf")), 0)
        return lgamma(value.sum(-1) + 1) - lgamma(value + 1).sum(-1) + (logits * value).sum(-1)

    def entropy(self):
        n = self.total_count
        binomial = Binomial(n, probs=self.probs)
        support = binomial.enumerate_support(expand=False)[1:]  # lgamma(0 + 1) = 0
        expected_log_factorials = (binomial.log_prob(support).exp() * lgamma(support + 1)).sum([0, -1])
        return -lgamma(self.probs.new_tensor(float(n + 1))) - n * (self.probs * self.logits).sum(-1) \
            + expected_log_factorials
