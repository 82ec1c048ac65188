"""The multivariate normal with a low-rank-plus-diagonal covariance ``W W^T + diag(D)``
(https://pytorch.org/docs/stable/distributions.html#lowrankmultivariatenormal).

With ``W`` of shape n x m (m < n), log-densities and entropies cost O(n m^2), not O(n^3): the
Woodbury identity gives the inverse, ``(W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1``, and the
matrix determinant lemma the determinant, ``det(W W^T + D) = det(C) det(D)``, both through the
m x m capacitance matrix ``C = I + W^T D^-1 W`` and its Cholesky factor.
"""
import math

from .._creation import empty, eye
from .._ops.linalg import matmul
from .._ops.shape import broadcast_tensors
from .._size import Size
from .. import linalg
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal", "lowrank_kl"]


def _capacitance_tril(W, D):
    """The lower Cholesky factor of ``I + W^T D^-1 W``."""
    K = matmul(W.mT / D.unsqueeze(-2), W)
    return linalg.cholesky(K + eye(W.shape[-1], dtype=W.dtype))


def _lowrank_logdet(W, D, capacitance_tril):
    """``log det(W W^T + D)`` by the matrix determinant lemma."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    Wt_Dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


def lowrank_kl(p, q):
    """KL(p || q) of two low-rank Gaussians in O(n m^2), never forming an n x n matrix:
    ``(tr(S_q^-1 S_p) + x^T S_q^-1 x - n + log det S_q - log det S_p) / 2``, ``x`` the means'
    difference, with ``S_q^-1 = D^-1 - A^T A``, ``A = L^-1 W^T D^-1`` (``L`` q's capacitance
    factor; Woodbury), so ``tr(S_q^-1 S_p) = sum(D_p / D_q) + |W_p|^2_{D_q^-1} - |A W_p|^2 -
    sum(A^2 D_p)``."""
    Wp, Dp, Wq, Dq = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    A = linalg.solve_triangular(q._capacitance_tril, Wq.mT / Dq.unsqueeze(-2), upper=False)
    trace = ((Dp / Dq).sum(-1) + (Wp.pow(2) / Dq.unsqueeze(-1)).sum((-2, -1))
             - matmul(A, Wp).pow(2).sum((-2, -1)) - (A.pow(2) * Dp.unsqueeze(-2)).sum((-2, -1)))
    mahalanobis = _lowrank_mahalanobis(Wq, Dq, q.loc - p.loc, q._capacitance_tril)
    log_dets = _lowrank_logdet(Wq, Dq, q._capacitance_tril) - _lowrank_logdet(Wp, Dp, p._capacitance_tril)
    return 0.5 * (trace + mahalanobis - p.event_shape[0] + log_dets)


class LowRankMultivariateNormal(Distribution):
    """``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: a Gaussian over vectors of
    n = ``loc.shape[-1]`` with covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``;
    ``cov_factor`` is (..., n, m), ``cov_diag`` (..., n) and positive; batch dims broadcast.
    ValueError for a 0-dim ``loc``, a ``cov_factor`` of fewer than two dims or the wrong n,
    a ``cov_diag`` of the wrong shape, or batch shapes that do not broadcast."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _expand_params = (("loc", 1), ("cov_factor", 2), ("cov_diag", 1))

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {Size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (matmul(W, W.mT) + D.diag_embed()).expand(self._matrix_shape())

    @lazy_property
    def scale_tril(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return linalg.cholesky(matmul(W, W.mT) + D.diag_embed()).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = linalg.solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)
        return (D.reciprocal().diag_embed() - matmul(A.mT, A)).expand(self._matrix_shape())

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_W = empty(tuple(shape[:-1]) + tuple(W.shape[-1:]), dtype=self.loc.dtype).normal_()
        eps_D = empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + _batch_mv(W, eps_W) + D.sqrt() * eps_D

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        m = _lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
