"""Sparse COO storage: the array a Tensor with ``layout=torch.sparse_coo`` holds.

A :class:`SparseCOO` is an ``(ndim, nnz)`` int64 array of indices, an ``(nnz,)`` array of
values and a shape, as https://pytorch.org/docs/stable/sparse.html#sparse-coo-tensors
describes. It takes part in NumPy's array protocols, so the ordinary op kernels run on it where
PyTorch's sparse backend has the operation, with PyTorch's result layouts:

- ``dense + sparse`` is dense and ``sparse + sparse`` sparse (uncoalesced: the two entry lists
  one after the other); ``sparse + dense`` is PyTorch's RuntimeError; subtraction likewise;
- ``sparse * number``, ``sparse * dense`` (the dense values at the entries), ``sparse * sparse``
  (where both have entries), ``sparse / number``, ``sparse // number`` and ``-sparse`` are sparse;
- in-place forms write a sparse result into a sparse tensor (``add_``, ``mul_``, ``sub_``,
  ``div_``, ``zero_``, ...) and a sparse operand's into a dense one (``dense.mul_(sparse)``);
- ``sparse @ dense`` and ``dense @ sparse`` are dense (SciPy's CSR product underneath);
- the unary functions that map 0 to 0 and PyTorch's sparse backend has (``abs``, ``sign``,
  ``sqrt``, ``sin``, ``tanh``, ``floor``, ``isnan``, ...) apply to the values and stay sparse;
- ``sum`` of all entries is a dense 0-d array; over some dims, a sparse array of the rest;
- a 2-D transpose and dtype casts stay sparse.

Everything else raises PyTorch's NotImplementedError ("Could not run 'aten::exp' with arguments
from the 'SparseCPU' backend."), never a silent densification. A gradient with respect to a
sparse tensor is carried as a dense array of its shape; ``values()`` and ``sparse_coo_tensor``
pick the entries out of it, which is what PyTorch's sparse gradient holds at those entries.
"""
import math

import numpy as np


