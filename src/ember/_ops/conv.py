"""Convolution primitives: ``Conv``, ``ConvTranspose`` and ``ConvWeight``.

The three ops are one linear map seen from its three sides. For a convolution ``y = Conv(x, w)``:

* ``ConvTranspose(gy, w)`` is its adjoint in ``x`` (the input gradient, and PyTorch's
  transposed convolution);
* ``ConvWeight(x, gy)`` is its adjoint in ``w`` (the weight gradient).

So every derivative of each op is one of the three ops, and gradients of any order come free.

Geometry is shared by all three and given as attributes over the spatial dims (one for 1-D, two
for 2-D, three for 3-D; 1-D runs as 2-D with a unit height, 3-D as 2-D with the depth taps as
channels: ``_depth_taps``): ``stride``, ``dilation``, ``groups`` and
``padding``, a (before, after) pair per dim in the frame of the convolution's input. ``before``
is never negative; ``after`` may be, which crops the input's tail: that is how the rows a strided
convolution never reads, and PyTorch's ``output_padding``, are expressed. With these attributes
``ConvTranspose`` maps a (N, C_out, H_out, W_out) array to (N, C_in, H, W) with
``H = (H_out - 1) * stride + dilation * (kernel - 1) + 1 - before - after``.

Kernels are BLAS products over strided windows (im2col): the windows of the padded input are
copied into a (groups, C_in/groups * kh * kw, rows * W_out * N) buffer a block of output rows at
a time, so that one product per group covers every sample and position of the block (all
groups in one batched call) while the ~256 kB buffer is still in the L2 cache, and the next
block reuses the buffer. The samples are the innermost axis of these buffers
(the input is first copied to (C, H, W, N)): a window's row of W_out positions is then one run
of W_out * N contiguous numbers instead of N runs of W_out, which made LeNet's convolutions'
copies and the additions below 2-4x faster. Results come back as (C, H, W, N) and are
transposed to (N, C, ...) in one copy that also adds the bias. A convolution with wide output
rows and few terms per output number (``_per_sample``: LeNet's first) runs instead as one
product per sample over that sample's own buffer (built for a block of samples at a time, into
one reused buffer of the same size), which gives (N, C_out, ...) directly; its weight gradient
likewise. The transposed direction forms the same buffer by one product and
adds it back into place with one strided slice addition per kernel offset (kh * kw of them,
no loop over pixels).
"""
import math

import numpy as np

from .. import _backend
from .._memory_format import contiguous_format, suggested
from .._result_layout import channels_last_from
from .core import Op, apply


def _planar(stride, padding, dilation):
    """Geometry of a 1-D op as that of a 2-D op over a unit height."""
    if len(stride) == 2:
        return stride, padding, dilation
    return (1,) + tuple(stride), ((0, 0),) + tuple(padding), (1,) + tuple(dilation)


def _samples_inner(x, padding=((0, 0), (0, 0))):
    """``x`` (N, C, H, W) as a contiguous (C, H', W', N) copy, zero-padded by the (before, after)
    pairs; a negative ``after`` crops."""
    (top, bottom), (left, right) = padding
    x = x[:, :, :x.shape[2] + min(bottom, 0), :x.shape[3] + min(right, 0)]
    n, c, h, w = x.shape
    shape = (c, h + top + max(bottom, 0), w + left + max(right, 0), n)
    xp = _backend.namespace(x)
    out = xp.empty(shape, x.dtype) if shape[1:3] == (h, w) else xp.zeros(shape, x.dtype)
    out[:, top:top + h, left:left + w] = x.transpose(1, 2, 3, 0)
    return out


def _window_taps(x, kernel, stride, padding, dilation):
    """Every window of ``x`` (N, C, H, W), zero-padded by the (before, after) pairs: a view
    (C, kh, kw, H_out, W_out, N) of one padded copy whose element [c, i, j, h, w, n] is the
    padded input's [n, c, h * sh + i * dh, w * sw + j * dw]."""
    # course:begin 09/im2col
    # hint: copy x padded with the samples innermost (_samples_inner), take every window of the
    # hint: dilated kernel's span with the stride (_backend.sliding_windows), and order the axes
    # hint: (C, kh, kw, H_out, W_out, N)
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    padded = _samples_inner(x, padding)
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    windows = _backend.sliding_windows(padded, span, axis=(1, 2))[:, ::sh, ::sw, :, ::dh, ::dw]
    return windows.transpose(0, 4, 5, 1, 2, 3)
    # course:end 09/im2col


