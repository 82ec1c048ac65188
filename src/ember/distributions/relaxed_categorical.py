"""The relaxed (Concrete / Gumbel-softmax) one-hot categorical distributions
(https://pytorch.org/docs/stable/distributions.html#relaxedonehotcategorical; Maddison et al.
2017, https://arxiv.org/abs/1611.00712; Jang et al. 2017, https://arxiv.org/abs/1611.01144)."""
from .._creation import full_like
from .._sampling import rand
from .._ops.special import lgamma
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """``ExpRelaxedCategorical(temperature, probs=None, logits=None)``: the log of a
    RelaxedOneHotCategorical sample, ``log_softmax((logits + g) / t)`` with g standard Gumbel
    noise; events are vectors over the last dim (K categories). ``log_prob(x) = lgamma(K) +
    (K - 1) log t + sum(logits - t x) - K logsumexp(logits - t x)``."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=Size()):
        u = clamp_probs(rand(self._extended_shape(sample_shape), dtype=self.logits.dtype))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        log_scale = lgamma(full_like(self.temperature, k)) + (k - 1) * self.temperature.log()
        score = self.logits - value * self.temperature
        return (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """``RelaxedOneHotCategorical(temperature, probs=None, logits=None)``: points of the
    simplex that approach OneHotCategorical(probs) samples as ``temperature`` (a positive
    tensor) goes to 0 (the Gumbel-softmax); ``rsample`` is differentiable. The exp of an
    :class:`ExpRelaxedCategorical`."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits), ExpTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(RelaxedOneHotCategorical, _instance))

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
