"""Sorting and searching: ``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``,
``unique``, ``searchsorted``, ``bincount``, ``histc``: each public function, then its op entry."""
import builtins
import math

import numpy as np

from .. import _dtype
from .._backend import namespace
from .._creation import zeros
from .._tensor import Tensor, _wrap_dim
from .args import ALL_DIMS, int_dim, numpy_names, result_type, stable_by_keyword, values_indices
from .core import Op, _type_name, apply, named
from .gather import gather
from .join import narrow
from .pointwise_binary import Where
from .refusals import refuse_unsigned
from .parser import parsed


@numpy_names
@stable_by_keyword
def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim`` (stable)
    (https://pytorch.org/docs/stable/generated/torch.argsort.html)."""
    if input.ndim == 0:
        _unordered_scalar(input, "Sort")
        return zeros((), dtype=_dtype.int64)
    return apply(Argsort, input, dim=_wrap_dim(dim, input.ndim), descending=descending)


class Argsort(Op):
    """Indices that sort ``x`` along ``dim`` (stable), ascending or descending."""
    complex_error = (RuntimeError, " Sort does not support complex dtypes on CPU")
    differentiable = False
    promote = None
    infer = classmethod(lambda op, x, dim=-1, descending=False: (tuple(x.shape), _dtype.int64))

    @staticmethod
    def forward(x, dim=-1, descending=False):
        xp = namespace(x)
        if descending:
            # Reverse a stable ascending sort of the reversed axis: ties keep their order,
            # and NaN (sorted last ascending) comes first, as in PyTorch.
            n = x.shape[dim]
            idx = xp.flip(x, axis=dim).argsort(axis=dim, kind="stable")
            return xp.flip(n - 1 - idx, axis=dim)
        return x.argsort(axis=dim, kind="stable")


@parsed
@numpy_names
@stable_by_keyword
def sort(input, dim=-1, descending=False, *, stable=False):
    """``(values, indices)`` sorted along ``dim`` (always stable; NaN sorts as the largest);
    the values carry the gradient (https://pytorch.org/docs/stable/generated/torch.sort.html).
    IndexError for ``dim`` out of range."""
    if input.ndim == 0:
        _unordered_scalar(input, "Sort")
        return values_indices("sort", input.clone(), zeros((), dtype=_dtype.int64))
    values, indices = apply(Sort, input, dim=_wrap_dim(dim, input.ndim), descending=descending)
    return values_indices("sort", values, indices)


class Sort(Op):
    """``sort`` as two results, the values along ``dim`` in order and their int64 indices
    (the order of :class:`Argsort`); the values' gradient goes back to where each came from."""
    complex_error = (RuntimeError, " Sort does not support complex dtypes on CPU")
    promote = None
    num_outputs = 2
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x, dim, descending=False):
        indices = Argsort.forward(x, dim, descending)
        return namespace(x).take_along_axis(x, indices, axis=dim), indices

    @classmethod
    def infer(cls, x, dim, descending=False):
        return (tuple(x.shape), x.dtype), (tuple(x.shape), _dtype.int64)

    @staticmethod
    def backward(ctx, g_values, g_indices):
        indices = ctx.output[1]
        return (g_values.new_zeros(ctx.shapes[0]).scatter_add(ctx.attrs["dim"], indices, g_values),)


def msort(input):
    """``sort(input, 0).values`` (https://pytorch.org/docs/stable/generated/torch.msort.html)."""
    return sort(input, 0).values


