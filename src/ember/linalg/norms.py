"""Norms, condition numbers and products of ``torch.linalg``
(https://pytorch.org/docs/stable/linalg.html), written in ember ops (so differentiable)."""
from .. import _dtype
from .._creation import ones, tensor
from .._ops.args import dims_arg as _dims
from .._ops.join import cat
from .._ops.linalg import matmul, vector_norm
from ._common import check_matrix, check_square, out as _out
from .factorizations import svdvals
from .solvers import inv

__all__ = ["vector_norm", "norm", "matrix_norm", "matmul", "cond", "cross", "vecdot",
           "multi_dot", "vander", "diagonal"]

_INF = float("inf")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector norm for 1-D A or an int ``dim``; matrix norm for 2-D A or a 2-tuple ``dim``;
    with neither ``ord`` nor ``dim``, the 2-norm of A flattened."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None and ord is None:
        return _out(vector_norm(A, 2, None, keepdim, dtype=dtype), out)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if len(dim) == 1 and not isinstance(ord, str):  # "fro", "nuc": matrix norms, whatever A
        return _out(vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype), out)
    return _out(matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype), out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm over the two dims ``dim``: "fro", "nuc" (sum of singular values), 2 / -2
    (largest / smallest singular value), 1 / -1 (max / min column abs-sum), inf / -inf (max /
    min row abs-sum)."""
    check_matrix(A, "linalg.matrix_norm")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return _out(vector_norm(A, 2, dim, keepdim), out)
    d0, d1 = _dims(dim[0], A.ndim)[0], _dims(dim[1], A.ndim)[0]
    if ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        r = s.sum(-1) if ord == "nuc" else (_largest(s, -1) if ord == 2 else s.amin(-1))
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return _out(r, out)
    if ord in (1, -1):
        col = A.abs().sum(d0, keepdim=True)
        r = _largest(col, d1, keepdim=True) if ord == 1 else col.amin(d1, keepdim=True)
    elif ord in (_INF, -_INF):
        row = A.abs().sum(d1, keepdim=True)
        r = _largest(row, d0, keepdim=True) if ord > 0 else row.amin(d0, keepdim=True)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return _out(r if keepdim else r.squeeze((d0, d1)), out)


def _largest(x, dim, keepdim=False):
    """The largest of the non-negative ``x`` along ``dim``, 0 over an empty dim (PyTorch's
    max-type matrix norms of 0-size matrices; min-type ones raise)."""
    return x.amax(dim, keepdim=keepdim) if x.shape[dim] else x.sum(dim, keepdim=keepdim)


def cond(A, p=None, *, out=None):
    """Condition number ``norm(A, p) * norm(A^{-1}, p)``: for p None/2/-2 the ratio of extreme
    singular values (any (*, m, n) A); other orders need square invertible A."""
    check_matrix(A, "linalg.cond")
    if p not in (None, 2, -2, "fro", "nuc", 1, -1, _INF, -_INF):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p in (None, 2, -2):
        s = svdvals(A)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return _out(r, out)
    check_square(A, f"linalg.cond(ord={p})")
    return _out(matrix_norm(A, p) * matrix_norm(inv(A), p), out)


def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (batch dims broadcast); RuntimeError for other
    lengths or ranks, NotImplementedError for bool (torch's kernel)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    if input.dtype is other.dtype is _dtype.bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    nxt, prev = tensor([1, 2, 0]), tensor([2, 0, 1])
    a, b = input.movedim(dim, -1), other.movedim(dim, -1)
    r = (a.index_select(-1, nxt) * b.index_select(-1, prev)
         - a.index_select(-1, prev) * b.index_select(-1, nxt))
    return _out(r.movedim(-1, dim), out)


def vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y, dim)`` with broadcasting."""
    return _out((x.conj() * y).sum(dim), out)


def multi_dot(tensors, *, out=None):
    """Product of a chain of 2-D matrices (the first may be a row vector, the last a column
    vector, dropped again from the result), in the multiplication order with the fewest
    scalar multiplications (the matrix-chain dynamic programme, Cormen et al. 15.2)."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise RuntimeError(f"multi_dot(): tensor {i} must be {' or '.join(f'{d}D' for d in allowed)}"
                               f" but got {t.ndim}D")
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first:
        mats[0] = mats[0].unsqueeze(0)
    if last:
        mats[-1] = mats[-1].unsqueeze(-1)
    result = _chain(mats, _chain_order(mats), 0, len(mats) - 1)
    if first:
        result = result.squeeze(0)
    if last:
        result = result.squeeze(-1)
    return _out(result, out)


def _chain_order(mats):
    """split[i][j]: where the optimal product of mats[i..j] splits."""
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    n = len(mats)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = float("inf")
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain(mats, split, i, k) @ _chain(mats, split, k + 1, j)


def vander(x, *, N=None):
    """Vandermonde matrix (*, n, N) with columns ``x^0, x^1, ..., x^(N-1)`` (N defaults to n)."""
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(x.shape + (N - 1,)).cumprod(-1)
    return cat([ones(x.shape + (1,), dtype=x.dtype), powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """Diagonals of the matrices in A (``torch.diagonal`` with matrix-dim defaults)."""
    return A.diagonal(offset, dim1, dim2)
