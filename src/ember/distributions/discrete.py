"""Discrete distributions: Bernoulli, Categorical and OneHotCategorical
(https://pytorch.org/docs/stable/distributions.html#bernoulli, #categorical, #onehotcategorical).

Each takes either ``probs`` or ``logits`` (ValueError for both or neither) and derives the other
on first use; sampling draws PyTorch's numbers for the same seed.
"""
from numbers import Number

from .._creation import arange, bernoulli, eye, full, multinomial
from .._dtype import finfo, int64
from .._ops.indexing import one_hot
from .._ops.pointwise_binary import clamp
from .._ops.shape import broadcast_tensors
from .._size import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(Distribution):
    """``Bernoulli(probs=None, logits=None)``: 1 with probability ``probs`` (= sigmoid(logits)),
    else 0; samples are floats of the parameter's dtype."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _expand_params = (("probs", 0), ("logits", 0), ("_param", 0))

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(Size() if isinstance(given, Number) else param.size(), validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

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


class Categorical(Distribution):
    """``Categorical(probs=None, logits=None)``: an index in ``[0, K)`` drawn with the
    (normalised) probabilities of the last dim of ``probs`` (or softmax of ``logits``); the
    other dims are the batch. ValueError for a 0-d parameter."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _expand_params = (("probs", 1), ("logits", 1), ("_param", 1))

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
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


class OneHotCategorical(Distribution):
    """``OneHotCategorical(probs=None, logits=None)``: a :class:`Categorical` draw as a one-hot
    vector of length K (the event shape)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(self._categorical.batch_shape, param.size()[-1:], validate_args=validate_args)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return one_hot(self.probs.argmax(-1), self.probs.size()[-1]).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._categorical._num_events
        values = eye(n, dtype=self.probs.dtype).view((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values
