"""Inverses, determinants, linear solves, least squares and matrix functions of
``torch.linalg`` (https://pytorch.org/docs/stable/linalg.html), batched over leading dims of
float32/float64 tensors and differentiable as PyTorch's."""
import math

import numpy as np

from .._backend import namespace
from .._creation import eye, tensor
from .._tensor import Tensor
from .._ops.complex import sgn
from .._ops.core import apply
from .._ops.lapack import LinAlgError, singular_pivots
from .._ops.solvers import Det, Inverse, LogAbsDet, Lstsq, MatrixExp, Pinv, Solve, SolveTriangular
from ._common import (batch_broadcast, check_matrix, check_same_dtype, check_square, out as _out,
                      renamed, result_type, type_name)
from .factorizations import svdvals

__all__ = ["inv", "inv_ex", "pinv", "det", "slogdet", "matrix_rank", "solve", "solve_ex",
           "solve_triangular", "lstsq", "matrix_power", "matrix_exp", "tensorinv", "tensorsolve"]

linalg_inv_ex = result_type("linalg_inv_ex", ["inverse", "info"])
linalg_slogdet = result_type("linalg_slogdet", ["sign", "logabsdet"])
linalg_solve_ex = result_type("linalg_solve_ex", ["result", "info"])
linalg_lstsq = result_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_int32 = tensor(np.int32(0)).dtype


def inv(A, *, out=None):
    """Inverse of (*, n, n) A. LinAlgError (a RuntimeError) naming the batch element and the
    zero pivot when A is singular."""
    check_square(A, "linalg.inv")
    return _out(apply(Inverse, A), out)


def _info(A):
    data = A._data
    flat = data.reshape((-1,) + data.shape[-2:])
    info = [(singular_pivots(m) or (0, 0))[1] for m in flat]
    return tensor(np.array(info, np.int32).reshape(data.shape[:-2]))


