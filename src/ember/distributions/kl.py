"""``kl_divergence(p, q)``: KL(p || q) = E_p[log p(x) - log q(x)] in closed form, per batch
element, and ``register_kl`` to add a pair
(https://pytorch.org/docs/stable/distributions.html#module-torch.distributions.kl).

A pair is looked up by the two types, then by their closest registered base classes; no
registered pair is NotImplementedError. Infinite results where q has no mass where p has
(a categorical probability that is 0 in q only, a Uniform's support not covering p's, a
family on the whole line against one on a half-line or an interval). Two members of one
exponential family without a pair of their own use the Bregman divergence of the family's
log-normaliser (``ExponentialFamily``). The closed forms are derived from
KL = -H(p) - E_p[log q] with the moments of p (E|X - m| of a normal, E[log X] of an
exponential, -gamma - log(rate), of a uniform, a beta or a Pareto, and for a Gumbel q the
moment generating function of p at -1 / scale).
"""
import math
from functools import partial

from .. import linalg
from .._ops.special import digamma, lgamma, xlogy
from ..nn.functional import softplus as _softplus
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .independent import Independent, _sum_rightmost
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal, lowrank_kl
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform

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


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    """log(((s_p + s_q)^2 + (l_p - l_q)^2) / (4 s_p s_q)): Chyzak and Nielsen, "A closed-form
    formula for the Kullback-Leibler divergence between Cauchy distributions" (2019)."""
    return (((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2) / (4 * p.scale * q.scale)).log()


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, math.inf).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    """``n KL(Bernoulli(p) || Bernoulli(q))`` for equal counts, inf where p's count exceeds q's.
    Written with xlogy, so p = 0 or 1 gives the finite limit (torch 2.13 returns -inf at p = 1).

    Raises:
        NotImplementedError: q's count exceeds p's somewhere (as torch).
    """
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    a, b = p.probs, q.probs
    kl = p.total_count * (xlogy(a, a) - xlogy(a, b) + xlogy(1 - a, 1 - a) - xlogy(1 - a, 1 - b))
    return kl.masked_fill(p.total_count > q.total_count, math.inf)


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


def _gaussian_kl(p, q, what):
    """KL(p || q) of two Gaussians over vectors, from their means and lower Cholesky factors
    (``_unbroadcasted_scale_tril``, or that of a low-rank covariance ``W W^T + D`` formed
    densely, O(n^3)): 0.5 (tr(S_q^-1 S_p) + (m_q - m_p)^T S_q^-1 (m_q - m_p) - k
    + log det S_q - log det S_p)."""
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes cannot be computed")
    Lp, Lq = _scale_tril(p), _scale_tril(q)
    half_log_det = Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    trace = linalg.solve_triangular(Lq, Lp, upper=False).pow(2).sum((-2, -1))
    mahalanobis = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_log_det + 0.5 * (trace + mahalanobis - p.event_shape[0])


def _scale_tril(d):
    if isinstance(d, LowRankMultivariateNormal):
        W, D = d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag
        return linalg.cholesky(W @ W.mT + D.diag_embed())
    return d._unbroadcasted_scale_tril


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    return _gaussian_kl(p, q, "Multivariate Normals")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Low Rank Multivariate Normals with different event shapes "
                         "cannot be computed")
    return lowrank_kl(p, q)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_and_full_multivariatenormal(p, q):
    return _gaussian_kl(p, q, "(Low Rank) Multivariate Normals")


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence F(θ_q) - F(θ_p) - <θ_q - θ_p, ∇F(θ_p)>."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families "
                                  "cannot be computed using Bregman divergences")
    params, value, gradients = p._log_normalizer_and_gradients()
    result = q._log_normalizer(*q._natural_params) - value
    for theta_p, theta_q, mean_t in zip(params, q._natural_params, gradients):
        result = result - ((theta_q - theta_p) * mean_t).reshape(tuple(p.batch_shape) + (-1,)).sum(-1)
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    a_p, b_p, a_q, b_q = p.concentration, p.rate, q.concentration, q.rate
    return ((a_p - a_q) * digamma(a_p) - lgamma(a_p) + lgamma(a_q)
            + a_q * (b_p.log() - b_q.log()) + a_p * (b_q - b_p) / b_p)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    total_a = a.sum(-1)
    return (lgamma(total_a) - lgamma(b.sum(-1)) - (lgamma(a) - lgamma(b)).sum(-1)
            + ((a - b) * (digamma(a) - digamma(total_a).unsqueeze(-1))).sum(-1))


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    """The same transforms on both sides: KL is invariant under them, so the bases' KL."""
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


