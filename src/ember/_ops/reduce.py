"""Reductions and scans: each public function, then its op entry.

The public functions turn ``dim`` (an int, a sequence, or None for every dimension) into a
sorted tuple of non-negative axes, or None for all of them, before the kernels see it.
"""
import numpy as np

from .. import _dtype
from .._backend import namespace, ndarray
from .._creation import zeros
from .._memory_format import contiguous_format
from .._result_layout import row_major
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import STATE
from .args import (ALL_DIMS, dims_arg, dtype_arg, int_dim, invalid_combination, numpy_names,
                   values_indices, with_out)
from .core import Op, _type_name, apply, named, result_dtype
from .refusals import refuse_unsigned
from .join import Cat
from .shape import expand_back
from .pointwise_binary import Where, maximum, minimum
from .wide_scan import wide_scan
from .parser import parsed


def _c_order(result):
    """A reduction's or scan's array in row-major order: torch allocates their results
    contiguous whatever the input's strides, where NumPy keeps the input's memory order."""
    return row_major(result) if isinstance(result, ndarray) else result


def reduction_rule(op, x, dim=None, keepdim=False, **attrs):
    """The shape rule of reductions and scans: the axes in ``dim`` (one axis, a tuple, or None
    for all) are removed, or kept with size 1 under ``keepdim``; a scan keeps the shape. Index
    results (``argmax``) are int64, and so are sums and products of integers and bools."""
    shape = x._data.shape
    if op is Cumsum or op is Cumprod:
        out_shape = shape
    else:
        axes = range(len(shape)) if dim is None else (dim,) if isinstance(dim, int) else dim
        out_shape = tuple(1 if i in axes else s for i, s in enumerate(shape) if keepdim or i not in axes)
    if op is Argmax or op is Argmin or (op in (Sum, Prod, Cumsum, Cumprod) and x.dtype.np.kind in "biu"):
        return out_shape, _dtype.int64
    return out_shape, result_dtype(op, (x,))


def _asked(result, dtype):
    """A sum or product of integers (int64 by default) in the ``dtype=`` asked for; the same
    numbers as accumulating in that dtype, since integer sums and products wrap modulo 2^bits."""
    return result if dtype is None or result.dtype == dtype else result.to(dtype)


@parsed
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over ``dim`` (int, tuple or None for all); integer and bool inputs sum to int64."""
    if dtype is not None:
        refuse_unsigned("sum_cpu", dtype)
        input = dtype_arg(input, dtype)
    result = apply(Sum, input, dim=None if dim is None else dims_arg(dim, input.ndim), keepdim=keepdim)
    if dtype is not None:
        result = _asked(result, dtype)
    return result if out is None else with_out(result, out)


@numpy_names
@parsed
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``sum`` treating NaN as zero
    (https://pytorch.org/docs/stable/generated/torch.nansum.html)."""
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if not input.is_floating_point():
        return sum(input, dim, keepdim, dtype=dtype)
    if dtype is not None and not dtype.is_floating_point:  # torch zeroes NaN before the cast
        return sum(input.masked_fill(input.isnan(), 0), dim, keepdim, dtype=dtype)
    input = dtype_arg(input, dtype)
    return apply(Nansum, input, dim=dims_arg(dim, input.ndim), keepdim=keepdim)


