"""The Wishart distribution over positive-definite matrices
(https://pytorch.org/docs/stable/distributions.html#wishart): the law of ``sum_k x_k x_k^T``
for ``df`` independent N(0, V) vectors x_k, extended to real ``df > p - 1``.

Sampling is Bartlett's decomposition (Bartlett 1933; Smith & Hocking 1972): ``V = L L^T``,
``A`` lower triangular with ``A_ii = sqrt(chi2(df - i))`` and standard normals below, and
``X = (L A)(L A)^T``. The density is
``|X|^((df-p-1)/2) exp(-tr(V^-1 X)/2) / (2^(df p/2) |V|^(df/2) Gamma_p(df/2))``.
"""
import math
from numbers import Number

from .._creation import arange, empty, tensor
from .._dtype import finfo
from .._ops.arrange import tril_indices
from .._ops.linalg import matmul
from .._ops.shape import broadcast_shapes
from .._ops.special import digamma, mvlgamma
from .._size import Size
from .. import linalg
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import ScaleTrilMatrices, _precision_to_scale_tril

__all__ = ["Wishart"]

_LOG_2 = math.log(2.0)


def _mvdigamma(x, p):
    """The derivative of ``log Gamma_p(x)``: ``sum_{i < p} digamma(x - i / 2)``."""
    return digamma(x.unsqueeze(-1) - arange(p, dtype=x.dtype).div(2).expand(tuple(x.shape) + (-1,))).sum(-1)


class Wishart(ScaleTrilMatrices, ExponentialFamily):
    """``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)``: p x p
    positive-definite matrices, with ``df`` (a number or a tensor, broadcast with the matrix's
    batch dims) above p - 1 and exactly one parameterisation of the scale matrix V.
    An exponential family: natural parameters ``(-V^-1 / 2, (df - p - 1) / 2)`` for the
    statistics ``(X, log|X|)`` (carrier measure 0), so ``kl_divergence`` of two Wisharts is the
    Bregman divergence of the log-normaliser ``F(a, b) = -n log|-a| + log Gamma_p(n)``,
    ``n = b + (p + 1) / 2``.
    AssertionError for none or several of them (PyTorch's class), ValueError for a matrix of
    fewer than two dims or ``df <= p - 1``."""
    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_params = (("df", 0), ("covariance_matrix", 2), ("precision_matrix", 2), ("scale_tril", 2))

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:  # (AssertionError, not MultivariateNormal's ValueError: torch 2.13's class)
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:  # (torch's message names scale_tril whichever was given)
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype)
        else:
            batch_shape = tuple(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        p = param.shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        self.arg_constraints = dict(self.arg_constraints, df=constraints.greater_than(p - 1))
        super().__init__(batch_shape, tuple(param.shape[-2:]), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        offsets = arange(p, dtype=self.df.dtype).expand(batch_shape + (-1,))
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1) - offsets)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    def _df_matrix(self):
        return self.df.view(tuple(self._batch_shape) + (1, 1))


    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, math.nan)
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett's construction; ``max_try_correction`` is accepted for PyTorch's signature
        (its resampling of singular float32 draws is not needed: chi2 draws are clamped above 0)."""
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=finfo(self.df.dtype).eps)
        noise = chi.diag_embed()
        rows, cols = tril_indices(p, p, -1)
        noise[..., rows, cols] = empty(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,),
                                       dtype=self.df.dtype).normal_()
        chol = matmul(self._unbroadcasted_scale_tril, noise)
        return matmul(chol, chol.mT)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p, L = self.df, self._event_shape[-1], self._unbroadcasted_scale_tril
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = linalg.solve_triangular(L, value, upper=False)
        trace = linalg.solve_triangular(L.mT, trace, upper=True).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    @property
    def _natural_params(self):
        return -0.5 * self.precision_matrix, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        n = y + (p + 1) / 2
        return -n * linalg.slogdet(-x).logabsdet + mvlgamma(n, p)

    def entropy(self):
        nu, p, L = self.df, self._event_shape[-1], self._unbroadcasted_scale_tril
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
