"""Scans and finite differences along a dimension: ``cummax``, ``cummin``, ``logcumsumexp``,
``diff``, ``gradient``, ``trapezoid`` and ``cumulative_trapezoid``.

The scans are op entries; the finite differences are written in ember ops (slices, sums and
products), so their gradients come from those. The PyTorch page of each is
``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
import numbers

import numpy as np

from .. import _dtype
from .._backend import is_floating, namespace
from .._creation import zeros
from .._tensor import Tensor, _wrap_dim
from .args import values_indices, with_out
from .core import _NAMES, Op, apply
from .join import cat, narrow
from .pointwise_binary import Where
from .pointwise_float import log_add_exp
from .reduce import _c_order


# ---- running extremes ----------------------------------------------------------------------------
def cummax(input, dim):
    """``(values, indices)``: the running maximum along ``dim`` and the index where it was
    reached (the latest on ties; NaN propagates and each NaN takes the index, as in PyTorch).
    The values' gradient goes to the element at that index."""
    return _running("cummax", Cummax, input, dim)


def cummin(input, dim):
    """``(values, indices)``: the running minimum along ``dim``; see :func:`cummax`."""
    return _running("cummin", Cummin, input, dim)


def _running(name, op, input, dim):
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return values_indices(name, input.clone(), zeros((), dtype=_dtype.int64))
    return values_indices(name, *apply(op, input, dim=d))


def _running_extreme(x, dim, better):
    """The running extreme of ``x`` along ``dim`` and its index; ``better`` names the
    comparison ufunc that takes a new element ("greater_equal": the latest maximum)."""
    xp = namespace(x)
    better = getattr(xp, better)
    x = xp.moveaxis(x, dim, -1)
    values, indices = xp.empty_like(x), xp.zeros(x.shape, np.int64)
    if x.shape[-1]:
        best, at = x[..., 0], xp.zeros(x.shape[:-1], np.int64)
        for i in range(x.shape[-1]):
            xi = x[..., i]
            take = better(xi, best)
            if is_floating(x.dtype):
                take = xp.isnan(xi) | (take & ~xp.isnan(best))
            best, at = xp.where(take, xi, best), xp.where(take, i, at)
            values[..., i], indices[..., i] = best, at
    return _c_order(xp.moveaxis(values, -1, dim)), _c_order(xp.moveaxis(indices, -1, dim))


class Cummax(Op):
    complex_error = (NotImplementedError, "\"cummax_cpu\" not implemented for '{T}'")
    promote = None
    num_outputs = 2
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x, dim):
        return _running_extreme(x, dim, "greater_equal")

    @classmethod
    def infer(cls, x, dim):
        return (tuple(x.shape), x.dtype), (tuple(x.shape), _dtype.int64)

    @staticmethod
    def backward(ctx, g_values, g_indices):
        if not g_values.numel():  # torch hands back the (empty) input, which requires grad
            return (ctx.output[0],)
        return (g_values.new_zeros(ctx.shapes[0]).scatter_add(ctx.attrs["dim"], ctx.output[1], g_values),)


class Cummin(Cummax):
    complex_error = (NotImplementedError, "\"cummin_cpu\" not implemented for '{T}'")
    @staticmethod
    def forward(x, dim):
        return _running_extreme(x, dim, "less_equal")


def logcumsumexp(input, dim, *, out=None):
    """``log(cumsum(exp(input), dim))`` without overflow; floating-point or complex tensors
    (NotImplementedError for integers). Complex sums are taken pairwise as
    :func:`~ember.logaddexp` takes them."""
    if not input.dtype.is_inexact:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{_NAMES[input.dtype.name]}'")
    d = _wrap_dim(dim, input.ndim)
    return with_out(apply(Logcumsumexp, input, dim=d) if input.ndim else input.clone(), out)


class Logcumsumexp(Op):
    """d out_i / d x_j = exp(x_j - out_i) for i >= j. The sum over i of g_i exp(x_j - out_i)
    is taken in log space, separately for the positive and negative parts of ``g``, so that
    no exponential overflows (the formula of TensorFlow's and PyTorch's derivatives). For
    complex ``g`` the complex log keeps the signs, so one sum does (``ctx`` hands back the
    conjugates of ``x`` and ``out``: the conjugate gradient)."""
    promote = None
    save_output = True

    @staticmethod
    def forward(x, dim):
        xp = namespace(x)
        if x.dtype.kind != "c":
            return xp.logaddexp.accumulate(x, axis=dim)
        out = xp.moveaxis(x.copy(), dim, 0)
        for i in range(1, out.shape[0]):
            out[i] = log_add_exp(out[i - 1], out[i])
        return xp.moveaxis(out, 0, dim)

    @classmethod
    def infer(cls, x, dim):
        return tuple(x.shape), x.dtype

    @staticmethod
    def backward(ctx, g):
        x, out, d = ctx.input(0), ctx.output, ctx.attrs["dim"]
        if not g.numel():  # nothing to scan: g itself, as torch passes it on
            return (g,)
        if g.dtype.is_complex:
            return (((g.log() - out).flip(d).logcumsumexp(d).flip(d) + x).exp(),)
        lowest = g.new_full((), float(np.finfo(g.dtype.np).min))  # log 0, kept finite: -inf - -inf is nan
        log_abs = g.abs().log()

        def part(mask):
            log_g = apply(Where, mask, log_abs, lowest)
            return ((log_g - out).flip(d).logcumsumexp(d).flip(d) + x).exp()
        return (part(g > 0) - part(g < 0),)


