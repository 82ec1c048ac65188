"""Order statistics: ``aminmax``, ``mode``, ``nanmedian``, ``quantile`` and ``nanquantile``.

``mode`` is an op entry; the others are written in ember ops over ``sort``/``argsort`` and
``gather``, so their gradients reach the selected elements through those. The PyTorch page of
each is ``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""

import numpy as np

from .. import _dtype
from .._backend import is_floating, namespace
from .._creation import tensor, zeros
from .._tensor import Tensor, _wrap_dim
from .args import ALL_DIMS, numpy_names, values_indices
from .core import Op, apply
from .gather import gather
from .pointwise_binary import Where
from .reduce import amax, amin
from .sort import argsort, evenly_shared, refuse_unordered_median, sort
from .stdsort import mode_rows
from .parser import parsed


class MinMax(tuple):
    """The ``(min, max)`` named tuple of ``aminmax``."""
    min = property(lambda self: self[0])
    max = property(lambda self: self[1])

    def __repr__(self):
        return f"ember.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` of ``input`` (over ``dim`` when given), as :func:`amin` and :func:`amax`
    compute them (ties share the gradient). RuntimeError for an empty reduction."""
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                           "has no identity.")
    if dim is not None and input.ndim and input.shape[_wrap_dim(dim, input.ndim)] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {_wrap_dim(dim, input.ndim)} to have non-zero size.")
    dims = () if dim is None else dim
    if dim is None and keepdim:
        dims = tuple(range(input.ndim))
    return MinMax((amin(input, dims, keepdim), amax(input, dims, keepdim)))


