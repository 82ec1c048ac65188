"""Window ops: pooling and sliding-block extraction (``unfold``/``fold``); padding is in
``pad.py``, resampling in ``resample.py``.

Every window op works on arrays shaped (*lead, *spatial), with ``len(kernel_size)``
trailing spatial dims (1 or 2 for PyTorch's pooling; any number works). Windows are visited
with a loop over kernel offsets: each offset is one strided slice of the (padded) input
holding that tap for every output position at once, so no Python loop ever runs over
positions.

Linear ops come in adjoint pairs that are each other's derivative, which makes gradients of
any order free: ``AvgPool``/``AvgPoolTranspose``, ``Im2Col``/``Col2Im``,
``GatherPlanes``/``ScatterPlanes`` (max pooling routes its gradient through the latter).

Max pooling follows PyTorch's CPU kernels: padding never wins (it reads as -inf), ties go
to the first maximum in the window (row-major), a NaN wins over any number and, among
NaNs, the last one wins; indices are flat positions in the unpadded input plane
(``h * W + w``).
"""
import functools
import itertools
import math

import numpy as np

from .. import _backend, _dtype
from .._backend import namespace
from .._result_layout import channels_last_from, in_input_format
from .core import Op, apply, zero_link


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
    return namespace(x).pad(x, widths, constant_values=fill)


def _out_size(x, kernel_size, stride, padding, dilation, ceil_mode):
    k = len(kernel_size)
    return tuple(pooled_size(*args, ceil_mode) for args in
                 zip(x.shape[-k:], kernel_size, stride, padding, dilation))


def _pooled_rule(op, x, *args, kernel_size, stride, padding, dilation=None, ceil_mode, **attrs):
    """(*lead, *out_size) in ``x``'s dtype: the shape rule of the window reductions."""
    dilation = dilation or (1,) * len(kernel_size)
    return tuple(x.shape[:x.ndim - len(kernel_size)]) + _out_size(x, kernel_size, stride, padding, dilation,
                                                                  ceil_mode), x.dtype


def _lead(x, k):
    """The leading shape of ``x`` before its ``k`` trailing (spatial) dims."""
    return tuple(x.shape[:x.ndim - k])


def _lowest(dtype):
    return -np.inf if _backend.is_floating(dtype) else np.iinfo(dtype).min


def _plane_strides(spatial):
    """Element strides of a contiguous plane of shape ``spatial`` (flat = sum(i * stride))."""
    return tuple(math.prod(spatial[i + 1:]) for i in range(len(spatial)))


def _grid(vectors):
    """Per-dim vectors shaped to broadcast against each other: (O1, 1), (O2,)."""
    k = len(vectors)
    return [v.reshape((-1,) + (1,) * (k - 1 - i)) for i, v in enumerate(vectors)]


def _first_max(taps, best):
    """Window position of the first tap equal to ``best``, their maximum; where ``best`` is
    NaN, of the last NaN tap (PyTorch's rule: NaN beats any number, a later NaN wins)."""
    missed = taps[0] != best
    position = missed.astype(np.uint8 if len(taps) <= 256 else np.int64)
    for tap in taps[1:-1]:
        missed &= tap != best
        position += missed
    if _backend.is_floating(best.dtype):
        xp = namespace(best)
        nan = xp.isnan(best)
        if nan.any():
            for k, tap in enumerate(taps):
                position[nan & xp.isnan(tap)] = k
    return position


def _max_taps(x, kernel_size, stride, padding, dilation, ceil_mode):
    """(output size, one array per kernel offset holding that tap of every window), the
    input padded with its dtype's lowest value."""
    out_size = _out_size(x, kernel_size, stride, padding, dilation, ceil_mode)
    padded = _padded(x, out_size, kernel_size, stride, padding, dilation, _lowest(x.dtype))
    return out_size, [padded[(Ellipsis,) + window] for _, window in _windows(out_size, kernel_size, stride, dilation)]


def _maximum(taps):
    out, xp = taps[0].copy(), namespace(taps[0])
    for tap in taps[1:]:
        xp.maximum(out, tap, out=out)
    return out


