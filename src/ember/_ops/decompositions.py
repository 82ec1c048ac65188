"""Matrix factorizations: Cholesky, QR, SVD, symmetric eigendecomposition, LU, polar and the
symmetric square root (LAPACK through NumPy/SciPy, batched over leading dims).

QR, SVD and eigh return their factors as results of one node; eig, LU and polar pack them into
one output (see :mod:`.lapack`). Each ``backward`` is the published adjoint in ember ops: Murray 2016 for
Cholesky; Walter & Lehmann 2018 for QR; Townsend 2016 and Seeger et al. 2017 for SVD and eigh
(with PyTorch's convention: gradients through singular or eigen-vectors are inf/nan where
the spectrum repeats, since they are then not unique); the polar factor and square root by
differentiating ``H^2 = A^T A`` and ``X^2 = A`` (Sylvester equations, solved in the
eigenbasis, where their coefficients ``s_i + s_j`` never vanish at full rank).
``infer`` is the shape/dtype rule: tensors (anything with ``shape`` and ``dtype``) in,
``(shape, dtype)`` of the result out, without running the kernel.
"""
import functools
import warnings

import numpy as np
import scipy.linalg

from .. import _backend
from .._backend import namespace
from .core import Op, apply
from .lapack import (LinAlgError, batch_prefix, eigh_kernel, flat_size, batched, fortran_stack, in_place,
                     matrices, pack, qr_workspace, routine, svd_kernel, unpack)
from .join import Cat
from .solvers import Solve, SolveTriangular, _eye, constant

__all__ = ["Cholesky", "Qr", "Svd", "SvdVals", "Eigh", "EigvalsH", "Eig", "LuFactor",
           "Polar", "MatrixSqrth", "svd_factors", "eigh_factors", "eig_factors", "qr_shapes", "svd_shapes", "lu_shapes",
           "permutation_from_pivots"]


def _diag(x):
    return x.diagonal(0, -2, -1)


def _sym(x):
    return 0.5 * (x + x.mH)


def _tri_solve(a, b, upper, unitriangular=False):
    return apply(SolveTriangular, a, b, upper=upper, unitriangular=unitriangular)


# ---- Cholesky ----------------------------------------------------------------------------------
class Cholesky(Op):
    """``A = L L^H`` from A's lower triangle (``upper``: ``A = U^H U`` from its upper one, as
    torch). Adjoint
    ``gA = sym(L^{-T} Phi(L^T gL) L^{-1})``, Phi = lower triangle with half the diagonal.
    ``check_errors=False`` (the ``_ex`` form) returns LAPACK's partial factor instead of raising."""
    promote = None
    holomorphic = False
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(a, upper=False, check_errors=True):
        if a.size == 0:
            return a.copy()
        if batched(a):
            try:
                return namespace(a).linalg.cholesky(a, upper=upper)
            except np.linalg.LinAlgError:
                pass  # the loop below names the failing matrix (or keeps partial factors)
        potrf = routine("potrf", a.dtype)
        # LAPACK factors each matrix of a C-order copy in place, through its Fortran-order view
        # m.T = A^T, whose upper (lower) triangle is A's lower (upper): L L^H = A^T leaves A's
        # factor in the copy, in C order. No transposing copies in or out, which were 40% of
        # the time at 1024 x 1024 (float32, 1 thread: 14.6 -> 8.9 ms), nor per-matrix copies
        # (16 x 64 x 64: 0.212 -> 0.191 ms).
        factors = a.copy()
        for i, m in enumerate(matrices(factors)):
            info = potrf(m.T, lower=int(upper), clean=1, overwrite_a=1)[1]
            if info > 0 and check_errors:
                raise LinAlgError(
                    f"linalg.cholesky: {batch_prefix(i, a.shape[:-2])}The factorization could not "
                    "be completed because the input is not positive-definite (the leading minor "
                    f"of order {info} is not positive-definite).")
        return factors

    @staticmethod
    def backward(ctx, g):
        lower = ctx.output
        if ctx.attrs.get("upper", False):
            lower, g = lower.mH, g.mH
        phi = (lower.mH @ g).tril()
        phi = 0.5 * (phi + phi.tril(-1).mH)  # Hermitian but for the diagonal, halved
        half = _tri_solve(lower.mH, phi, upper=True)
        return (_tri_solve(lower.mH, half.mH, upper=True).mH,)

    @staticmethod
    def infer(a, upper=False, check_errors=True):
        return tuple(a.shape), a.dtype