@numpy_names
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their int64 indices, as
    ``(values, indices)``, size ``k`` along ``dim``; in order (``sorted`` has no effect), NaN
    the largest, equal elements in index order (torch orders ties its own way). RuntimeError
    for ``k`` outside ``[0, size]`` or a complex input, IndexError for ``dim`` out of range
    (https://pytorch.org/docs/stable/generated/torch.topk.html)."""
    d = _wrap_dim(dim, input.ndim) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        _unordered_scalar(input, "topk")
        return values_indices("topk", input.clone(), zeros((), dtype=_dtype.int64))
    values, indices = apply(Topk, input, k=k, dim=d, largest=largest)
    return values_indices("topk", values, indices)


class Topk(Op):
    """``topk`` as two results, ``k`` along ``dim``: the first ``k`` of :class:`Sort`'s order
    (descending for ``largest``; ties in index order, NaN the largest), the values and their
    int64 indices. The gradient goes back to where each value came from."""
    complex_error = (RuntimeError, " topk does not support complex dtypes on CPU")
    promote = None
    num_outputs = 2
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x, k, dim, largest=True):
        xp = namespace(x)
        indices = xp.ascontiguousarray(xp.take(Argsort.forward(x, dim, largest), xp.arange(k), axis=dim))
        return xp.take_along_axis(x, indices, axis=dim), indices

    @classmethod
    def infer(cls, x, k, dim, largest=True):
        shape = tuple(x.shape[:dim]) + (k,) + tuple(x.shape[dim + 1:])
        return (shape, x.dtype), (shape, _dtype.int64)

    @staticmethod
    def backward(ctx, g_values, g_indices):
        return (g_values.new_zeros(ctx.shapes[0]).scatter_add(ctx.attrs["dim"], ctx.output[1], g_values),)


