"""Window ops: pooling, sliding-block extraction (``unfold``/``fold``) and constant padding.

Every op here works on arrays shaped (*lead, *spatial), with ``len(kernel_size)`` trailing
spatial dims (1 or 2 for PyTorch's pooling; any number works). Windows are visited with a
loop over kernel offsets: each offset is one strided slice of the (padded) input holding
that tap for every output position at once, so no Python loop ever runs over positions.

Linear window ops come in adjoint pairs that are each other's derivative, which makes
gradients of any order free: ``AvgPool``/``AvgPoolTranspose``, ``Unfold``/``Fold``,
``GatherPlanes``/``ScatterPlanes`` (max pooling routes gradients through the latter pair),
and ``ConstantPad`` (its adjoint is itself with the pads negated).

Max pooling follows PyTorch's CPU kernels: padding never wins (it reads as -inf), ties go
to the first maximum in the window (row-major), a NaN wins over any number and, among
NaNs, the last one wins; indices are flat positions in the unpadded input plane
(``h * W + w``).
"""
import itertools

import numpy as np

from .. import _backend
from .core import Op, apply


def pooled_size(size, kernel, stride, padding, dilation, ceil_mode):
    """Output length of a pooling window sweep along one dim (PyTorch's
    ``pooling_output_shape``): with ``ceil_mode`` a last partial window is kept unless it
    would start in the right padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def _windows(out_size, kernel_size, stride, dilation):
    """(offset, slices) per kernel offset: ``padded[..., *slices]`` holds that tap of every
    window, shaped ``out_size``."""
    for offset in itertools.product(*(range(k) for k in kernel_size)):
        yield offset, tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                            for o, n, s, d in zip(offset, out_size, stride, dilation))


def _padded(x, out_size, kernel_size, stride, padding, dilation, fill):
    """``x`` padded with ``fill`` on the left by ``padding`` and on the right as far as the
    last window reaches (ceil_mode windows may run past the padding)."""
    k = len(kernel_size)
    widths = [(0, 0)] * (x.ndim - k)
    for size, n, kernel, s, p, d in zip(x.shape[-k:], out_size, kernel_size, stride, padding, dilation):
        widths.append((p, max((n - 1) * s + d * (kernel - 1) + 1 - size - p, 0)))
    if not any(a or b for a, b in widths):
        return x
    return np.pad(x, widths, constant_values=fill)


def _out_size(x, kernel_size, stride, padding, dilation, ceil_mode):
    k = len(kernel_size)
    return tuple(pooled_size(*args, ceil_mode) for args in
                 zip(x.shape[-k:], kernel_size, stride, padding, dilation))


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _plane_strides(spatial):
    """Element strides of a contiguous plane of shape ``spatial`` (flat = sum(i * stride))."""
    return tuple(int(np.prod(spatial[i + 1:])) for i in range(len(spatial)))


def _grid(vectors):
    """Per-dim vectors shaped to broadcast against each other: (O1, 1), (O2,)."""
    k = len(vectors)
    return [v.reshape((-1,) + (1,) * (k - 1 - i)) for i, v in enumerate(vectors)]


def _argmax(candidates, out_shape, first, dtype):
    """Flat index of the maximum over ``candidates`` ((values, flat index) pairs, in window
    order): strict ``>`` keeps the first maximum; NaNs then take over (the last one)."""
    best = np.full(out_shape, _lowest(dtype), dtype)
    index = np.broadcast_to(first, out_shape).astype(np.int64)
    seen = []
    for values, flat in candidates:
        index = np.where(values > best, flat, index)
        np.maximum(best, values, out=best)
        seen.append((values, flat))
    if dtype.kind == "f" and np.isnan(best).any():
        for values, flat in seen:
            index = np.where(np.isnan(values), flat, index)
    return index


class MaxPool(Op):
    """Maximum over each window of ``x`` (*lead, *spatial); attrs as in ``max_pool2d``, one
    entry per spatial dim. The derivative finds the argmax (:class:`MaxPoolIndices`) and
    sends each gradient there."""
    promote = None

    @staticmethod
    def forward(x, kernel_size, stride, padding, dilation, ceil_mode):
        out_size = _out_size(x, kernel_size, stride, padding, dilation, ceil_mode)
        xp = _padded(x, out_size, kernel_size, stride, padding, dilation, _lowest(x.dtype))
        out = None
        for _, window in _windows(out_size, kernel_size, stride, dilation):
            tap = xp[(Ellipsis,) + window]
            out = tap.copy() if out is None else np.maximum(out, tap, out=out)
        return out

    @staticmethod
    def backward(ctx, g):
        attrs = ctx.attrs
        index = apply(MaxPoolIndices, ctx.input(0), **attrs)
        spatial = ctx.shapes[0][-len(attrs["kernel_size"]):]
        return (apply(ScatterPlanes, g, index, plane_shape=spatial,
                      accumulate=not windows_disjoint(attrs["kernel_size"], attrs["stride"],
                                                      attrs["dilation"])),)


def windows_disjoint(kernel_size, stride, dilation):
    """True when no input position lies in two windows, so scattered indices never repeat."""
    return all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel_size, stride, dilation))


class MaxPoolIndices(Op):
    """The flat input-plane index (int64) of each window's maximum: ``return_indices``."""
    promote = None
    differentiable = False

    @staticmethod
    def forward(x, kernel_size, stride, padding, dilation, ceil_mode):
        out_size = _out_size(x, kernel_size, stride, padding, dilation, ceil_mode)
        spatial = x.shape[-len(kernel_size):]
        xp = _padded(x, out_size, kernel_size, stride, padding, dilation, _lowest(x.dtype))
        plane = _plane_strides(spatial)
        starts = [np.arange(n) * s - p for n, s, p in zip(out_size, stride, padding)]
        base = sum(a * ps for a, ps in zip(_grid(starts), plane))
        # A window starting in the padding reports its first real tap when nothing beats
        # the initial -inf (PyTorch's starting index). A window of padding only (possible
        # with dilation) has none; it reports a position inside the plane.
        first = sum(np.minimum(np.where(a < 0, a + -(a // d) * d, a), size - 1) * ps
                    for a, d, size, ps in zip(_grid(starts), dilation, spatial, plane))
        candidates = ((xp[(Ellipsis,) + window],
                       base + sum(o * d * ps for o, d, ps in zip(offset, dilation, plane)))
                      for offset, window in _windows(out_size, kernel_size, stride, dilation))
        return _argmax(candidates, x.shape[:-len(spatial)] + out_size, first, x.dtype)


def adaptive_ranges(size, out):
    """(start, end) arrays of PyTorch's adaptive windows: ``[floor(i*L/O), ceil((i+1)*L/O))``."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


class AdaptiveMaxPoolIndices(Op):
    """Flat input-plane index of the maximum of each adaptive window (``output_size``)."""
    promote = None
    differentiable = False

    @staticmethod
    def forward(x, output_size):
        k = len(output_size)
        spatial = x.shape[-k:]
        plane = _plane_strides(spatial)
        ranges = [adaptive_ranges(n, o) for n, o in zip(spatial, output_size)]
        widths = [int((end - start).max(initial=0)) for start, end in ranges]

        def candidates():
            # Taps past a window's end repeat its last element: never a strict new maximum.
            for offset in itertools.product(*(range(w) for w in widths)):
                pos = [np.minimum(start + o, end - 1) for o, (start, end) in zip(offset, ranges)]
                grid = _grid(pos)
                yield x[(Ellipsis,) + tuple(grid)], sum(p * ps for p, ps in zip(grid, plane))

        first = sum(p * ps for p, ps in zip(_grid([start for start, _ in ranges]), plane))
        return _argmax(candidates(), x.shape[:-k] + tuple(output_size), first, x.dtype)


def _flat_positions(index, lead_ndim, plane_size):
    """``index`` (*lead, *out) as positions in the flattened (*lead, plane) array, shaped
    (prod(lead), prod(out))."""
    lead = int(np.prod(index.shape[:lead_ndim]))
    rows = index.reshape(lead, int(np.prod(index.shape[lead_ndim:])))
    return rows + (np.arange(lead, dtype=np.int64) * plane_size)[:, None]


class GatherPlanes(Op):
    """``out[..., j] = x[..., plane][index[..., j]]``: ``x`` is (*lead, *plane_shape),
    ``index`` (*lead, *out) holds flat plane positions. ``unique`` promises no position
    repeats (its derivative then writes instead of adding)."""
    promote = None

    @staticmethod
    def forward(x, index, spatial_ndim, unique=False):
        lead_ndim = x.ndim - spatial_ndim
        plane = int(np.prod(x.shape[lead_ndim:]))
        return np.take(x.reshape(-1), _flat_positions(index, lead_ndim, plane)).reshape(index.shape)

    @staticmethod
    def backward(ctx, g):
        k = ctx.attrs["spatial_ndim"]
        return (apply(ScatterPlanes, g, ctx.input(1), plane_shape=tuple(ctx.shapes[0][-k:]),
                      accumulate=not ctx.attrs.get("unique", False)), None)


class ScatterPlanes(Op):
    """Zeros of shape (*lead, *plane_shape) with ``g[..., j]`` put at flat plane position
    ``index[..., j]``; repeated positions add when ``accumulate``, else the last write wins
    (``max_unpool``). The adjoint of :class:`GatherPlanes`."""
    promote = None

    @staticmethod
    def forward(g, index, plane_shape, accumulate):
        plane = int(np.prod(plane_shape))
        lead = g.shape[:g.ndim - len(plane_shape)]
        flat = _flat_positions(index, len(lead), plane).reshape(-1)
        size = int(np.prod(lead)) * plane
        if accumulate:
            out = _backend.scatter_add(size, flat, g.reshape(-1))
        else:
            out = np.zeros(size, g.dtype)
            out[flat] = g.reshape(-1)
        return out.reshape(lead + tuple(plane_shape))

    @staticmethod
    def backward(ctx, h):
        return apply(GatherPlanes, h, ctx.input(1), spatial_ndim=len(ctx.attrs["plane_shape"])), None


def _divisor(spatial, out_size, kernel_size, stride, padding, count_include_pad, divisor_override, dtype):
    """Each window's divisor, shaped ``out_size``: its element count (padding included or
    not; never the ceil_mode overhang), or ``divisor_override``."""
    if divisor_override:
        return np.asarray(divisor_override, dtype)
    counts = []
    for size, n, k, s, p in zip(spatial, out_size, kernel_size, stride, padding):
        start = np.arange(n) * s - p
        end = np.minimum(start + k, size + p)
        counts.append(end - start if count_include_pad else
                      np.minimum(end, size) - np.maximum(start, 0))
    out = np.ones((), dtype)
    for c in _grid(counts):
        out = out * c.astype(dtype)
    return out


def _avg_geometry(x_spatial, kernel_size, stride, padding, ceil_mode):
    ones = (1,) * len(kernel_size)
    return tuple(pooled_size(*args, ceil_mode) for args in
                 zip(x_spatial, kernel_size, stride, padding, ones)), ones


class AvgPool(Op):
    """Mean over each window of ``x`` (*lead, *spatial); attrs as in ``avg_pool2d``. Integer
    inputs divide with truncation, as PyTorch does."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        spatial = x.shape[-len(kernel_size):]
        out_size, ones = _avg_geometry(spatial, kernel_size, stride, padding, ceil_mode)
        xp = _padded(x, out_size, kernel_size, stride, padding, ones, 0)
        integral = x.dtype.kind in "biu"
        total = None
        for _, window in _windows(out_size, kernel_size, stride, ones):
            tap = xp[(Ellipsis,) + window]
            if total is None:
                total = tap.astype(np.int64 if integral else x.dtype)
            else:
                total += tap
        divisor = _divisor(spatial, out_size, kernel_size, stride, padding, count_include_pad,
                           divisor_override, np.float64 if integral else x.dtype)
        if integral:
            return np.trunc(total / divisor).astype(x.dtype)
        total /= divisor
        return total

    @staticmethod
    def backward(ctx, g):
        k = len(ctx.attrs["kernel_size"])
        return (apply(AvgPoolTranspose, g, input_size=tuple(ctx.shapes[0][-k:]), **ctx.attrs),)


class AvgPoolTranspose(Op):
    """The adjoint of :class:`AvgPool`: each ``g`` value, divided by its window's divisor,
    spread over the window's positions in an input of spatial size ``input_size``."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(g, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        out_size, ones = _avg_geometry(input_size, kernel_size, stride, padding, ceil_mode)
        share = g / _divisor(input_size, out_size, kernel_size, stride, padding, count_include_pad,
                             divisor_override, g.dtype)
        return _spread(share, input_size, out_size, kernel_size, stride, padding, ones,
                       lambda offset: share)

    @staticmethod
    def backward(ctx, h):
        attrs = {k: v for k, v in ctx.attrs.items() if k != "input_size"}
        return (apply(AvgPool, h, **attrs),)


def _spread(like, input_size, out_size, kernel_size, stride, padding, dilation, tap_values):
    """Zeros of spatial size ``input_size`` (lead dims and dtype of ``like``) plus, for each
    kernel offset, ``tap_values(offset)`` added at that tap's positions; the padding is cut
    off at the end."""
    lead = like.shape[:like.ndim - len(kernel_size)]
    padded = [max(size + p, (n - 1) * s + d * (kk - 1) + 1)
              for size, n, kk, s, p, d in zip(input_size, out_size, kernel_size, stride, padding, dilation)]
    out = np.zeros(lead + tuple(padded), like.dtype)
    for offset, window in _windows(out_size, kernel_size, stride, dilation):
        out[(Ellipsis,) + window] += tap_values(offset)
    return out[(Ellipsis,) + tuple(slice(p, p + size) for p, size in zip(padding, input_size))]


class Unfold(Op):
    """Sliding blocks (im2col): ``x`` (*lead, *spatial) to (*lead, *kernel_size, *out_size),
    zero padding, no ceil mode."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, kernel_size, dilation, padding, stride):
        out_size = _out_size(x, kernel_size, stride, padding, dilation, False)
        xp = _padded(x, out_size, kernel_size, stride, padding, dilation, 0)
        lead = x.shape[:x.ndim - len(kernel_size)]
        cols = np.empty(lead + tuple(kernel_size) + out_size, x.dtype)
        skip = (slice(None),) * len(lead)
        for offset, window in _windows(out_size, kernel_size, stride, dilation):
            cols[skip + offset] = xp[(Ellipsis,) + window]
        return cols

    @staticmethod
    def backward(ctx, g):
        k = len(ctx.attrs["kernel_size"])
        return (apply(Fold, g, output_size=tuple(ctx.shapes[0][-k:]), **ctx.attrs),)


class Fold(Op):
    """The adjoint of :class:`Unfold` (col2im): blocks (*lead, *kernel_size, *blocks) summed
    into an array of spatial size ``output_size``; overlapping blocks add."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(cols, output_size, kernel_size, dilation, padding, stride):
        k = len(kernel_size)
        out_size = cols.shape[cols.ndim - k:]
        lead = cols.shape[:cols.ndim - 2 * k]
        skip = (slice(None),) * len(lead)
        like = cols[skip + (0,) * k]
        return _spread(like, output_size, out_size, kernel_size, stride, padding, dilation,
                       lambda offset: cols[skip + offset])

    @staticmethod
    def backward(ctx, h):
        attrs = {k: v for k, v in ctx.attrs.items() if k != "output_size"}
        return (apply(Unfold, h, **attrs),)


class ConstantPad(Op):
    """``x`` padded with ``value``; ``pad`` lists (before, after) pairs from the last dim,
    negative entries crop. Its derivative is itself with the pads negated and value 0."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, pad, value):
        n = len(pad) // 2
        crop = [slice(None)] * x.ndim
        widths = [(0, 0)] * x.ndim
        for i in range(n):
            d = x.ndim - 1 - i
            before, after = pad[2 * i], pad[2 * i + 1]
            crop[d] = slice(max(-before, 0), x.shape[d] - max(-after, 0))
            widths[d] = (max(before, 0), max(after, 0))
        x = x[tuple(crop)]
        if not any(a or b for a, b in widths):
            return x.copy()
        return np.pad(x, widths, constant_values=np.asarray(value).astype(x.dtype))

    @staticmethod
    def backward(ctx, g):
        return (apply(ConstantPad, g, pad=tuple(-p for p in ctx.attrs["pad"]), value=0),)
