"""Randomized low-rank SVD and PCA: ``torch.svd_lowrank`` and ``torch.pca_lowrank``
(https://pytorch.org/docs/stable/generated/torch.svd_lowrank.html, .../torch.pca_lowrank.html).

The method is Halko, Martinsson & Tropp, "Finding structure with randomness" (SIAM Review,
2011): a Gaussian test matrix sketches A's range, ``niter`` rounds of subspace iteration
(their Algorithm 4.4, re-orthonormalising by QR after each product) sharpen it, and the SVD
of the small projection ``Q^H A`` gives the factors (their Algorithm 5.1). The test matrix is
drawn as torch draws it (``randn(n, q)`` in A's dtype, n the number of columns of A or of
A^H when A is wide), so the same seed gives torch's factors. Everything is written in ember
ops, so gradients flow as through the QR and SVD they call. Dense inputs only.
"""
from ._sampling import randn
from .linalg import qr, svd

__all__ = ["svd_lowrank", "pca_lowrank"]


def _range_basis(A, q, niter, M):
    """An (*, m, q) orthonormal basis of the range of A - M (Halko et al., Algorithm 4.4)."""
    R = randn(A.shape[-1], q, dtype=A.dtype if A.dtype.is_inexact else None)

    def times(X):
        return A @ X if M is None else A @ X - M @ X

    def adjoint_times(X):
        return A.mH @ X if M is None else A.mH @ X - M.mH @ X
    Q = qr(times(R)).Q
    for _ in range(niter):
        Q = qr(adjoint_times(Q)).Q
        Q = qr(times(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A - M ~= U diag(S) V^H`` of rank ``q``: U (*, m, q), S (*, q)
    descending, V (*, n, q) (V, not V^H, as torch). ``M`` (broadcastable to A, default none) is
    subtracted without forming A - M. Accurate when A - M has rank about q or less; raise
    ``niter`` (default 2) for slowly decaying spectra. Random: seeded by ``manual_seed``."""
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # sketch the smaller side: factor A^H and swap U and V back
        A, M = A.mH, None if M is None else M.mH
    Q = _range_basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if wide else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)``: :func:`svd_lowrank` of A with its column means subtracted
    (``center``), so V's columns are the principal directions and ``S**2 / (m - 1)`` the
    variances along them. ``q`` defaults to min(6, m, n); ValueError when ``q`` is not in
    [0, min(m, n)] or ``niter`` is negative."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A, q, niter=niter)
