"""``kl_divergence(p, q)``: KL(p || q) = E_p[log p(x) - log q(x)] in closed form, per batch
element, and ``register_kl`` to add a pair
(https://pytorch.org/docs/stable/distributions.html#module-torch.distributions.kl).

A pair is looked up by the two types, then by their closest registered base classes; no
registered pair is NotImplementedError. Infinite results where q has no mass where p has
(a categorical probability that is 0 in q only, a Uniform's support not covering p's).
"""
import math

from .. import linalg
from .continuous import Exponential, Uniform
from ..nn.functional import softplus as _softplus
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .multivariate_normal import Independent, MultivariateNormal, _batch_mahalanobis, _sum_rightmost
from .normal import Laplace, Normal

__all__ = ["kl_divergence", "register_kl"]

_KL = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for ``p`` of ``type_p`` and ``q`` of
    ``type_q`` (and their subclasses, unless a closer pair is registered)."""
    def decorate(fn):
        _KL[type_p, type_q] = fn
        return fn
    return decorate


def _lookup(type_p, type_q):
    matches = [(type_p.__mro__.index(p) + type_q.__mro__.index(q), fn)
               for (p, q), fn in _KL.items() if issubclass(type_p, p) and issubclass(type_q, q)]
    return min(matches, key=lambda m: m[0])[1] if matches else None


def kl_divergence(p, q):
    """KL(p || q) for distributions with the same event shape; a tensor of ``batch_shape``."""
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} "
                                  f"and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -scale_ratio.log() + distance / q.scale + scale_ratio * (-distance / p.scale).exp() - 1


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, math.inf).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), math.inf).masked_fill((p.probs == 0).expand_as(t), 0)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    """0.5 (tr(S_q^-1 S_p) + (m_q - m_p)^T S_q^-1 (m_q - m_p) - k + log det S_q - log det S_p)."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_log_det = q._half_log_det() - p._half_log_det()
    trace = linalg.solve_triangular(Lq, Lp, upper=False).pow(2).sum((-2, -1))
    mahalanobis = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_log_det + 0.5 * (trace + mahalanobis - p.event_shape[0])


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
