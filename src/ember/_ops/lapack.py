"""What the linear-algebra kernels share: LAPACK failure reports and packed multi-factor results.

QR, SVD and eigh are multi-result ops (``Op.num_outputs``), one node for all their factors as
in torch. eig, LU and polar still pack their factors, flattened, along one last axis of a
single output that the public function slices with ember ops (:func:`pack`, :func:`unpack`).
"""
import functools
import math

import numpy as np
import scipy.linalg.lapack as _lapack

from .._backend import namespace

__all__ = ["LinAlgError", "pack", "unpack", "flat_size", "batch_prefix", "singular_pivots",
           "not_positive_definite", "routine", "matrices", "per_matrix", "eigh_kernel",
           "svd_kernel", "qr_workspace", "batched", "fortran_stack", "in_place"]


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (``torch.linalg.LinAlgError``): a singular
    matrix, or one that is not positive-definite. Its message names the batch element and the
    pivot or leading minor where LAPACK stopped."""


def flat_size(shapes):
    return sum(math.prod(s) for s in shapes)


def pack(batch, *factors):
    """The factors (each ``batch + its own shape``) flattened and joined along one last axis."""
    return namespace(*factors).concatenate([f.reshape(batch + (math.prod(f.shape[len(batch):]),))
                           for f in factors], axis=-1)


def unpack(packed, shapes):
    """The ember Tensors packed by :func:`pack` (differentiable slices of ``packed``)."""
    batch, start, out = tuple(packed.shape[:-1]), 0, []
    for shape in shapes:
        size = math.prod(shape)
        out.append(packed[..., start:start + size].reshape(batch + tuple(shape)))
        start += size
    return out


def batch_prefix(index, batch_shape):
    """torch's "(Batch element i): " for a batched input; nothing for a single matrix."""
    return f"(Batch element {index}): " if batch_shape else ""


_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
# The complex routines of the real symmetric/orthogonal ones are Hermitian/unitary.
_COMPLEX_NAME = {"syevd": "heevd", "orgqr": "ungqr"}


@functools.lru_cache(maxsize=256)
def routine(name, dtype):
    """SciPy's wrapper of LAPACK ``name`` for ``dtype`` (s, d, c, z... for float32, float64,
    complex64, complex128; heevd/ungqr stand for syevd/orgqr on complex matrices).
    The kernels call these per matrix: SciPy's LAPACK runs as fast as PyTorch's here, while
    NumPy's linalg (its own OpenBLAS build and layout copies) measured up to 2x slower.
    Cached: the lookup (dtype names) cost a third of a 4x4 QR."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        name = _COMPLEX_NAME.get(name, name)
    return getattr(_lapack, _PREFIX[dtype.name] + name)


@functools.lru_cache(maxsize=256)
def qr_workspace(dtype, m, n, q_columns):
    """Optimal LAPACK workspace sizes (geqrf, orgqr) for an m x n QR whose Q has q_columns:
    SciPy's default is the minimum, which runs the unblocked code (5x slower at n = 1024)."""
    dtype = np.dtype(dtype)
    geqrf_lwork = int(np.real(routine("geqrf_lwork", dtype)(m, n)[0]))
    k = min(m, n)
    reflectors, tau = np.zeros((m, q_columns), dtype), np.zeros(k, dtype)
    orgqr_lwork = int(np.real(routine("orgqr", dtype)(reflectors, tau, lwork=-1)[1][0])) if m else 1
    return geqrf_lwork, max(orgqr_lwork, 1)


def batched(a, largest=8):
    """Whether the namespace's batched linalg (``xp.linalg``, gufuncs looping in C) should
    factor the stack ``a`` rather than a Python loop of SciPy's LAPACK calls: always for another
    library's arrays (the LAPACK routines are NumPy's, on the CPU); for NumPy's, when ``a`` is
    a stack of several matrices of at most ``largest`` rows and columns (float32 is computed
    in float64). Measured on 64 float32 matrices, 1 thread (gufunc vs loop, us): 4x4
    qr 82 vs ~700, inv 41 vs 154, solve 37 vs 99, eigh 155 vs 275, svd 253 vs 424; 16x16 qr
    462 vs ~800, inv 308 vs 364, but eigh, svd and solve as fast or faster in the loop. The
    loop still reports failures: it names the batch element, NumPy does not. (Cholesky: 64 4x4, 9 vs 136.)"""
    m, n = a.shape[-2:]
    return type(a) is not np.ndarray or (a.ndim > 2 and a.size > m * n and m <= largest and n <= largest)


def matrices(a):
    """``a`` as a (batch, m, n) stack (a view when possible)."""
    return a.reshape((-1,) + a.shape[-2:])


