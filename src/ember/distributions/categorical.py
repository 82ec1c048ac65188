"""The categorical distribution (https://pytorch.org/docs/stable/distributions.html#categorical).

Given ``probs`` or ``logits`` (ValueError for both or neither), it derives the other on first
use; sampling draws PyTorch's numbers for the same seed.
"""
from .._creation import arange, full
from .._sampling import multinomial
from .._dtype import finfo, int64
from .._ops.clamp import clamp
from .._ops.shape import broadcast_tensors
from .._size import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import one_of, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical", "CategoryProbabilities"]


class Categorical(Distribution):
    """``Categorical(probs=None, logits=None)``: an index in ``[0, K)`` drawn with the
    (normalised) probabilities of the last dim of ``probs`` (or softmax of ``logits``); the
    other dims are the batch. ValueError for a 0-d parameter."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _expand_params = (("probs", 1), ("logits", 1), ("_param", 1))

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of(probs, logits)
        name, param = ("probs", probs) if probs is not None else ("logits", logits)
        if param.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = param = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = param = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = param
        self._num_events = param.size()[-1]
        super().__init__(param.size()[:-1] if param.ndim > 1 else Size(), validate_args=validate_args)

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        with no_grad():
            rows = self.probs.reshape(-1, self._num_events)
            draws = multinomial(rows, sample_shape.numel(), True).T
            return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, log_pmf = broadcast_tensors(value.long().unsqueeze(-1), self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = clamp(self.logits, min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=int64).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class CategoryProbabilities:
    """The category probabilities of a family built on a :class:`Categorical` over the last
    dim (OneHotCategorical, Multinomial, ExpRelaxedCategorical), given as ``probs`` or
    ``logits`` and held by that Categorical: the counterpart of
    :class:`~ember.distributions.utils.SuccessProbability` for K categories."""
    _carried = ()  # the family's other attributes, which an expanded copy shares

    def _set_probs_or_logits(self, probs, logits):
        """Keeps ``Categorical(probs, logits)``; returns the batch shape and the event shape
        (vectors of K).

        Raises:
            ValueError: both or neither of ``probs`` and ``logits`` given, or a 0-d one.
        """
        self._categorical = Categorical(probs, logits)
        return self._categorical.batch_shape, self._categorical.param_shape[-1:]

    def expand(self, batch_shape, _instance=None):
        """This distribution with ``batch_shape``, its probabilities broadcast to it (ValueError
        when they do not broadcast)."""
        new = self._get_checked_instance(type(self), _instance)
        for name in self._carried:
            setattr(new, name, getattr(self, name))
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape
