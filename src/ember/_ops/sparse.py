"""Sparse COO tensors (https://pytorch.org/docs/stable/sparse.html): ``sparse_coo_tensor``,
``Tensor.to_sparse``/``to_dense``/``coalesce`` and the accessors, each public function, then
its op entry.

The arithmetic (``dense + sparse``, ``sparse * 2``, ``sparse @ dense``, ``sum``, ``t``) runs
through the ordinary ops on :class:`ember._backend.sparse.SparseCOO` storage, which says what
PyTorch's sparse backend supports. A gradient with respect to a sparse tensor is carried as a
dense tensor of its shape; the ops here mask it where PyTorch's sparse gradient has entries
only at the input's indices (``to_dense``, ``values``, ``sparse_coo_tensor``).
"""
import numpy as np

from .. import _backend, _dtype, _layout
from .._backend.sparse import SparseCOO
from .._creation import as_tensor
from .._tensor import Tensor
from .core import Op, apply, like_input
from .linalg import mm

__all__ = ["sparse_coo_tensor", "spmm", "to_sparse", "to_dense", "coalesce", "is_coalesced", "indices",
           "values", "sparse_gradient", "raw_indices", "raw_values", "nnz", "sparse_dim", "dense_dim"]


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse tensor with ``values[k]`` at ``indices[:, k]``
    (https://pytorch.org/docs/stable/generated/torch.sparse_coo_tensor.html).

    ``indices`` is (ndim, nnz), cast to int64; ``values`` is (nnz,) (ember's sparse tensors have
    no dense dimensions); ``size`` defaults to one more than the largest index in each dim.
    Duplicate indices are allowed (an uncoalesced tensor; ``coalesce`` sums them). Gradients flow
    to ``values``. RuntimeError with PyTorch's messages when the shapes of ``indices``, ``values``
    and ``size`` disagree or an index is negative or out of range (always checked here).
    """
    indices = as_tensor(indices).to(_dtype.int64)
    values = as_tensor(values, dtype=dtype)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.ndim != 1:
        raise NotImplementedError("ember's sparse COO tensors have no dense dimensions: values "
                                  f"must be 1-D, got shape {list(values.shape)}")
    sparse_dims, nnz = indices.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, "
                           f"nnz from values: {values.shape[0]}")
    index = indices._data
    if size is None:
        size = tuple(int(m) + 1 for m in index.max(1)) if nnz else (0,) * sparse_dims
    size = tuple(size)
    if len(size) != sparse_dims:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                           f"{len(size)}, sparse_dim = {sparse_dims}, dense_dim = 0")
    if nnz:
        for d in range(sparse_dims):
            low, high = int(index[d].min()), int(index[d].max())
            if low < 0:
                raise RuntimeError(f"found negative index {low} for dim {d}")
            if high >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{size[d]} but found index {high}")
    out = apply(SparseCooTensor, values, indices=index.copy(), shape=size,
                coalesced=bool(is_coalesced))
    return out.requires_grad_() if requires_grad else out


class SparseCooTensor(Op):
    """``values`` (nnz,) placed at fixed ``indices``: the gradient of ``values`` is the incoming
    gradient at those indices."""
    name = "SparseCooTensorWithDimsAndTensors"
    promote = None
    save_inputs = False

    @classmethod
    def infer(cls, values, indices, shape, coalesced):
        return shape, values.dtype

    @staticmethod
    def forward(values, indices, shape, coalesced):
        return SparseCOO(indices, values, shape, coalesced)

    @staticmethod
    def backward(ctx, g):
        return (g[_index_tensors(ctx.attrs["indices"])],)


def spmm(input, mat2):
    """``torch.spmm``: the product of a sparse (n, m) and a dense (m, p) matrix, dense (n, p);
    the same as :func:`ember.mm`, which takes sparse operands too."""
    return mm(input, mat2)


def _index_tensors(indices):
    return tuple(Tensor._make(row) for row in indices)


def _storage(t, name, message="coordinate tensor layout"):
    if type(t._data) is not SparseCOO:
        raise RuntimeError(f"{name} expected sparse {message} but got Strided")
    return t._data


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The sparse COO tensor of ``self``'s nonzero entries, coalesced
    (https://pytorch.org/docs/stable/generated/torch.Tensor.to_sparse.html); ``self`` when it
    is sparse already. NotImplementedError for other layouts and for dense dimensions."""
    if layout not in (None, _layout.sparse_coo) or blocksize is not None:
        raise NotImplementedError(f"ember has sparse COO tensors only, not layout={layout}")
    if sparse_dim not in (None, self.ndim) or dense_dim not in (None, 0):
        raise NotImplementedError("ember's sparse COO tensors have no dense dimensions: "
                                  f"sparse_dim must be {self.ndim}")
    if type(self._data) is SparseCOO:
        return self
    return apply(ToSparse, self)


to_sparse_coo = to_sparse


class ToSparse(Op):
    """The nonzero entries of a dense array; the gradient passes through unchanged."""
    name = "ToSparse"
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x):
        xp = _backend.namespace(x)
        flat = xp.flatnonzero(x)
        if x.ndim == 0:  # one entry or none, at the empty index
            return SparseCOO(xp.zeros((0, flat.size), np.int64), x.reshape(-1)[flat], (), coalesced=True)
        indices = xp.stack(xp.unravel_index(flat, x.shape)).astype(np.int64).reshape(x.ndim, flat.size)
        return SparseCOO(indices, x.reshape(-1)[flat], x.shape, coalesced=True)

    @staticmethod
    def backward(ctx, g):
        return (g,)


