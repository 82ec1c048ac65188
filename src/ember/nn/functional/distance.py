"""Distances as functions: ``cosine_similarity``, ``pairwise_distance`` and ``pdist``
(https://pytorch.org/docs/stable/nn.functional.html#distance-functions)."""
from ... import _dtype
from ..._creation import ones
from ..._ops.shape import broadcast_tensors
from ..._ops.core import _type_name, named
from ...autograd.grad_mode import no_grad

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``, after broadcasting
    ``x1`` and ``x2`` (https://pytorch.org/docs/stable/generated/torch.nn.functional.cosine_similarity.html).
    Each input is divided by its norm first, which keeps the result within [-1, 1]."""
    if not x1.dtype.is_floating_point and not x2.dtype.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_type_name(_dtype.result_type(x1, x2))}")
    x1, x2 = broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    # As in PyTorch, the clamp changes the value only: the norm's gradient is the unclamped one.
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension, after broadcasting. RuntimeError naming
    the sizes when ``x1`` and ``x2`` do not broadcast (from the subtraction).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.pairwise_distance.html"""
    dim = max(x1.ndim, x2.ndim) - 1
    return named((x1 - x2 + eps).norm(p, max(dim, 0) if dim >= 0 else None, keepdim), "NormBackward1")


def pdist(input, p=2):
    """p-norm distances between the rows of ``input`` (N, M): the (N (N - 1) / 2) entries above
    the diagonal of the distance matrix, row by row.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.pdist.html"""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    pairs = ones(input.shape[0], input.shape[0]).triu(1).nonzero()  # (i, j), i < j, row by row
    return named((input.index_select(0, pairs[:, 0]) - input.index_select(0, pairs[:, 1])).norm(p, 1),
                 "PdistBackward0")

