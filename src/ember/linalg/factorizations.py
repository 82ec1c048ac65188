"""Matrix factorizations of ``torch.linalg``: Cholesky, QR, LU, LDL, SVD, eigh, polar.

Semantics, argument names and named-tuple results follow the pages under
https://pytorch.org/docs/stable/linalg.html; every function accepts batches ``(*, m, n)`` of
float32/float64 matrices and is differentiable where PyTorch's is (see the op entries in
:mod:`ember._ops.decompositions` for the derivative formulas).
"""
import numpy as np
import scipy.linalg

from .._backend import namespace
from .._tensor import Tensor
from .._ops.core import apply
from .._ops.decompositions import (Cholesky, EigvalsH, LuFactor, MatrixSqrth, Polar, Qr, SvdVals,
                                   eig_factors, eigh_factors, lu_shapes, permutation_from_pivots,
                                   svd_factors)
from .._ops.lapack import LinAlgError, not_positive_definite, unpack
from .._ops.solvers import SolveTriangular
from ._common import check_matrix, check_square, out as _out, renamed, result_type

__all__ = ["cholesky", "cholesky_ex", "qr", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "ldl_factor", "ldl_factor_ex", "ldl_solve", "svd", "svdvals", "eigh", "eigvalsh",
           "eig", "eigvals", "polar", "matrix_sqrth", "householder_product", "lu_unpack"]

