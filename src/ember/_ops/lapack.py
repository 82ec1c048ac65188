"""What the linear-algebra kernels share: LAPACK failure reports and packed multi-factor results.

A decomposition with several differentiable factors (SVD's U, S, Vh) is one op whose single
output packs the factors, flattened, along its last axis; the public function slices them
out with ember ops, so the gradients of the slices arrive packed in the op's backward. The
engine keeps one gradient per node, and this keeps it so.
"""
import numpy as np
import scipy.linalg.lapack as _lapack

__all__ = ["LinAlgError", "pack", "unpack", "flat_size", "batch_prefix", "singular_pivots",
           "not_positive_definite", "matrix_spec", "check_finite_batches"]


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (``torch.linalg.LinAlgError``): a singular
    matrix, or one that is not positive-definite. Its message names the batch element and the
    pivot or leading minor where LAPACK stopped."""


def flat_size(shapes):
    return sum(int(np.prod(s)) for s in shapes)


def pack(batch, *factors):
    """The factors (each ``batch + its own shape``) flattened and joined along one last axis."""
    return np.concatenate([f.reshape(batch + (int(np.prod(f.shape[len(batch):])),))
                           for f in factors], axis=-1)


def unpack(packed, shapes):
    """The ember Tensors packed by :func:`pack` (differentiable slices of ``packed``)."""
    batch, start, out = tuple(packed.shape[:-1]), 0, []
    for shape in shapes:
        size = int(np.prod(shape))
        out.append(packed[..., start:start + size].reshape(batch + tuple(shape)))
        start += size
    return out


def batch_prefix(index, batch_shape):
    """torch's "(Batch element i): " for a batched input; nothing for a single matrix."""
    return f"(Batch element {index}): " if batch_shape else ""


def _getrf(matrix):
    fn = _lapack.dgetrf if matrix.dtype == np.float64 else _lapack.sgetrf
    return fn(matrix)[2]


def singular_pivots(a):
    """(batch index, 1-based pivot) of the first matrix in ``a`` whose LU has a zero pivot."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, matrix in enumerate(flat):
        info = _getrf(matrix)
        if info > 0:
            return i, info
    return None


def not_positive_definite(a):
    """Per matrix of ``a`` (read from its lower triangle): LAPACK potrf's info, the order of the
    first leading minor that is not positive-definite (0 where the factorization succeeds)."""
    potrf = _lapack.dpotrf if a.dtype == np.float64 else _lapack.spotrf
    flat = a.reshape((-1,) + a.shape[-2:])
    return np.array([potrf(m, lower=True)[1] for m in flat], dtype=np.int32).reshape(a.shape[:-2])


def matrix_spec(spec):
    shape, dtype = spec
    return tuple(shape[:-2]), shape[-2], shape[-1], dtype


def check_finite_batches(arrays):
    """True when every array has elements (SciPy's batched routines reject empty batches)."""
    return all(a.size for a in arrays)
