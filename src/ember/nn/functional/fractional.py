"""Fractional max pooling in 2-D and 3-D (Graham, 2014, https://arxiv.org/abs/1412.6071;
https://pytorch.org/docs/stable/generated/torch.nn.functional.fractional_max_pool2d.html,
https://pytorch.org/docs/stable/generated/torch.nn.functional.fractional_max_pool3d.html).

Each output row ``i`` of a pooled dim pools the window starting at input row ``seq[i]``, a
pseudo-random sequence from one sample ``u`` in [0, 1) per plane and dim: with
``alpha = (in - k) / (out - 1)``, ``seq[i] = int((i + u) * alpha) - int(u * alpha)`` and the last
window ends at the input's edge. As PyTorch does, alpha is computed in the input's dtype; in 2-D
sample ``[..., 0]`` draws the columns and ``[..., 1]`` the rows, in 3-D ``[..., 0, 1, 2]`` draw
time, rows and columns. Each window's maximum is its first largest element in row-major order,
or its last NaN when it holds one (PyTorch's CPU kernel: ``val > max || isnan(val)``). The windows
are picked on the backend arrays (no history); the values are then one gather from the input,
whose gradient scatters each output's gradient to its max.
"""
import itertools
import math

import numpy as np

from ..._backend import namespace
from ..._creation import from_numpy
from ..._ops.core import named
from ..._ops.indexing import take
from ..._sampling import rand
from ..modules.utils import _ntuple

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

# Per pooled dim: its name in torch's messages and the column of the samples that draws it.
_DIMS = {2: (("height", 1), ("width", 0)), 3: (("time", 0), ("height", 1), ("width", 2))}


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


def _sizes(value, d, what):
    if isinstance(value, (tuple, list)) and len(value) not in (1, d):
        count = "three Ints" if d == 3 else "Ints"
        raise RuntimeError(f"fractional_max_pool{d}d: {what} must either be a single Int or tuple of {count}")
    return _ntuple(d)(value[0] if isinstance(value, (tuple, list)) and len(value) == 1 else value)


def _check_input(input, d):
    """The input's rank and non-empty plane dims, with torch's messages (its 3-D kernel says
    ``_out()`` and names the empty dim)."""
    name = f"fractional_max_pool{d}d" + ("_out" if d == 3 else "")
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got: {list(input.shape)}")
    first = input.ndim - d - 1
    empty = [i for i in range(first, input.ndim) if input.shape[i] == 0]
    if empty and d == 3:
        raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got"
                           f"{list(input.shape)} with dimension {empty[0]} being empty.")
    if empty:
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got: {list(input.shape)}")


def _check_samples(samples, n, c, d, dtype):
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.dtype is not dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.shape[2] != d:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {d}; got {samples.shape[2]}.")
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")