def _planar(x, *args, **attrs):
    """torch's CPU average and adaptive pooling keep channels-last in 2-D only (a
    channels-last-3d input gives a row-major result); its max pooling keeps both."""
    return x.ndim == 4


class MaxPool(Op):
    """Maximum over each window of ``x`` (*lead, *spatial); attrs as in ``max_pool2d``, one
    entry per spatial dim. ``argmax`` (the second input), the window positions from
    :class:`MaxPoolIndices` (``flat=False``), is only read by the derivative, which sends each
    gradient to its window's maximum (None when no gradient will be taken), in the memory
    format ``x`` suggests (channels-last for a 4-D one), as torch's backward kernel allocates it."""
    promote = None
    infer = classmethod(_pooled_rule)

    @staticmethod
    @channels_last_from(0)
    def forward(x, argmax, kernel_size, stride, padding, dilation, ceil_mode):
        return _maximum(_max_taps(x, kernel_size, stride, padding, dilation, ceil_mode)[1])

    @staticmethod
    def backward(ctx, g):
        attrs = ctx.attrs
        spatial = tuple(ctx.shapes[0][-len(attrs["kernel_size"]):])
        g_x = apply(MaxPoolBackward, g, ctx.input(1), kernel_size=attrs["kernel_size"], stride=attrs["stride"],
                    padding=attrs["padding"], dilation=attrs["dilation"], spatial=spatial)
        return zero_link(in_input_format(g_x, ctx.input(0), ranks=(4,)), ctx.input(0)), None


class MaxPoolBackward(Op):
    """MaxPool's derivative: ``g`` scattered to the input positions ``argmax`` names (added
    where windows overlap), zeros elsewhere; shape (*lead, *spatial)."""
    promote = None
    infer = classmethod(lambda op, g, argmax, spatial, **attrs: (_lead(g, len(spatial)) + spatial, g.dtype))
    save_inputs = True

    @staticmethod
    def forward(g, argmax, kernel_size, stride, padding, dilation, spatial):
        out_size = g.shape[g.ndim - len(spatial):]
        inside = all((n - 1) * s + d * (k - 1) < size for n, k, s, d, size  # (no ceil_mode overhang)
                     in zip(out_size, kernel_size, stride, dilation, spatial))
        if (_windows_disjoint(kernel_size, stride, dilation) and not any(padding) and inside
                and type(g) is np.ndarray and g.dtype.kind in "fiu" and g.dtype.itemsize in (2, 4, 8)):
            return _disjoint_max_backward(g, argmax, kernel_size, stride, dilation, spatial)
        index, kept = _gradient_index(argmax, spatial, kernel_size, stride, padding, dilation)
        if kept is not None:
            g = g * kept
        return ScatterPlanes.forward(g, index, spatial, not _windows_disjoint(kernel_size, stride, dilation))

    @staticmethod
    def backward(ctx, h):
        attrs = ctx.attrs
        index, kept = _gradient_index(ctx.input(1)._data, **attrs)
        gathered = apply(GatherPlanes, h, index=index, spatial_ndim=len(attrs["spatial"]))
        return (gathered if kept is None else gathered * type(h)._make(kept), None)


def _disjoint_max_backward(g, argmax, kernel_size, stride, dilation, spatial):
    """MaxPoolBackward for windows that never overlap nor read padding: per kernel offset,
    one strided write of ``g`` masked to the windows whose maximum is that tap, as the bits
    ``-(argmax == k) & g`` (no branch per element; NaN payloads kept).
    LeNet's first pool, (32, 6, 28, 28) from 2x2 windows: 141 -> 100 us (loaded Xeon) against
    the general scatter of flat indices."""
    out_size = g.shape[g.ndim - len(spatial):]
    lead = g.shape[:g.ndim - len(spatial)]
    tiled = all(n * s == size and k == s for n, s, size, k in zip(out_size, stride, spatial, kernel_size))
    out = (np.empty if tiled else np.zeros)(lead + tuple(spatial), g.dtype)
    bits = np.dtype(f"i{g.dtype.itemsize}")
    if g.dtype.kind == "f":
        g = g + g.dtype.type(0)  # -0.0 becomes 0.0, as torch's zeros plus the gradient give
    out_bits, g_bits = out.view(bits), g.view(bits)
    for k, (_, window) in enumerate(_windows(out_size, kernel_size, stride, dilation)):
        mask = (argmax == k).view(np.int8).astype(bits)
        np.negative(mask, out=mask)
        np.bitwise_and(mask, g_bits, out=out_bits[(Ellipsis,) + window])
    return out