def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``: info (int32, batch-shaped) is the 1-based zero pivot of a singular
    matrix (0 = invertible), whose inverse is then inf/nan, instead of an error."""
    check_square(A, "linalg.inv_ex")
    try:
        return _out(linalg_inv_ex(apply(Inverse, A), A.new_zeros(A.shape[:-2], dtype=_int32)), out)
    except LinAlgError as error:
        if check_errors:
            raise renamed(error, "linalg.inv_ex") from None
    info = _info(A)
    # (A singular matrix's pivot comes from LAPACK, on NumPy arrays: no other library's reaches here)
    result = np.full(A.shape, np.nan, A._data.dtype)
    ok = info._data == 0
    result[ok] = np.linalg.inv(A._data[ok])
    return _out(linalg_inv_ex(tensor(result), info), out)


def det(A, *, out=None):
    """Determinant (*) of (*, n, n) A; differentiable, singular A included."""
    check_square(A, "linalg.det")
    return _out(apply(Det, A), out)


def slogdet(A, *, out=None):
    """``(sign, logabsdet)`` of (*, n, n) A: ``det = sign * exp(logabsdet)``; a singular A gives
    sign 0 and logabsdet -inf."""
    check_square(A, "linalg.slogdet")
    # A complex sign, det / |det|, is differentiable; a real one is piecewise constant.
    sign = sgn(apply(Det, A)) if A.dtype.is_complex else Tensor._make(namespace(A._data).linalg.slogdet(A._data)[0])
    return _out(linalg_slogdet(sign, apply(LogAbsDet, A)), out)


def _default_rtol(A, atol, rtol):
    if rtol is None:
        rtol = 0.0 if atol is not None and _positive(atol) else (
            np.finfo(A._data.dtype).eps * max(A.shape[-2:]))
    return (0.0 if atol is None else atol), rtol


def _positive(x):
    x = _array(x)
    return bool((namespace(x).asarray(x) > 0).any())


def _array(x):
    return x._data if hasattr(x, "_data") else x


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Moore-Penrose pseudo-inverse (*, n, m) of (*, m, n) A, dropping singular values at or
    below ``max(atol, rtol * largest)`` (rtol defaults to ``eps * max(m, n)`` when atol is
    unset or zero); ``hermitian`` uses the eigendecomposition of symmetric A."""
    if A.ndim < 2 or A.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise RuntimeError(f"linalg.pinv({type_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    atol, rtol = _default_rtol(A, atol, rtol)
    return _out(apply(Pinv, A, atol=_array(atol), rtol=_array(rtol), hermitian=hermitian), out)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Number (int64, batch-shaped) of singular values above ``max(atol, rtol * largest)``."""
    check_matrix(A, "torch.linalg.matrix_rank")
    atol, rtol = _default_rtol(A, atol, rtol)
    xp = namespace(A._data)
    if hermitian:
        s = xp.abs(xp.linalg.eigvalsh(A._data)) if A.numel() else xp.zeros(A.shape[:-1])
    else:
        s = svdvals(A.detach())._data
    cutoff = xp.maximum(xp.asarray(_array(atol))[..., None],
                        xp.asarray(_array(rtol))[..., None] * s.max(-1, keepdims=True, initial=0))
    return _out(Tensor._make((s > cutoff).sum(-1).astype(np.int64)), out)


def _as_columns(A, B, name):
    """B as a batch of matrices (vectors become columns, as torch's vector case), and whether
    to drop that column again."""
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    return (B.unsqueeze(-1) if vector else B), vector


def solve(A, B, *, left=True, out=None):
    """X with ``A X = B`` (``left=False``: ``X A = B``) for (*, n, n) A and (*, n, k) or (*, n)
    B, batch dims broadcast. LinAlgError naming the batch element when A is singular."""
    check_square(A, "linalg.solve")
    check_same_dtype("linalg.solve", A, B)
    B, vector = _as_columns(A, B, "linalg.solve")
    if not left:
        return solve(A.mT, B.mT).mT
    if B.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    batch_broadcast(B.shape[:-2], A.shape[:-2])
    X = apply(Solve, A, B)
    return _out(X.squeeze(-1) if vector else X, out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)``: :func:`solve` with info (int32) the zero pivot of a singular A."""
    try:
        return _out(linalg_solve_ex(solve(A, B, left=left), A.new_zeros(A.shape[:-2], dtype=_int32)), out)
    except LinAlgError as error:
        if check_errors:
            raise renamed(error, "torch.linalg.solve_ex") from None
    info = _info(A)
    shape = solve(eye(A.shape[-1], dtype=A.dtype).expand(A.shape), B, left=left).shape
    return _out(linalg_solve_ex(tensor(np.full(shape, np.nan, A._data.dtype)), info), out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with ``A X = B`` (``left=False``: ``X A = B``) for triangular (*, n, n) A (``upper``
    triangle read; ``unitriangular``: unit diagonal assumed) and (*, n, k) B, batches
    broadcast. A zero on A's diagonal gives inf/nan (no error), as PyTorch."""
    check_square(A, "linalg.solve_triangular")
    check_matrix(B, "linalg.solve_triangular", "B")
    check_same_dtype("linalg.solve_triangular", A, B)
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    if B.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation AX = B ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    batch_broadcast(B.shape[:-2], A.shape[:-2])
    return _out(apply(SolveTriangular, A, B, upper=upper, unitriangular=unitriangular), out)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` minimising ``||A X - B||_F`` for
    (*, m, n) A and (*, m, k) or (*, m) B. ``driver`` (default gelsy): residuals (squared column
    norms of ``A X - B``) for gels/gelsd/gelss when m > n and A has full rank; rank for
    gelsy/gelsd/gelss; singular values for gelsd/gelss; otherwise empty tensors."""
    name = "torch.linalg.lstsq"
    check_matrix(A, name)
    check_same_dtype(name, A, B, ("input", "other"))
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2)")
    batch_broadcast(A.shape[:-2], Bm.shape[:-2])
    X = apply(Lstsq, A, Bm, rcond=rcond, driver=driver)
    m, n = A.shape[-2:]
    empty = A.new_zeros(0)
    rank = A.new_zeros(0, dtype=tensor(0).dtype)
    s = empty
    if driver != "gels":
        s_all = svdvals(A.detach())._data
        tol = (float(np.finfo(s_all.dtype).eps) * max(m, n) if rcond is None else rcond)
        rank = Tensor._make((s_all > tol * s_all.max(-1, keepdims=True, initial=0)).sum(-1).astype(np.int64))
        if driver in ("gelsd", "gelss"):
            s = Tensor._make(s_all)
    residuals = empty
    full_rank = driver == "gels" or bool((rank._data == n).all())
    if driver != "gelsy" and m > n and full_rank:
        residuals = ((A @ X - Bm) ** 2).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    return linalg_lstsq(X.squeeze(-1) if vector else X, residuals, rank, s)


def matrix_power(A, n, *, out=None):
    """``A^n`` for integer n by repeated squaring; n < 0 inverts first, n = 0 gives I."""
    check_square(A, "linalg.matrix_power")
    if not isinstance(n, int):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        # The identity stays on A's graph (zero gradient), as PyTorch's result.
        identity = Tensor._make(namespace(A._data).eye(A.shape[-1], dtype=A.dtype.np))
        return _out(identity + 0 * A, out)
    base, result = (inv(A) if n < 0 else A), None
    n = abs(n)
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _out(result, out)


def matrix_exp(A):
    """Matrix exponential of (*, n, n) A (Padé scaling and squaring, Al-Mohy & Higham 2009)."""
    check_square(A, "linalg.matrix_exp")
    return apply(MatrixExp, A)


def tensorinv(A, ind=2, *, out=None):
    """Inverse with respect to ``tensordot(.., ind)``: A reshaped to
    (prod(shape[:ind]), prod(shape[ind:])) must be square; result shape shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    left, right = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(left), math.prod(right)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _out(inv(A.reshape(rows, cols)).reshape(right + left), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with ``tensordot(A, X, X.ndim) = B``; ``dims`` moves those dims of A to the end first."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute([d for d in range(A.ndim) if d not in dims] + dims)
    rows = B.numel()
    x_shape = tuple(A.shape[B.ndim:])
    if math.prod(x_shape) != rows:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {math.prod(x_shape)} != "
                           f"{rows}")
    return _out(solve(A.reshape(rows, rows), B.reshape(rows)).reshape(x_shape), out)
