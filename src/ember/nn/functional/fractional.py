"""Fractional max pooling (Graham, 2014, https://arxiv.org/abs/1412.6071;
https://pytorch.org/docs/stable/generated/torch.nn.functional.fractional_max_pool2d.html).

Each output row ``i`` pools the window starting at input row ``seq[i]``, a pseudo-random
sequence from one sample ``u`` in [0, 1) per plane and dim: with
``alpha = (in - k) / (out - 1)``, ``seq[i] = int((i + u) * alpha) - int(u * alpha)`` and the last
window ends at the input's edge. As PyTorch does, alpha is computed in the input's dtype and
sample ``[..., 0]`` draws the columns, ``[..., 1]`` the rows. The pooling itself is a gather of
every window's elements and an ``argmax`` over them (a window with a nan picks its last nan,
as torch), then a gather of the maxima from the input, whose gradient scatters each output's
gradient to its max.
"""
import numpy as np

from ..._backend import namespace
from ..._creation import from_numpy
from ..._ops.core import named
from ..._sampling import rand
from ..modules.utils import _pair

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices"]


def _starts(samples, size, out, k):
    """(P, out) window starts for P samples, in the samples' float dtype (with their ``xp``)."""
    xp = namespace(samples)
    last = xp.full((samples.shape[0], 1), size - k, dtype=np.int64)
    if out == 1:
        return last
    alpha = samples.dtype.type(size - k) / samples.dtype.type(out - 1)
    i = xp.arange(out - 1, dtype=samples.dtype)
    seq = ((i + samples[:, None]) * alpha).astype(np.int64) - (samples[:, None] * alpha).astype(np.int64)
    return xp.concatenate([seq, last], axis=1)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Max over (kH, kW) windows at fractional strides: input (N, C, H, W) or (C, H, W) ->
    (N, C, oH, oW), with ``output_size`` (oH, oW) or ``output_ratio`` (oH = int(H * ratio)).
    ``_random_samples`` (N, C, 2) in [0, 1) fixes the windows (drawn with ``rand`` otherwise).
    Returns (values, int64 indices ``h * W + w`` into each input plane). ValueError without a
    size or ratio; RuntimeError when a window overruns the input or the samples are misshapen."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    kh, kw = _pair(kernel_size)
    if output_size is None:
        if len(output_ratio) > 2:  # a number: TypeError, as torch's functional form
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _pair(output_ratio)
        output_size = (int(input.shape[-2] * ratio[0]), int(input.shape[-1] * ratio[1]))
    oh, ow = _pair(output_size)
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError(f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    n, c, h, w = x.shape
    for name, out, k, size in (("height", oh, kh, h), ("width", ow, kw, w)):
        if out + k - 1 > size:
            raise RuntimeError(f"fractional_max_pool2d(): pool {name} {k} too large relative to input "
                               f"{name} {size}")
    if _random_samples is None:
        _random_samples = rand(n, c, 2, dtype=input.dtype)
    if _random_samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {_random_samples.ndim}")
    if _random_samples.shape[2] != 2:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to 2; got {_random_samples.shape[-1]}.")
    if _random_samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if _random_samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    u = _random_samples.detach().to(input.dtype)[:n].reshape(n * c, 2)._data
    xp = namespace(u)  # (the windows are a table made beside the samples, with their library)
    rows = _starts(u[:, 1], h, oh, kh)[:, :, None] + xp.arange(kh)  # (P, oH, kH)
    cols = _starts(u[:, 0], w, ow, kw)[:, :, None] + xp.arange(kw)  # (P, oW, kW)
    flat = rows[:, :, None, :, None] * w + cols[:, None, :, None, :]  # (P, oH, oW, kH, kW)
    positions = from_numpy(flat.reshape(n, c, oh * ow, kh * kw))
    planes = x.reshape(n, c, h * w)
    windows = planes.detach().gather(2, positions.reshape(n, c, -1)).reshape(n, c, oh * ow, kh * kw)
    # each window's first max, or its last nan as torch's kernel (which takes every nan it meets)
    nan = windows.isnan()
    last_nan = (kh * kw - 1) - nan.flip(3).to(positions.dtype).argmax(dim=3, keepdim=True)
    pick = last_nan.where(nan.any(dim=3, keepdim=True), windows.argmax(dim=3, keepdim=True))
    indices = positions.gather(3, pick).squeeze(3)
    values = planes.gather(2, indices)  # the gradient: one scatter of (N, C, oH * oW)
    values, indices = values.reshape(input.shape[:-2] + (oh, ow)), indices.reshape(input.shape[:-2] + (oh, ow))
    return named(values, "FractionalMaxPool2DBackward0"), indices


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """:func:`fractional_max_pool2d_with_indices`'s values, or (values, indices) with ``return_indices``."""
    values, indices = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                                         return_indices, _random_samples)
    return (values, indices) if return_indices else values
