"""Lookup tables as functions: ``embedding`` and ``embedding_bag``
(https://pytorch.org/docs/stable/nn.functional.html#sparse-functions).

Both gather rows of ``weight`` with the :class:`~ember._ops.embedding.EmbeddingForward` op, whose
gradient sums into each looked-up row with one sparse product. Gradients are dense:
``sparse=True`` is accepted and gives the same (dense) gradient. The bags' bookkeeping runs
in the ids' namespace; ``embedding_bag``'s sum and mean reduce with SciPy's CSR product,
NumPy's CPU path (as the lookup's gradient does for NumPy arrays).
"""
import numpy as np

from ... import _dtype
from ..._backend import namespace
from ..._ops.positions import one_hot
from ..._ops.core import apply, named
from ..._ops.embedding import EmbeddingForward, SparseMatmul, ids_in_range, rows_matrix
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["embedding", "embedding_bag", "one_hot"]

_INDEX_DTYPES = ("int64", "int32")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` at the ids in ``input``
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.embedding.html).

    Shapes: input (*) of int64 or int32 ids, weight (num_embeddings, D); output (*, D).
    The gradient of a weight row is the sum over the positions that name it; ``padding_idx``
    (negative values count from the end) gets none; ``scale_grad_by_freq`` divides each
    row's gradient by how often its id occurs in ``input``. With ``max_norm``, each looked-up
    row whose ``norm_type``-norm exceeds it is first rescaled in place (outside autograd) to
    norm ``max_norm``, as in PyTorch.

    Raises TypeError when ``input`` is not a Tensor; RuntimeError for ids of another dtype or
    a weight that is not 2-D; IndexError ("index out of range in self", then the first
    offending id, its position and num_embeddings) for ids outside [0, num_embeddings);
    AssertionError for ``padding_idx`` outside the table.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"embedding(): argument 'indices' (position 2) must be Tensor, not "
                        f"{type(input).__name__}")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_ids(input, "embedding")
    padding_idx = _padding_row(padding_idx, weight.shape[0], "Padding_idx")
    if max_norm is not None:  # (the lookup checks the ids too: a compiled graph's replay runs only it)
        _renorm_rows(weight, ids_in_range(input._data, weight.shape[0]), max_norm, norm_type)
    # The backward reads the ids, as saved (an in-place write to them raises, as in PyTorch).
    return apply(EmbeddingForward, weight, input, padding_idx=padding_idx,
                 scale_grad_by_freq=bool(scale_grad_by_freq))


def _check_ids(input, name):
    if input.dtype.name not in _INDEX_DTYPES:
        kind = "CPUBoolType" if input.dtype is _dtype.bool else f"torch.{_TENSOR_NAMES[input.dtype.name]}"
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar "
                           f"types: Long, Int; but got {kind} instead (while checking arguments for {name})")


_TENSOR_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                 "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor"}


def _padding_row(padding_idx, num_embeddings, name):
    """``padding_idx`` as a row number (negative values wrap) or None; AssertionError outside."""
    if padding_idx is None:
        return None
    if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
        raise AssertionError(f"{name} must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def _renorm_rows(weight, ids, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: rows named in ``ids`` with a norm above ``max_norm``
    are scaled in place to ``max_norm / (norm + 1e-7)`` times themselves."""
    rows = Tensor._make(namespace(ids).unique(ids))
    with no_grad():
        chosen = weight[rows]
        norms = chosen.norm(p=norm_type, dim=1, keepdim=True)
        scale = (max_norm / (norms + 1e-7)).where(norms > max_norm, norms.new_ones(()))
        weight[rows] = chosen * scale


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embeddings
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.embedding_bag.html):
    the bags' rows are looked up and then reduced by one sparse product (sum, mean) or a
    gather of each feature's maximum.

    Shapes: input (B, n) of fixed-size bags, or 1-D ids with ``offsets`` (B) giving where
    each bag starts (B + 1 with ``include_last_offset``, the last one the end); weight
    (num_embeddings, D); per_sample_weights the input's shape, ``mode="sum"`` only; output
    (B, D). ``padding_idx`` ids are left out of their bags (and of a mean's count); an empty
    bag gives zeros. ``max`` passes each feature's gradient to the row that gave its
    maximum (the first one on ties).

    ``scale_grad_by_freq`` divides each row's gradient by its id's count, as documented
    (torch 2.13's CPU kernel divides by another id's count, pytorch/pytorch#190063).

    Raises ValueError for inconsistent shapes, modes and options; NotImplementedError for
    ``per_sample_weights`` outside ``mode="sum"``; RuntimeError, with PyTorch's messages,
    for ids outside the table (naming the first), offsets that do not start at 0, pass the
    input's end or decrease, a ``padding_idx`` outside the table, non-integer ids or offsets,
    a non-floating weight, or per-sample weights of another dtype.
    """
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
                         f"then it must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a "
                             f"mini-batch of fixed length sequences. However, found offsets of type "
                             f"{type(offsets)}")
        if input.shape[1] == 0:
            raise RuntimeError("step must be nonzero")
        starts = namespace(input._data).arange(0, input.numel(), input.shape[1])
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        _check_ids(offsets, "embedding_bag")
        starts = offsets._data
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    _check_ids(input, "embedding_bag")
    ids = input._data
    num_embeddings = weight.shape[0]
    bad = (ids < 0) | (ids >= num_embeddings)
    if bad.any():
        i = int(bad.reshape(-1).argmax())
        raise RuntimeError(f"Index {i} of input takes value {ids[i]} which is not in the valid range "
                           f"[0, {num_embeddings})")
    if max_norm is not None:
        _renorm_rows(weight, ids, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is "
                                  f"only supported for mode='sum' (got mode='{mode}'). Please open a feature "
                                  f"request on GitHub.")
    _check_bag_args(weight, per_sample_weights, starts, ids.size)
    if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num_embeddings} through "
                           f"{num_embeddings - 1}, but got {padding_idx}")
    padding_idx = _padding_row(padding_idx, num_embeddings, "padding_idx")
    bag = _bag_of_each_id(starts, ids.size, include_last_offset)
    num_bags = len(starts) - 1 if include_last_offset else len(starts)
    keep = bag >= 0 if padding_idx is None else (bag >= 0) & (ids != padding_idx)
    rows = apply(EmbeddingForward, weight, Tensor._make(ids[keep]), padding_idx=None,
                 scale_grad_by_freq=bool(scale_grad_by_freq))
    bag = bag[keep]
    if mode == "max":
        return named(_bag_max(rows, bag, num_bags), "EmbeddingBagBackward0")
    coefficients = None
    if mode == "mean":
        counts = namespace(bag).bincount(bag, minlength=num_bags)
        coefficients = 1.0 / counts[bag]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[Tensor._make(namespace(keep).flatnonzero(keep))].unsqueeze(1)
    return named(apply(SparseMatmul, rows, matrix=rows_matrix(bag, num_bags, coefficients)), "EmbeddingBagBackward0")


def _check_bag_args(weight, per_sample_weights, starts, n):
    if not weight.dtype.is_floating_point:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                           f"Half, BFloat16, Float, Double; but got torch.{_TENSOR_NAMES[weight.dtype.name]} "
                           f"instead (while checking arguments for embedding_bag)")
    if per_sample_weights is not None and per_sample_weights.dtype is not weight.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                           f"#1 'per_sample_weights'; but type torch.{_TENSOR_NAMES[weight.dtype.name]} does not "
                           f"equal torch.{_TENSOR_NAMES[per_sample_weights.dtype.name]} (while checking arguments "
                           f"for embedding_bag)")
    if len(starts) and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {starts[0]}")
    if len(starts) and starts[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{starts[-1]}")
    if (starts[1:] < starts[:-1]).any():
        raise RuntimeError("offsets must be non-decreasing")


def _bag_of_each_id(starts, n, include_last_offset):
    """The bag number of each of the ``n`` ids, given each bag's start offset. Ids past the
    last offset, with ``include_last_offset``, belong to no bag and get -1."""
    xp = namespace(starts)
    starts = starts.astype(np.int64, copy=False)
    bag = xp.searchsorted(starts, xp.arange(n), side="right") - 1
    if include_last_offset and len(starts):
        bag[xp.arange(n) >= starts[-1]] = -1
    return bag


def _bag_max(rows, bag, num_bags):
    """Per bag and feature, the maximum over the bag's rows (zeros for an empty bag), taken
    with ``gather`` so that the gradient goes to the first row holding it."""
    n, dim = rows.shape
    if n == 0:
        return rows.new_zeros((num_bags, dim))
    values = rows._data
    xp = namespace(values)
    top = xp.full((num_bags, dim), -np.inf, values.dtype)
    xp.maximum.at(top, bag, values)
    position = xp.where(values == top[bag], xp.arange(n)[:, None], n)
    first = xp.full((num_bags, dim), n)
    xp.minimum.at(first, bag, position)
    empty = first == n
    first[empty] = 0
    out = rows.gather(0, Tensor._make(first))
    return out.masked_fill(Tensor._make(empty), 0) if empty.any() else out
