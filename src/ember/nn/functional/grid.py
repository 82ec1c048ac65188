"""Sampling grids: ``affine_grid`` builds one from affine matrices, ``grid_sample`` reads an
image at its points (the two halves of a spatial transformer: Jaderberg et al., 2015,
https://arxiv.org/abs/1506.02025; https://pytorch.org/docs/stable/nn.functional.html#vision-functions).

Both are written in ember ops, so the gradients with respect to the image, the grid and
``theta`` (and the higher ones) come from the ops' derivatives. The rules are PyTorch's:
a grid point's coordinates run from -1 (the left/top edge) to 1 (the right/bottom edge) and
are scaled to pixels as ``((x + 1) / 2) * (size - 1)`` with ``align_corners`` (-1 and 1 are
the corner pixels' centres), else ``((x + 1) * size - 1) / 2`` (they are the outer edges);
"border" clamps a coordinate into the image, "reflection" mirrors it at the edges, "zeros"
reads 0 outside. Where a clamp or mirror is at its edge the coordinate's gradient is
PyTorch's choice (0 at a clamp's bounds, +1 at a mirror's centre).
"""
import itertools
import math
import warnings

from ..._creation import ones, tensor
from ..._spacing import linspace
from ..._ops.core import _type_name, named
from ..._ops.pointwise_binary import where
from ..._ops.join import stack
from .image import _cubic_weights

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                          "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                          "See the documentation of grid_sample for details.")


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of affine maps ``theta`` for an output of ``size``
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.affine_grid.html).

    Shapes: theta (N, 2, 3) for ``size`` (N, C, H, W), giving a grid (N, H, W, 2); theta
    (N, 3, 4) for (N, C, D, H, W), giving (N, D, H, W, 3). Each output point's normalised
    coordinates (x, y[, z], 1), spaced evenly over [-1, 1] (``align_corners``) or over the
    pixel centres within it, are multiplied by ``theta``. ``align_corners=None`` warns and
    means False. Raises ValueError for an integer ``theta``, a ``theta`` of the wrong shape or
    a size with a dim below 1; NotImplementedError for a ``size`` of other than 4 or 5 dims.
    """
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    shown, size = size, [int(s) for s in size]  # messages show ``size`` as given
    if len(size) not in (4, 5):
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {shown}.")
    dims = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[-2:]) != (dims, dims + 1):
        raise ValueError(f"Expected a batch of {dims}D affine matrices of shape Nx{dims}x{dims + 1} for size "
                         f"{shown}. Got {theta.shape}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the "
                      "documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {shown}")
    # base[..., k]: the k-th normalised coordinate of each point (x along the last dim, then
    # y, z), then 1
    base = []
    for k, n in enumerate(reversed(spatial)):
        shape = [1] * dims
        shape[dims - 1 - k] = n
        base.append(_steps(n, align_corners, theta.dtype).reshape(shape).expand(spatial))
    base = stack(base + [ones(spatial, dtype=theta.dtype)], -1)
    points = base.reshape(1, -1, dims + 1).expand(size[0], -1, -1)
    grid = points.bmm(theta.transpose(1, 2)).reshape([size[0]] + spatial + [dims])
    return named(grid, "AffineGridGeneratorBackward0")  # the grad_fn torch shows


def _steps(n, align_corners, dtype):
    """``n`` evenly spaced normalised coordinates: -1 .. 1, or the pixel centres (n - 1) / n
    of that; a single step is 0."""
    if n <= 1:
        return tensor([0.0], dtype=dtype)
    steps = linspace(-1, 1, n, dtype=dtype)
    return steps if align_corners else steps * (n - 1) / n


_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``input`` read at the points of ``grid``
    (https://pytorch.org/docs/stable/generated/torch.nn.functional.grid_sample.html).

    Shapes: input (N, C, H, W) with grid (N, Ho, Wo, 2), giving (N, C, Ho, Wo); input
    (N, C, D, H, W) with grid (N, Do, Ho, Wo, 3), giving (N, C, Do, Ho, Wo). ``grid[..., 0]``
    is x (along W), ``[..., 1]`` y, ``[..., 2]`` z, each normalised to [-1, 1] (see the module
    docstring for ``align_corners`` and ``padding_mode``). "bilinear" (trilinear on 5-D input)
    weighs the 2 (or 8) pixels around a point, "nearest" takes the nearest (ties to even),
    "bicubic" (4-D only) Keys' cubic convolution (a = -0.75) over 4 x 4 pixels, each
    padded on its own. ``align_corners=None`` warns and means False.

    Raises ValueError for an unknown mode or padding_mode; RuntimeError for inputs of other
    ranks, a grid of another rank, batch or last dim, different dtypes, an empty spatial dim,
    or bicubic on 5-D input.
    """
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    _check_grid(input, grid, mode)
    dims = input.ndim - 2
    spatial = list(input.shape[2:])  # (D,) H, W
    sizes = spatial[::-1]  # along the grid's coordinates: W, H (, D)
    # torch's 2-D kernels are compiled for vector units, whose multiply-adds round once; its
    # 3-D kernels round each product and sum
    fused = dims == 2
    coords = [_unnormalize(grid[..., k], sizes[k], align_corners, fused) for k in range(dims)]
    if mode == "bicubic":
        return named(_bicubic(input, coords, sizes, padding_mode, align_corners), "GridSampler2DBackward0")
    coords = [_pad(c, n, padding_mode, align_corners) for c, n in zip(coords, sizes)]
    if mode == "nearest":
        out = _gather(input, [c.round() for c in coords], sizes)
        if grid.requires_grad:  # as in PyTorch, the grid gets a gradient, of zeros
            out = out + sum(where(c.isfinite(), c, 0.0) * 0 for c in coords).unsqueeze(1)
        return named(out, f"GridSampler{dims}DBackward0")
    lows = [c.floor() for c in coords]
    out = None
    for corner in itertools.product((0, 1), repeat=dims):  # (z,) y, x bits; x varies fastest
        bits = corner[::-1]  # along the grid's coordinates
        weight = None
        for c, low, bit in zip(coords, lows, bits):  # each coordinate's linear weight, x first
            factor = c - low if bit else (1 - (c - low) if fused else low + 1 - c)
            weight = factor if weight is None else weight * factor
        value = _gather(input, [low + bit for low, bit in zip(lows, bits)], sizes)
        out = value * weight.unsqueeze(1) if out is None else _fma(value, weight.unsqueeze(1), out, fused)
    return named(out, f"GridSampler{dims}DBackward0")