def _window_argmax(data, starts, kernel):
    """Flat index in ``data`` (P, S_1..S_d), and in its plane, of the max of every window
    (P, out_1..out_d): window
    ``j`` of dim ``i`` covers ``starts[i][:, j]`` to ``+ kernel[i]``. Every window shares its
    element offsets, so one pass per offset (in row-major order) gathers that element of all
    windows and keeps it where it is larger, or a NaN: the pick is each window's first max, or
    its last NaN (torch's ``val > max || isnan(val)``), with no (windows x elements) table."""
    xp = namespace(data)
    nan = data.dtype.kind in "fc" and bool(xp.isnan(data).any())
    p, sizes, d = data.shape[0], data.shape[1:], data.ndim - 1
    strides = [math.prod(sizes[i + 1:]) for i in range(d)]
    plane = xp.arange(p, dtype=np.int64).reshape((p,) + (1,) * d) * math.prod(sizes)
    base = plane  # each window's first element, flat in ``data``
    for i in range(d):
        base = base + starts[i].reshape((p,) + (1,) * i + starts[i].shape[1:] + (1,) * (d - 1 - i)) * strides[i]
    flat_data = data.reshape(-1)
    best, best_at = xp.take(flat_data, base), base
    for element in itertools.product(*(range(k) for k in kernel)):
        offset = sum(a * stride for a, stride in zip(element, strides))
        if offset:
            at = base + offset
            v = xp.take(flat_data, at)
            better = (v > best) | xp.isnan(v) if nan else v > best
            best, best_at = xp.where(better, v, best), xp.where(better, at, best_at)
    return best_at, best_at - plane


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, samples, d):
    """Values and int64 indices (flat into each input plane) of d-D fractional max pooling."""
    if output_size is None and output_ratio is None:
        raise ValueError(f"fractional_max_pool{d}d requires specifying either an output_size or an output_ratio")
    kernel = _sizes(kernel_size, d, "kernel_size")
    if output_size is None:
        if d == 2 and len(output_ratio) > 2:  # a number: TypeError, as torch's functional form
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _ntuple(d)(output_ratio)
        output_size = tuple(int(input.shape[i - d] * ratio[i]) for i in range(d))
    out = _sizes(output_size, d, "output_size")
    _check_input(input, d)
    batched = input.ndim == d + 2
    x = input if batched else input.unsqueeze(0)
    n, c, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
    for (name, _), o, k, size in zip(_DIMS[d], out, kernel, sizes):
        if o + k - 1 > size - (d == 3):  # torch's 3-D kernel wants one more row than it needs
            raise RuntimeError(f"fractional_max_pool{d}d{'_out' if d == 3 else ''}(): pool {name} {k} too large "
                               f"relative to input {name} {size}")
    if samples is None:
        samples = rand(n, c, d, dtype=input.dtype, device=input.device)
    _check_samples(samples, n, c, d, input.dtype)
    u = samples.detach()[:n].reshape(n * c, d)._data
    data = x.detach()._data.reshape((n * c,) + sizes)
    at, flat = _window_argmax(data, [_starts(u[:, _DIMS[d][i][1]], sizes[i], out[i], kernel[i]) for i in range(d)],
                              kernel)
    # One take from the flattened input: its backward adds the gradient at a 1-D index, which
    # NumPy does ~40x faster than at the (n, c, position) grid a gather along dim 2 would use.
    values = take(x, from_numpy(at))
    indices = from_numpy(flat)
    shape = tuple(input.shape[:-d]) + out
    return named(values.reshape(shape), f"FractionalMaxPool{d}DBackward0"), indices.reshape(shape)


def _values_or_both(with_indices):
    """The public form of ``with_indices``: its values, or (values, indices) with ``return_indices``
    (PyTorch's ``boolean_dispatch`` on ``return_indices``)."""
    def pool(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        values, indices = with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                       _random_samples)
        return (values, indices) if return_indices else values
    pool.__name__ = pool.__qualname__ = with_indices.__name__.removesuffix("_with_indices")
    pool.__doc__ = f":func:`{with_indices.__name__}`'s values, or (values, indices) with ``return_indices``."
    return pool


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Max over (kH, kW) windows at fractional strides: input (N, C, H, W) or (C, H, W) ->
    (N, C, oH, oW), with ``output_size`` (oH, oW) or ``output_ratio`` (oH = int(H * ratio)).
    ``_random_samples`` (N, C, 2) in [0, 1), of the input's dtype, fixes the windows (drawn with
    ``rand`` otherwise). Returns (values, int64 indices ``h * W + w`` into each input plane).
    ValueError without a size or ratio; RuntimeError when a window overruns the input or the
    samples are misshapen or of another dtype."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)


fractional_max_pool2d = _values_or_both(fractional_max_pool2d_with_indices)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Max over (kT, kH, kW) windows at fractional strides: input (N, C, T, H, W) or (C, T, H, W)
    -> (N, C, oT, oH, oW), with ``output_size`` (oT, oH, oW) or ``output_ratio`` (oT = int(T * ratio)).
    ``_random_samples`` (N, C, 3) in [0, 1), of the input's dtype, fixes the windows (drawn with
    ``rand`` otherwise). Returns (values, int64 indices ``(t * H + h) * W + w`` into each input
    volume). ValueError without a size or ratio; RuntimeError when a window overruns the input
    (torch's kernel asks ``oT + kT - 1 < T``, strictly), the input has an empty plane dim, or the
    samples are misshapen or of another dtype."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)


fractional_max_pool3d = _values_or_both(fractional_max_pool3d_with_indices)
