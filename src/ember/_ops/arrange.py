"""Rearranging and assembling tensors: ``rot90``, ``atleast_1d/2d/3d``, ``dstack``,
``column_stack``, ``block_diag``, ``kron``, ``combinations`` and the index grids
``triu_indices``/``tril_indices``, and ``vander``.

All are written in ember's view, join and product ops, so their gradients come from those.
The PyTorch page of each is ``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
import itertools

import numpy as np

from .. import _dtype
from .._creation import zeros
from .._tensor import Tensor, _wrap_dim
from .args import tensor_args, with_out
from .indexing import index_select
from .join import cat, flip, non_empty, stack
from .parser import parsed
from .reduce import cumprod
from .shape import reshape, transpose


def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by ``k`` quarter turns in the plane ``dims``, from the first axis
    towards the second. RuntimeError unless ``dims`` holds two different dims of a tensor
    with at least 2 dims."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (_wrap_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(input, [d1]), d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return flip(transpose(input, d0, d1), [d1])
    return input.clone()


def _at_least(ndim, shape_of):
    def at_least(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tuple(tensors[0])
        out = tuple(t if t.ndim >= ndim else reshape(t, shape_of(t)) for t in tensors)
        return out[0] if len(out) == 1 else out
    return at_least


atleast_1d = _at_least(1, lambda t: (1,))
atleast_1d.__doc__ = """Each tensor as a view with at least 1 dim (a 0-d one becomes (1,)); one tensor
in, one out, else a tuple."""
atleast_2d = _at_least(2, lambda t: (1,) * (2 - t.ndim) + tuple(t.shape))
atleast_2d.__doc__ = """Each tensor with at least 2 dims: (n,) becomes (1, n), a 0-d one (1, 1)."""
atleast_3d = _at_least(3, lambda t: (1, t.shape[0], 1) if t.ndim == 1 else tuple(t.shape) + (1,)
                       if t.ndim == 2 else (1, 1, 1))
atleast_3d.__doc__ = """Each tensor with at least 3 dims: (n,) becomes (1, n, 1), (m, n) becomes
(m, n, 1), a 0-d one (1, 1, 1)."""


@parsed
def dstack(tensors, *, out=None):
    """The tensors joined along their third dim after :func:`atleast_3d` (dtypes promote)."""
    return cat([atleast_3d(t) for t in non_empty("dstack", tensors)], 2, out=out)


@parsed
def column_stack(tensors, *, out=None):
    """The tensors joined as columns: 0-d and 1-d tensors of ``n`` elements become (n, 1)
    columns, the others are joined along dim 1 as they are."""
    return cat([reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in non_empty("column_stack", tensors)], 1,
               out=out)


def block_diag(*tensors):
    """A block-diagonal matrix of the tensors (0-d ones are 1x1 blocks, 1-d ones single rows),
    zero elsewhere, in their promoted dtype. RuntimeError for a tensor of more than 2 dims."""
    blocks = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} "
                               f"has {t.ndim} dimensions")
        blocks.append(reshape(t, (1, -1) if t.ndim < 2 else tuple(t.shape)))
    dtype = _dtype.result_type(*tensors) if tensors else _dtype.get_default_dtype()
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.shape[1]
        rows.append(cat([zeros((b.shape[0], left), dtype=dtype), b.to(dtype),
                         zeros((b.shape[0], right), dtype=dtype)], 1))
        left += b.shape[1]
    return cat(rows, 0) if rows else zeros((1, 0), dtype=dtype)


def kron(input, other, *, out=None):
    """The Kronecker product: for inputs of shapes (a0, a1, ...) and (b0, b1, ...) (the shorter
    padded with leading 1s), shape (a0*b0, a1*b1, ...) with block ``(i, j, ...)`` equal to
    ``input[i, j, ...] * other``. TypeError for an operand no tensor (a NumPy array)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        tensor_args("kron", input, other)
    n = max(input.ndim, other.ndim)
    a = reshape(input, (1,) * (n - input.ndim) + tuple(input.shape))
    b = reshape(other, (1,) * (n - other.ndim) + tuple(other.shape))
    # Interleave the axes: a's sizes at even positions, b's at odd ones, then merge each pair.
    a = reshape(a, tuple(s for size in a.shape for s in (size, 1)))
    b = reshape(b, tuple(s for size in b.shape for s in (1, size)))
    return with_out(reshape(a * b, tuple(x * y for x, y in zip(a.shape[::2], b.shape[1::2]))), out)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements as the rows of an (n, r) tensor,
    in ``itertools.combinations`` order (``combinations_with_replacement`` with
    ``with_replacement``). RuntimeError for input that is not 1-D."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(choose(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return stack([index_select(input, 0, input.new_tensor(rows[:, j], dtype=_dtype.int64)) for j in range(r)], 1)


def triu_indices(row, col, offset=0, *, dtype=_dtype.int64, device=None, layout=None):
    """The (2, N) row and column indices of the upper triangle of a ``row`` x ``col`` matrix
    (on and above diagonal ``offset``), in row-major order."""
    return _indices(np.triu_indices(row, offset, col), dtype)


def tril_indices(row, col, offset=0, *, dtype=_dtype.int64, device=None, layout=None):
    """The (2, N) row and column indices of the lower triangle of a ``row`` x ``col`` matrix
    (on and below diagonal ``offset``), in row-major order."""
    return _indices(np.tril_indices(row, offset, col), dtype)


def _indices(pair, dtype):  # (made from nothing: on the CPU, with NumPy, as ember.zeros is)
    return Tensor._make(np.stack(pair).astype(dtype.np).reshape(2, -1))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-d ``x`` (n,): (n, N) columns ``x**(N-1), ..., x**0``
    (``x**0`` first when ``increasing``); ``N`` defaults to n. Products of ``x`` (a cumulative
    product), so differentiable; bool and integer inputs give int64. RuntimeError for ``x`` not
    1-d or a negative ``N`` (NumPy's ``vander``)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(_dtype.int64)
    columns = cat([x.new_ones((x.shape[0], min(N, 1))), x[:, None].expand(x.shape[0], max(N - 1, 0))], 1)
    powers = cumprod(columns, 1) if N > 1 else columns
    return powers if increasing else flip(powers, (1,))