# ---- QR ----------------------------------------------------------------------------------------
def qr_shapes(m, n, mode):
    k = min(m, n)
    if mode == "complete":
        return (m, m), (m, n)
    return (m, k), (k, n)


@functools.lru_cache(maxsize=64)
def _upper_mask(m, n):
    """The upper triangle of an m x n matrix, as a boolean mask."""
    return ~np.tri(m, n, -1, dtype=bool)


def _copyltu(m):
    """The Hermitian matrix with ``m``'s strict lower triangle and the real part of its diagonal."""
    return m.tril(-1) + m.tril(-1).mH + _diag(m).real.diag_embed()


def _qr_backward_tall(q, r, gq, gr):
    """m >= n, reduced: ``gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^{-T}``."""
    b = gq + q @ _copyltu(r @ gr.mH - gq.mH @ q)
    return _tri_solve(r, b.mH, upper=True).mH


class Qr(Op):
    """``A = Q R``; mode "reduced", "complete" or "r" (R only: Q is None). Differentiable for full-rank A when m >= n (reduced) or m <= n; a wide A = [X | Y]
    differentiates its square part X with ``gQ + Y gV^T`` and ``gY = Q gV``."""
    promote = None
    holomorphic = False
    save_output = True
    num_outputs = 2

    @staticmethod
    def forward(a, mode="reduced"):
        m, n = a.shape[-2:]
        q_shape, r_shape = qr_shapes(m, n, mode)
        batch, xp = a.shape[:-2], namespace(a)
        if a.size == 0:
            q = xp.zeros(batch + q_shape, a.dtype)
            if q_shape[0] == q_shape[1]:
                q[...] = xp.eye(q_shape[0], dtype=a.dtype)
            r = xp.zeros(batch + r_shape, a.dtype)
        elif batched(a, largest=16):
            if mode == "r":
                return None, xp.linalg.qr(a, mode="r")
            q, r = xp.linalg.qr(a, mode=mode)
        else:  # (NumPy arrays only: ``batched`` sends every other library's to its xp.linalg)
            geqrf, orgqr = routine("geqrf", a.dtype), routine("orgqr", a.dtype)
            geqrf_lwork, orgqr_lwork = qr_workspace(a.dtype.str, m, n, q_shape[1])
            # LAPACK factors each matrix in place in one Fortran-order copy of the batch, whose
            # R is then read out in one call and whose reflectors become Q in place:
            # no per-matrix copies (float32, 1 thread, loaded A/B: 16 x 64 x 64 1.19 -> 1.12 ms,
            # 16 x 24 x 24 0.25 -> 0.21 ms, 256 x 256 unchanged).
            packed = fortran_stack(a, max(n, q_shape[1]))
            taus = []
            for x in packed:
                x = x[:, :n]
                factors = geqrf(x, lwork=geqrf_lwork, overwrite_a=1)
                in_place(factors[0], x)
                taus.append(factors[1])
            # R read out in the stack's own (Fortran) order, so column-major as torch's: read
            # across it, the 1024 x 1024 copy took 7.5 ms, 15x a contiguous pass. np.where with
            # a cached mask: np.triu took 5x the time at 4x4.
            r = np.where(_upper_mask(*r_shape).T, packed[:, :r_shape[0], :n].mT, np.zeros((), a.dtype))
            r = r.mT.reshape(batch + r_shape)
            if mode == "r":
                return None, r
            for x, tau in zip(packed, taus):
                x = x[:, :q_shape[1]]
                in_place(orgqr(x, tau, lwork=orgqr_lwork, overwrite_a=1)[0], x)
            q = packed[..., :q_shape[1]].reshape(batch + q_shape)
        return (None if mode == "r" else q), r

    @staticmethod
    def backward(ctx, gq, gr):
        mode = ctx.attrs.get("mode", "reduced")
        a = ctx.input(0)
        m, n = a.shape[-2:]
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                               "going to differentiate through linalg.qr.")
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        q, r = ctx.output
        gq = q.new_zeros(q.shape) if gq is None else gq
        gr = r.new_zeros(r.shape) if gr is None else gr
        if m >= n:
            return (_qr_backward_tall(q, r, gq, gr),)
        y, gv = a[..., m:], gr[..., m:]
        gx = _qr_backward_tall(q, r[..., :m], gq + y @ gv.mH, gr[..., :m])
        return (apply(Cat, gx, q @ gv, dim=-1),)

    @staticmethod
    def infer(a, mode="reduced"):
        batch, m, n, dtype = tuple(tuple(a.shape)[:-2]), tuple(a.shape)[-2], tuple(a.shape)[-1], a.dtype
        q_shape, r_shape = qr_shapes(m, n, mode)
        return (None if mode == "r" else (batch + q_shape, dtype)), (batch + r_shape, dtype)