class SparseCOO:
    """``indices`` (ndim, nnz) int64, ``values`` (nnz,), ``shape``; ``coalesced`` when the
    indices are sorted and unique."""
    base = None  # owns its storage (the memory counter reads this, as it does an ndarray's)

    def __init__(self, indices, values, shape, coalesced=False):
        self.indices = indices
        self.values = values
        self.shape = tuple(shape)
        self.coalesced = coalesced

    # ---- the metadata a Tensor reads from its array ------------------------------------------
    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def itemsize(self):
        return self.values.itemsize

    @property
    def nbytes(self):
        return self.indices.nbytes + self.values.nbytes

    @property
    def nnz(self):
        return self.values.shape[0]

    # ---- conversions ---------------------------------------------------------------------------
    def todense(self):
        out = np.zeros(self.shape, self.values.dtype)
        np.add.at(out, tuple(self.indices), self.values)
        return out

    def _flat_indices(self):
        """Each entry's row-major position in the dense array."""
        return np.ravel_multi_index(tuple(self.indices), self.shape) if self.ndim else np.zeros(self.nnz, np.int64)

    def coalesce(self):
        """Entries sorted by index (row-major), duplicates summed."""
        if self.coalesced:
            return self
        keys, where = np.unique(self._flat_indices(), return_inverse=True)
        values = np.zeros(keys.shape[0], self.values.dtype)
        np.add.at(values, where, self.values)
        indices = np.array(np.unravel_index(keys, self.shape), np.int64).reshape(self.ndim, -1)
        return SparseCOO(indices, values, self.shape, coalesced=True)

    def astype(self, dtype, copy=True):
        return SparseCOO(self.indices, self.values.astype(dtype), self.shape, self.coalesced)

    def copy(self, order="K"):
        """A copy of the entries; ``order`` is NumPy's ``ndarray.copy`` argument, which a COO
        array has no use for (callers copy dense and sparse arrays alike)."""
        return SparseCOO(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def assign(self, other):
        """Takes ``other``'s entries (values cast to this dtype): an in-place op's write.

        Raises:
            RuntimeError: ``other`` is dense (torch writes no dense result into a sparse tensor).
        """
        if not _is_sparse(other):
            raise RuntimeError("copy_() between dense and sparse Tensors is not implemented!")
        self.indices, self.coalesced = other.indices, other.coalesced
        self.values = other.values.astype(self.values.dtype, copy=False)

    def cleared(self):
        """No entries, this shape and dtype (what ``zero_`` leaves)."""
        return SparseCOO(np.zeros((self.ndim, 0), np.int64), self.values[:0].copy(), self.shape, coalesced=True)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 else axes
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        return SparseCOO(self.indices[list(axes)], self.values,
                         tuple(self.shape[a] for a in axes))

    def swapaxes(self, a, b):
        order = list(range(self.ndim))
        order[a], order[b] = order[b], order[a]
        return self.transpose(order)

    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        return self.swapaxes(-2, -1)

    def _csr(self):
        """SciPy's CSR matrix of the entries; a coalesced 2-D array's (row-major, unique: ``to_sparse``'s)
        is built from its row counts, half the time of SciPy's COO conversion (gcn's ``spmm``)."""
        import scipy.sparse  # SciPy's sparse package loads only when a sparse product runs
        if self.coalesced and self.ndim == 2 and self.nnz:
            rows = self.indices[0]
            if (rows[1:] >= rows[:-1]).all():  # (the flag trusted only where the rows are in order)
                indptr = np.zeros(self.shape[0] + 1, np.int64)
                np.cumsum(np.bincount(rows, minlength=self.shape[0]), out=indptr[1:])
                return scipy.sparse.csr_array((self.values, self.indices[1], indptr), shape=self.shape)
        return scipy.sparse.csr_array((self.values, tuple(self.indices)), shape=self.shape)

    # ---- NumPy's protocols -------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise _unsupported("this operation")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "reduce" and ufunc is np.add:  # sum over dims
            return _sum(inputs[0], **kwargs)
        if method == "__call__" and not kwargs:
            rule = _UFUNCS.get(ufunc)
            if rule is not None:
                out = rule(*inputs)
                if out is not NotImplemented:
                    return out
        raise _unsupported(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        rule = _FUNCTIONS.get(func)
        if rule is None:
            raise _unsupported(func.__name__)
        return rule(*args, **kwargs)

    def __add__(self, other):
        return np.add(self, other)

    def __radd__(self, other):
        return np.add(other, self)

    def __mul__(self, other):
        return np.multiply(self, other)

    def __rmul__(self, other):
        return np.multiply(other, self)

    def __sub__(self, other):
        return np.subtract(self, other)

    def __rsub__(self, other):
        return np.subtract(other, self)

    def __truediv__(self, other):
        return np.true_divide(self, other)

    def __floordiv__(self, other):
        return np.floor_divide(self, other)

    def __neg__(self):
        return np.negative(self)

    def __matmul__(self, other):
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        return np.matmul(other, self)

    def _compare(self, other):  # no ufunc dispatch for rich comparisons: refuse them here
        raise _unsupported("eq")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _compare
    __hash__ = None

    def __getitem__(self, key):
        raise _unsupported("index")

    def __setitem__(self, key, value):
        raise _unsupported("index_put_")

    def __getattr__(self, name):  # the rest of ndarray's methods: not on sparse storage
        if name.startswith("__"):
            raise AttributeError(name)
        raise _unsupported(name)

    def __iter__(self):
        raise _unsupported("unbind")

    def __len__(self):
        return self.shape[0]


class SparseUnsupported(NotImplementedError):
    """An operation sparse storage does not have; the dispatcher names the op in the message."""


def unsupported_message(name):
    return (f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend. ember's "
            "sparse COO tensors support addition, scaling, matrix products, sum, transpose, "
            "dtype casts and functions that keep 0 (abs, sin, sqrt...); call .to_dense() first.")


def _unsupported(name):
    return SparseUnsupported(unsupported_message(name))


def _is_sparse(x):
    return type(x) is SparseCOO


def _add(a, b):
    if _is_sparse(a) and _is_sparse(b):
        if a.shape != b.shape:
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                               f"size {list(a.shape)} while other has size {list(b.shape)}")
        dtype = np.result_type(a.values, b.values)
        out = SparseCOO(np.concatenate([a.indices, b.indices], 1),
                        np.concatenate([a.values, b.values]).astype(dtype, copy=False), a.shape)
        return out.coalesce() if a.coalesced and b.coalesced else out  # torch merges coalesced operands
    if _is_sparse(a):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    dense, sparse = a, b
    if np.shape(dense) != sparse.shape:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(np.shape(dense))} while other has size {list(sparse.shape)}")
    out = np.array(np.broadcast_to(dense, np.broadcast_shapes(np.shape(dense), sparse.shape)),
                   np.result_type(dense, sparse.values))
    np.add.at(out, tuple(sparse.indices), sparse.values)
    return out


