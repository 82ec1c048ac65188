"""Image functions of ``ember.nn.functional``: padding, resampling, sliding blocks and pixel
shuffling (https://pytorch.org/docs/stable/nn.functional.html#vision-functions).

Shapes: N batch, C channels, then the spatial dims (L; H, W; D, H, W). Padding and the sliding-block
pair ``unfold``/``fold`` are ops of :mod:`ember._ops.pool`; every ``interpolate`` mode is a
linear map along one spatial dim at a time: a small matrix product, or for long dims a
``Resample`` op (a weighted sum of gathered taps, whose adjoint is a segment sum).
"""
import math

import numpy as np

from ..._backend import namespace
from ..._creation import from_numpy
from ..._ops.linalg import matmul
from ..._ops import pool as _pool
from ..._ops.pad import pad
from ..._ops.resample import Resample
from ..._ops.shape import PixelShuffleForward
from ..._ops.core import _type_name, apply, named
from ..._memory_format import channels_last_3d, suggested
from ..._result_layout import in_input_format
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "unfold",
           "fold", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle"]


# ---- resampling --------------------------------------------------------------------------------
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_SPATIAL_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_CUBIC_A = -0.75


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resamples the spatial dims to ``size`` or by ``scale_factor``
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.interpolate.html).

    Shapes: input (N, C, L) for "nearest", "nearest-exact", "linear", "area"; (N, C, H, W)
    for those and "bilinear", "bicubic"; (N, C, D, H, W) for "nearest", "nearest-exact",
    "area" and "trilinear"; output (N, C, *size) with ``size = floor(in * scale_factor)`` when
    a scale is given. Source coordinates follow PyTorch: with
    ``align_corners`` the corner pixels' centres line up (``src = dst * (in - 1) / (out -
    1)``), else pixel areas do (``src = (dst + 0.5) * scale - 0.5``, where ``scale`` is
    ``1 / scale_factor`` if given and not recomputed, else ``in / out``). "nearest" takes
    ``floor(dst * scale)``. "area" is adaptive average pooling.

    Raises ValueError for both or neither of ``size`` and ``scale_factor``, sequences of the
    wrong length, ``align_corners`` with a non-interpolating mode; NotImplementedError for a
    mode that does not fit the input's rank, unsupported modes (lanczos, antialias) and integer
    inputs (RuntimeError for "area" on 3 spatial dims, as torch's mean); RuntimeError for output
    sizes below 1.
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    scales = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but "
                                 f"got input with spatial dimensions of {spatial} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                                 "size in (o1, o2, ...,oK) format.")
            out_size = [int(v) for v in size]
        else:
            out_size = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, "
                                 f"but got input with spatial dimensions of {spatial} and scale_factor of "
                                 f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                                 "format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(v) for v in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        out_size = [math.floor(n * s) for n, s in zip(spatial, scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires "
                         "a 4-D tensor as input")
    needs = _SPATIAL_DIMS.get(mode)
    if input.ndim not in (3, 4, 5) or (mode not in _SPATIAL_DIMS and mode not in
                                       ("nearest", "area", "nearest-exact")):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: {_MODES} (got {mode})")
    if needs is not None and needs != dim:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {needs + 2}D input")
    if antialias:
        raise NotImplementedError("interpolate: antialias resampling is not supported")
    if min(out_size) <= 0:
        names = ("D", "H", "W")[3 - dim:]
        shown_in = ", ".join(f"{k}: {v}" for k, v in zip(names, spatial))
        shown_out = ", ".join(f"{k}: {v}" for k, v in zip(names, out_size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({shown_in}) "
                           f"output ({shown_out})")
    if mode == "area" and (dim < 3 or input.dtype.is_floating_point):
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](input, out_size)
    if not input.dtype.is_floating_point:
        if mode == "area":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: {_type_name(input.dtype)}")
        kernel = "upsample_nearest2d" if mode.startswith("nearest") else f"upsample_{mode}2d"
        if dim == 3:  # torch's 3-d kernels fail in their index tables
            kernel = "compute_indices_weights_" + ("nearest" if mode.startswith("nearest") else "linear")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'")
    out = input
    for i in range(dim):
        scale = None if scales is None else scales[i]
        out = _resample(out, 2 + i, spatial[i], out_size[i], scale, mode, align_corners)
    return named(in_input_format(out, input), f"Upsample{_UPSAMPLE_NODE[mode]}{dim}DBackward0")  # the grad_fn torch shows


_UPSAMPLE_NODE = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
                  "bilinear": "Bilinear", "bicubic": "Bicubic", "trilinear": "Trilinear"}


def _coordinate_scale(in_size, out_size, scale_factor, align_corners, dtype):
    """PyTorch's ``area_pixel_compute_scale`` in the op-math dtype."""
    if align_corners:
        return dtype((in_size - 1) / (out_size - 1)) if out_size > 1 else dtype(0)
    if scale_factor is not None and scale_factor > 0:
        return dtype(1.0 / scale_factor)
    return dtype(in_size / out_size)


