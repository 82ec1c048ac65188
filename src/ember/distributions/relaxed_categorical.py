"""The relaxed (Concrete / Gumbel-softmax) one-hot categorical distributions
(https://pytorch.org/docs/stable/distributions.html#relaxedonehotcategorical; Maddison et al.
2017, https://arxiv.org/abs/1611.00712; Jang et al. 2017, https://arxiv.org/abs/1611.01144)."""
from .._creation import full_like
from .._sampling import rand
from .._ops.special import lgamma
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .categorical import CategoryProbabilities
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution, base_parameter
from .transforms import ExpTransform
from .utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(CategoryProbabilities, Distribution):
    """``ExpRelaxedCategorical(temperature, probs=None, logits=None)``: the log of a
    RelaxedOneHotCategorical sample, ``log_softmax((logits + g) / t)`` with g standard Gumbel
    noise; events are vectors over the last dim (K categories). ``log_prob(x) = lgamma(K) +
    (K - 1) log t + sum(logits - t x) - K logsumexp(logits - t x)``."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    _carried = ("temperature",)

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch_shape, event_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

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
    temperature = base_parameter("temperature")
    logits = base_parameter("logits")
    probs = base_parameter("probs")

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits), ExpTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(RelaxedOneHotCategorical, _instance))