class Nansum(Op):
    """A sum of the elements that are not NaN. Its gradient is torch's g * ~isnan(x): zero at
    a NaN element unless g is itself infinite or NaN (an all-NaN slice of ``nanmean``, 0 / 0),
    where it is NaN."""
    infer = classmethod(reduction_rule)
    promote = None
    save_inputs = True

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        xp = namespace(x)
        return _c_order(xp.add.reduce(xp.where(xp.isnan(x), x.dtype.type(0), x), axis=dim, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        a = ctx.attrs
        return (expand_back(g, x.shape, a.get("dim"), a.get("keepdim", False)) * ~x.detach().isnan(),)


class Sum(Op):
    infer = classmethod(reduction_rule)
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, dim=None, keepdim=False, dtype=None):
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64
        return _c_order(namespace(x).add.reduce(x, axis=dim, keepdims=keepdim, dtype=dtype))

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        g = expand_back(g, ctx.shapes[0], a.get("dim"), a.get("keepdim", False))
        # torch's sum passes the expanded view back, its mean a new tensor (the view divided)
        return (g.contiguous() if a.get("of_mean") else g,)


@parsed
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean over ``dim``; RuntimeError for integer inputs without a float ``dtype``."""
    input = dtype_arg(input, dtype)
    if not input.dtype.is_inexact:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_type_name(input.dtype)}")
    dims = dims_arg(dim, input.ndim)
    n = _count(input.shape, dims)
    half = input.dtype in (_dtype.float16, _dtype.bfloat16)  # (torch's opmath: sum and quotient in float32)
    total = apply(Sum, input.float() if half else input, dim=dims, keepdim=keepdim)
    if total._grad_fn is not None:  # (the mark Sum's backward reads; not an argument of its kernel)
        total._grad_fn.attrs = {**total._grad_fn.attrs, "of_mean": True}
    result = (total / n if n else total * float("nan")).to(input.dtype)  # (the same tensor but for half)
    if not result._data.size and row_major(result._data).strides != result._data.strides:
        # torch's mean allocates its result row-major (a clone: a compiled capture follows it)
        result = result.clone(memory_format=contiguous_format)
    return with_out(named(result, "MeanBackward0" if dim is None else "MeanBackward1"), out)


def _count(shape, dims):
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return n


@numpy_names
@parsed
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """``mean`` over the elements that are not NaN; RuntimeError for integer and bool input
    (https://pytorch.org/docs/stable/generated/torch.nanmean.html)."""
    if not input.dtype.is_inexact:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_type_name(input.dtype)}")
    keep = ~input.isnan()
    return nansum(input, dim, keepdim, dtype=dtype) / keep.sum(dim, keepdim)


@parsed
def prod(input, dim=ALL_DIMS, keepdim=False, *, dtype=None, out=None):
    """Product over one ``dim`` (or all elements, when it is left out); integer inputs give
    int64; ``out=`` with a ``dim`` only, as PyTorch's. TypeError for ``dim=None`` or a tuple."""
    if out is not None and dim is ALL_DIMS:  # (the all-elements signature has no out=)
        raise TypeError(invalid_combination("prod", (input,), _PROD_SIGNATURES, out=out))
    dim = None if int_dim("prod", dim, _PROD_SIGNATURES) is ALL_DIMS else dim
    input = dtype_arg(input, dtype)
    result = _asked(apply(Prod, input, dim=dims_arg(dim, input.ndim), keepdim=keepdim), dtype)
    return result if out is None else with_out(result, out)


_PROD_SIGNATURES = (" * (Tensor input, *, torch.dtype dtype = None)\n"
                    " * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)\n")


class Prod(Op):
    """Product over ``dim`` (one axis or all). Its derivative is PyTorch's, nan and inf as its
    formula gives them: when ``x`` holds no zero, g * prod / x (beside an infinite factor the
    others' derivative is nan: inf / inf); when it does, the product of the other elements as
    exclusive cumulative products from both sides, exact at zeros (over all elements: zeros
    when there are several and no graph is being built). Both are taken and one selected,
    so that a compiled backward needs no value of ``x``; under ``create_graph=True`` (which a
    compiled backward refuses) the values pick one as torch's do, so that the branch not
    taken passes no nan back and a gradient free of ``x`` (``g`` itself, over a dim of length
    1 beside a zero) does not require grad."""
    infer = classmethod(reduction_rule)
    promote = None

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        dtype = np.int64 if x.dtype.kind in "biu" else None
        return _c_order(namespace(x).multiply.reduce(x, axis=dim, keepdims=keepdim, dtype=dtype))

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        if x.ndim == 0:  # the product of no other elements: g itself, free of x (as torch's)
            return (g,)
        dim, keepdim = ctx.attrs.get("dim"), ctx.attrs.get("keepdim", False)
        g = expand_back(g, x.shape, dim, keepdim)
        is_zero = x.detach() == 0
        if STATE.enabled:
            return (_prod_safe(x, g, dim) if is_zero.any() else g * (apply(Prod, x, dim=dim, keepdim=True) / x),)
        # (divided by 1 at zeros: the branch not taken must pass a finite zero back)
        easy = g * (apply(Prod, x, dim=dim, keepdim=True) / x.masked_fill(is_zero, 1))
        safe = _prod_safe(x, g, dim)
        if not dim:
            safe = safe.masked_fill(is_zero.sum() > 1, 0)
        return (easy.masked_fill(is_zero.any(), 0) + safe.masked_fill(~is_zero.any(), 0),)


def _prod_safe(x, g, dim):
    """torch's gradient of a product whose input holds a zero: g times the others' product."""
    others = _prod_of_others(x.reshape(-1), 0) if not dim else _prod_of_others(x, dim[0])
    return g if others is None else g * others.reshape(x.shape)


def _prod_of_others(x, d):
    """The product of the other elements along ``d`` at each element; None where that is 1
    for want of others (a dim of length 1 or 0): the gradient is then g alone."""
    n = x.shape[d]
    if n <= 1:
        return None
    ones = x.new_ones(x.narrow(d, 0, 1).shape)
    before = apply(Cat, ones, x.narrow(d, 0, n - 1), dim=d).cumprod(d)
    after = apply(Cat, x.narrow(d, 1, n - 1), ones, dim=d).flip(d).cumprod(d).flip(d)
    return before * after


@numpy_names
@parsed
def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over ``dim`` (all dims when empty); ties share the gradient evenly."""
    return with_out(apply(Amax, input, dim=dims_arg(dim, input.ndim), keepdim=keepdim), out)


@numpy_names
@parsed
def amin(input, dim=(), keepdim=False, *, out=None):
    """Minimum over ``dim`` (all dims when empty); ties share the gradient evenly
    (https://pytorch.org/docs/stable/generated/torch.amin.html)."""
    return with_out(apply(Amin, input, dim=dims_arg(dim, input.ndim), keepdim=keepdim), out)


class Amax(Op):
    complex_error = (NotImplementedError, "\"max_values_cpu\" not implemented for '{T}'")
    infer = classmethod(reduction_rule)
    promote = None
    save_output = True
    nan_takes_gradient = False

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        _check_nonempty(x, dim, "amax")
        return _c_order(namespace(x).maximum.reduce(x, axis=dim, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        return (_spread_to_extremes(ctx, g),)


class Amin(Amax):
    complex_error = (NotImplementedError, "\"min_values_cpu\" not implemented for '{T}'")
    infer = classmethod(reduction_rule)
    @staticmethod
    def forward(x, dim=None, keepdim=False):
        _check_nonempty(x, dim, "amin")
        return _c_order(namespace(x).minimum.reduce(x, axis=dim, keepdims=keepdim))


_EXTREME_SIGNATURES = (" * (Tensor input, *, Tensor out = None)\n"
                       " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                       " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)\n")


def _extreme(name, whole, along, input, dim, keepdim, other):
    if isinstance(dim, Tensor):
        other, dim = dim, None
    if other is not None:
        return maximum(input, other) if name == "max" else minimum(input, other)
    if int_dim(name, dim, _EXTREME_SIGNATURES) is ALL_DIMS:
        return apply(whole, input)
    d = _wrap_dim(dim, input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if input.dtype.is_complex:  # (the kernel refuses it, but a 0-dim input never reaches it)
        raise RuntimeError(f"{name}(): does not support complex input")
    if input.ndim == 0:
        return values_indices(name, input.clone(), zeros((), dtype=_dtype.int64))
    values, idx = apply(along, input, dim=d)
    if not keepdim:
        values, idx = named(values.squeeze(d), name.capitalize() + "Backward0"), idx.squeeze(d)
    return values_indices(name, values, idx)


class MaxAlongDim(Op):
    """``max(x, dim)`` as two results with the reduced dim kept: the first largest element
    along ``dim`` (NaN counts as the largest) and its int64 index. The values' gradient goes
    to that element."""
    complex_error = (RuntimeError, "max(): does not support complex input")
    promote = None
    num_outputs = 2
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x, dim):
        indices = x.argmax(axis=dim, keepdims=True)
        return namespace(x).take_along_axis(x, indices, axis=dim), indices

    @classmethod
    def infer(cls, x, dim):
        shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape))
        return (shape, x.dtype), (shape, _dtype.int64)

    @staticmethod
    def backward(ctx, g_values, g_indices):
        indices = ctx.output[1]
        return (g_values.new_zeros(ctx.shapes[0]).scatter_add(ctx.attrs["dim"], indices, g_values),)


class MinAlongDim(MaxAlongDim):
    """``min(x, dim)``: as :class:`MaxAlongDim` with the first smallest element."""
    complex_error = (RuntimeError, "min(): does not support complex input")

    @staticmethod
    def forward(x, dim):
        indices = x.argmin(axis=dim, keepdims=True)
        return namespace(x).take_along_axis(x, indices, axis=dim), indices


@parsed
def max(input, dim=ALL_DIMS, keepdim=False, *, other=None, out=None):
    """Largest element; with ``dim`` the ``(values, indices)`` along it; with a tensor, the
    elementwise ``maximum``."""
    return _extreme("max", Max, MaxAlongDim, input, dim, keepdim, other)


@parsed
def min(input, dim=ALL_DIMS, keepdim=False, *, other=None, out=None):
    """Smallest element; with ``dim`` the ``(values, indices)`` along it; with a tensor, the
    elementwise ``minimum`` (https://pytorch.org/docs/stable/generated/torch.min.html)."""
    return _extreme("min", Min, MinAlongDim, input, dim, keepdim, other)


class Max(Amax):
    """``max(x)`` over all elements. Unlike ``amax``, a NaN result sends the gradient to the
    NaN elements (PyTorch's ``evenly_distribute_backward``)."""
    complex_error = (NotImplementedError, "\"max_all\" not implemented for '{T}'")
    infer = classmethod(reduction_rule)
    nan_takes_gradient = True

    @staticmethod
    def forward(x):
        _check_nonempty(x, None, "max")
        return namespace(x).maximum.reduce(x, axis=None)


class Min(Max):
    complex_error = (NotImplementedError, "\"min_all\" not implemented for '{T}'")
    infer = classmethod(reduction_rule)
    @staticmethod
    def forward(x):
        _check_nonempty(x, None, "min")
        return namespace(x).minimum.reduce(x, axis=None)


def _spread_to_extremes(ctx, g):
    """Tied extremes share the gradient evenly, as in PyTorch."""
    x = ctx.input(0)
    dim, keepdim = ctx.attrs.get("dim"), ctx.attrs.get("keepdim", False)
    out = expand_back(ctx.output, x.shape, dim, keepdim)
    mask = x == out
    if ctx.op.nan_takes_gradient:
        mask = mask | (x.isnan() & out.isnan())
    mask = mask.to(g.dtype)
    count = expand_back(mask.sum(dim=dim, keepdim=True), x.shape, dim, True)
    return expand_back(g, x.shape, dim, keepdim) * mask / count


def _check_nonempty(x, dim, name, error=RuntimeError, hint=" Specify the reduction dim with the 'dim' argument."):
    """PyTorch's errors for a max-like reduction with no identity over no elements."""
    if x.size:
        return
    if dim is None:
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{hint}")
    for d in dim:
        if x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


@parsed
def argmax(input, dim=None, keepdim=False):
    """Index of the first maximal element (over the flattened input when ``dim`` is None);
    NaN counts as the maximum. RuntimeError for bool and complex input."""
    return _arg_extreme("argmax", Argmax, input, dim, keepdim)


@numpy_names
@parsed
def argmin(input, dim=None, keepdim=False):
    """Index of the first minimal element (over the flattened input when ``dim`` is None);
    NaN counts as the minimum. RuntimeError for bool and complex input
    (https://pytorch.org/docs/stable/generated/torch.argmin.html)."""
    return _arg_extreme("argmin", Argmin, input, dim, keepdim)


def _arg_extreme(name, op, input, dim, keepdim):
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    if input.dtype is _dtype.bool or input.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support {'bool' if input.dtype is _dtype.bool else 'complex'} input")
    d = None if dim is None else _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return zeros((), dtype=_dtype.int64)
    return apply(op, input, dim=d, keepdim=keepdim)


class Argmax(Op):
    complex_error = (RuntimeError, "argmax(): does not support complex input")
    infer = classmethod(reduction_rule)
    differentiable = False
    promote = None

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        return _arg_extreme_kernel("argmax", x, dim, keepdim)


class Argmin(Op):
    complex_error = (RuntimeError, "argmin(): does not support complex input")
    infer = classmethod(reduction_rule)
    differentiable = False
    promote = None

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        return _arg_extreme_kernel("argmin", x, dim, keepdim)


def _arg_extreme_kernel(name, x, dim, keepdim):
    _check_nonempty(x, None if dim is None else (dim,), name, IndexError, "")
    xp = namespace(x)
    if dim is None:
        r = xp.asarray(getattr(xp, name)(x), dtype=np.int64)
        return r.reshape((1,) * x.ndim) if keepdim else r
    return getattr(xp, name)(x, axis=dim, keepdims=keepdim)


@parsed
def cumsum(input, dim, *, dtype=None, out=None):
    """Cumulative sum along ``dim``; integer and bool inputs give int64
    (https://pytorch.org/docs/stable/generated/torch.cumsum.html)."""
    input = dtype_arg(input, dtype)
    return with_out(_asked(apply(Cumsum, input, dim=_wrap_dim(dim, input.ndim)), dtype), out)


class Cumsum(Op):
    infer = classmethod(reduction_rule)
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, dim):
        return wide_scan("add", x, dim)

    @staticmethod
    def backward(ctx, g):
        d = ctx.attrs["dim"]
        return (g.flip(d).cumsum(d).flip(d) if g.ndim else g,)


@parsed
def cumprod(input, dim, *, dtype=None, out=None):
    """Cumulative product along ``dim``; integer and bool inputs give int64
    (https://pytorch.org/docs/stable/generated/torch.cumprod.html)."""
    input = dtype_arg(input, dtype)
    return with_out(_asked(apply(Cumprod, input, dim=_wrap_dim(dim, input.ndim)), dtype), out)


class Cumprod(Op):
    """Cumulative product. Its derivative, grad_i = sum over j >= i of g_j prod_{k <= j, k != i}
    x_k, is O(n) as PyTorch's cumprod_backward, which leaves out the terms that hold a zero:
    before a slice's first zero z, the reversed cumulative sum of g * out over the elements
    before z, divided by x_i; at z, out_{z-1} times the reversed sum, up to the second zero
    included, of g times the products after z; after it, 0. Under ``create_graph`` (PyTorch's
    rule too) it is the O(n^2) grid of partial products where ``x`` holds a zero, whose own
    derivative in a zero after the first is right."""
    infer = classmethod(reduction_rule)
    promote = None
    save_output = True

    @staticmethod
    def forward(x, dim):
        return wide_scan("multiply", x, dim)

    @staticmethod
    def backward(ctx, g):
        x, d = ctx.input(0), ctx.attrs["dim"]
        n = x.shape[d] if x.ndim else 0
        if n <= 1 or not x.numel():  # the identity (or nothing): torch passes g on as it is
            return (g,)
        if STATE.enabled:  # torch's formula where x holds no zero (nan and inf as it gives them),
            # else its O(n^2) sums: picked by value, as torch's (a compiled backward takes no graph)
            if (x.detach() == 0).any():
                return (_cumprod_grid_backward(x, g, d, n),)
            return (_reversed_cumsum(x.cumprod(d) * g, d) / x,)
        zero = x == 0
        zeros_so_far = zero.to(_dtype.float64).cumsum(d)  # (a float scan: C inside compiled graphs)
        before, first = zeros_so_far == 0, zero & (zeros_so_far == 1)
        since_first = (zeros_so_far == 1) | zero & (zeros_so_far == 2)  # up to the second zero
        one, nought = x.new_ones(()), x.new_zeros(())
        # The terms that hold a zero are left out, not added as 0, as torch's: an inf there,
        # whose product with the zero is nan, changes nothing. At the first zero: the product
        # before it times the sum, up to the next zero, of g times the products after it.
        regular = _reversed_cumsum(apply(Where, before, g * ctx.output, nought), d) / apply(Where, before, x, one)
        after_first = apply(Where, since_first & ~first, x, one).cumprod(d)
        out_before = apply(Cat, one.expand(x.narrow(d, 0, 1).shape), ctx.output.narrow(d, 0, n - 1), dim=d)
        at_zero = out_before * _reversed_cumsum(apply(Where, since_first, g * after_first, nought), d)
        return (apply(Where, before, regular, apply(Where, first, at_zero, nought)),)


def _reversed_cumsum(t, d):
    return t.flip(d).cumsum(d).flip(d)


def _cumprod_grid_backward(x, g, d, n):
    """grad_k = sum_{j >= k} g_j prod_{i <= j, i != k} x_i, as torch builds it under
    ``create_graph`` (so that its own derivative is torch's, nan and inf included): for each k,
    the product of the elements before k, then that times the cumulative products after k."""
    grads = []
    for k in range(n):
        until = x.narrow(d, 0, k).prod(d, keepdim=True) if k else x.new_ones(()).expand(x.narrow(d, 0, 1).shape)
        omitted = until
        if k < n - 1:
            after = x.narrow(d, k + 1, n - k - 1).cumprod(d)
            omitted = apply(Cat, until, after if k == 0 else until * after, dim=d)
        grads.append((g.narrow(d, k, n - k) * omitted).sum(d, keepdim=True))
    return apply(Cat, *grads, dim=d)


@parsed
@numpy_names
def all(input, dim=None, keepdim=False, *, out=None):
    """True where every element along ``dim`` is nonzero (bool result)."""
    return with_out(_bool_reduce("all", input, dim, keepdim), out)


@parsed
@numpy_names
def any(input, dim=None, keepdim=False, *, out=None):
    """True where some element along ``dim`` is nonzero (bool result; uint8 for uint8)
    (https://pytorch.org/docs/stable/generated/torch.any.html)."""
    return with_out(_bool_reduce("any", input, dim, keepdim), out)


def _bool_reduce(name, input, dim, keepdim):
    # dim=() reduces nothing here, where the other reductions read it as every dim.
    dims = () if isinstance(dim, (list, tuple)) and len(dim) == 0 else dims_arg(dim, input.ndim)
    return apply(All if name == "all" else Any, input, dim=dims, keepdim=keepdim)


def _bool_rule(op, x, dim=None, keepdim=False):
    # PyTorch keeps uint8 for uint8 inputs (the pre-bool convention); everything else gives bool.
    return reduction_rule(op, x, dim, keepdim)[0], _dtype.uint8 if x.dtype is _dtype.uint8 else _dtype.bool


class All(Op):
    """``all``: an op entry, so a compiled function's ``(x > 0).all()`` stays in its graph."""
    infer = classmethod(_bool_rule)
    differentiable = False
    promote = None
    reduce = "all"

    @classmethod
    def forward(cls, x, dim=None, keepdim=False):
        xp = namespace(x)
        r = _c_order(xp.asarray(getattr(xp, cls.reduce)(x, axis=dim, keepdims=keepdim)))
        return r.astype(np.uint8) if x.dtype == np.uint8 else r


class Any(All):
    """``any``: an op entry, as :class:`All`."""
    reduce = "any"


_COUNT_NONZERO_SIGNATURES = " * (Tensor input, int dim = None)\n * (Tensor input, tuple of ints dim)\n"


@numpy_names
def count_nonzero(input, dim=None, *args, **kwargs):
    """The number of nonzero elements over ``dim`` (all when None), as int64; any other
    argument (``keepdim``) is torch's TypeError
    (https://pytorch.org/docs/stable/generated/torch.count_nonzero.html)."""
    if args or kwargs:
        wrong = f"      didn't match because some of the keywords were incorrect: {', '.join(kwargs)}\n" * bool(kwargs)
        signatures = "".join(line + "\n" + wrong for line in _COUNT_NONZERO_SIGNATURES.splitlines())
        raise TypeError(invalid_combination("count_nonzero", (input, *([] if dim is None else [dim]), *args),
                                            signatures, **kwargs))
    refuse_unsigned("nonzero_count_cpu", input.dtype)
    return (input != 0).sum(dim)