def _resample(x, d, in_size, out_size, scale_factor, mode, align_corners):
    """``x`` resampled along dim ``d``: a weighted sum of taps gathered in order."""
    # PyTorch computes coordinates in float for float inputs and in double for double ones.
    acc, xp = (np.float64 if x.dtype.name == "float64" else np.float32), namespace(x._data)
    dst = xp.arange(out_size).astype(acc)
    scale = _coordinate_scale(in_size, out_size, scale_factor, bool(align_corners), acc)
    if mode in ("nearest", "nearest-exact"):
        shift = acc(0.5) if mode == "nearest-exact" else acc(0)
        src = xp.minimum(xp.floor((dst + shift) * scale).astype(np.int64), in_size - 1)
        return _apply_taps(x, d, in_size, src[None], None)
    src = dst * scale if align_corners else (dst + acc(0.5)) * scale - acc(0.5)
    if mode == "bicubic":
        base = xp.floor(src).astype(np.int64)
        t = (src - base).astype(acc)
        index = xp.stack([base - 1, base, base + 1, base + 2])
        weights = xp.stack(_cubic_weights(t))
    else:
        src = xp.maximum(src, acc(0))
        base = xp.minimum(xp.floor(src).astype(np.int64), in_size - 1)
        lam = xp.clip(src - base, 0, 1).astype(acc)
        index = xp.stack([base, base + (base < in_size - 1)])
        weights = xp.stack([1 - lam, lam])
    return _apply_taps(x, d, in_size, xp.clip(index, 0, in_size - 1), weights.astype(x.dtype.np))


# Up to this many (output x input) matrix entries a dim is resampled by a matrix product,
# whose BLAS kernels (forward and backward) beat gathers and segment sums; beyond it the
# product's cost (input size per output) outgrows them.
_MATRIX_ENTRIES = 1 << 14


def _apply_taps(x, d, in_size, index, weights):
    """``out[..., j] = sum_k weights[k, j] * x[..., index[k, j]]`` along dim ``d``; the tables
    ``index`` and ``weights`` are arrays of ``x``'s namespace."""
    out_size, xp = index.shape[1], namespace(x._data)
    if d < x.ndim - 2:  # a product resamples the last two dims: bring the depth there
        return _apply_taps(x.movedim(d, -2), x.ndim - 2, in_size, index, weights).movedim(-2, d)
    # the tables depend on the sizes alone: wrapped as tensors made here, a compiled graph
    # takes them as constants
    if out_size * in_size > _MATRIX_ENTRIES:
        weights = None if weights is None else from_numpy(weights)._data
        return apply(Resample, x, dim=d, index=from_numpy(index)._data, weights=weights)
    matrix = xp.zeros((out_size, in_size), x.dtype.np)
    rows = xp.arange(out_size)
    for k in range(index.shape[0]):
        xp.add.at(matrix, (rows, index[k]), 1 if weights is None else weights[k])
    matrix = from_numpy(matrix)
    return matmul(x, matrix.mT) if d == x.ndim - 1 else matmul(matrix, x)