def _fma(a, b, c, fused=True):
    """``a * b + c``; ``fused``: rounded once (computed in float64) for float32 and the 16-bit
    floats, as a multiply-add instruction does, twice for float64."""
    if not fused or a.dtype.itemsize >= 8:
        return a * b + c
    return (a.double() * b + c).to(a.dtype)


def _check_grid(input, grid, mode):
    shapes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found {_type_name(grid.dtype)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {shapes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but "
                           f"got grid with sizes {list(grid.shape)}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected {4 if input.ndim == 4 else 5}D input and grid with same "
                           f"number of dimensions, but got {shapes}")
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {d} being empty")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _unnormalize(x, size, align_corners, fused):
    """Normalised coordinates [-1, 1] to pixel coordinates, rounded as torch's kernels."""
    if align_corners:
        return (x + 1) * ((size - 1) / 2)
    return _fma(x + 1, size / 2, -0.5) if fused else ((x + 1) * size - 1) / 2


def _clip(x, size):
    """``x`` clamped to [0, size - 1] (NaN to 0); its gradient is 0 at and beyond the bounds."""
    return where(x > 0, where(x < size - 1, x, float(size - 1)), 0.0)


def _reflect(x, twice_low, twice_high):
    """``x`` mirrored at ``twice_low / 2`` and ``twice_high / 2`` until it lies between them."""
    if twice_low == twice_high:
        return x * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    x = x - low
    x = where(x < 0, -x, x)
    flips = (x / span).floor()
    extra = x.fmod(span)
    return where(flips.fmod(2) == 0, extra + low, span - extra + low)


def _pad(x, size, padding_mode, align_corners):
    """A pixel coordinate moved into the image as ``padding_mode`` says ("zeros": as it is)."""
    if padding_mode == "zeros":
        return x
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    return _clip(x, size)


def _gather(input, coords, sizes):
    """``input`` (N, C, *spatial) at the integer-valued pixel coordinates ``coords`` (x, y[, z],
    each (N, *out)), 0 where a point lies outside (or is not finite): (N, C, *out)."""
    n, c = input.shape[:2]
    out_shape = list(coords[0].shape[1:])
    inside = None
    for coord, size in zip(coords, sizes):
        ok = (coord >= 0) & (coord <= size - 1)
        inside = ok if inside is None else inside & ok
    flat, stride = None, 1
    for coord, size in zip(coords, sizes):
        index = where(inside, coord, 0.0).long() * stride
        flat = index if flat is None else flat + index
        stride *= size
    flat = flat.reshape(n, 1, math.prod(out_shape)).expand(n, c, math.prod(out_shape))
    values = input.reshape(n, c, math.prod(sizes)).gather(2, flat).reshape([n, c] + out_shape)
    return where(inside.unsqueeze(1), values, 0.0)


def _bicubic(input, coords, sizes, padding_mode, align_corners):
    """4 x 4 taps around each point, each tap's coordinate padded as ``padding_mode`` says."""
    x, y = coords
    x0, y0 = x.floor(), y.floor()
    wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
    rows = []
    for i in range(4):
        ty = _pad(y0 - 1 + i, sizes[1], padding_mode, align_corners)
        row = None
        for j in range(4):
            tx = _pad(x0 - 1 + j, sizes[0], padding_mode, align_corners)
            term = _gather(input, [tx, ty], sizes) * wx[j].unsqueeze(1)
            row = term if row is None else row + term
        rows.append(row)
    out = None
    for i, row in enumerate(rows):
        term = row * wy[i].unsqueeze(1)
        out = term if out is None else out + term
    return out
