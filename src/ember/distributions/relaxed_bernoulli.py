"""The relaxed (Concrete / Gumbel-softmax) Bernoulli distributions
(https://pytorch.org/docs/stable/distributions.html#relaxedbernoulli; Maddison et al. 2017,
"The Concrete Distribution", https://arxiv.org/abs/1611.00712)."""

from .._sampling import rand
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution, base_parameter
from .transforms import SigmoidTransform
from .utils import SuccessProbability, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(SuccessProbability, Distribution):
    """``LogitRelaxedBernoulli(temperature, probs=None, logits=None)``: the logit of a
    RelaxedBernoulli sample, ``(logit(u) + logits) / temperature`` for u ~ Uniform(0, 1);
    ``log_prob(x) = log t + (logits - t x) - 2 log(1 + exp(logits - t x))``."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True
    _expand_params = (("probs", 0), ("logits", 0), ("_param", 0))

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch_shape, _ = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        u = clamp_probs(rand(self._extended_shape(sample_shape), dtype=self.logits.dtype))
        return (u.log() - (-u).log1p() + self.logits) / self.temperature

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """``RelaxedBernoulli(temperature, probs=None, logits=None)``: values in (0, 1) that
    approach Bernoulli(probs) samples as ``temperature`` (a positive tensor) goes to 0;
    ``rsample`` is differentiable in ``probs``/``logits``. The sigmoid of a
    :class:`LogitRelaxedBernoulli`."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    temperature = base_parameter("temperature")
    logits = base_parameter("logits")
    probs = base_parameter("probs")

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(RelaxedBernoulli, _instance))