def _cubic_weights(t):
    """Keys' cubic convolution weights (a = -0.75, as PyTorch) of the 4 taps around ``t``."""
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.upsample.html"""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: :func:`interpolate` with mode "nearest".
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.upsample_nearest.html"""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: :func:`interpolate` with mode "bilinear" and ``align_corners=True``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.upsample_bilinear.html"""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- sliding blocks ----------------------------------------------------------------------------
def _block_args(kernel_size, dilation, padding, stride):
    args = []
    for what, value in (("kernel_size", kernel_size), ("dilation", dilation), ("padding", padding),
                        ("stride", stride)):
        if isinstance(value, (tuple, list)):
            if len(value) != 2:
                raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(value)}")
            value = tuple(int(v) for v in value)
        else:
            value = (int(value),) * 2
        args.append(value)
    kernel, dilation, padding, stride = args
    for what, value, label, positive in (("kernel size", kernel, "kernel", True),
                                         ("stride", stride, "stride", True),
                                         ("dilation", dilation, "dilation", True),
                                         ("padding", padding, "pad", False)):
        if min(value) < (1 if positive else 0):
            rule = "be greater than zero" if positive else "be non-negative"
            raise RuntimeError(f"{what} should {rule}, but got {label}_height: {value[0]} "
                               f"{label}_width: {value[1]}")
    return kernel, dilation, padding, stride


def _blocks(spatial, kernel, dilation, padding, stride):
    return [(n + 2 * p - d * (k - 1) - 1) // s + 1
            for n, k, d, p, s in zip(spatial, kernel, dilation, padding, stride)]


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding blocks (im2col; https://pytorch.org/docs/stable/generated/torch.nn.functional.unfold.html).

    Shapes: input (N, C, H, W) or (C, H, W); output (N, C * kH * kW, L) or
    (C * kH * kW, L), L the number of blocks, each column one block in (C, kH, kW) order.
    RuntimeError for non-positive kernel, stride or dilation, negative padding, other
    ranks, empty dims, or no block fitting.
    """
    kernel, dilation, padding, stride = _block_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    blocks = _blocks(input.shape[-2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {tuple(input.shape[-2:])}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, calculated shape of the array of sliding "
                           f"blocks as {tuple(blocks)}, but its components must be at least one.")
    cols = apply(_pool.Im2Col, input, kernel_size=kernel, dilation=dilation, padding=padding, stride=stride)
    lead = tuple(input.shape[:-3])
    return cols.reshape(lead + (input.shape[-3] * kernel[0] * kernel[1], blocks[0] * blocks[1]))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding blocks into an image (col2im), the adjoint of :func:`unfold`
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.fold.html).

    Shapes: input (N, C * kH * kW, L) or (C * kH * kW, L); output (N, C, *output_size) or
    (C, *output_size); overlapping blocks add up. RuntimeError when dim -2 is not a
    multiple of kH * kW or L is not the number of blocks that fit ``output_size``.
    """
    output_size = tuple(int(v) for v in output_size) if isinstance(output_size, (tuple, list)) \
        else (int(output_size),) * 2
    kernel, dilation, padding, stride = _block_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    per_block = kernel[0] * kernel[1]
    if input.shape[-2] % per_block:
        raise RuntimeError(f"Expected size of input's dimension {input.ndim - 2} to be divisible by the product "
                           f"of kernel_size, but got input.size({input.ndim - 2})={input.shape[-2]} and "
                           f"kernel_size={kernel}.")
    blocks = _blocks(output_size, kernel, dilation, padding, stride)
    if blocks[0] * blocks[1] != input.shape[-1]:
        raise RuntimeError(f"Given output_size={output_size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, expected size of input's dimension "
                           f"{input.ndim - 1} to match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got input.size({input.ndim - 1})="
                           f"{input.shape[-1]}.")
    lead = tuple(input.shape[:-2])
    cols = input.reshape(lead + (input.shape[-2] // per_block,) + kernel + tuple(blocks))
    return apply(_pool.Col2Im, cols, output_size=output_size, kernel_size=kernel, dilation=dilation,
                 padding=padding, stride=stride)


# ---- pixel shuffling ---------------------------------------------------------------------------
def _two_d_formats_only(input):
    """RuntimeError, as torch's pixel (un)shuffle kernels, for an input laid out channels_last_3d."""
    if input.ndim == 5 and hasattr(input._data, "flags") and suggested(input._data) is channels_last_3d:
        raise RuntimeError("Unsupported memory format. Supports only ChannelsLast, Contiguous")


def pixel_shuffle(input, upscale_factor):
    """Rearranges (*, C * r * r, H, W) into (*, C, H * r, W * r), ``r = upscale_factor``
    (Shi et al., 2016; https://pytorch.org/docs/stable/generated/torch.nn.functional.pixel_shuffle.html).
    RuntimeError for fewer than 3 dims, r < 1 or channels not divisible by r * r."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                           f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    _two_d_formats_only(input)
    return named(in_input_format(apply(PixelShuffleForward, input, factor=r, shuffle=True), input, ranks=(4,)),
                 "PixelShuffleBackward0")  # (a channels-last input's result is a copy: torch's node name)


def pixel_unshuffle(input, downscale_factor):
    """Rearranges (*, C, H * r, W * r) into (*, C * r * r, H, W), the inverse of
    :func:`pixel_shuffle` (https://pytorch.org/docs/stable/generated/torch.nn.functional.pixel_unshuffle.html).
    RuntimeError for fewer than 3 dims, r < 1 or H, W not divisible by r."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    for name, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={size} is not divisible by {r}")
    _two_d_formats_only(input)
    return named(in_input_format(apply(PixelShuffleForward, input, factor=r, shuffle=False), input, ranks=(4,)),
                 "PixelUnshuffleBackward0")


def channel_shuffle(input, groups):
    """Splits the channels of (N, C, *) into ``groups`` groups of C / groups and interleaves them:
    output channel ``i * groups + g`` is input channel ``g * (C / groups) + i`` (ShuffleNet, Zhang
    et al., 2017; https://pytorch.org/docs/stable/generated/torch.nn.ChannelShuffle.html). Any
    dtype; the result is a new contiguous tensor of the input's shape. RuntimeError for fewer than
    3 dims, groups < 1 or C not divisible by groups."""
    groups = int(groups)
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    x = input.reshape((n, groups, c // groups) + tuple(input.shape[2:])).transpose(1, 2)
    x = x.reshape(tuple(input.shape))
    if groups == 1 or groups == c:  # the identity: reshape gave a view, torch gives a new tensor
        x = x.clone()
    return named(x, "ChannelShuffleBackward0")