def fortran_stack(a, columns):
    """The matrices of ``a`` (*, m, n) copied, in one call, into a (batch, m, ``columns``)
    stack of Fortran-order matrices (columns >= n; those past n uninitialised), for LAPACK
    routines that then work on each matrix in place (``overwrite_a``) instead of copying it in
    and out. The matrices start at multiples of 64 bytes from the first: SciPy copies an
    operand whose address is not 8-aligned."""
    m, n = a.shape[-2:]
    step = 64 // math.gcd(64, m * a.dtype.itemsize)  # columns per 64 bytes of alignment
    stack = np.empty((math.prod(a.shape[:-2]), -(-columns // step) * step, m), a.dtype)
    stack = stack.transpose(0, 2, 1)[..., :columns]
    stack[..., :n] = matrices(a)
    return stack


def in_place(result, x):
    """Makes sure a LAPACK ``result`` asked to overwrite ``x`` is in ``x``: SciPy returns ``x``
    itself when it worked in place, a new array when it had to copy the operand."""
    if result is not x:
        x[...] = result


def _getrf(matrix):
    return routine("getrf", matrix.dtype)(matrix)[2]


def singular_pivots(a):
    """(batch index, 1-based pivot) of the first matrix in ``a`` whose LU has a zero pivot."""
    for i, matrix in enumerate(matrices(a)):
        info = _getrf(matrix)
        if info > 0:
            return i, info
    return None


def not_positive_definite(a, upper=False):
    """Per matrix of ``a`` (read from its lower triangle, ``upper``: its upper one): LAPACK
    potrf's info, the order of the first leading minor that is not positive-definite (0 where
    the factorization succeeds)."""
    potrf = routine("potrf", a.dtype)
    return np.array([potrf(m, lower=not upper)[1] for m in matrices(a)],
                    dtype=np.int32).reshape(a.shape[:-2])


def per_matrix(a, kernel, shapes):
    """Runs ``kernel(i, matrix) -> factors`` on each matrix of ``a`` into arrays of ``a``'s
    batch shape + ``shapes``."""
    batch = a.shape[:-2]
    if a.ndim == 2:  # one matrix: its factors as LAPACK returned them, no copies
        return list(kernel(0, a))
    outs, xp = None, namespace(a)
    for i, m in enumerate(matrices(a)):
        factors = kernel(i, m)
        if outs is None:  # each factor keeps its dtype (a complex matrix has real singular values)
            outs = [xp.empty((math.prod(batch),) + tuple(s), f.dtype) for s, f in zip(shapes, factors)]
        for out, factor in zip(outs, factors):
            out[i] = factor
    if outs is None:
        outs = [xp.empty((0,) + tuple(s), a.dtype) for s in shapes]
    return [o.reshape(batch + tuple(s)) for o, s in zip(outs, shapes)]


def _converge_error(name, what, i, batch, info):
    return LinAlgError(f"{name}: {batch_prefix(i, batch)}The algorithm failed to converge because "
                       f"the input matrix is ill-conditioned or has too many repeated {what} "
                       f"(error code: {info}).")


def eigh_kernel(a, uplo, vectors=True):
    """Eigenvalues (and vectors) of each symmetric matrix in ``a`` by LAPACK syevd."""
    syevd, n = routine("syevd", a.dtype), a.shape[-1]
    if batched(a):
        xp = namespace(a)
        try:
            return list(xp.linalg.eigh(a, UPLO=uplo)) if vectors else [xp.linalg.eigvalsh(a, UPLO=uplo)]
        except np.linalg.LinAlgError:
            pass  # the loop below names the failing matrix

    def factor(i, x):
        w, v, info = syevd(x, compute_v=int(vectors), lower=int(uplo == "L"))
        if info > 0:
            raise _converge_error("linalg.eigh", "eigenvalues", i, a.shape[:-2], info)
        return (w, v) if vectors else (w,)
    return per_matrix(a, factor, [(n,), (n, n)] if vectors else [(n,)])


def svd_kernel(a, full_matrices=False, vectors=True):
    """``[U, S, Vh]`` (``vectors=False``: ``[S]``) of each matrix in ``a`` by LAPACK gesdd."""
    gesdd, (m, n) = routine("gesdd", a.dtype), a.shape[-2:]
    if batched(a):
        try:
            out = namespace(a).linalg.svd(a, full_matrices=full_matrices, compute_uv=vectors)
            return list(out) if vectors else [out]
        except np.linalg.LinAlgError:
            pass  # the loop below names the failing matrix
    k = min(m, n)
    if not vectors:
        shapes = [(k,)]
    elif full_matrices:
        shapes = [(m, m), (k,), (n, n)]
    else:
        shapes = [(m, k), (k,), (k, n)]

    def factor(i, x):
        u, s, vh, info = gesdd(x, compute_uv=int(vectors), full_matrices=int(full_matrices))
        if info > 0:
            raise _converge_error("linalg.svd", "singular values", i, a.shape[:-2], info)
        return (u, s, vh) if vectors else (s,)
    return per_matrix(a, factor, shapes)