def _scale(a, b, ufunc):
    sparse, number = (a, b) if _is_sparse(a) else (b, a)
    if ufunc is not np.multiply and (_is_sparse(b) or np.ndim(b) != 0):
        raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                           f"{list(np.shape(b))} for divisor)")
    if np.ndim(number) != 0:  # sparse * dense: the dense values at the sparse entries
        if _is_sparse(number) or np.shape(number) != sparse.shape:
            return NotImplemented
        number = np.asarray(number)[tuple(sparse.indices)]
    values = ufunc(sparse.values, number) if _is_sparse(a) else ufunc(number, sparse.values)
    return SparseCOO(sparse.indices, values, sparse.shape, sparse.coalesced)


def _multiply(a, b):
    """``sparse * sparse``: the entries of one (the uncoalesced one, if either is) times the
    other's summed value at the same index; entries the other lacks go (their product is 0)."""
    if not (_is_sparse(a) and _is_sparse(b)):
        return _scale(a, b, np.multiply)
    if a.shape != b.shape:
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with equal dimensionality, "
                           "number of sparse dimensions, and shape of sparse dimensions")
    entries, other = (b, a) if a.coalesced and not b.coalesced else (a, b)
    other = other.coalesce()
    keys, at = other._flat_indices(), entries._flat_indices()
    position = np.searchsorted(keys, at).clip(max=max(keys.size - 1, 0))
    hit = keys[position] == at if keys.size else np.zeros(at.shape, bool)
    return SparseCOO(entries.indices[:, hit], entries.values[hit] * other.values[position[hit]], entries.shape,
                     entries.coalesced)


def _matmul(a, b):
    if (_is_sparse(a) and _is_sparse(b)) or a.ndim != 2 or b.ndim not in (1, 2):
        return NotImplemented
    if _is_sparse(a):
        return np.asarray(a._csr() @ b, dtype=np.result_type(a.values, b))
    return np.asarray((b.T._csr() @ a.T).T, dtype=np.result_type(a, b.values))


def _negative(a):
    return SparseCOO(a.indices, -a.values, a.shape, a.coalesced)


def _sum(a, axis=None, dtype=None, keepdims=False, out=None):
    if keepdims or out is not None:
        raise _unsupported("sum")
    if axis is None:
        return np.asarray(a.values.sum(dtype=dtype))
    axes = {d % a.ndim for d in ((axis,) if isinstance(axis, int) else axis)}
    if len(axes) == a.ndim:
        return np.asarray(a.values.sum(dtype=dtype))
    keep = [d for d in range(a.ndim) if d not in axes]
    values = a.values.astype(dtype) if dtype is not None else a.values
    return SparseCOO(a.indices[keep], values, tuple(a.shape[d] for d in keep)).coalesce()


def _values_only(ufunc):
    """A unary ufunc with f(0) == 0, applied to the stored values only, once duplicates are
    summed (f(3) + f(5) is not f(8))."""
    def apply(a):
        a = a.coalesce()
        return SparseCOO(a.indices, ufunc(a.values), a.shape, coalesced=True)
    return apply


_ZERO_PRESERVING = (np.absolute, np.sign, np.sqrt, np.square, np.sin, np.sinh, np.tan, np.tanh, np.arcsin,
                    np.arcsinh, np.arctan, np.arctanh, np.expm1, np.log1p, np.floor, np.ceil, np.trunc,
                    np.rint, np.deg2rad, np.rad2deg, np.signbit, np.isnan, np.isinf, np.isposinf, np.isneginf)

_UFUNCS = {
    **{ufunc: _values_only(ufunc) for ufunc in _ZERO_PRESERVING if isinstance(ufunc, np.ufunc)},
    np.add: _add,
    np.subtract: lambda a, b: _add(a, _negative(b) if _is_sparse(b) else np.negative(b)),
    np.multiply: _multiply,
    np.true_divide: lambda a, b: _scale(a, b, np.true_divide),
    np.floor_divide: lambda a, b: _scale(a.coalesce() if _is_sparse(a) else a, b, np.floor_divide),
    np.matmul: _matmul,
    np.negative: _negative,
}
_FUNCTIONS = {
    np.sum: _sum,
    np.transpose: lambda a, axes=None: a.transpose(axes or ()),
    np.swapaxes: lambda a, x, y: a.swapaxes(x, y),
    np.may_share_memory: lambda a, b, max_work=None: False,
    np.shape: lambda a: a.shape,
    np.ndim: lambda a: a.ndim,
}
