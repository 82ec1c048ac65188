"""Transforms of matrices, re-exported by :mod:`.transforms`: ``LowerCholeskyTransform``,
``PositiveDefiniteTransform`` and ``CorrCholeskyTransform``, and the packing of a vector into
a lower triangle (``vec_to_tril_matrix``) and back
(https://pytorch.org/docs/stable/distributions.html#module-torch.distributions.transforms).
"""
import math

from .. import linalg
from .._creation import eye
from .._dtype import finfo
from .._ops.arrange import tril_indices
from ..nn.functional import pad, softplus
from . import constraints
from .transform_base import Transform

__all__ = ["LowerCholeskyTransform", "PositiveDefiniteTransform", "CorrCholeskyTransform", "vec_to_tril_matrix",
           "tril_matrix_to_vec"]


def vec_to_tril_matrix(vec, diag=0):
    """The square matrices whose entries on and below diagonal ``diag`` (row by row) are the
    last dim of ``vec``, zeros elsewhere. ValueError when that length is no such count."""
    size = vec.shape[-1]
    n = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag) * (diag + 1))) / 2
    if abs(round(n) - n) > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    rows, cols = tril_indices(n, n, diag)
    matrix = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    matrix[..., rows, cols] = vec
    return matrix


def tril_matrix_to_vec(mat, diag=0):
    """The entries of ``mat`` on and below diagonal ``diag``, row by row, as its last dim."""
    n = mat.shape[-1]
    rows, cols = tril_indices(n, n, diag)
    return mat[..., rows, cols]


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated (no log-determinant, as PyTorch's)."""
    domain, codomain = constraints.independent(constraints.real, 2), constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones, ``L L^T`` of :class:`LowerCholeskyTransform`'s
    ``L``; the inverse takes the Cholesky factor."""
    domain, codomain = constraints.independent(constraints.real, 2), constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """Vectors of D (D - 1) / 2 reals to the Cholesky factors of D x D correlation matrices:
    ``tanh`` maps each to (-1, 1), and row i of the factor takes its entries from a stick
    broken so that the row has unit norm (Lewandowski, Kurowicka & Joe 2009; the Stan
    manual's "Cholesky factors of correlation matrices"). The log-determinant is that of the
    stick breaking, ``1/2 sum log(1 - cumsum(y^2))`` over the strict lower triangle less the
    first column, plus ``tanh``'s, ``sum log(1 - tanh(x)^2)``."""
    domain, codomain, bijective = constraints.real_vector, constraints.corr_cholesky, True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        left = (1 - r * r).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype)
        return r * pad(left[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        shifted = pad(left[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(shifted, diag=-1).sqrt()
        return ((1 + t) / (1 - t)).log() / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = 1 - (y * y).cumsum(-1)
        stick_breaking = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return tuple(shape[:-2]) + (n * (n - 1) // 2,)
