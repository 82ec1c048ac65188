"""The continuous Bernoulli distribution
(https://pytorch.org/docs/stable/distributions.html#continuousbernoulli; Loaiza-Ganem &
Cunningham, "The continuous Bernoulli: fixing a pervasive error in variational autoencoders",
NeurIPS 2019).

Density ``C(p) p^x (1 - p)^(1 - x)`` on [0, 1], normalised by
``C(p) = 2 atanh(1 - 2p) / (1 - 2p)`` (``log C = log|log(1-p) - log p| - log|1 - 2p|``).
That closed form is 0/0 at p = 1/2, so for ``probs`` in ``(lims[0], lims[1]]`` the log-normaliser,
mean and variance are second-order Taylor expansions in ``(p - 1/2)``, the cdf and icdf the
uniform's, and the closed forms are evaluated at ``lims[0]`` there (finite gradients), as
PyTorch does.
"""
import math

from .._dtype import float64
from .._ops.pointwise_binary import where
from .._sampling import rand
from .._size import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import SuccessProbability, broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(SuccessProbability, ExponentialFamily):
    """``ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))``: the density above on
    [0, 1], shape parameter ``probs`` in [0, 1] (or ``logits`` = log(p / (1 - p))); samples are
    floats of the parameter's dtype, reparameterised through the inverse cdf. ``probs`` are
    clamped to [eps, 1 - eps] of their dtype; ValueError for both or neither of probs/logits,
    and (when ``validate_args`` is given, True or False, as in PyTorch) for probs outside [0, 1]."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_params = (("probs", 0), ("logits", 0), ("_param", 0))

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        batch_shape, _ = self._set_probs_or_logits(probs, logits)
        if probs is not None:
            # checked before the clamp below, which would make any value pass
            if validate_args is not None and not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _stable(self):
        """True where ``probs`` is outside the Taylor region ``(lims[0], lims[1]]``."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """``probs`` in float64, with ``lims[0]`` inside the Taylor region (keeps the closed forms
        finite). The closed forms cancel terms of size 1/(1 - 2p)^2: evaluated in float32 (as
        PyTorch does) the variance at p = 0.4985 comes out -0.30; callers round back once."""
        return where(self._stable(), self.probs, self._lims[0]).to(float64)

    def _log_norm(self):
        """``log C(p)``, per batch element."""
        p = self._cut_probs()
        log_ratio = ((-p).log1p() - p.log()).abs().log()
        closed = log_ratio - where(p <= 0.5, (-2 * where(p <= 0.5, p, 0)).log1p(),
                                   (2 * where(p >= 0.5, p, 1) - 1).log())
        d2 = (self.probs - 0.5) ** 2
        return where(self._stable(), closed, math.log(2) + (4 / 3 + 104 / 45 * d2) * d2).to(d2.dtype)

    @property
    def mean(self):
        p = self._cut_probs()
        closed = p / (2 * p - 1) + 1 / ((-p).log1p() - p.log())
        d = self.probs - 0.5
        return where(self._stable(), closed, 0.5 + (1 / 3 + 16 / 45 * d ** 2) * d).to(d.dtype)

    @property
    def variance(self):
        p = self._cut_probs()
        closed = p * (p - 1) / (1 - 2 * p) ** 2 + 1 / ((-p).log1p() - p.log()) ** 2
        d2 = (self.probs - 0.5) ** 2
        return where(self._stable(), closed, 1 / 12 - (1 / 15 - 128 / 945 * d2) * d2).to(d2.dtype)

    def rsample(self, sample_shape=Size()):
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def sample(self, sample_shape=Size()):
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._log_norm()

    def cdf(self, value):
        """``(p^x (1-p)^(1-x) + p - 1) / (2p - 1)``; 0 below 0 and 1 above 1."""
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        closed = (p ** value * (1 - p) ** (1 - value) + p - 1) / (2 * p - 1)
        inside = where(self._stable(), closed.to(value.dtype), value)
        return where(value <= 0, value * 0, where(value >= 1, value * 0 + 1, inside))

    def icdf(self, value):
        """``(log1p(-p + u (2p - 1)) - log1p(-p)) / (log p - log1p(-p))``."""
        p = self._cut_probs()
        closed = ((-p + value * (2 * p - 1)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return where(self._stable(), closed.to(value.dtype), value)

    def entropy(self):
        log_q, log_p = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_q - log_p) - self._log_norm() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """``log((e^x - 1) / x)`` of the natural parameter x (the logits), a Taylor expansion for
        x in ``(lims[0] - 1/2, lims[1] - 1/2]``."""
        stable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(stable, x, self._lims[0] - 0.5)
        closed = cut.expm1().abs().log() - cut.abs().log()
        return where(stable, closed, 0.5 * x + x ** 2 / 24 - x ** 4 / 2880)