_EULER_GAMMA = 0.5772156649015329


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    a, b = q.concentration, q.rate
    return lgamma(a) + a * (p.rate / b).log() + (a - 1) * _EULER_GAMMA + b / p.rate - 1


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    a, b = p.concentration, p.rate
    return (a - 1) * digamma(a) - lgamma(a) + b.log() - q.rate.log() + a * (q.rate - b) / b


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    shift = p.loc - q.loc
    mean_abs = (p.scale * math.sqrt(2 / math.pi) * (-shift.pow(2) / (2 * p.scale.pow(2))).exp()
                + shift * (shift / (p.scale * math.sqrt(2))).erf())
    return (2 * q.scale).log() + mean_abs / q.scale - 0.5 * (2 * math.pi * math.e * p.scale.pow(2)).log()


def _kl_to_normal(p, q):
    """-H(p) - E_p[log q] for a normal q: E_p[log q] needs only p's mean and variance."""
    second_moment = p.variance + (p.mean - q.loc).pow(2)
    return -p.entropy() + 0.5 * (2 * math.pi * q.scale.pow(2)).log() + second_moment / (2 * q.scale.pow(2))


for _p in (Laplace, Uniform, Exponential, Gamma, Beta, ContinuousBernoulli, Gumbel, Pareto):
    register_kl(_p, Normal)(_kl_to_normal)


def _mean_log_uniform(low, high):
    """E[log X] for X uniform on [low, high], 0 <= low < high."""
    return (xlogy(high, high) - xlogy(low, low)) / (high - low) - 1


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return result.masked_fill(p.low < 0, math.inf)


def _kl_to_gamma(p, q, mean_log):
    """-H(p) - E_p[log q] for a Gamma q: log q(x) = a log b - lgamma(a) + (a - 1) log x - b x
    needs p's mean and ``mean_log`` = E_p[log X]."""
    a, b = q.concentration, q.rate
    return -p.entropy() - xlogy(a, b) + lgamma(a) - (a - 1) * mean_log + b * p.mean


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    return _kl_to_gamma(p, q, _mean_log_uniform(p.low, p.high)).masked_fill(p.low < 0, math.inf)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return _kl_to_gamma(p, q, digamma(p.concentration1) - digamma(p.concentration1 + p.concentration0))


def _mean_log_pareto(p):
    """E[log X] = log(scale) + 1 / alpha (log(X / scale) is exponential with rate alpha)."""
    return p.scale.log() + p.alpha.reciprocal()


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    """Infinite where alpha <= 1 (p's mean is)."""
    return _kl_to_gamma(p, q, _mean_log_pareto(p))


def _kl_to_pareto(p, q, mean_log, low):
    """-H(p) - E_p[log q] for a Pareto q: log q(x) = log alpha + alpha log scale - (alpha + 1) log x
    on x >= scale, so infinite where p's lower end ``low`` is below q's scale."""
    result = (-p.entropy() - q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * mean_log)
    return result.masked_fill(low < q.scale, math.inf)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    return _kl_to_pareto(p, q, _mean_log_uniform(p.low, p.high), p.low)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    return _kl_to_pareto(p, q, _mean_log_pareto(p), p.scale)


def _kl_to_gumbel(p, q, log_mgf):
    """-H(p) - E_p[log q] for a Gumbel q: with z = (x - loc) / scale, log q(x) = -log scale - z
    - exp(-z), so E_p[log q] needs p's mean and E_p[exp(-X / scale)], which is p's moment
    generating function at t = -1 / scale (``log_mgf(p, t)`` gives its log)."""
    t = -q.scale.reciprocal()
    return (-p.entropy() + q.scale.log() + (p.mean - q.loc) / q.scale
            + (log_mgf(p, t) + q.loc / q.scale).exp())


def _log_mgf_exponential(p, t):
    return p.rate.log() - (p.rate - t).log()


def _log_mgf_gamma(p, t):
    return -p.concentration * (-t / p.rate).log1p()


def _log_mgf_normal(p, t):
    return p.loc * t + (p.scale * t).pow(2) / 2


def _log_mgf_uniform(p, t):
    """log (exp(t high) - exp(t low)) / (t (high - low)), written with expm1 for small t widths."""
    tw = t * (p.high - p.low)
    return t * p.low + (tw.expm1() / tw).log()