linalg_cholesky_ex = result_type("linalg_cholesky_ex", ["L", "info"])
linalg_qr = result_type("linalg_qr", ["Q", "R"])
linalg_lu = result_type("linalg_lu", ["P", "L", "U"])
linalg_lu_factor = result_type("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = result_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_ldl_factor = result_type("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = result_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
linalg_svd = result_type("linalg_svd", ["U", "S", "Vh"])
linalg_eigh = result_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eig = result_type("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_polar = result_type("linalg_polar", ["U", "H"])
lu_unpack_result = result_type("lu_unpack", ["P", "L", "U"])


def _int32(array):
    return Tensor._make(namespace(array).asarray(array, dtype=np.int32))


def _eye(like, m, n=None):
    """The (m, n) identity in the dtype and array namespace of the tensor ``like``."""
    return Tensor._make(namespace(like._data).eye(m, n, dtype=like.dtype.np))


def cholesky(A, *, upper=False, out=None):
    """Cholesky factor L (lower) with ``A = L L^H`` of (*, n, n) Hermitian positive-definite A,
    read from its lower triangle (``upper``: U with ``A = U^H U``, from its upper one). Raises LinAlgError naming the
    batch element and the order of the first leading minor that is not positive-definite."""
    check_square(A, "linalg.cholesky")
    return _out(apply(Cholesky, A, upper=upper), out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: as :func:`cholesky`, but ``info`` (int32, batch-shaped) holds the order of
    the failing leading minor (0 = success) instead of raising, unless ``check_errors``."""
    check_square(A, "linalg.cholesky_ex")
    try:
        L = apply(Cholesky, A, upper=upper)
        info = A.new_zeros(A.shape[:-2], dtype=_int32(0).dtype)
    except LinAlgError as error:
        if check_errors:
            raise renamed(error, "linalg.cholesky_ex") from None
        L = apply(Cholesky, A, upper=upper, check_errors=False)
        info = _int32(not_positive_definite(A._data, upper))
    return _out(linalg_cholesky_ex(L, info), out)


def qr(A, mode="reduced", *, out=None):
    """``(Q, R)`` with ``A = Q R`` for (*, m, n) A; ``mode`` "reduced" (Q (*, m, k), R (*, k, n),
    k = min(m, n)), "complete" (Q (*, m, m)) or "r" (R only; Q is empty)."""
    check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    Q, R = apply(Qr, A, mode=mode)
    return _out(linalg_qr(A.new_zeros(0) if Q is None else Q, R), out)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``(LU, pivots, info)``: partial-pivoting LU of (*, m, n) A in LAPACK's compact form;
    pivots are 1-based int32 row swaps, ``info`` the 1-based index of the first zero on U's
    diagonal (0 = none)."""
    check_matrix(A, "torch.linalg.lu_factor_ex")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    m, n = A.shape[-2:]
    lu_, piv = unpack(apply(LuFactor, A), lu_shapes(m, n))
    pivots = _int32(piv._data + 1)
    zero = lu_._data.diagonal(0, -2, -1) == 0
    info = _int32(namespace(zero).where(zero.any(-1), zero.argmax(-1) + 1, 0))
    if check_errors and zero.any():  # a RuntimeError, as torch's (not a LinAlgError)
        _zero_pivot_error(info, "torch.linalg.lu_factor_ex", RuntimeError)
    return _out(linalg_lu_factor_ex(lu_, pivots, info), out)


def _zero_pivot_error(info, name, error=LinAlgError):
    flat = info._data.reshape(-1)
    index = int(flat.nonzero()[0][0])
    where = f"(Batch element {index}): " if info.ndim else ""
    pivot = flat[index]
    raise error(f"{name}: {where}U[{pivot},{pivot}] is zero and using it on lu_solve would "
                "result in a division by zero. If you still want to perform the "
                "factorization, consider calling linalg.lu(A, pivot) or "
                "linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)`` of :func:`lu_factor_ex`; RuntimeError when U has a zero on its
    diagonal (lu_solve would divide by it)."""
    lu_, pivots, info = lu_factor_ex(A, pivot=pivot)
    if info._data.any():
        _zero_pivot_error(info, "torch.linalg.lu_factor", RuntimeError)
    return _out(linalg_lu_factor(lu_, pivots), out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from compact LU and 1-based pivots: P (*, m, m), L (*, m, k) unit lower,
    U (*, k, n) upper, ``A = P L U`` (torch.lu_unpack)."""
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    L = U = P = LU_data.new_zeros(0)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + _eye(LU_data, m, k)
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        piv = LU_pivots._data.astype(np.int64) - 1
        P = Tensor._make(permutation_from_pivots(piv, m).astype(LU_data.dtype.np))
    return _out(lu_unpack_result(P, L, U), out)


def lu(A, *, pivot=True, out=None):
    """``(P, L, U)`` with ``A = P L U`` for (*, m, n) A (differentiable for square A)."""
    check_matrix(A, "linalg.lu")
    lu_, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return _out(linalg_lu(*lu_unpack(lu_, pivots)), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solves ``A X = B`` (``adjoint``: ``A^T X = B``; ``left=False``: ``X A = B``) from the
    :func:`lu_factor` of A, for (*, n, k) B; differentiable in LU and B."""
    check_matrix(B, "linalg.lu_solve", "B")
    n = LU.shape[-1]
    if B.shape[-2 if left else -1] != n:
        shapes = f"{n}x{n} and {B.shape[-2]}x{B.shape[-1]}"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({shapes})")
    if not left:
        return _out(lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT, out)
    P, L, U = lu_unpack(LU, pivots)
    if adjoint:
        y = apply(SolveTriangular, U.mT, B, upper=False)
        return _out(P @ apply(SolveTriangular, L.mT, y, upper=True, unitriangular=True), out)
    y = apply(SolveTriangular, L, P.mT @ B, upper=False, unitriangular=True)
    return _out(apply(SolveTriangular, U, y, upper=True), out)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``(LD, pivots, info)``: Bunch-Kaufman LDL^T (``hermitian``: LDL^H) of symmetric
    (Hermitian) (*, n, n) A (LAPACK sytrf/hetrf on its lower triangle); pivots in LAPACK's
    1-based form (negative for 2x2 blocks). Not differentiable, as in PyTorch."""
    check_square(A, "torch.linalg.ldl_factor_ex")
    data = A._data
    sytrf = _sy_or_he("trf", data, hermitian)
    flat = data.reshape((-1,) + data.shape[-2:])
    results = [sytrf(m, lower=1) for m in flat]
    n = data.shape[-1]
    ld = np.array([np.tril(r[0]) for r in results], data.dtype).reshape(data.shape)
    pivots = np.array([r[1] for r in results], np.int32).reshape(data.shape[:-2] + (n,))
    info = np.array([r[2] for r in results], np.int32).reshape(data.shape[:-2])
    if check_errors and info.any():
        raise LinAlgError(f"torch.linalg.ldl_factor_ex: The factorization could not be completed "
                          f"because the input is singular (info = {info.max()}).")
    return _out(linalg_ldl_factor_ex(*map(Tensor._make, (ld, pivots, info))), out)


def _sy_or_he(kind, data, hermitian):
    # The LAPACK routine of data's dtype: ?hetr* for Hermitian complex input (LDL^H), else
    # ?sytr* (LDL^T, also for complex symmetric input).
    prefix = "he" if hermitian and data.dtype.kind == "c" else "sy"
    return scipy.linalg.get_lapack_funcs(prefix + kind, (data,))


def ldl_factor(A, *, hermitian=False, out=None):
    """``(LD, pivots)`` of :func:`ldl_factor_ex`."""
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian)
    return _out(linalg_ldl_factor(LD, pivots), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solves ``A X = B`` from :func:`ldl_factor`'s result (LAPACK sytrs); not differentiable."""
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    ld = np.broadcast_to(LD._data, batch + LD.shape[-2:]).reshape((-1,) + LD.shape[-2:])
    piv = np.broadcast_to(pivots._data, batch + pivots.shape[-1:]).reshape(-1, pivots.shape[-1])
    b = np.broadcast_to(B._data, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
    sytrs = _sy_or_he("trs", ld, hermitian)
    x = [sytrs(ld[i], piv[i], b[i], lower=1)[0] for i in range(len(b))]
    return _out(Tensor._make(np.array(x, B._data.dtype).reshape(batch + B.shape[-2:])), out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` for (*, m, n) A; S (*, k) descending, U
    (*, m, k) and Vh (*, k, n) (``full_matrices``: (*, m, m) and (*, n, n)). Gradients through
    U or Vh are inf/nan where singular values repeat (the vectors are not unique there)."""
    check_matrix(A, "linalg.svd")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    return _out(linalg_svd(*svd_factors(A, full_matrices)), out)


def svdvals(A, *, driver=None, out=None):
    """Singular values (*, min(m, n)) of (*, m, n) A, descending; always differentiable."""
    check_matrix(A, "linalg.svdvals")
    return _out(apply(SvdVals, A), out)


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L", *, out=None):
    """``(eigenvalues, eigenvectors)`` of symmetric (*, n, n) A read from its ``UPLO``
    triangle; eigenvalues ascending. Eigenvector gradients are inf/nan where eigenvalues
    repeat."""
    check_square(A, "linalg.eigh")
    _check_uplo(UPLO)
    return _out(linalg_eigh(*eigh_factors(A, UPLO)), out)


def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues (*, n) of symmetric A, ascending (no eigenvectors computed)."""
    check_square(A, "linalg.eigvalsh")
    _check_uplo(UPLO)
    return _out(apply(EigvalsH, A, UPLO=UPLO), out)


def eig(A, *, out=None):
    """``(eigenvalues, eigenvectors)`` of a general (*, n, n) A, complex (float32 gives
    complex64), each eigenvector of unit norm; differentiable for losses that do not depend on
    the eigenvectors' phases (https://pytorch.org/docs/stable/generated/torch.linalg.eig.html)."""
    check_square(A, "linalg.eig")
    return _out(linalg_eig(*eig_factors(A)), out)


def eigvals(A, *, out=None):
    """The complex eigenvalues (*, n) of a general square A, in LAPACK geev's order."""
    check_square(A, "linalg.eigvals")
    return _out(eig_factors(A)[0], out)


def polar(A, *, out=None):
    """``(U, H)`` with ``A = U H`` for (*, m, n) A, m >= n (PyTorch 2.14): U (*, m, n) with
    orthonormal columns (the nearest such matrix to A in Frobenius norm), H (*, n, n)
    symmetric positive-semidefinite. Differentiable at full column rank."""
    check_matrix(A, "linalg.polar")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"linalg.polar: A must have at least as many rows as columns, but got "
                           f"a matrix of shape ({m}, {n})")
    return _out(linalg_polar(*unpack(apply(Polar, A), [(m, n), (n, n)])), out)


def matrix_sqrth(A):
    """Principal square root X (symmetric positive-definite, ``X X = A``) of symmetric
    positive-definite (*, n, n) A, read from its lower triangle (PyTorch 2.14)."""
    check_square(A, "linalg.matrix_sqrth")
    return apply(MatrixSqrth, A)


def householder_product(A, tau, *, out=None):
    """First n columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^H``, v_i the i-th
    column of (*, m, n) A below the diagonal with a unit diagonal entry (LAPACK orgqr);
    written in ember ops, so it is differentiable in A and tau."""
    name = "torch.linalg.householder_product"
    check_matrix(A, name, "input")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    v = A.tril(-1) + _eye(A, m, n)
    q = _eye(A, m).expand(A.shape[:-2] + (m, m))
    for i in range(k):
        vi = v[..., :, i:i + 1]
        q = q - (q @ vi) @ (tau[..., i, None, None] * vi.mH)
    return _out(q[..., :, :n], out)