# ---- SVD ---------------------------------------------------------------------------------------
def svd_shapes(m, n, full_matrices):
    k = min(m, n)
    return ((m, m), (k,), (n, n)) if full_matrices else ((m, k), (k,), (k, n))


class Svd(Op):
    """``A = U diag(S) Vh`` (S real, descending). Adjoint (k = min(m, n);
    full matrices are narrowed to their first k vectors, as PyTorch):
    ``U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] Vh`` with ``E_ij = s_j^2 - s_i^2``,
    plus ``(I - U U^T) gU S^{-1} Vh`` when m > k and ``U S^{-1} gV^T (I - V V^T)`` when n > k."""
    promote = None
    holomorphic = False
    save_inputs = False
    save_output = True
    num_outputs = 3

    @staticmethod
    def forward(a, full_matrices=False):
        m, n = a.shape[-2:]
        if a.size == 0:
            shapes, xp = svd_shapes(m, n, full_matrices), namespace(a)
            u, s, vh = (xp.zeros(a.shape[:-2] + shape, a.dtype) for shape in shapes)
            u[...] = xp.eye(*shapes[0], dtype=a.dtype)
            vh[...] = xp.eye(*shapes[2], dtype=a.dtype)
            return u, xp.real(s), vh
        return tuple(svd_kernel(a, full_matrices))

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        u, s, vh = ctx.output
        k = s.shape[-1]
        m, n = u.shape[-2], vh.shape[-1]
        gs = s.new_zeros(s.shape) if gs is None else gs
        u, vh = u[..., :k], vh[..., :k, :]
        if gu is None and gvh is None:
            return ((u * gs.unsqueeze(-2).to(u.dtype)) @ vh,)
        gu = u.new_zeros(u.shape) if gu is None else gu[..., :k]
        gvh = vh.new_zeros(vh.shape) if gvh is None else gvh[..., :k, :]
        v, gv = vh.mH, gvh.mH
        uhgu, vhgv = u.mH @ gu, v.mH @ gv
        s2 = s * s
        e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _eye(k, s)
        inner = ((uhgu - uhgu.mH) * s.unsqueeze(-2) + s.unsqueeze(-1) * (vhgv - vhgv.mH)) / e
        if u.dtype.is_complex:
            # The diagonal is the phase term: i Im(diag(U^H gU)) / S (zero for real matrices).
            inner = inner.masked_fill(_eye(k, s).bool(), 0) + (1j * _diag(uhgu).imag / s).diag_embed()
        ga = u @ (inner + gs.diag_embed()) @ vh
        if m > k:
            ga = ga + ((gu - u @ uhgu) / s.unsqueeze(-2)) @ vh
        if n > k:
            ga = ga + u @ ((gv - v @ vhgv) / s.unsqueeze(-2)).mH
        return (ga,)

    @staticmethod
    def infer(a, full_matrices=False):
        batch, m, n = tuple(tuple(a.shape)[:-2]), tuple(a.shape)[-2], tuple(a.shape)[-1]
        u, s, vh = svd_shapes(m, n, full_matrices)
        return (batch + u, a.dtype), (batch + s, a.dtype.to_real()), (batch + vh, a.dtype)


