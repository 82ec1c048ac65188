"""The multivariate normal distribution
(https://pytorch.org/docs/stable/distributions.html#multivariatenormal)."""
import math
from .._creation import empty, eye
from .._linalg_legacy import cholesky_inverse
from .._ops.linalg import matmul
from .._ops.shape import broadcast_shapes
from .._size import Size
from .. import linalg
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(matrix, vector):
    return matmul(matrix, vector.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(scale_tril, x):
    """``x^T (L L^T)^-1 x`` per batch element, by one triangular solve."""
    return linalg.solve_triangular(scale_tril, x.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    """The lower Cholesky factor of the inverse of ``precision``, without inverting it:
    flipping both dims turns the upper factor of P^-1 into a lower factor."""
    flipped = linalg.cholesky(precision.flip((-2, -1)))
    inverse_tril = flipped.flip((-2, -1)).mT
    identity = eye(precision.shape[-1], dtype=precision.dtype)
    return linalg.solve_triangular(inverse_tril, identity, upper=False)


class ScaleTrilMatrices:
    """``scale_tril``, ``covariance_matrix`` (L L^T) and ``precision_matrix`` of a distribution
    parametrized by its Cholesky factor L (``_unbroadcasted_scale_tril``), expanded to
    ``_matrix_shape()``: MultivariateNormal's and Wishart's."""

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())


class MultivariateNormal(ScaleTrilMatrices, Distribution):
    """``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``:
    a Gaussian over vectors of ``loc.shape[-1]`` with exactly one of the three matrix
    parameterisations (ValueError otherwise); batch dims of ``loc`` and the matrix broadcast."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _expand_params = (("loc", 1), ("covariance_matrix", 2), ("precision_matrix", 2), ("scale_tril", 2))

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = scale_tril
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        eps = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).normal_()
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