# ---- finite differences --------------------------------------------------------------------------
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``, applied
    ``n`` times; ``!=`` for bool), after concatenating ``prepend`` and ``append`` along ``dim``.
    RuntimeError for a 0-dim input."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _wrap_dim(dim, input.ndim)
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat([_along(p, input, d) for p in parts], d) if len(parts) > 1 else input
    for _ in range(n):
        length = max(x.shape[d] - 1, 0)
        later, earlier = narrow(x, d, min(1, x.shape[d]), length), narrow(x, d, 0, length)
        x = later != earlier if x.dtype is _dtype.bool else later - earlier
    return x


def _along(part, input, d):
    """``prepend``/``append`` as a tensor: a number becomes a size-1 slice along ``d``."""
    if isinstance(part, Tensor):
        return part
    shape = tuple(1 if i == d else s for i, s in enumerate(input.shape))
    return input.new_tensor(part).expand(shape)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of ``d input / d x_k`` for each dimension ``k`` in ``dim`` (all by default), as
    a tuple: second-order central differences inside, first or second order (``edge_order``)
    one-sided differences at the ends. ``spacing`` is a number (the step for every dim), a
    list of numbers (one step per dim) or a tuple of 1-D coordinate tensors (one per dim, for
    uneven grids). Integer inputs give the default float. RuntimeError when a dimension has
    fewer than ``edge_order + 1`` points."""
    if input.dtype is _dtype.bool:  # torch's differences subtract bools
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                           "`^` or `logical_xor()` operator instead.")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [_wrap_dim(d, input.ndim) for d in dims]
    if isinstance(spacing, (numbers.Number, Tensor)) and not (isinstance(spacing, Tensor) and spacing.ndim):
        spacing = [spacing] * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                           f"and dim arguments to have the same length, but got a spacing argument of "
                           f"length {len(spacing)} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    x = input if input.dtype.is_floating_point else input.to(_dtype.get_default_dtype())
    results = []
    for d, step in zip(dims, spacing):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        if isinstance(step, Tensor) and step.ndim:
            coords = np.array(step.tolist(), np.float64)
        else:
            coords = np.arange(n) * float(step.item() if isinstance(step, Tensor) else step)
        results.append(_derivative(x, d, coords, edge_order))
    return tuple(results)


def _derivative(x, d, coords, edge_order):
    """The derivative along ``d`` on the grid ``coords``: a weighted sum of three shifted
    slices inside, and NumPy's one-sided stencils (``numpy.gradient``'s formulas) at the ends.
    (The grid and its weights are a few host numbers, metadata as a step size is; the weights
    go to ``x``'s device as tensors.)"""
    n = x.shape[d]

    def weights(w):  # a coefficient per position along d, broadcast over the other dims
        return x.new_tensor(w.reshape((-1,) + (1,) * (x.ndim - d - 1)))

    def points(start, length):
        return narrow(x, d, start, length)
    h = np.diff(coords)
    hs, hd = h[:-1], h[1:]
    inner = (weights(-hd / (hs * (hs + hd))) * points(0, n - 2)
             + weights((hd - hs) / (hs * hd)) * points(1, n - 2)
             + weights(hs / (hd * (hs + hd))) * points(2, n - 2))
    if edge_order == 1:
        first = (points(1, 1) - points(0, 1)) / float(h[0])
        last = (points(n - 1, 1) - points(n - 2, 1)) / float(h[-1])
    else:
        a, b = h[0], h[1]
        first = (points(0, 1) * float(-(2 * a + b) / (a * (a + b))) + points(1, 1) * float((a + b) / (a * b))
                 + points(2, 1) * float(-a / (b * (a + b))))
        a, b = h[-2], h[-1]
        last = (points(n - 3, 1) * float(b / (a * (a + b))) + points(n - 2, 1) * float(-(a + b) / (a * b))
                + points(n - 1, 1) * float((2 * b + a) / (b * (a + b))))
    return cat([first, inner, last], d)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: ``sum((x[i+1] - x[i]) * (y[i+1] + y[i]) / 2)``, with
    sample points ``x`` (1-D along ``dim`` or ``y``'s shape) or a constant spacing ``dx``
    (default 1). Integer samples give the default float."""
    d = _bool_samples(y, dim, "trapezoid")
    if y.shape[d] == 0:  # PyTorch returns unconnected zeros here
        return zeros(tuple(s for i, s in enumerate(y.shape) if i != d), dtype=y.dtype)
    return _trapezoids(y, x, dx, d).sum(d)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along ``dim`` (one element fewer than ``y``)."""
    d = _bool_samples(y, dim, "cumulative_trapezoid")
    return _trapezoids(y, x, dx, d).cumsum(d)


def _bool_samples(y, dim, name):
    """``dim`` wrapped; RuntimeError for bool samples, as PyTorch's trapezoid rules."""
    if y.dtype is _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    return _wrap_dim(dim, y.ndim)


def _trapezoids(y, x, dx, d):
    """The area of each trapezoid along ``d``."""
    n = max(y.shape[d] - 1, 0)
    heights = narrow(y, d, min(1, y.shape[d]), n) + narrow(y, d, 0, n)
    if x is None:
        return heights * (1 if dx is None else dx) / 2
    widths = diff(x).reshape((-1,) + (1,) * (y.ndim - d - 1)) if x.ndim == 1 else diff(x, dim=d)
    return widths * heights / 2