def _log_mgf_gumbel(p, t):
    """log Gamma(1 - scale t) + loc t (t < 1 / scale)."""
    return lgamma(1 - p.scale * t) + p.loc * t


for _p, _log_mgf in [(Exponential, _log_mgf_exponential), (Gamma, _log_mgf_gamma), (Normal, _log_mgf_normal),
                     (Uniform, _log_mgf_uniform), (Gumbel, _log_mgf_gumbel)]:
    register_kl(_p, Gumbel)(partial(_kl_to_gumbel, log_mgf=_log_mgf))


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    """-H(p) + rate - probs log(rate): q(0) = exp(-rate), q(1) = rate exp(-rate). Where rate = 0,
    0 for probs = 0 (torch 2.13: nan) and inf otherwise."""
    return -p.entropy() + q.rate - xlogy(p.probs, q.rate)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    c1, c0 = q.concentration1, q.concentration0
    result = (-(p.high - p.low).log() - (c1 - 1) * _mean_log_uniform(p.low, p.high)
              - (c0 - 1) * _mean_log_uniform(1 - p.high, 1 - p.low)
              + lgamma(c1) + lgamma(c0) - lgamma(c1 + c0))
    return result.masked_fill((p.low < 0) | (p.high > 1), math.inf)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuousbernoulli_continuousbernoulli(p, q):
    """E_p[x] (logit p - logit q) + log C(p) + log(1 - p) - log C(q) - log(1 - q)."""
    return (p.mean * (p.logits - q.logits) + p._log_norm() + (-p.probs).log1p()
            - q._log_norm() - (-q.probs).log1p())


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuousbernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._log_norm()


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuousbernoulli(p, q):
    """As from a Beta (log q is linear in x); infinite where [low, high] leaves [0, 1]."""
    return _kl_beta_continuousbernoulli(p, q).masked_fill((p.low < 0) | (p.high > 1), math.inf)


@register_kl(ContinuousBernoulli, Exponential)
@register_kl(Beta, Exponential)
@register_kl(Pareto, Exponential)
def _kl_to_exponential(p, q):
    """-H(p) - log(rate) + rate E_p[X] for p on a half-line (infinite for a Pareto with alpha <= 1)."""
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuousbernoulli_pareto(p, q):
    """Infinite: Pareto's support starts at its scale > 0, the continuous Bernoulli's at 0."""
    return p.probs.new_full(p.probs.shape, math.inf)


@register_kl(ContinuousBernoulli, Uniform)
@register_kl(Beta, Uniform)
def _kl_unit_interval_uniform(p, q):
    """-H(p) + log(high - low) for p on [0, 1]; infinite where [low, high] misses part of [0, 1]
    (PyTorch 2.13 also gives inf for ContinuousBernoulli where low == 0 or high == 1)."""
    result = -p.entropy() + (q.high - q.low).log()
    return result.masked_fill((q.low > 0) | (q.high < 1), math.inf)


def _infinite(p, q):
    """q has no mass on part of p's support: p lives on the whole line, a half-line or [0, 1] and q
    on a half-line, [scale, inf) or an interval; a Poisson on all counts and q on {0, 1} or
    {0, ..., n}. Of p's batch shape, as torch 2.13."""
    return p.mean.new_full(p.batch_shape, math.inf)


for _p, _q in [(Normal, Uniform), (Normal, Exponential), (Normal, Gamma), (Normal, Beta),
               (Laplace, Uniform), (Laplace, Exponential), (Laplace, Gamma), (Laplace, Beta),
               (Exponential, Uniform), (Exponential, Beta), (Gamma, Uniform), (Gamma, Beta),
               (Exponential, ContinuousBernoulli), (Gamma, ContinuousBernoulli), (Normal, ContinuousBernoulli),
               (Laplace, ContinuousBernoulli), (Pareto, ContinuousBernoulli), (Gumbel, ContinuousBernoulli),
               (Normal, Pareto), (Laplace, Pareto), (Exponential, Pareto), (Gamma, Pareto), (Beta, Pareto),
               (Gumbel, Pareto), (Gumbel, Uniform), (Gumbel, Exponential), (Gumbel, Gamma), (Gumbel, Beta),
               (Pareto, Uniform), (Pareto, Beta), (Poisson, Bernoulli), (Poisson, Binomial)]:
    register_kl(_p, _q)(_infinite)
