"""The top-level linear-algebra functions PyTorch keeps beside ``torch.linalg`` (``torch.det``,
``torch.svd`` with ``some``, ``torch.cholesky_solve``...), each a thin form of a
:mod:`ember.linalg` function with the older argument names and result types."""
import warnings

import numpy as np

from ._creation import eye, tensor, zeros
from ._tensor import Tensor
from ._ops.args import tensor_args, with_out
from ._ops.lapack import per_matrix, routine
from ._ops.linalg import vector_norm
from .linalg import (cholesky as _cholesky, cross as _cross, det, householder_product, inv, lu_factor_ex,
                     lu_solve as _lu_solve, matrix_exp, matrix_power, multi_dot, pinv, qr as _qr,
                     slogdet as _slogdet, solve_triangular, svd as _svd, svdvals)
from .linalg._common import LinAlgError, check_matrix, check_square, out as _out, renamed, result_type, type_name
from .linalg.factorizations import lu_unpack
from .linalg.norms import matrix_norm

__all__ = ["chain_matmul", "det", "logdet", "slogdet", "inverse", "svd", "qr", "cholesky", "cholesky_solve",
           "cholesky_inverse", "triangular_solve", "pinverse", "matrix_exp", "matrix_power",
           "lu_unpack", "geqrf", "cross", "lu", "lu_solve", "orgqr", "ormqr", "norm"]

svd_result = result_type("svd", ["U", "S", "V"])
slogdet_result = result_type("slogdet", ["sign", "logabsdet"])
qr_result = result_type("qr", ["Q", "R"])
triangular_solve_result = result_type("triangular_solve", ["solution", "cloned_coefficient"])
geqrf_result = result_type("geqrf", ["a", "tau"])
lu_with_info_result = result_type("_lu_with_info", ["LU", "pivots", "info"])


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    """``torch.norm``: the vector p-norm over ``dim`` (:func:`ember.linalg.vector_norm`; the
    2-norm for ``"fro"`` or None), or with ``p="nuc"`` the nuclear norm of the matrices over
    ``dim`` (the last two by default; :func:`ember.linalg.matrix_norm`). ``"fro"`` over more
    than two dims is a matrix norm too, so RuntimeError (as torch's)."""
    if p == "fro" and isinstance(dim, (tuple, list)) and len(dim) > 2:
        return matrix_norm(input, "fro", dim, keepdim, dtype=dtype, out=out)
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype, out=out)
    return with_out(vector_norm(input, p, dim, keepdim, dtype=dtype), out)


def inverse(input, *, out=None):
    """``torch.inverse``: :func:`ember.linalg.inv`."""
    return inv(input, out=out)


def slogdet(input):
    """``torch.slogdet``: ``(sign, logabsdet)`` as :func:`ember.linalg.slogdet`."""
    return slogdet_result(*_slogdet(input))


def logdet(input):
    """``log(det(A))``: nan where a real determinant is negative, -inf where it is zero; for
    complex A the principal complex logarithm ``log(sign) + logabsdet``."""
    sign, logabsdet = _slogdet(input)
    if sign.dtype.is_complex:
        return sign.log() + logabsdet
    return logabsdet.masked_fill(sign < 0, float("nan"))


def svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: ``(U, S, V)`` (V, not V^T); ``some=False`` gives full U and V; without
    ``compute_uv`` U and V are zero-filled (m, m) and (n, n) matrices."""
    check_matrix(input, "svd")
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return _out(svd_result(zeros(batch + (m, m), dtype=input.dtype), svdvals(input),
                          zeros(batch + (n, n), dtype=input.dtype)), out)
    U, S, Vh = _svd(input, full_matrices=not some)
    return _out(svd_result(U, S, Vh.mT), out)


def qr(input, some=True, *, out=None):
    """``torch.qr``: ``linalg.qr`` with mode "reduced" (``some``) or "complete"."""
    return _out(qr_result(*_qr(input, "reduced" if some else "complete")), out)


def cholesky(input, upper=False, *, out=None):
    """``torch.cholesky``: :func:`ember.linalg.cholesky` with ``upper`` positional."""
    try:
        return _cholesky(input, upper=upper, out=out)
    except LinAlgError as error:
        raise renamed(error, "cholesky") from None


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with ``A X = B`` given A's Cholesky factor L (``upper``: ``A = U^H U``); two
    triangular solves, differentiable in B and L."""
    check_matrix(B, "linalg.cholesky_solve", "B")
    if upper:
        y = solve_triangular(L.mH, B, upper=False)
        return _out(solve_triangular(L, y, upper=True), out)
    y = solve_triangular(L, B, upper=False)
    return _out(solve_triangular(L.mH, y, upper=True), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """``A^{-1}`` from A's Cholesky factor L (``upper``: U with ``A = U^H U``)."""
    check_square(L, "cholesky_inverse", "input")
    return _out(cholesky_solve(eye(L.shape[-1], dtype=L.dtype).expand(L.shape), L, upper), out)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``torch.triangular_solve``: ``(solution, cloned_coefficient)`` of ``op(A) X = b`` with
    ``op`` the transpose when ``transpose``; note A comes second and ``upper`` defaults True."""
    coefficient = A.mT if transpose else A
    X = solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return _out(triangular_solve_result(X, A.clone()), out)


def pinverse(input, rcond=1e-15, hermitian=False):
    """``torch.pinverse``: :func:`ember.linalg.pinv` with relative cutoff ``rcond``."""
    return pinv(input, rtol=rcond, hermitian=hermitian)


def geqrf(input, *, out=None):
    """``torch.geqrf``: LAPACK's compact QR of (*, m, n) input: ``a`` holds R on and above the
    diagonal and the Householder vectors below it, ``tau`` (*, min(m, n)) their scales (see
    :func:`ember.linalg.householder_product`). Not differentiable, as in PyTorch."""
    check_matrix(input, "geqrf")
    data = input._data
    m, n = data.shape[-2:]
    if data.size == 0:
        return _out(geqrf_result(tensor(data.copy()),
                            tensor(np.zeros(data.shape[:-2] + (min(m, n),), data.dtype))), out)
    kernel = routine("geqrf", data.dtype)
    a, tau = per_matrix(data, lambda i, x: kernel(x)[:2], [(m, n), (min(m, n),)])
    return _out(geqrf_result(tensor(np.ascontiguousarray(a)), tensor(np.ascontiguousarray(tau))), out)


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along ``dim`` (``torch.cross``): ``linalg.cross`` with
    the batch dims broadcast. Without ``dim``, the first dim of size 3 of the broadcast shape,
    with torch's deprecation UserWarning; RuntimeError when there is none
    (https://pytorch.org/docs/stable/generated/torch.cross.html). TypeError for an operand no tensor."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args("cross", input, other)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe default "
                      "value of dim will change to agree with that of linalg.cross in a future release.",
                      UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        if 3 not in shape:
            raise RuntimeError("no dimension of size 3 in input")
        dim = shape.index(3)
    return _cross(input, other, dim=dim, out=out)


def chain_matmul(*matrices, out=None):
    """The product of the 2-d ``matrices`` in the cheapest order (``linalg.multi_dot``), with
    PyTorch's deprecation warning (https://pytorch.org/docs/stable/generated/torch.chain_matmul.html)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1:
        return _out(matrices[0].clone(), out)
    return multi_dot(list(matrices), out=out)


def lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu`` (deprecated in PyTorch, with its UserWarning): ``(LU, pivots)`` as
    :func:`ember.linalg.lu_factor`, and ``info`` (int32, 0 or the 1-based index of a zero pivot)
    when ``get_infos``; a singular matrix is no error here
    (https://pytorch.org/docs/stable/generated/torch.lu.html)."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
                  "will be removed in a future PyTorch release.", UserWarning, stacklevel=2)
    result = lu_with_info_result(*lu_factor_ex(A, pivot=pivot))
    return _out(result if get_infos else tuple(result[:2]), out)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """``torch.lu_solve`` (deprecated in PyTorch, with its UserWarning): X with ``A X = b``
    from A's :func:`lu` factors, as :func:`ember.linalg.lu_solve` with b first."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
                  "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.",
                  UserWarning, stacklevel=2)
    return _lu_solve(LU_data, LU_pivots, b, out=out)


def orgqr(input, tau):
    """``torch.orgqr``: :func:`ember.linalg.householder_product`, the first n columns of the
    product of the Householder reflectors in (*, m, n) ``input`` scaled by ``tau``."""
    return householder_product(input, tau)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """``op(Q) C`` (``left``) or ``C op(Q)`` for C = ``other`` (*, m, n), op the conjugate
    transpose when ``transpose``, and Q the full (m x m, or n x n on the right) product of the
    reflectors in ``input`` (*, m or n, k) scaled by ``tau`` (*, k), as :func:`geqrf` returns
    them; differentiable (Q is :func:`orgqr` of the reflectors padded with zero-scaled ones)
    (https://pytorch.org/docs/stable/generated/torch.ormqr.html)."""
    check_matrix(input, "torch.ormqr", "input")
    check_matrix(other, "torch.ormqr", "other")
    if input.dtype != other.dtype or input.dtype != tau.dtype:
        odd, name = (other, "other") if input.dtype != other.dtype else (tau, "tau")
        raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has "
                           f"dtype{type_name(input.dtype)} and {name} has dtype {type_name(odd.dtype)}")
    for name, batch in (("tau", tau.shape[:-1]), ("other", other.shape[:-2])):
        if tuple(batch) != tuple(input.shape[:-2]):
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {name} to be equal to "
                               f"input.shape[:-2], but got {list(batch)}")
    size = other.shape[-2] if left else other.shape[-1]
    if input.shape[-2] != size:
        raise RuntimeError(f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]")
    k = min(size, input.shape[-1])
    if tau.shape[-1] != k:
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{-2 if left else -1}], "
                           "input.shape[-1])")
    reflectors = input[..., :k]
    if k < size:  # reflectors with tau = 0 are identities
        batch = tuple(input.shape[:-2])
        reflectors = reflectors.new_zeros(batch + (size, size)).index_copy(-1, _arange(k), reflectors)
        tau = tau.new_zeros(tuple(tau.shape[:-1]) + (size,)).index_copy(-1, _arange(k), tau)
    q = householder_product(reflectors, tau)
    q = q.mH if transpose else q
    return _out(q @ other if left else other @ q, out)


def _arange(k):
    return tensor(np.arange(k))