def svd_factors(a, full_matrices=False):
    """``(U, S, Vh)`` of ``a`` as ember Tensors through the :class:`Svd` entry."""
    return apply(Svd, a, full_matrices=full_matrices)


class SvdVals(Op):
    """Singular values only (no vectors computed); adjoint ``U diag(g) Vh``, whose vectors
    are computed in the backward."""
    promote = None
    holomorphic = False

    @staticmethod
    def forward(a):
        xp = namespace(a)
        k = min(a.shape[-2:])
        if a.size == 0:
            return xp.zeros(a.shape[:-2] + (k,), a.dtype)
        return xp.real(svd_kernel(a, vectors=False)[0])

    @staticmethod
    def backward(ctx, g):
        u, _, vh = svd_factors(ctx.input(0))
        return ((u * g.unsqueeze(-2)) @ vh,)

    @staticmethod
    def infer(a):
        return tuple(tuple(a.shape)[:-2]) + (min(tuple(a.shape)[-2:]),), a.dtype


# ---- symmetric eigendecomposition --------------------------------------------------------------
class Eigh(Op):
    """``A = Q diag(L) Q^T`` from the ``UPLO`` triangle (L real, ascending).
    Adjoint ``Q (skew(Q^T gQ) / 2E + diag(gL)) Q^T`` with ``E_ij = L_j - L_i``."""
    promote = None
    holomorphic = False
    save_inputs = False
    save_output = True
    num_outputs = 2

    @staticmethod
    def forward(a, UPLO="L"):
        xp = namespace(a)
        if a.size == 0:
            return xp.zeros(a.shape[:-1], a.real.dtype), a.copy()
        return tuple(eigh_kernel(a, UPLO))

    @staticmethod
    def backward(ctx, gw, gq):
        w, q = ctx.output
        n = w.shape[-1]
        gw = w.new_zeros(w.shape) if gw is None else gw
        if gq is None:
            return ((q * gw.unsqueeze(-2).to(q.dtype)) @ q.mH,)
        qhgq = q.mH @ gq
        e = w.unsqueeze(-2) - w.unsqueeze(-1) + _eye(n, w)
        return (q @ (0.5 * (qhgq - qhgq.mH) / e + gw.diag_embed()) @ q.mH,)

    @staticmethod
    def infer(a, UPLO="L"):
        shape = tuple(a.shape)
        return (shape[:-1], a.dtype.to_real()), (shape, a.dtype)


class Eig(Op):
    """``A V = V diag(L)`` for a general square A (LAPACK geev): packed complex ``[L, V]``,
    each eigenvector of unit norm. Adjoint (PyTorch's, gauge-invariant losses only):
    ``V^{-H} [(V^H gV - V^H V Re(diag(V^H gV))) / conj(E), diagonal gL] V^H`` with
    ``E_ij = L_j - L_i``."""
    promote = None
    save_inputs = False
    save_output = True
    holomorphic = False

    @staticmethod
    def forward(a):
        xp = namespace(a)
        n = a.shape[-1]
        dtype = np.result_type(a.dtype, np.complex64)
        if a.size == 0:
            return xp.zeros(a.shape[:-2] + (n + n * n,), dtype)
        w, v = xp.linalg.eig(a)
        return pack(a.shape[:-2], w.astype(dtype, copy=False), v.astype(dtype, copy=False))

    @staticmethod
    def backward(ctx, g):
        n = ctx.shapes[0][-1]
        w, v = unpack(ctx.output, [(n,), (n, n)])
        gw, gv = unpack(g, [(n,), (n, n)])
        vh = v.mH
        vhgv = vh @ gv
        inner = vhgv - vh @ (v * _diag(vhgv).real.unsqueeze(-2))
        wc = w.conj()
        e = wc.unsqueeze(-2) - wc.unsqueeze(-1) + _eye(n, w)
        inner = (inner / e).masked_fill(_eye(n, w).bool(), 0) + gw.diag_embed()
        return (apply(Solve, vh, inner @ vh),)

    @staticmethod
    def infer(a):
        n = tuple(a.shape)[-1]
        return tuple(tuple(a.shape)[:-2]) + (n + n * n,), a.dtype.to_complex()