def to_dense(self, dtype=None, *, masked_grad=None):
    """The dense tensor of a sparse ``self`` (duplicates summed); ``self`` when it is dense
    (https://pytorch.org/docs/stable/generated/torch.Tensor.to_dense.html). Its gradient
    keeps the entries at ``self``'s indices, as PyTorch's sparse gradient does."""
    out = apply(ToDense, self) if type(self._data) is SparseCOO else self
    return out if dtype is None else out.to(dtype)


def _masked(g, sparse_input):
    """The gradient ``g`` kept at the indices of ``sparse_input``: PyTorch's sparse gradient."""
    mask = _backend.namespace(g._data).zeros(g.shape, bool)
    mask[tuple(sparse_input._data.indices)] = True
    return g * Tensor._make(mask)


class ToDense(Op):
    promote = None
    infer = classmethod(like_input)

    @staticmethod
    def forward(x):
        return x.todense()

    @staticmethod
    def backward(ctx, g):
        return (_masked(g, ctx.input(0)),)


def sparse_gradient(self):
    """``self`` (sparse), whose gradient is kept at its indices: what ``torch.sparse``'s
    functions give their sparse operands, where the ordinary ops give a dense gradient."""
    return apply(SparseGradient, self)


class SparseGradient(Op):
    promote = None
    infer = classmethod(like_input)

    @staticmethod
    def forward(x):
        return x

    @staticmethod
    def backward(ctx, g):
        return (_masked(g, ctx.input(0)),)


def coalesce(self):
    """``self`` with its entries sorted by index and duplicates summed
    (https://pytorch.org/docs/stable/generated/torch.Tensor.coalesce.html)."""
    storage = _storage(self, "coalesce")
    return self if storage.coalesced else apply(Coalesce, self)


class Coalesce(Op):
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x):
        return x.coalesce()

    @staticmethod
    def backward(ctx, g):
        return (g,)


def is_coalesced(self):
    """Whether ``self``'s indices are sorted and unique (``coalesce`` or ``to_sparse`` made it)."""
    return _storage(self, "is_coalesced").coalesced


def indices(self):
    """The (ndim, nnz) int64 indices of a coalesced sparse tensor; RuntimeError when it is
    not coalesced, as in PyTorch."""
    if not _storage(self, "indices").coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return raw_indices(self)


def raw_indices(self):
    """``Tensor._indices()``: the indices as stored, coalesced or not."""
    return Tensor._make(_storage(self, "_indices").indices)


def values(self):
    """The (nnz,) values of a coalesced sparse tensor, with gradient; RuntimeError when it is
    not coalesced, as in PyTorch."""
    if not _storage(self, "values", "tensor layout").coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return apply(Values, self)


def raw_values(self):
    """``Tensor._values()``: the values as stored, coalesced or not."""
    _storage(self, "_values", "tensor layout")
    return apply(Values, self)


class Values(Op):
    """The values of sparse storage; the gradient is placed back at the indices."""
    promote = None

    @classmethod
    def infer(cls, x):
        return (x._data.nnz,), x.dtype

    @staticmethod
    def forward(x):
        return x.values

    @staticmethod
    def backward(ctx, g):
        storage = ctx.input(0)._data
        return (g.new_zeros(storage.shape).index_put(_index_tensors(storage.indices), g, accumulate=True),)


def nnz(self):
    """``Tensor._nnz()``: the number of stored entries (duplicates counted)."""
    if type(self._data) is not SparseCOO:
        raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' backend.")
    return self._data.nnz


def sparse_dim(self):
    """The number of sparse dimensions: ``ndim`` for a sparse tensor, 0 for a dense one."""
    return self.ndim if type(self._data) is SparseCOO else 0


def dense_dim(self):
    """The number of dense dimensions: ember's sparse tensors have none; a dense tensor's ndim."""
    return 0 if type(self._data) is SparseCOO else self.ndim
