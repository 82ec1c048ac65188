"""``torch.sparse``: functions on sparse COO tensors (https://pytorch.org/docs/stable/sparse.html).

``mm`` and ``addmm`` multiply a sparse matrix by a dense one (a dense result) or two sparse
ones (a sparse result), ``sum`` reduces a sparse tensor (a 0-d dense tensor for a full
reduction, a sparse tensor of the remaining dims otherwise). Unlike ``torch.mm`` and
``Tensor.sum``, their gradient for a sparse operand is sparse: kept at its indices only.
"""
from .._ops.linalg import addmm as _addmm, mm as _mm
from .._ops.reduce import sum as _sum
from .._ops.sparse import sparse_gradient

__all__ = ["mm", "addmm", "sum"]


def mm(mat1, mat2, reduce=None):
    """``mat1 @ mat2`` for a sparse (n, m) ``mat1`` and a dense or sparse (m, p) ``mat2``
    (https://pytorch.org/docs/stable/generated/torch.sparse.mm.html). ``reduce`` (PyTorch's
    CSR-only ``"sum"/"mean"/...``) raises NotImplementedError."""
    if reduce is not None:
        raise NotImplementedError("torch.sparse.mm with reduce= needs a sparse CSR tensor, which ember does not have")
    return _mm(_sparse(mat1), _sparse(mat2))


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``
    (https://pytorch.org/docs/stable/generated/torch.sparse.addmm.html)."""
    return _addmm(mat, _sparse(mat1), _sparse(mat2), beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor over ``dim`` (an int or a tuple; all dims when None)
    (https://pytorch.org/docs/stable/generated/torch.sparse.sum.html): a 0-d dense tensor when
    every dim is reduced, else a sparse tensor of the rest."""
    return _sum(_sparse(input), dim, dtype=dtype)


def _sparse(t):
    return sparse_gradient(t) if t.is_sparse else t