def eig_factors(a):
    """``(L, V)`` of square ``a`` as complex ember Tensors through the :class:`Eig` entry."""
    n = a.shape[-1]
    return unpack(apply(Eig, a), [(n,), (n, n)])


def eigh_factors(a, UPLO="L"):
    """``(L, Q)`` of symmetric ``a`` as ember Tensors through the :class:`Eigh` entry."""
    return apply(Eigh, a, UPLO=UPLO)


class EigvalsH(Op):
    """Eigenvalues only; adjoint ``Q diag(g) Q^T`` with Q computed in the backward."""
    promote = None
    holomorphic = False

    @staticmethod
    def forward(a, UPLO="L"):
        xp = namespace(a)
        if a.size == 0:
            return xp.zeros(a.shape[:-1], a.dtype)
        return xp.real(eigh_kernel(a, UPLO, vectors=False)[0])

    @staticmethod
    def backward(ctx, g):
        _, q = eigh_factors(ctx.input(0), ctx.attrs.get("UPLO", "L"))
        return ((q * g.unsqueeze(-2)) @ q.mH,)

    @staticmethod
    def infer(a, UPLO="L"):
        return tuple(tuple(a.shape)[:-1]), a.dtype


# ---- LU ----------------------------------------------------------------------------------------
def permutation_from_pivots(pivots, m):
    """The (*, m, m) permutation P with ``A = P L U`` from LAPACK's 0-based row swaps."""
    xp = namespace(pivots)
    perm = xp.broadcast_to(xp.arange(m), pivots.shape[:-1] + (m,)).copy()
    flat_perm, flat_piv = perm.reshape(-1, m), pivots.reshape(-1, pivots.shape[-1])
    for row, piv in zip(flat_perm, flat_piv):
        for i, j in enumerate(piv):
            row[i], row[j] = row[j], row[i]
    p = xp.zeros(perm.shape + (m,))
    xp.put_along_axis(p, perm[..., :, None], 1.0, axis=-1)
    return xp.swapaxes(p, -1, -2)


def lu_shapes(m, n):
    return (m, n), (min(m, n),)


class LuFactor(Op):
    """Partial-pivoting LU ``A = P L U``, packed ``[LU, pivots]`` (LU holds unit-lower L below
    the diagonal and U on and above it; pivots are LAPACK's 0-based row swaps, as floats).
    Adjoint, square A: ``P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}``; a tall A adds
    its lower rows of L (``- triu(L2^T gL2)`` inside, ``gL2 U^{-T}`` below), a wide A its right
    columns of U (``- tril(gU2 U2^T, -1)`` inside, ``L^{-T} gU2`` beside) — differentiating
    ``P^T A = L U`` block by block."""
    promote = None
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(a):
        xp = namespace(a)
        batch, (m, n) = a.shape[:-2], a.shape[-2:]
        if a.size == 0:
            return xp.zeros(batch + (flat_size(lu_shapes(m, n)),), a.dtype)
        with warnings.catch_warnings():  # a zero pivot is reported through info, as PyTorch
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            lu, piv = _backend.linalg(a).lu_factor(a, check_finite=False)
        return pack(batch, lu, piv.astype(a.dtype))

    @staticmethod
    def backward(ctx, g):
        m, n = ctx.shapes[0][-2:]
        k = min(m, n)
        lu, piv = unpack(ctx.output, lu_shapes(m, n))
        glu, _ = unpack(g, lu_shapes(m, n))
        lower = lu[..., :, :k].tril(-1) + constant(namespace(lu._data).eye(m, k, dtype=lu._data.dtype))
        upper, g_lower, g_upper = lu[..., :k, :].triu(), glu[..., :, :k].tril(-1), glu[..., :k, :].triu()
        l1, u1 = lower[..., :k, :], upper[..., :, :k]
        phi = (l1.mT @ g_lower[..., :k, :]).tril(-1) + (g_upper[..., :, :k] @ u1.mT).triu()
        if m > n:  # the rows of L below its square block
            phi = phi - (lower[..., k:, :].mT @ g_lower[..., k:, :]).triu()
        if m < n:  # the columns of U right of its square block
            phi = phi - (g_upper[..., :, k:] @ upper[..., :, k:].mT).tril(-1)
        left = _tri_solve(l1.mT, phi, upper=True, unitriangular=True)
        ga = _tri_solve(u1, left.mT, upper=True).mT
        if m > n:
            ga = apply(Cat, ga, _tri_solve(u1, g_lower[..., k:, :].mT, upper=True).mT, dim=-2)
        if m < n:
            ga = apply(Cat, ga, _tri_solve(l1.mT, g_upper[..., :, k:], upper=True, unitriangular=True),
                       dim=-1)
        p = constant(permutation_from_pivots(piv._data.astype(np.int64), m).astype(ga._data.dtype))
        return (p @ ga,)

    @staticmethod
    def infer(a):
        m, n = tuple(a.shape)[-2:]
        return tuple(tuple(a.shape)[:-2]) + (flat_size(lu_shapes(m, n)),), a.dtype


