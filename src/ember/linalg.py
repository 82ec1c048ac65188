"""``ember.linalg``: norms and products (``torch.linalg``)."""
from ._ops.args import dims_arg as _dims
from ._ops.linalg import matmul, vector_norm

__all__ = ["vector_norm", "norm", "matrix_norm", "matmul"]


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """Vector norm for 1-D input or an int ``dim``; Frobenius norm for matrices otherwise."""
    if ord is None or ord == "fro" or (dim is not None and not isinstance(dim, (tuple, list))) or A.ndim == 1:
        return vector_norm(A, 2 if ord in (None, "fro") else ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Frobenius (default), 1, inf, -1 and -inf matrix norms over ``dim``."""
    if ord == "fro":
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    d0, d1 = _dims(dim[0], A.ndim)[0], _dims(dim[1], A.ndim)[0]
    if ord in (1, -1):
        col = A.abs().sum(d0, keepdim=True)
        r = col.amax(d1, keepdim=True) if ord == 1 else col.amin(d1, keepdim=True)
    elif ord in (float("inf"), float("-inf")):
        row = A.abs().sum(d1, keepdim=True)
        r = row.amax(d0, keepdim=True) if ord > 0 else row.amin(d0, keepdim=True)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return r if keepdim else r.squeeze((d0, d1))
