"""Sorting and searching: ``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``,
``unique``, ``searchsorted``, ``bincount``, ``histc``: each public function, then its op entry."""
import builtins

import numpy as np

from .. import _dtype
from .._creation import zeros
from .._tensor import Tensor, _wrap_dim
from .args import values_indices
from .core import Op, apply
from .indexing import gather
from .join import narrow


def argsort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        return zeros((), dtype=_dtype.int64)
    return apply(Argsort, input, dim=_wrap_dim(dim, input.ndim), descending=descending)


class Argsort(Op):
    """Indices that sort ``x`` along ``dim`` (stable), ascending or descending."""
    differentiable = False
    promote = None

    @staticmethod
    def forward(x, dim=-1, descending=False):
        if descending:
            # Reverse a stable ascending sort of the reversed axis: ties keep their order,
            # and NaN (sorted last ascending) comes first, as in PyTorch.
            n = x.shape[dim]
            flipped = np.flip(x, axis=dim)
            idx = np.argsort(flipped, axis=dim, kind="stable")
            return np.flip(n - 1 - idx, axis=dim)
        return np.argsort(x, axis=dim, kind="stable")


def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim``; values carry the gradient."""
    if input.ndim == 0:
        return values_indices("sort", input.clone(), zeros((), dtype=_dtype.int64))
    idx = argsort(input, dim, descending)
    return values_indices("sort", gather(input, _wrap_dim(dim, input.ndim), idx), idx)


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    d = _wrap_dim(dim, input.ndim) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range")
    if input.ndim == 0:
        return values_indices("topk", input.clone(), zeros((), dtype=_dtype.int64))
    idx = narrow(argsort(input, d, descending=largest), d, 0, k).contiguous()
    return values_indices("topk", gather(input, d, idx), idx)


def kthvalue(input, k, dim=-1, keepdim=False):
    d = _wrap_dim(dim, input.ndim)
    idx = narrow(argsort(input, d), d, k - 1, 1).contiguous()
    values = gather(input, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values_indices("kthvalue", values, idx)


def median(input, dim=None, keepdim=False):
    """Lower median (PyTorch's rule for even counts); with ``dim``, ``(values, indices)``."""
    if dim is None:
        flat = input.reshape(-1)
        return kthvalue(flat, (flat.numel() + 1) // 2, 0).values
    n = input.shape[_wrap_dim(dim, input.ndim)]
    r = kthvalue(input, (n + 1) // 2, dim, keepdim)
    return values_indices("median", r[0], r[1])


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Sorted distinct elements (no gradient), optionally with inverse indices and counts."""
    res = np.unique(input._data, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if not isinstance(res, tuple):
        return Tensor._make(res)
    out = [Tensor._make(res[0])]
    rest = list(res[1:])
    if return_inverse:
        out.append(Tensor._make(rest.pop(0).reshape(input.shape if dim is None else -1).astype(np.int64)))
    if return_counts:
        out.append(Tensor._make(rest.pop(0).astype(np.int64)))
    return tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    flat = input._data.reshape(-1)
    if flat.size == 0:
        return Tensor._make(flat.copy())
    starts = np.concatenate([[True], flat[1:] != flat[:-1]])
    out = [Tensor._make(flat[starts])]
    if return_inverse:
        out.append(Tensor._make((np.cumsum(starts) - 1).reshape(input.shape).astype(np.int64)))
    if return_counts:
        bounds = np.flatnonzero(np.concatenate([starts, [True]]))
        out.append(Tensor._make(np.diff(bounds).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    w = None if weights is None else weights._data
    return Tensor._make(np.bincount(input._data, w, minlength))


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None):
    side = side or ("right" if right else "left")
    v = values._data if isinstance(values, Tensor) else values
    r = np.searchsorted(sorted_sequence._data, v, side=side)
    return Tensor._make(np.asarray(r, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input, bins=100, min=0, max=0):
    lo, hi = (min, max) if (min, max) != (0, 0) else (input._data.min(), input._data.max())
    h, _ = np.histogram(input._data, bins=bins, range=(lo, hi))
    return Tensor._make(h.astype(input._data.dtype))