@numpy_names
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim`` and its index, as ``(values, indices)``
    (https://pytorch.org/docs/stable/generated/torch.kthvalue.html)."""
    _refuse_complex(input, "kthvalue_cpu")
    if input.ndim == 0:  # dim 0 or -1 of a 0-dim tensor: the tensor itself, index 0
        _wrap_dim(dim, 0)
        return kthvalue(input.unsqueeze(0), k, 0)
    d = _wrap_dim(dim, input.ndim)
    idx = narrow(argsort(input, d), d, k - 1, 1).contiguous()
    values = gather(input, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values_indices("kthvalue", named(values, "KthvalueBackward0"), idx)


@parsed
def median(input, dim=ALL_DIMS, keepdim=False):
    """Lower median (PyTorch's rule for even counts), nan where the slice holds a nan; with
    ``dim``, ``(values, indices)`` (https://pytorch.org/docs/stable/generated/torch.median.html)."""
    refuse_unsigned("median_cpu", input.dtype)
    if refuse_unordered_median(input, dim) is ALL_DIMS:
        return named(evenly_shared(input, lambda flat: median(flat, 0).values), "MedianBackward0")
    if input.ndim == 0:  # as kthvalue
        _wrap_dim(dim, 0)
        return median(input.unsqueeze(0), 0)
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    # The stable argsort puts nan last, so the first nan in sorted order is at n - (nan count).
    nans = input.isnan().sum(d, keepdim=True)
    position = (nans > 0) * (n - nans - (n - 1) // 2) + (n - 1) // 2
    idx = gather(argsort(input, d), d, position)
    values = gather(input, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values_indices("median", named(values, "MedianBackward1"), idx)


def evenly_shared(input, select):
    """``select(flat)``, an element of the flattened ``input`` picked without gradient, whose
    gradient is shared evenly by all the elements equal to it, as PyTorch's median and
    nanmedian over all elements do. NaN (still in the graph) for an empty input."""
    flat = input.reshape(-1)
    if flat.numel() == 0:  # torch's nan in the input's dtype (True for bool, the least int on x86)
        if not flat.dtype.is_inexact:
            with np.errstate(invalid="ignore"):
                return Tensor._make(np.array(np.nan).astype(flat.dtype.np))
        return flat.sum() + float("nan")  # (nan + 0j for complex, as torch)
    value = select(flat).detach()
    if not flat.dtype.is_floating_point:
        return value
    same = (flat == value) | (flat.isnan() & value.isnan())
    count, zero = same.sum(), flat.new_zeros(())
    # value + (the equal elements minus value) / count: exact, with the gradient shared; for
    # +-inf (inf - inf is nan) the mean of the equal elements, exact there.
    if_finite = value + apply(Where, same, flat - value.nan_to_num(0.0, 0.0, 0.0), zero).sum() / count
    return apply(Where, value.isinf(), apply(Where, same, flat, zero).sum() / count, if_finite)


def refuse_unordered_median(input, dim, name="median"):
    """``dim``; TypeError for None or a tuple; IndexError for an empty ``dim``, then
    NotImplementedError for complex and bool input that is not empty all over, as torch's
    median kernels check them."""
    full = int_dim(name, dim) is ALL_DIMS
    if not input.numel():
        if full:
            return dim
        d = _wrap_dim(dim, input.ndim)
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    _refuse_complex(input, "median_cpu" if full else "median_out", refuse_bool=True)
    return dim


def _unordered_scalar(input, name):
    """torch's error for a 0-dim complex input, which the kernels (and their ``complex_error``)
    never see."""
    if input.dtype.is_complex:
        raise RuntimeError(f" {name} does not support complex dtypes on CPU")


def _refuse_complex(input, kernel="unique", refuse_bool=False):
    # NumPy orders complex numbers lexicographically; torch has no order for them.
    if isinstance(input, Tensor) and (input.dtype.is_complex or refuse_bool and input.dtype is _dtype.bool):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Sorted distinct elements (no gradient), optionally with inverse indices and counts;
    NotImplementedError for complex input, as torch."""
    _refuse_complex(input)
    _refuse_unselected_zero_size(input, dim)
    res = namespace(input._data).unique(input._data, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if not isinstance(res, tuple):
        return Tensor._make(res)
    out = [Tensor._make(res[0])]
    rest = list(res[1:])
    if return_inverse:
        out.append(Tensor._make(rest.pop(0).reshape(input.shape if dim is None else -1).astype(np.int64)))
    if return_counts:
        out.append(Tensor._make(rest.pop(0).astype(np.int64)))
    return tuple(out)


def _refuse_unselected_zero_size(input, dim):
    """torch's RuntimeError for ``unique``/``unique_consecutive`` along ``dim`` of an empty
    tensor whose size 0 is in another dim."""
    if dim is not None and input.numel() == 0 and input.shape[_wrap_dim(dim, input.ndim)] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Elements (or, with ``dim``, slices along ``dim``) with consecutive repeats collapsed,
    optionally with int64 inverse indices and counts; no gradient
    (https://pytorch.org/docs/stable/generated/torch.unique_consecutive.html)."""
    _refuse_complex(input)
    _refuse_unselected_zero_size(input, dim)
    xp = namespace(input._data)
    data = input._data.reshape(-1) if dim is None else xp.moveaxis(input._data, _wrap_dim(dim, input.ndim), 0)
    flat = data.reshape(data.shape[0], math.prod(data.shape[1:]))
    starts = xp.concatenate([xp.ones(1, bool), (flat[1:] != flat[:-1]).any(axis=1)])[:len(flat)]
    kept = data[starts]
    out = [Tensor._make(kept.copy() if dim is None else xp.moveaxis(kept, 0, _wrap_dim(dim, input.ndim)))]
    if return_inverse:
        inverse = (starts.cumsum() - 1).astype(np.int64)
        out.append(Tensor._make(inverse.reshape(input.shape) if dim is None else inverse))
    if return_counts:
        bounds = xp.flatnonzero(xp.concatenate([starts, xp.ones(1, bool)]))
        out.append(Tensor._make(xp.diff(bounds).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    """Counts (or ``weights`` sums) of each value of a 1-d non-negative int tensor
    (https://pytorch.org/docs/stable/generated/torch.bincount.html): int64, float32 for
    float32 weights, else float64; an empty ``input`` gives int64 zeros whatever the weights.
    NotImplementedError for a float or bool input; RuntimeError, in torch's words, for
    another rank, a negative value, a negative ``minlength``, weights of another length."""
    refuse_unsigned("bincount_cpu", input.dtype)
    if input.dtype.is_inexact or input.dtype is _dtype.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_type_name(input.dtype)}'")
    if input.ndim != 1 or (input.numel() and int(input._data.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and tuple(weights.shape) != tuple(input.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if input.numel() == 0:
        return zeros(minlength, dtype=_dtype.int64)
    w = None if weights is None else weights._data
    counts = namespace(input._data).bincount(input._data, w, minlength)
    # PyTorch sums float32 weights in float32; every other weight dtype gives float64.
    return Tensor._make(counts.astype(np.float32) if w is not None and w.dtype == np.float32 else counts)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None):
    """Indices where ``values`` would be inserted into ``sorted_sequence`` to keep it sorted
    (int64, or int32 with ``out_int32``)
    (https://pytorch.org/docs/stable/generated/torch.searchsorted.html)."""
    _refuse_complex(sorted_sequence, "searchsorted_out_cpu", refuse_bool=True)
    _refuse_complex(values, "searchsorted_out_cpu")
    side = side or ("right" if right else "left")
    v = values._data if isinstance(values, Tensor) else values
    xp = namespace(sorted_sequence._data)
    r = xp.searchsorted(sorted_sequence._data, v, side=side)
    return Tensor._make(xp.asarray(r, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """``searchsorted(boundaries, input)``: the bucket of each element
    (https://pytorch.org/docs/stable/generated/torch.bucketize.html)."""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input, bins=100, min=0, max=0):
    """Histogram of ``input`` in ``bins`` equal bins over [min, max] (the data's range when
    both are 0), in ``input``'s dtype
    (https://pytorch.org/docs/stable/generated/torch.histc.html). NotImplementedError for
    integer and bool input; RuntimeError, in torch's words, for ``bins`` < 1 and a range
    that is not finite (an inf or nan in the data when the range is the data's)."""
    _refuse_complex(input, "aminmax_cpu")
    if not input.dtype.is_inexact:
        kernel = "linspace_cpu" if input.dtype is _dtype.bool else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    x = input._data.reshape(-1)
    if (min, max) == (0, 0) and x.size:
        min, max = x.min(), x.max()
    if not (math.isfinite(min) and math.isfinite(max)):
        raise RuntimeError(f"torch.histc: range of [{float(min):g}, {float(max):g}] is not finite")
    if min > max:
        raise RuntimeError(f"torch.histc: max must be larger than min, got min={min}, max={max}")
    if min == max:
        min, max = min - 1, max + 1
    # PyTorch's bin of x is floor((x - min) * bins / (max - min)) in the input's dtype (the
    # last edge joins the last bin); NumPy divides by the bin width instead and can disagree
    # by one at an edge.
    x = x[(x >= min) & (x <= max)]
    t = x.dtype.type
    xp = namespace(x)
    index = xp.minimum(((x - t(min)) * t(bins) / (t(max) - t(min))).astype(np.int64), bins - 1)
    return Tensor._make(xp.bincount(index, minlength=bins).astype(input._data.dtype))


histogram_result = result_type("histogram", ("hist", "bin_edges"))


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """The histogram of the floating tensor ``input`` in ``bins`` equal bins over ``range``
    (the data's extent by default) or between the edges of the 1-d tensor ``bins``:
    ``(hist, bin_edges)``, both in ``input``'s dtype; ``weight`` weighs each element,
    ``density`` normalises to a probability density
    (https://pytorch.org/docs/stable/generated/torch.histogram.html). Not differentiable."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, "
                           f"but got input {input.dtype.name} and bins float")
    x = input._data.reshape(-1)
    edges = bins._data if isinstance(bins, Tensor) else bins
    w = None if weight is None else weight._data.reshape(-1)
    hist, bin_edges = namespace(x).histogram(x, edges, range=range, weights=w, density=density)
    dtype = input._data.dtype
    return histogram_result(Tensor._make(hist.astype(dtype)), Tensor._make(bin_edges.astype(dtype)))


histogramdd_result = result_type("histogramdd", ("hist", "bin_edges"))


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The N-dimensional histogram of the points ``input`` (..., N) (float): ``bins`` an int,
    N ints (equal bins over ``range``, a flat list ``[lo0, hi0, lo1, hi1, ...]``, or the data's
    extent) or N 1-d tensors of edges; ``weight`` (...) weighs each point, ``density`` normalises.
    Returns ``(hist, bin_edges)``: hist of shape (bins0, ..., binsN-1) and a tuple of N edge
    tensors, in ``input``'s dtype (NumPy's ``histogramdd``;
    https://pytorch.org/docs/stable/generated/torch.histogramdd.html). Not differentiable.
    NotImplementedError for a dtype other than float32/float64, RuntimeError for fewer than 2 dims."""
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dtype.SCALAR_TYPE_NAMES[input.dtype.name]}'")
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    n = input.shape[-1]
    points = input._data.reshape(-1, n)
    _check_histogramdd(input, points, bins, range, weight)
    edges = [b._data if isinstance(b, Tensor) else b for b in bins] if isinstance(bins, (list, tuple)) else bins
    pairs = None if range is None else [tuple(range[2 * i:2 * i + 2]) for i in builtins.range(n)]
    w = None if weight is None else weight._data.reshape(-1)
    hist, bin_edges = namespace(points).histogramdd(points, edges, range=pairs, weights=w, density=density)
    dtype = input._data.dtype
    return histogramdd_result(Tensor._make(hist.astype(dtype)), tuple(Tensor._make(e.astype(dtype)) for e in bin_edges))


def _check_histogramdd(input, points, bins, range, weight):
    """torch's RuntimeErrors for histogramdd's bins, range and weight (NumPy raises ValueErrors)."""
    n, name, where = points.shape[1], "torch.histogramdd", builtins.range(points.shape[1])
    lower = _type_name(input.dtype).lower()
    if isinstance(bins, (list, tuple)) and len(bins) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    for d, b in zip(where, bins if isinstance(bins, (list, tuple)) else [bins] * n):
        if isinstance(b, Tensor) and b.dtype != input.dtype:
            raise RuntimeError(f"{name}: input tensor and bins tensors should have the same dtype, but got input "
                               f"with dtype {lower} and bins for dimension {d} with dtype {_type_name(b.dtype).lower()}")
        if not isinstance(b, Tensor) and b < 0 or isinstance(b, Tensor) and b.numel() == 0:
            raise RuntimeError(f"{name}: bins tensor should have at least 1 element, but got 0 elements in the "
                               f"bins tensor for dimension {d}")
        if not isinstance(b, Tensor) and b == 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got 0 for dimension {d}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"{name}: if weight tensor is provided, input tensor and weight tensor should have the "
                           f"same dtype, but got input({lower}), and weight({_type_name(weight.dtype).lower()})")
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"{name}: if weight tensor is provided it should have the same shape as the input tensor "
                           f"excluding its innermost dimension, but got input with shape {list(input.shape)} and "
                           f"weight with shape {list(weight.shape)}")
    if range is not None and len(range) != 2 * n:
        raise RuntimeError(f"{name}: for a {n}-dimensional histogram range should have {2 * n} elements, "
                           f"but got {len(range)}")
    if any(isinstance(b, Tensor) for b in (bins if isinstance(bins, (list, tuple)) else [])):
        return
    for d in where:
        lo, hi = (range[2 * d], range[2 * d + 1]) if range is not None else (
            (points[:, d].min(), points[:, d].max()) if len(points) else (0, 0))
        if lo > hi:
            raise RuntimeError(f"{name}: min should not exceed max, but got min {lo:g} max {hi:g} for dimension {d}")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"{name}: dimension {d}'s range [{lo:g}, {hi:g}] is not finite")
