"""Helpers of the distributions (https://pytorch.org/docs/stable/distributions.html#module-torch.distributions.utils):
broadcasting parameters and converting between probabilities and logits."""
import functools
import numbers

from .._creation import as_tensor
from .._dtype import finfo, get_default_dtype
from .._ops.clamp import clamp
from .._ops.shape import broadcast_tensors
from .._ops.softmax import log_softmax
from .._size import Size
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property", "one_of"]


def broadcast_all(*values):
    """``values`` (tensors and Python numbers) as tensors of one broadcast shape; numbers take
    the first tensor's dtype, or the default dtype. ValueError for anything else."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor "
                         "or objects implementing __torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), get_default_dtype())
    tensors = [v if isinstance(v, Tensor) else as_tensor(v, dtype=dtype) for v in values]
    return broadcast_tensors(*tensors)


def clamp_probs(probs):
    """``probs`` clamped to [eps, 1 - eps] of its dtype (for logits that stay finite)."""
    eps = finfo(probs.dtype).eps
    return clamp(probs, min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for binary events, softmax over the last dim otherwise."""
    return logits.sigmoid() if is_binary else log_softmax(logits, -1).exp()


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped away from 0 and 1): ``log(p) - log1p(-p)`` for binary
    events, ``log(p)`` otherwise."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def one_of(probs, logits):
    """ValueError unless exactly one of ``probs`` and ``logits`` is given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class lazy_property:
    """A property computed on first access and then stored on the instance: a distribution
    given ``probs`` computes ``logits`` only when asked, and the other way round. Computed with
    gradient recording on, so a first access inside ``sample`` (under no_grad) still gives a
    value that later log_prob and entropy differentiate through."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class SuccessProbability:
    """The success probability of the binary trials under a family (Bernoulli, Binomial,
    NegativeBinomial, Geometric, RelaxedBernoulli), given as ``probs`` or as ``logits``
    (log-odds): the other is derived on first use."""

    def _set_probs_or_logits(self, probs, logits, *others):
        """Broadcasts ``others`` and the given parameter, keeps the parameter as ``probs`` or
        ``logits`` (and as ``_param``); returns the batch shape and the broadcast ``others``.

        Raises:
            ValueError: both or neither of ``probs`` and ``logits`` given.
        """
        one_of(probs, logits)
        given = probs if probs is not None else logits
        *others, param = broadcast_all(*others, given)
        setattr(self, "probs" if probs is not None else "logits", param)
        self._param = param
        return (Size() if isinstance(given, numbers.Number) else param.size()), others

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()