# ---- polar decomposition and symmetric square root ---------------------------------------------
def _eigen_divide(m, v, d):
    """``V [(V^T m V) / (d_i + d_j)] V^T``: solves ``X D + D X = V^T m V`` in the eigenbasis."""
    return v @ ((v.mH @ m @ v) / (d.unsqueeze(-1) + d.unsqueeze(-2))) @ v.mH


class Polar(Op):
    """``A = U H`` (m >= n) from the thin SVD ``A = W S V^T``: ``U = W V^T``, ``H = V S V^T``;
    packed ``[U, H]``. Adjoint at full column rank, from ``H^2 = A^T A`` and ``U = A H^{-1}``:
    ``gA = gU H^{-1} + 2 A V[(V^T M V) / (s_i + s_j)]V^T`` with ``M = sym(gH - U^T gU H^{-1})``."""
    promote = None
    holomorphic = False
    save_output = True

    @staticmethod
    def forward(a):
        xp = namespace(a)
        n = a.shape[-1]
        if a.size == 0:
            return xp.zeros(a.shape[:-2] + ((a.shape[-2] + n) * n,), a.dtype)
        w, s, vh = svd_kernel(a)
        v = xp.swapaxes(vh, -1, -2)
        return pack(a.shape[:-2], w @ vh, (v * s[..., None, :]) @ vh)

    @staticmethod
    def backward(ctx, g):
        a = ctx.input(0)
        m, n = a.shape[-2:]
        u, h = unpack(ctx.output, [(m, n), (n, n)])
        gu, gh = unpack(g, [(m, n), (n, n)])
        s, v = eigh_factors(h)
        gu_hinv = gu @ ((v / s.unsqueeze(-2)) @ v.mH)
        return (gu_hinv + 2 * a @ _eigen_divide(_sym(gh - u.mH @ gu_hinv), v, s),)

    @staticmethod
    def infer(a):
        m, n = tuple(a.shape)[-2:]
        return tuple(tuple(a.shape)[:-2]) + ((m + n) * n,), a.dtype


class MatrixSqrth(Op):
    """Principal square root ``X = Q diag(sqrt(L)) Q^T`` of a symmetric positive-definite A
    (its lower triangle). Adjoint from ``X dX + dX X = dA``:
    ``gA = Q[(Q^T sym(g) Q) / (sqrt(l_i) + sqrt(l_j))]Q^T``, finite for repeated eigenvalues."""
    promote = None
    holomorphic = False

    @staticmethod
    def forward(a):
        xp = namespace(a)
        if a.size == 0:
            return xp.zeros_like(a)
        w, q = eigh_kernel(a, "L")
        with np.errstate(invalid="ignore"):
            return (q * xp.sqrt(w)[..., None, :]) @ xp.swapaxes(q, -1, -2)

    @staticmethod
    def backward(ctx, g):
        w, q = eigh_factors(ctx.input(0))
        return (_eigen_divide(_sym(g), q, w.sqrt()),)

    @staticmethod
    def infer(a):
        return tuple(a.shape), a.dtype