# ---- mode ------------------------------------------------------------------------------------------
@numpy_names
def mode(input, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest among equally
    frequent ones; each NaN counts once, and where NaNs lie in the order C++'s ``std::sort``
    leaves decides whether one wins) and the index of one of its occurrences, as PyTorch's CPU
    kernel picks it (the last one in a slice of at most 16; see :mod:`.stdsort`). The values'
    gradient goes to that element. Slices with NaN, or longer than 16 with a repeated value,
    replay that sort (in C, built on first use; in Python, about 1 ms per 1000 elements,
    where there is no C compiler)."""
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return values_indices("mode", input.clone(), zeros((), dtype=_dtype.int64))
    if not input.numel():  # torch checks the dim's length first, and a dtype only with work to do
        if input.shape[d] == 0:
            raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
        values = input.sum(d, keepdim=True).to(input.dtype)
        indices = zeros(values.shape, dtype=_dtype.int64)
        return values_indices("mode", *((values, indices) if keepdim else (values.squeeze(d), indices.squeeze(d))))
    values, indices = apply(Mode, input, dim=d)
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return values_indices("mode", values, indices)


class Mode(Op):
    complex_error = (NotImplementedError, "\"mode_cpu\" not implemented for '{T}'")
    promote = None
    num_outputs = 2
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x, dim):
        xp = namespace(x)
        rows = xp.moveaxis(x, dim, -1)
        n = rows.shape[-1]
        if n == 0:
            raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
        flat = rows.reshape(-1, n)
        ordered = xp.sort(flat, axis=1, kind="stable")
        starts = xp.ones(ordered.shape, bool)
        starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        position = xp.arange(n)
        run_start = xp.maximum.accumulate(xp.where(starts, position, 0), axis=1)
        best = xp.argmax(position - run_start, axis=1)  # the first longest run: the smallest value
        value = ordered[xp.arange(len(flat)), best]
        same = (flat == value[:, None])
        if is_floating(flat.dtype):
            same |= xp.isnan(flat) & xp.isnan(value)[:, None]
        index = n - 1 - xp.argmax(same[:, ::-1], axis=1)
        replay = xp.zeros(len(flat), bool) if n <= 16 else (position - run_start).max(axis=1) > 0
        if is_floating(flat.dtype):
            replay |= xp.isnan(flat).any(axis=1)
        if replay.any():
            index[replay] = picked = mode_rows(flat[replay])
            value[replay] = flat[replay][xp.arange(len(picked)), picked]
        shape = rows.shape[:-1] + (1,)
        return (xp.moveaxis(value.reshape(shape), -1, dim),
                xp.moveaxis(index.reshape(shape).astype(np.int64), -1, dim))

    @classmethod
    def infer(cls, x, dim):
        shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape))
        return (shape, x.dtype), (shape, _dtype.int64)

    @staticmethod
    def backward(ctx, g_values, g_indices):
        return (g_values.new_zeros(ctx.shapes[0]).scatter_add(ctx.attrs["dim"], ctx.output[1], g_values),)


# ---- medians and quantiles ------------------------------------------------------------------------
@parsed
def nanmedian(input, dim=ALL_DIMS, keepdim=False):
    """The lower median of the non-NaN elements (NaN only where a slice is all NaN); with
    ``dim``, ``(values, indices)``."""
    if refuse_unordered_median(input, dim, "nanmedian") is ALL_DIMS:
        return evenly_shared(input, lambda flat: nanmedian(flat, 0).values)
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return values_indices("nanmedian", input.clone(), zeros((), dtype=_dtype.int64))
    if input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    # The stable argsort puts NaN last: the median of the k numbers is at (k - 1) // 2.
    count = input.shape[d] - input.isnan().sum(d, keepdim=True)
    position = ((count - 1) // 2).clamp(min=0)
    idx = gather(argsort(input, d), d, position)
    values = gather(input, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values_indices("nanmedian", values, idx)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


@numpy_names
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles of ``input`` (over all elements, or along ``dim``): with ``k``
    the number of elements, the value at rank ``q * (k - 1)`` of the sorted slice, between
    ranks by ``interpolation`` (linear, lower, higher, midpoint, nearest with ties to even).
    ``q`` is a number or a 0-/1-D tensor in [0, 1]; a 1-D ``q`` adds a leading dimension.
    A slice holding NaN gives NaN. RuntimeError for non-float input, ``q`` outside [0, 1],
    an unknown interpolation or an empty input."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation)


@numpy_names
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` of the non-NaN elements of each slice (NaN where all are NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation)


def _quantile(name, input, q, dim, keepdim, interpolation):
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.numel() and not ((q >= 0) & (q <= 1)).all():
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        scalar_q, qs = q.ndim == 0, q.detach().reshape(-1)
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        scalar_q, qs = True, tensor([q], dtype=input.dtype)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
                           f"nearest, but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    x = input.reshape(-1) if dim is None else input.movedim(_wrap_dim(dim, input.ndim), -1) \
        if input.ndim else input.reshape(1)
    ordered = sort(x, -1).values  # NaN last
    nans = x.isnan().sum(-1, keepdim=True)
    count = (x.shape[-1] - nans) if name == "nanquantile" else x.new_full((1,), x.shape[-1])
    ranks = (qs * (count.to(x.dtype) - 1)).clamp(min=0).expand(x.shape[:-1] + (len(qs),))
    if name == "quantile":  # a slice holding NaN gives its last sorted element: a NaN
        ranks = apply(Where, nans > 0, ranks.new_full((), x.shape[-1] - 1), ranks)
    if interpolation == "nearest":
        ranks = ranks.round()
    lower, upper = ranks.floor().long(), ranks.ceil().long()
    below, above = gather(ordered, -1, lower), gather(ordered, -1, upper)
    result = {"lower": lambda: below, "higher": lambda: above, "nearest": lambda: below,
              "midpoint": lambda: below.lerp(above, 0.5),
              "linear": lambda: below.lerp(above, ranks - lower)}[interpolation]()
    result = result.movedim(-1, 0)  # the q dimension leads
    if keepdim:
        result = result.reshape((len(qs),) + tuple(1 if dim is None or i == _wrap_dim(dim, input.ndim)
                                                   else s for i, s in enumerate(input.shape)))
    return result[0] if scalar_q else result
