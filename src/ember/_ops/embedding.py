"""Embedding lookup and the sparse products behind its gradient and ``embedding_bag``.

The lookup's gradient adds each output row into the weight row its index names, many rows
into one where ids repeat. That is a product with a constant sparse (num_embeddings, n)
matrix, and SciPy's CSR product does it several times faster than ``np.add.at`` (about 8x
for a GPT-sized batch of 1024 ids, 128 features, 96 rows). The same op, with the matrix
transposed, is its own derivative, so gradients of gradients come free. SciPy's CSR products
are NumPy's CPU path: another library's arrays add their rows with ``_backend.index_add_at``.
"""
import numpy as np
from scipy import sparse as _sparse

from .. import _backend
from .core import Op, apply

# SciPy's sparse products run in these dtypes; others are computed in float32 and cast back.
_SPARSE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class SparseMatmul(Op):
    """``matrix @ x`` for ``x`` (n, D) and a constant SciPy CSR ``matrix`` (m, n); (m, D)."""
    promote = None
    save_inputs = False
    infer = classmethod(lambda op, x, matrix: ((matrix.shape[0],) + tuple(x.shape[1:]), x.dtype))

    @staticmethod
    def forward(x, matrix):
        if x.dtype in _SPARSE_DTYPES:
            return np.asarray(matrix.astype(x.dtype, copy=False) @ x)
        return np.asarray(matrix @ x.astype(np.float32)).astype(x.dtype)

    @staticmethod
    def backward(ctx, g):
        return (apply(SparseMatmul, g, matrix=ctx.attrs["matrix"].T.tocsr()),)


def rows_matrix(indices, num_rows, coefficients=None):
    """The CSR (num_rows, n) matrix with ``coefficients[i]`` (default 1) at
    ``(indices[i], i)``: multiplying it with (n, D) values sums each value into its row."""
    # Built in CSR form directly (a stable sort by row): three times faster than from COO.
    order = np.argsort(indices, kind="stable")
    row_starts = np.zeros(num_rows + 1, np.int64)
    np.cumsum(np.bincount(indices, minlength=num_rows), out=row_starts[1:])
    data = np.ones(indices.size, np.float32) if coefficients is None else coefficients[order]
    return _sparse.csr_matrix((data, order, row_starts), shape=(num_rows, indices.size))


def ids_in_range(ids, num_embeddings):
    """``ids``; IndexError, as PyTorch's ("index out of range in self", then the first id outside
    [0, num_embeddings), its position and num_embeddings)."""
    # Read as unsigned, negative ids are huge: one comparison finds both kinds of bad id.
    unsigned = ids.view(np.uint64 if ids.dtype == np.int64 else np.uint32)
    if ids.size and unsigned.max() >= num_embeddings:
        position = np.unravel_index(int((unsigned >= num_embeddings).argmax()), ids.shape)
        raise id_out_of_range(ids[position], tuple(int(i) for i in position), num_embeddings)
    return ids


def id_out_of_range(id, position, num_embeddings):
    """The IndexError of :func:`ids_in_range` for ``id`` at ``position`` (a tuple of ints);
    also raised by compiled graphs' lookups."""
    return IndexError(f"index out of range in self: id {id} at position {position} is not in "
                      f"[0, {num_embeddings}) (num_embeddings={num_embeddings})")


class EmbeddingForward(Op):
    """``weight[indices]``: weight (num_embeddings, D), int64/int32 ``indices`` (*); output
    (*, D). IndexError (:func:`ids_in_range`) for an id outside [0, num_embeddings), checked
    here in the kernel: the ids are an input (not an attribute), so a captured graph reads
    each call's ids and checks them as eager does.

    The gradient is :class:`EmbeddingBackward`.
    """
    name = "Embedding"
    promote = None

    @classmethod
    def infer(cls, weight, indices, padding_idx=None, scale_grad_by_freq=False):
        return indices.shape + (weight.shape[1],), weight.dtype

    @staticmethod
    def forward(weight, indices, padding_idx=None, scale_grad_by_freq=False):
        return weight.take(ids_in_range(indices, weight.shape[0]), axis=0)

    @staticmethod
    def backward(ctx, g):
        return (apply(EmbeddingBackward, g, ctx.input(1), num_weights=ctx.shapes[0][0], **ctx.attrs), None)


def _row_coefficients(flat, num_weights, padding_idx, scale_grad_by_freq):
    """Each position's weight in its row's gradient (None: all 1)."""
    if not scale_grad_by_freq and padding_idx is None:
        return None
    xp = _backend.namespace(flat)
    coefficients = xp.ones(flat.size, np.float64)
    if scale_grad_by_freq:
        coefficients /= xp.bincount(flat, minlength=num_weights)[flat]
    if padding_idx is not None:
        coefficients[flat == padding_idx] = 0
    return coefficients


class EmbeddingBackward(Op):
    """The weight gradient of :class:`EmbeddingForward`: row r sums the gradients ``g`` (*, D) at
    the positions whose id is r, except ``padding_idx`` (None or a row that gets none) and,
    with ``scale_grad_by_freq``, divided by the number of times r occurs in ``indices``.
    Output (num_weights, D). Linear in ``g``: its own derivative is the lookup again."""
    promote = None

    @classmethod
    def infer(cls, g, indices, num_weights, padding_idx=None, scale_grad_by_freq=False):
        return (num_weights, g.shape[-1]), g.dtype

    @staticmethod
    def forward(g, indices, num_weights, padding_idx=None, scale_grad_by_freq=False):
        flat = indices.reshape(-1)
        coefficients = _row_coefficients(flat, num_weights, padding_idx, scale_grad_by_freq)
        rows = g.reshape(flat.size, g.shape[-1])
        if type(g) is not np.ndarray:  # SciPy's sparse products take NumPy arrays only
            if coefficients is not None:
                rows = rows * coefficients.astype(g.dtype)[:, None]
            out = _backend.namespace(g).zeros((num_weights, g.shape[-1]), g.dtype)
            _backend.index_add_at(out, flat, rows)
            return out
        return SparseMatmul.forward(rows, rows_matrix(flat, num_weights, coefficients))

    @staticmethod
    def backward(ctx, h):
        a, indices = ctx.attrs, ctx.input(1)
        rows = apply(EmbeddingForward, h, indices)
        coefficients = _row_coefficients(indices._data.reshape(-1), a["num_weights"], a.get("padding_idx"),
                                         a.get("scale_grad_by_freq"))
        if coefficients is not None:
            rows = rows * type(h)._make(coefficients.astype(h._data.dtype).reshape(indices.shape + (1,)))
        return rows, None