# The im2col buffer of a whole batch (LeNet's conv2: 150 x 3200 float32, 1.9 MB) leaves the
# L2 cache before the product reads it back. Copied and multiplied a few output rows at a
# time into one buffer of about 256 kB, it is read while still cached: LeNet's conv2 forward
# 364 -> 238 us (loaded Xeon, 1 thread; buffers of 384 kB and more were slower again).
_BLOCK_BYTES = 1 << 18


def _column_blocks(x, kernel, stride, padding, dilation, groups):
    """Yields ``(start, stop, cols)`` over blocks of output rows: ``cols`` is the im2col buffer
    of output rows [start, stop) of ``x`` (N, C, H, W), (groups, C/groups * kh * kw, (stop -
    start) * W_out * N), columns ordered (row, W_out, N). One buffer serves every block: use
    each before taking the next."""
    taps = _window_taps(x, kernel, stride, padding, dilation)
    c, kh, kw, h_out, w_out, n = taps.shape
    row = c * kh * kw * w_out * n
    rows = max(1, min(h_out, _BLOCK_BYTES // max(1, row * x.itemsize)))
    buffer = _backend.namespace(x).empty(rows * row, x.dtype)
    for start in range(0, h_out, rows):
        stop = min(start + rows, h_out)
        block = buffer[:(stop - start) * row].reshape(c, kh, kw, stop - start, w_out, n)
        block[...] = taps[:, :, :, start:stop]
        yield start, stop, block.reshape(groups, c // groups * kh * kw, -1)


def _grouped(weight, groups):
    """(C_out, C_in/groups, kh, kw) weight as (groups, C_out/groups, C_in/groups * kh * kw)."""
    c_out, c_in_g, kh, kw = weight.shape
    return weight.reshape(groups, c_out // groups, c_in_g * kh * kw)


def _rows(a, groups):
    """(N, C, H, W) as (groups, C/groups, H * W * N), a copy."""
    return _samples_inner(a).reshape(groups, a.shape[1] // groups, -1)


def _batch_first(a, bias=None):
    """(C, H, W, N) as a contiguous (N, C, H, W), with ``bias`` (C) added on the way."""
    xp = _backend.namespace(a)
    out = xp.empty((a.shape[3],) + a.shape[:3], a.dtype)
    if bias is None:
        xp.copyto(out, a.transpose(3, 0, 1, 2))
    else:
        xp.add(a.transpose(3, 0, 1, 2), bias.reshape(-1, 1, 1), out=out)
    return out


def _unplanar(fn, *arrays):
    """Runs a 2-D kernel on 1-D arrays (N, C, L) viewed as (N, C, 1, L)."""
    if arrays[0].ndim == 4:
        return fn(*arrays)
    return fn(*(a[:, :, None] for a in arrays))[:, :, 0]


# A 3-D convolution is a 2-D one whose input channels are the depth taps: the input
# (N, C, D, H, W) becomes (N * D_out, kd * C, H, W), each output depth position a sample whose
# channels are the kd depth slices its window reads (ordered group, depth offset, channel, so
# that groups stay contiguous), and the weight (C_out, C/groups, kd, kh, kw) becomes
# (C_out, kd * C/groups, kh, kw). The three ops then run their 2-D kernels, and the transposed
# direction adds each depth slice back where it was read: the 2-D kernels, blocking and all,
# serve both ranks.


def _depth_taps(x, kd, sd, depth_padding, dd, groups):
    """``x`` (N, C, D, H, W), zero-padded in depth by the (before, after) pair (a negative
    ``after`` crops), as the (N * D_out, kd * C, H, W) input of the 2-D kernels, and D_out."""
    front, back = depth_padding
    x = x[:, :, :x.shape[2] + min(back, 0)]
    n, c, d, h, w = x.shape
    full = d + front + max(back, 0)
    d_out = (full - dd * (kd - 1) - 1) // sd + 1
    xp = _backend.namespace(x)
    padded = x
    if full != d:
        padded = xp.zeros((n, c, full, h, w), x.dtype)
        padded[:, :, front:front + d] = x
    planes = padded.reshape(n, groups, c // groups, full, h, w)
    out = xp.empty((n, d_out, groups, kd, c // groups, h, w), x.dtype)
    for i in range(kd):
        out[:, :, :, i] = planes[:, :, :, i * dd:i * dd + (d_out - 1) * sd + 1:sd].transpose(0, 3, 1, 2, 4, 5)
    return out.reshape(n * d_out, kd * c, h, w), d_out


def _depth_untaps(cols, n, d_out, kd, sd, depth_padding, dd, groups):
    """The adjoint of :func:`_depth_taps`, from the 2-D kernels' samples-inner layout: ``cols``
    (kd * C, H, W, N * D_out) added back at the depths each slice was read from, the padding cut
    off: (N, C, D, H, W). (Reading that layout here skips a transposition of the whole result:
    its input gradient on (4, 3, 16, 56, 56) 1.4x faster.)"""
    front, back = depth_padding
    c, h, w = cols.shape[0] // kd, cols.shape[1], cols.shape[2]
    full = (d_out - 1) * sd + dd * (kd - 1) + 1
    xp = _backend.namespace(cols)
    depth = full + max(-back, 0)  # a negative ``after`` (output_padding) adds depths no window reaches
    out = xp.zeros((n, groups, c // groups, depth, h, w), cols.dtype)
    taps = cols.reshape(groups, kd, c // groups, h, w, n, d_out)
    for i in range(kd):
        out[:, :, :, i * dd:i * dd + (d_out - 1) * sd + 1:sd] += taps[:, i].transpose(4, 0, 1, 5, 2, 3)
    d = full - front - back
    return xp.ascontiguousarray(out.reshape(n, c, depth, h, w)[:, :, front:front + d])


def _depth_weight(weight):
    """(C_out, C/groups, kd, kh, kw) as the 2-D weight (C_out, kd * C/groups, kh, kw)."""
    c_out, c_in_g, kd, kh, kw = weight.shape
    return weight.transpose(0, 2, 1, 3, 4).reshape(c_out, kd * c_in_g, kh, kw)


def _depth_last(a):
    """(N, C, D, H, W) as (N * D, C, H, W), a copy."""
    n, c, d, h, w = a.shape
    return a.transpose(0, 2, 1, 3, 4).reshape(n * d, c, h, w)


def _depth_back(a, n, d, bias=None):
    """(N * D, C, H, W) as a contiguous (N, C, D, H, W), with ``bias`` (C) added on the way."""
    a = a.reshape((n, d) + a.shape[1:]).transpose(0, 2, 1, 3, 4)
    return a.copy() if bias is None else a + bias.reshape(-1, 1, 1, 1)


def _conv3d(x, weight, bias, stride, padding, dilation, groups):
    cols, d_out = _depth_taps(x, weight.shape[2], stride[0], padding[0], dilation[0], groups)
    y = _conv(cols, _depth_weight(weight), None, stride[1:], padding[1:], dilation[1:], groups)
    return _depth_back(y, x.shape[0], d_out, bias)


def _conv_transpose3d(x, weight, bias, stride, padding, dilation, groups):
    cols = _conv_transpose_samples_inner(_depth_last(x), _depth_weight(weight), stride[1:], padding[1:],
                                         dilation[1:], groups)
    out = _depth_untaps(cols, x.shape[0], x.shape[2], weight.shape[2], stride[0], padding[0], dilation[0], groups)
    if bias is not None:
        out += bias.reshape(-1, 1, 1, 1)
    return out


def _conv_weight3d(x, gy, kernel, stride, padding, dilation, groups):
    kd, kh, kw = kernel
    cols, _ = _depth_taps(x, kd, stride[0], padding[0], dilation[0], groups)
    grad = _conv_weight(cols, _depth_last(gy), (kh, kw), stride[1:], padding[1:], dilation[1:], groups)
    c_out, c_in_g = grad.shape[0], grad.shape[1] // kd
    return grad.reshape(c_out, kd, c_in_g, kh, kw).transpose(0, 2, 1, 3, 4).copy()


def _spatial_axes(ndim):
    return (0,) + tuple(range(2, ndim))


# A product with few rows, few terms and long rows, (6, 25) @ (25, 25088) (LeNet's first
# convolution as one product), ran 3x slower as one OpenBLAS call (0.33 ms) than in blocks of
# columns whose panel of the right operand is 256-600 kB (0.12 ms; from 700 kB on, as slow as
# one call: Intel Xeon, 2 MB L2); (6, 9) @ (9, 50000) 2x, (8, 72) @ (72, 8192) 1.25x. Outside
# these bounds blocks gain nothing or lose: (8, 144) @ (144, 32768) 1.19x slower, a single
# row (1, 25) @ (25, 50000) 1.18x, (4, 576) and more rows, up to (128, 1152), even.
_FEW_ROWS, _FEW_TERMS, _PANEL_BYTES = 8, 100, 1 << 18


def _product(a, b, out=None):
    """``a @ b`` for stacks (groups, M, K) @ (groups, K, L), in blocks of columns when M and K
    are small; into ``out`` when given."""
    block = max(1024, _PANEL_BYTES // (b.shape[1] * b.dtype.itemsize))
    if (not 2 <= a.shape[1] <= _FEW_ROWS or a.shape[2] > _FEW_TERMS or b.shape[2] < 2 * block
            or type(b) is not np.ndarray or a.dtype != b.dtype or b.dtype.char not in "fd"):  # (BLAS types only)
        return _backend.matmul(a, b, out=out)
    if out is None:
        out = np.empty(a.shape[:2] + b.shape[2:], b.dtype)
    for start in range(0, b.shape[2], block):
        _backend.matmul(a, b[..., start:start + block], out=out[..., start:start + block])
    return out


def _zero_padded(x, padding):
    """``x`` (N, C, H, W) zero-padded by the (before, after) pairs (a negative ``after`` crops):
    ``x`` itself when nothing changes, else a copy."""
    (top, bottom), (left, right) = padding
    x = x[:, :, :x.shape[2] + min(bottom, 0), :x.shape[3] + min(right, 0)]
    if not (top or left or bottom > 0 or right > 0):
        return x
    n, c, h, w = x.shape
    out = _backend.namespace(x).zeros((n, c, h + top + max(bottom, 0), w + left + max(right, 0)), x.dtype)
    out[:, :, top:top + h, left:left + w] = x
    return out


# A convolution with output rows of 12 positions or more and at most 100 terms per output
# number (C_in/groups * kh * kw) runs faster as one product per sample over the sample's own
# im2col buffer, (N, C/groups * kh * kw, H_out * W_out), than as the one big product: its
# result is already (N, C_out, H_out, W_out), so the transposition back is gone, and the
# copy's runs of W_out numbers are long enough. Forward and weight gradient, interleaved
# medians (loaded Xeon, 1 thread): LeNet's conv1 (32, 1, 32, 32) -> 6, 5x5: 0.45 -> 0.32 and
# 0.38 -> 0.30 ms; (8, 3, 32, 32) -> 16, 3x3: 0.64x and 0.57x; (16, 8, 24, 24) -> 16: 0.76x.
# Outside these bounds one product wins: rows of 6 were 1.2x slower (of 10 as fast); with 144
# terms and more, 0.75-1.19x forward and 0.91-1.34x weight gradient (BLAS makes better use of
# the larger product); and each product must be worth a BLAS call: a depthwise 3x3 over
# (32, 32, 16, 16) (1024 calls of 2304 multiply-adds) was 1.25x slower.
_PER_SAMPLE_WIDTH, _PER_SAMPLE_TERMS, _PER_SAMPLE_MACS = 12, 100, 1 << 14


def _per_sample(weight_shape, groups, h_out, w_out):
    """Whether a Conv (or its weight gradient) of this geometry runs one product per sample."""
    c_out, c_in_g, kh, kw = weight_shape
    terms = c_in_g * kh * kw
    return (w_out >= _PER_SAMPLE_WIDTH and terms <= _PER_SAMPLE_TERMS
            and c_out // groups * terms * h_out * w_out >= _PER_SAMPLE_MACS)


def _sample_column_blocks(x, kernel, stride, padding, dilation, groups):
    """Yields ``(start, stop, cols)`` over blocks of samples: ``cols`` is the im2col buffer of
    each sample of ``x[start:stop]`` (N, C, H, W), (stop - start, groups, C/groups * kh * kw,
    H_out * W_out), in one reused buffer of about ``_BLOCK_BYTES`` as :func:`_column_blocks`'s
    (LeNet's conv1 forward, 4 samples a block: 311 -> 213 us, loaded Xeon, 1 thread)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    windows = _backend.sliding_windows(_zero_padded(x, padding), span, axis=(2, 3))[:, :, ::sh, ::sw, ::dh, ::dw]
    n, c, h_out, w_out = windows.shape[:4]
    taps = windows.transpose(0, 1, 4, 5, 2, 3)
    sample = c * kh * kw * h_out * w_out
    count = max(1, min(n, _BLOCK_BYTES // max(1, sample * x.itemsize)))
    buffer = _backend.namespace(x).empty(count * sample, x.dtype)
    for start in range(0, n, count):
        stop = min(start + count, n)
        block = buffer[:(stop - start) * sample].reshape(taps[start:stop].shape)
        block[...] = taps[start:stop]
        yield start, stop, block.reshape(stop - start, groups, c // groups * kh * kw, h_out * w_out)


def _conv_per_sample(x, weight, bias, stride, padding, dilation, groups, h_out, w_out):
    """Conv on 4-D arrays as one product per sample and group, straight into (N, C_out, H_out, W_out)."""
    n, c_out = x.shape[0], weight.shape[0]
    grouped = _grouped(weight, groups)
    out = _backend.namespace(x).empty((n, groups, c_out // groups, h_out * w_out), x.dtype)
    for start, stop, cols in _sample_column_blocks(x, weight.shape[2:], stride, padding, dilation, groups):
        _backend.matmul(grouped, cols, out=out[start:stop])
    if bias is not None:
        out += bias.reshape(groups, -1, 1)
    return out.reshape(n, c_out, h_out, w_out)


def _conv(x, weight, bias, stride, padding, dilation, groups):
    """Conv on 4-D arrays: one product of the grouped weight with the im2col buffer (or one
    per sample, for wide outputs)."""
    _, _, h_out, w_out = _conv_rule(None, x, weight, stride=stride, padding=padding, dilation=dilation,
                                    groups=groups)[0]
    if _per_sample(weight.shape, groups, h_out, w_out):
        return _conv_per_sample(x, weight, bias, stride, padding, dilation, groups, h_out, w_out)
    n, c_out = x.shape[0], weight.shape[0]
    grouped, row = _grouped(weight, groups), w_out * n
    out = _backend.namespace(x).empty((groups, c_out // groups, h_out * row), x.dtype)
    for start, stop, cols in _column_blocks(x, weight.shape[2:], stride, padding, dilation, groups):
        _product(grouped, cols, out=out[..., start * row:stop * row])
    return _batch_first(out.reshape(c_out, h_out, w_out, n), bias)


def _conv_transpose(x, weight, bias, stride, padding, dilation, groups):
    """ConvTranspose on 4-D arrays: each input pixel's column, ``weight^T @ x``, added back at
    the positions its convolution window reads, one strided slice per kernel offset."""
    return _batch_first(_conv_transpose_samples_inner(x, weight, stride, padding, dilation, groups), bias)


def _conv_transpose_samples_inner(x, weight, stride, padding, dilation, groups):
    """:func:`_conv_transpose` without the bias, as a (C, H, W, N) view."""
    n, _, h_out, w_out = x.shape
    c_out, c_in_g, kh, kw = weight.shape
    (sh, sw), ((top, bottom), (left, right)), (dh, dw) = stride, padding, dilation
    # The product's rows are ordered (kernel offset, channel), so that each offset's columns,
    # added back below, are one contiguous block (LeNet's conv2 input gradient: 0.50 -> 0.43 ms).
    weight_t = weight.reshape(groups, c_out // groups, c_in_g, kh * kw).transpose(0, 3, 2, 1)
    weight_t = weight_t.reshape(groups, kh * kw * c_in_g, c_out // groups)
    rows = _rows(x, groups)
    # A contraction over one channel (depthwise) is an outer product: NumPy's matmul runs it
    # several times slower than the broadcast multiplication.
    cols = weight_t * rows if rows.shape[1] == 1 else _backend.matmul(weight_t, rows)
    del rows
    cols = cols.reshape(groups, kh, kw, c_in_g, h_out, w_out, n)
    full_h, full_w = (h_out - 1) * sh + dh * (kh - 1) + 1, (w_out - 1) * sw + dw * (kw - 1) + 1
    # A negative ``after`` (output_padding) extends the result with rows no window reaches.
    out = _backend.namespace(cols).zeros((c_in_g * groups, full_h + max(-bottom, 0), full_w + max(-right, 0), n),
                                         cols.dtype)
    planes = out.reshape((groups, c_in_g) + out.shape[1:])
    for i in range(kh):
        for j in range(kw):
            rows_at = slice(i * dh, i * dh + (h_out - 1) * sh + 1, sh)
            planes[:, :, rows_at, j * dw:j * dw + (w_out - 1) * sw + 1:sw] += cols[:, i, j]
    del cols
    h, w = full_h - top - bottom, full_w - left - right
    return out[:, top:top + h, left:left + w]


# The weight gradient contracts over samples and positions: tens of thousands of terms for
# a few dozen rows and columns. OpenBLAS runs such products 2-5x slower than needed: as one
# call, and with the fewer rows first (LeNet's conv1, (6, 50176) @ (50176, 25): 1.25 ms; with
# the operands swapped 0.68 ms; swapped and in blocks of 4096 terms, whose operands stay in
# the L2 cache, 0.25 ms). The blocks are now those of :func:`_column_blocks`, so the im2col
# buffer of the whole batch is never built either (interleaved, loaded Xeon, 1 thread:
# Conv2d(16, 32, 3, padding=1) on (32, 16, 32, 32) 5.2 -> 4.5 ms, its depthwise 3x3 over
# (32, 32, 16, 16) 1.24 -> 0.82 ms).


def _total(parts):
    """The sum of the arrays ``parts`` yields, added in place into the first (None for none)."""
    total = None
    for part in parts:
        total = part if total is None else _backend.namespace(part).add(total, part, out=total)
    return total


def _conv_weight(x, gy, kernel, stride, padding, dilation, groups):
    """ConvWeight on 4-D arrays: the output gradient times the im2col buffer, summed over
    blocks of output rows (or of samples, for wide outputs)."""
    n, c_out, h_out, w_out = gy.shape
    weight_shape = (c_out, x.shape[1] // groups) + tuple(kernel)
    if _per_sample(weight_shape, groups, h_out, w_out) and c_out // groups <= h_out * w_out:
        # One product per sample, then their sum: the output gradient is used as it is (LeNet's
        # conv1, 0.49 -> 0.34 ms). (The products are no larger than the im2col buffer.)
        rows = gy.reshape(n, groups, c_out // groups, h_out * w_out)
        grad = _total(_backend.matmul(rows[start:stop], cols.swapaxes(-1, -2)).sum(0) for start, stop, cols
                      in _sample_column_blocks(x, kernel, stride, padding, dilation, groups))
        if grad is not None:
            return grad.reshape(weight_shape)
    else:
        rows, row = _rows(gy, groups), w_out * n
        grad = _total(_backend.matmul(cols, rows[..., start * row:stop * row].transpose(0, 2, 1)) for start, stop, cols
                      in _column_blocks(x, kernel, stride, padding, dilation, groups))
        if grad is not None:  # contiguous, as torch's (and as the other branch's, whichever sizes pick)
            return _backend.namespace(grad).ascontiguousarray(grad.transpose(0, 2, 1)).reshape(weight_shape)
    return _backend.namespace(x).zeros(weight_shape, x.dtype)  # an empty batch, or no output rows


def _conv_rule(op, x, weight, bias=None, *, stride, padding, dilation, groups):
    spatial = tuple((n + before + after - d * (k - 1) - 1) // s + 1 for n, k, s, (before, after), d
                    in zip(x.shape[2:], weight.shape[2:], stride, padding, dilation))
    return (x.shape[0], weight.shape[0]) + spatial, x.dtype


def _conv_transpose_rule(op, x, weight, bias=None, *, stride, padding, dilation, groups):
    spatial = tuple((n - 1) * s + d * (k - 1) + 1 - before - after for n, k, s, (before, after), d
                    in zip(x.shape[2:], weight.shape[2:], stride, padding, dilation))
    return (x.shape[0], weight.shape[1] * groups) + spatial, x.dtype


def _keeps_format(x, weight_or_gy, *rest, groups, kernel_size=None, **geometry):
    """Whether torch's CPU convolution keeps a channels-last input's format: always in 2-D; in
    3-D only where it picks its oneDNN kernel (``ConvParams::use_mkldnn``: several samples,
    groups, a kernel wider than 3x3, or a large input), not ``slow_conv3d``."""
    if x.ndim != 5:
        return True
    kh, kw = (kernel_size or weight_or_gy.shape[2:])[-2:]
    return groups > 1 or kh > 3 and kw > 3 or x.shape[0] > 1 or math.prod(x.shape[:4]) > 20480


def _backend_format(x, weight, groups):
    """The memory format torch's CPU convolution of arrays ``x`` and ``weight`` computes in
    (``_determine_backend_memory_format``): the input's or the weight's channels-last format,
    else ``contiguous_format``."""
    for a in (x, weight):
        if type(a) is np.ndarray and not a.flags.c_contiguous:
            fmt = suggested(a)
            if fmt is not contiguous_format and _keeps_format(x, weight, groups=groups):
                return fmt
    return contiguous_format


class Conv(Op):
    """Cross-correlation of ``x`` (N, C_in, [H,] W) with ``weight`` (C_out, C_in/groups, [kh,] kw)
    plus ``bias`` (C_out), giving (N, C_out, [H_out,] W_out); PyTorch's ``conv1d``/``conv2d``
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv2d.html). All inputs share
    one dtype; the public functions check shapes and dtypes."""
    promote = None
    infer = classmethod(_conv_rule)

    @staticmethod
    @channels_last_from(0, 1, keep=_keeps_format)
    def forward(x, weight, bias=None, *, stride, padding, dilation, groups):
        if bias is not None and x.dtype.itemsize == 2:  # float16, bfloat16: the products and the bias
            wide = [t.astype(np.float32) for t in (x, weight, bias)]  # in float32, rounded once (torch's)
            return Conv.forward.__wrapped__(*wide, stride=stride, padding=padding, dilation=dilation,
                                            groups=groups).astype(x.dtype)
        if len(stride) == 3:
            return _conv3d(x, weight, bias, stride, padding, dilation, groups)
        stride, padding, dilation = _planar(stride, padding, dilation)
        return _unplanar(lambda x, weight: _conv(x, weight, bias, stride, padding, dilation, groups), x, weight)

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.input(0), ctx.input(1)
        a = ctx.attrs
        needs = ctx.needs_input_grad
        gx = gw = gb = None
        # torch computes both gradients in its backend format, whatever g's layout
        g = g.contiguous(memory_format=_backend_format(x._data, weight._data, a["groups"]))
        if needs[0]:
            padding = _fitted_padding(a["padding"], x.shape[2:], g.shape[2:], weight.shape[2:],
                                      a["stride"], a["dilation"])
            gx = apply(ConvTranspose, g, weight, stride=a["stride"], padding=padding,
                       dilation=a["dilation"], groups=a["groups"])
        if needs[1]:
            gw = apply(ConvWeight, x, g, kernel_size=tuple(weight.shape[2:]), **a)
        if len(needs) == 3 and needs[2]:
            gb = g.sum(_spatial_axes(g.ndim))
        return gx, gw, gb


class ConvTranspose(Op):
    """The adjoint of :class:`Conv` in its input: ``x`` (N, C_out, [H_out,] W_out) and ``weight``
    (C_out, C_in/groups, [kh,] kw) give (N, C_in, [H,] W), plus ``bias`` (C_in). This is
    PyTorch's ``conv_transpose1d``/``conv_transpose2d`` with the weight read as (in_channels,
    out_channels/groups, ...) and ``output_padding`` p given as ``after = padding - p``
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv_transpose2d.html)."""
    promote = None
    infer = classmethod(_conv_transpose_rule)

    @staticmethod
    @channels_last_from(0, 1, keep=_keeps_format)
    def forward(x, weight, bias=None, *, stride, padding, dilation, groups):
        if len(stride) == 3:
            return _conv_transpose3d(x, weight, bias, stride, padding, dilation, groups)
        stride, padding, dilation = _planar(stride, padding, dilation)
        return _unplanar(lambda x, weight: _conv_transpose(x, weight, bias, stride, padding, dilation, groups),
                         x, weight)

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.input(0), ctx.input(1)
        a = ctx.attrs
        needs = ctx.needs_input_grad
        gx = gw = gb = None
        if needs[0]:
            gx = apply(Conv, g, weight, **a)
        if needs[1]:
            gw = apply(ConvWeight, g, x, kernel_size=tuple(weight.shape[2:]), **a)
        if len(needs) == 3 and needs[2]:
            gb = g.sum(_spatial_axes(g.ndim))
        return gx, gw, gb


class ConvWeight(Op):
    """The adjoint of :class:`Conv` in its weight: ``x`` (N, C_in, [H,] W) and the output
    gradient ``gy`` (N, C_out, [H_out,] W_out) give the weight gradient (C_out, C_in/groups,
    *kernel_size)."""
    promote = None

    @classmethod
    def infer(cls, x, gy, *, kernel_size, groups, **geometry):
        return (gy.shape[1], x.shape[1] // groups) + tuple(kernel_size), x.dtype

    @staticmethod
    @channels_last_from(0, 1, keep=_keeps_format)
    def forward(x, gy, *, kernel_size, stride, padding, dilation, groups):
        if len(stride) == 3:
            return _conv_weight3d(x, gy, tuple(kernel_size), stride, padding, dilation, groups)
        stride, padding, dilation = _planar(stride, padding, dilation)
        kernel = (1,) + tuple(kernel_size) if len(kernel_size) == 1 else tuple(kernel_size)
        return _unplanar(lambda x, gy: _conv_weight(x, gy, kernel, stride, padding, dilation, groups), x, gy)

    @staticmethod
    def backward(ctx, g):
        x, gy = ctx.input(0), ctx.input(1)
        a = {k: v for k, v in ctx.attrs.items() if k != "kernel_size"}
        needs = ctx.needs_input_grad
        gx = ggy = None
        if needs[0]:
            padding = _fitted_padding(a["padding"], x.shape[2:], gy.shape[2:], g.shape[2:],
                                      a["stride"], a["dilation"])
            gx = apply(ConvTranspose, gy, g, stride=a["stride"], padding=padding,
                       dilation=a["dilation"], groups=a["groups"])
        if needs[1]:
            ggy = apply(Conv, x, g, **a)
        return gx, ggy


def _fitted_padding(padding, in_size, out_size, kernel, stride, dilation):
    """``padding`` with each ``after`` lowered by the input rows the convolution never reads,
    so that the transposed convolution gives back exactly ``in_size``."""
    return tuple((before, (o - 1) * s + d * (k - 1) + 1 - before - i)
                 for (before, _), i, o, k, s, d in zip(padding, in_size, out_size, kernel, stride, dilation))