def _windows_disjoint(kernel_size, stride, dilation):
    """True when no input position lies in two windows, so scattered indices never repeat."""
    return all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel_size, stride, dilation))


class MaxPoolIndices(Op):
    """Where each window's maximum is: the flat input-plane index (int64, ``h * W + w``:
    ``return_indices``) or, with ``flat=False``, the position inside the window (uint8,
    row-major over the kernel: what :class:`MaxPool` keeps for its derivative)."""
    promote = None

    @classmethod
    def infer(cls, x, flat=True, **attrs):
        small = not flat and math.prod(attrs["kernel_size"]) <= 256
        return _pooled_rule(cls, x, **attrs)[0], _dtype.uint8 if small else _dtype.int64
    differentiable = False

    @staticmethod
    @channels_last_from(0)
    def forward(x, kernel_size, stride, padding, dilation, ceil_mode, flat=True):
        out_size, taps = _max_taps(x, kernel_size, stride, padding, dilation, ceil_mode)
        best = _maximum(taps)
        position = _first_max(taps, best)
        lowest = _lowest(x.dtype)
        if (any(padding) or ceil_mode) and (best == lowest).any():
            # A window whose maximum is the padding value reports its first real tap, as
            # PyTorch's kernel (which never visits padding) does.
            xp = namespace(x)
            firsts = [((d - 1 - xp.minimum(a, 0)) // d).clip(0, k - 1) for a, d, k in
                      zip(_window_starts(xp, out_size, stride, padding), dilation, kernel_size)]
            first = xp.ravel_multi_index(xp.broadcast_arrays(*firsts), kernel_size).astype(position.dtype)
            position = xp.where(best == lowest, first, position)
        if not flat:
            return position
        return _flat_index(position, x.shape[x.ndim - len(kernel_size):], kernel_size, stride, padding,
                           dilation)


def _window_starts(xp, out_size, stride, padding):
    """Each window's first tap along each dim (negative inside the left padding), shaped to
    broadcast against each other (arrays of namespace ``xp``)."""
    return _grid([xp.arange(n) * s - p for n, s, p in zip(out_size, stride, padding)])


def _flat_index(position, spatial, kernel_size, stride, padding, dilation):
    """Flat input-plane index (int64) of the tap at window ``position`` of each window.

    A window lying wholly in the padding along some dim (dilation over a short input) has no
    tap; torch's kernel reports the flat index of its starts moved right by whole dilation
    steps past the left padding, which may lie past the plane's end (`max_pool3d` of a
    (1, 1, 1, 2, 2) input, kernel 2, padding 1, dilation 2: 7)."""
    plane, xp = _plane_strides(spatial), namespace(position)
    offsets = xp.asarray([sum(o * d * ps for o, d, ps in zip(offset, dilation, plane))
                          for offset in itertools.product(*(range(k) for k in kernel_size))], np.int64)
    starts = _window_starts(xp, position.shape[position.ndim - len(spatial):], stride, padding)
    index = xp.take(offsets, position)  # (2x faster than offsets[position])
    index += sum(a * ps for a, ps in zip(starts, plane))
    if any(padding):
        reach = [_reach_input(a.reshape(-1), k, d, size).reshape(a.shape) for a, k, d, size in
                 zip(starts, kernel_size, dilation, spatial)]
        if not all(r.all() for r in reach):
            lone = ~functools.reduce(xp.logical_and, reach)
            moved = sum(xp.where(a < 0, a + (-a + d - 1) // d * d, a) * ps for a, d, ps in zip(starts, dilation, plane))
            index = xp.where(lone, moved, index)
    return index


def _gradient_index(position, spatial, kernel_size, stride, padding, dilation):
    """(flat index, None or a mask of the windows whose gradient is kept) for max pooling's
    derivative: torch's kernel adds a window's gradient at its index, which for a window of
    padding only may lie past the plane (:func:`_flat_index`); there it writes into the next
    plane or past the tensor's end (undefined behaviour: heap corruption), so ember drops it."""
    index = _flat_index(position, spatial, kernel_size, stride, padding, dilation)
    size = math.prod(spatial)
    if not any(padding):
        return index, None
    inside = index < size
    if inside.all():
        return index, None
    return namespace(index).where(inside, index, 0), inside


def _reach_input(starts, kernel, dilation, size):
    """Per window along one dim: does any tap land inside the input?"""
    taps = starts + namespace(starts).arange(kernel)[:, None] * dilation
    return ((taps >= 0) & (taps < size)).any(0)


def adaptive_ranges(size, out, xp=np):
    """(start, end) arrays (of namespace ``xp``) of PyTorch's adaptive windows:
    ``[floor(i*L/O), ceil((i+1)*L/O))``."""
    i = xp.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


class AdaptiveMaxPoolIndices(Op):
    """Flat input-plane index of the maximum of each adaptive window (``output_size``)."""
    promote = None
    infer = classmethod(lambda op, x, output_size: (_lead(x, len(output_size)) + tuple(output_size), _dtype.int64))
    differentiable = False

    @staticmethod
    @channels_last_from(0, keep=_planar)
    def forward(x, output_size):
        k, xp = len(output_size), namespace(x)
        plane = _plane_strides(x.shape[x.ndim - k:])
        ranges = [[v.reshape(g.shape) for v in (start, end)] for (start, end), g in
                  zip((adaptive_ranges(n, o, xp) for n, o in zip(x.shape[x.ndim - k:], output_size)),
                      _grid([xp.arange(o) for o in output_size]))]
        widths = tuple(int((end - start).max(initial=1)) for start, end in ranges)
        # Taps past a window's end repeat its last element, which never changes the first
        # maximum: every window is read as ``widths`` taps.
        taps = []
        for offset in itertools.product(*(range(w) for w in widths)):
            pos = tuple(xp.minimum(start + o, end - 1) for o, (start, end) in zip(offset, ranges))
            taps.append(x[(Ellipsis,) + pos])
        offsets = xp.unravel_index(_first_max(taps, _maximum(taps)), widths)
        return sum(xp.minimum(start + o, end - 1) * ps
                   for o, (start, end), ps in zip(offsets, ranges, plane))


def _flat_positions(index, lead_ndim, plane_size):
    """``index`` (*lead, *out) as positions in the flattened (*lead, plane) array, shaped
    (prod(lead), prod(out))."""
    lead = math.prod(index.shape[:lead_ndim])
    rows = index.reshape(lead, math.prod(index.shape[lead_ndim:]))
    return rows + (namespace(index).arange(lead, dtype=np.int64) * plane_size)[:, None]


class GatherPlanes(Op):
    """``out[..., j] = x[..., plane][index[..., j]]``: ``x`` is (*lead, *plane_shape), the
    int64 array ``index`` (*lead, *out) holds flat plane positions. ``x`` is saved to tie
    the gradient to it under ``create_graph`` (adaptive max pooling's second derivative
    through ``x`` is zeros in torch, not an error) and to lay it out as ``x`` suggests (torch's)."""
    promote = None
    infer = classmethod(lambda op, x, index, spatial_ndim: (index.shape, x.dtype))

    @staticmethod
    @channels_last_from(0, keep=_planar)
    def forward(x, index, spatial_ndim):
        lead_ndim = x.ndim - spatial_ndim
        plane = math.prod(x.shape[lead_ndim:])
        return x.reshape(-1).take(_flat_positions(index, lead_ndim, plane)).reshape(index.shape)

    @staticmethod
    def backward(ctx, g):
        k = ctx.attrs["spatial_ndim"]
        g_x = apply(ScatterPlanes, g, index=ctx.attrs["index"], plane_shape=tuple(ctx.shapes[0][-k:]), accumulate=True)
        return (zero_link(in_input_format(g_x, ctx.input(0), ranks=(4,)), ctx.input(0)),)


class ScatterPlanes(Op):
    """Zeros of shape (*lead, *plane_shape) with ``g[..., j]`` put at flat plane position
    ``index[..., j]`` (an int64 array shaped like ``g``); repeated positions add when
    ``accumulate``, else the last write wins (``max_unpool``). The adjoint of
    :class:`GatherPlanes`."""
    promote = None
    infer = classmethod(lambda op, g, index, plane_shape, accumulate: (_lead(g, len(plane_shape)) + tuple(plane_shape), g.dtype))
    save_inputs = False

    @staticmethod
    def forward(g, index, plane_shape, accumulate):
        plane = math.prod(plane_shape)
        bad = (index < 0) | (index >= plane)
        if bad.any():  # max_unpool's indices (the adjoint of a gather makes them in range)
            shown = "x".join(map(str, (1, *plane_shape) if len(plane_shape) == 1 else plane_shape))
            raise RuntimeError(f"Found an invalid max index: {int(index[bad].flat[0])} (output volumes are "
                               f"of size {shown})")
        lead = g.shape[:g.ndim - len(plane_shape)]
        flat = _flat_positions(index, len(lead), plane).reshape(-1)
        size = math.prod(lead) * plane
        out = namespace(g).zeros(size, g.dtype)
        if accumulate:
            _backend.index_add_at(out, flat, g.reshape(-1))
        else:
            out[flat] = g.reshape(-1)
        return out.reshape(lead + tuple(plane_shape))

    @staticmethod
    def backward(ctx, h):
        # row-major whatever h's layout, as torch's gather into a new tensor shaped as the indices
        return (apply(GatherPlanes, h, index=ctx.attrs["index"],
                      spatial_ndim=len(ctx.attrs["plane_shape"])).contiguous(),)


class TiedToInput(Op):
    """``out`` unchanged (a copy in its layout), its gradient tied to ``x`` under
    ``create_graph`` (:func:`~ember._ops.core.zero_link`): a composite whose derivative does
    not read ``x`` (adaptive average pooling's matrix products) still gives a gradient in
    ``x``'s graph, whose own derivative through ``x`` is zeros, as torch's kernel's is."""
    promote = None
    infer = classmethod(lambda op, out, x: (tuple(out.shape), out.dtype))

    @staticmethod
    def forward(out, x):
        return namespace(out).copy(out, order="K")

    @staticmethod
    def backward(ctx, g):
        return zero_link(g, ctx.input(1)), None


def _divisor(xp, spatial, out_size, kernel_size, stride, padding, count_include_pad, divisor_override, dtype):
    """Each window's divisor, shaped ``out_size`` (an array of namespace ``xp``): its element
    count (padding included or not; never the ceil_mode overhang), or ``divisor_override``."""
    if divisor_override:
        return xp.asarray(divisor_override, dtype)
    counts = []
    for size, n, k, s, p in zip(spatial, out_size, kernel_size, stride, padding):
        start = xp.arange(n) * s - p
        end = xp.minimum(start + k, size + p)
        counts.append(end - start if count_include_pad else
                      xp.minimum(end, size) - xp.maximum(start, 0))
    out = xp.ones((), dtype)
    for c in _grid(counts):
        out = out * c.astype(dtype)
    return out


def _avg_geometry(x_spatial, kernel_size, stride, padding, ceil_mode):
    ones = (1,) * len(kernel_size)
    return tuple(pooled_size(*args, ceil_mode) for args in
                 zip(x_spatial, kernel_size, stride, padding, ones)), ones


class AvgPool(Op):
    """Mean over each window of ``x`` (*lead, *spatial); attrs as in ``avg_pool2d``. Integer
    inputs divide with truncation, as PyTorch does. ``x`` is saved (as torch saves ``self``)
    to tie the gradient to it under ``create_graph`` (a second derivative through ``x`` is
    zeros, not an error) and to lay the gradient out in the memory format it suggests (torch's)."""
    promote = None
    infer = classmethod(_pooled_rule)

    @staticmethod
    @channels_last_from(0, keep=_planar)
    def forward(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        spatial = x.shape[-len(kernel_size):]
        out_size, ones = _avg_geometry(spatial, kernel_size, stride, padding, ceil_mode)
        padded = _padded(x, out_size, kernel_size, stride, padding, ones, 0)
        integral = x.dtype.kind in "biu"
        total = None
        for _, window in _windows(out_size, kernel_size, stride, ones):
            tap = padded[(Ellipsis,) + window]
            if total is None:
                total = tap.astype(np.int64 if integral else x.dtype)
            else:
                total += tap
        xp = namespace(x)
        divisor = _divisor(xp, spatial, out_size, kernel_size, stride, padding, count_include_pad,
                           divisor_override, np.float64 if integral else x.dtype)
        if integral:
            return xp.trunc(total / divisor).astype(x.dtype)
        total /= divisor
        return total

    @staticmethod
    def backward(ctx, g):
        k = len(ctx.attrs["kernel_size"])
        g_x = apply(AvgPoolTranspose, g, input_size=tuple(ctx.shapes[0][-k:]), **ctx.attrs)
        return (zero_link(in_input_format(g_x, ctx.input(0), ranks=(4,)), ctx.input(0)),)


class AvgPoolTranspose(Op):
    """The adjoint of :class:`AvgPool`: each ``g`` value, divided by its window's divisor,
    spread over the window's positions in an input of spatial size ``input_size``."""
    promote = None
    infer = classmethod(lambda op, g, input_size, **attrs: (_lead(g, len(input_size)) + tuple(input_size), g.dtype))
    save_inputs = False

    @staticmethod
    def forward(g, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        out_size, ones = _avg_geometry(input_size, kernel_size, stride, padding, ceil_mode)
        share = g / _divisor(namespace(g), input_size, out_size, kernel_size, stride, padding, count_include_pad,
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
    out = namespace(like).zeros(lead + tuple(padded), like.dtype)
    for offset, window in _windows(out_size, kernel_size, stride, dilation):
        out[(Ellipsis,) + window] += tap_values(offset)
    return out[(Ellipsis,) + tuple(slice(p, p + size) for p, size in zip(padding, input_size))]


class Im2Col(Op):
    """Sliding blocks (im2col): ``x`` (*lead, *spatial) to (*lead, *kernel_size, *out_size),
    zero padding, no ceil mode."""
    promote = None

    @classmethod
    def infer(cls, x, kernel_size, **geometry):
        out_size = _pooled_rule(cls, x, kernel_size=kernel_size, ceil_mode=False, **geometry)[0][x.ndim - len(kernel_size):]
        return _lead(x, len(kernel_size)) + tuple(kernel_size) + out_size, x.dtype
    save_inputs = False

    @staticmethod
    def forward(x, kernel_size, dilation, padding, stride):
        out_size = _out_size(x, kernel_size, stride, padding, dilation, False)
        padded = _padded(x, out_size, kernel_size, stride, padding, dilation, 0)
        lead = x.shape[:x.ndim - len(kernel_size)]
        cols = namespace(x).empty(lead + tuple(kernel_size) + out_size, x.dtype)
        skip = (slice(None),) * len(lead)
        for offset, window in _windows(out_size, kernel_size, stride, dilation):
            cols[skip + offset] = padded[(Ellipsis,) + window]
        return cols

    @staticmethod
    def backward(ctx, g):
        k = len(ctx.attrs["kernel_size"])
        return (apply(Col2Im, g, output_size=tuple(ctx.shapes[0][-k:]), **ctx.attrs),)


class Col2Im(Op):
    """The adjoint of :class:`Im2Col` (col2im): blocks (*lead, *kernel_size, *blocks) summed
    into an array of spatial size ``output_size``; overlapping blocks add."""
    promote = None
    infer = classmethod(lambda op, cols, output_size, kernel_size, **geometry: (_lead(cols, 2 * len(kernel_size)) + tuple(output_size), cols.dtype))
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
        return (apply(Im2Col, h, **attrs),)
