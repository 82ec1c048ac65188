"""``make_tensor``: a random test tensor of any dtype, drawn as PyTorch draws it (so the same
seed gives PyTorch's values for bool, integer and real float dtypes).
Source: https://pytorch.org/docs/stable/testing.html#torch.testing.make_tensor
"""
import math

import numpy as np

from .. import _backend, _dtype
from .._creation import empty
from .._sampling import randint
from .._tensor import Tensor

__all__ = ["make_tensor"]


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` (ints, or one sequence) and ``dtype`` filled at random: bool
    uniformly; integers from [low, high) (default [-9, 10), clamped to the dtype's range);
    floats from U(low, high) (default [-9, 9]); complex numbers with both parts so drawn.
    ``exclude_zero`` replaces zeros by 1 (integers) or the dtype's smallest normal number;
    ``noncontiguous`` returns a strided view with the same values. ValueError if ``low >=
    high`` or either is nan."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    requested = tuple(shape)
    strided = noncontiguous and math.prod(requested) > 1
    if strided:  # PyTorch draws twice the last dim and keeps every second element
        shape = requested[:-1] + (2 * requested[-1],)
    if dtype is _dtype.bool:
        result = randint(0, 2, shape, device=device).to(_dtype.bool)
    elif dtype.is_floating_point or dtype.is_complex:
        real = dtype.to_real() if dtype.is_complex else dtype
        info = _backend.finfo(real.np)
        low, high = _limits(low, high, -9, 9, float(info.min), float(info.max), integral=False)
        parts = empty(tuple(shape) + ((2,) if dtype.is_complex else ()), dtype=real, device=device)
        if high - low >= float(info.max):  # the span itself would overflow: draw half of it
            parts.uniform_(low / 2, high / 2).mul_(2)
        else:
            parts.uniform_(low, high)
        data = parts._data[..., 0] + 1j * parts._data[..., 1] if dtype.is_complex else parts._data
        result = Tensor._make(np.asarray(data, dtype=dtype.np))
        zero_replacement = float(info.tiny)
    else:
        info = np.iinfo(dtype.np)
        low, high = _limits(low, high, -9, 10, int(info.min), int(info.max), integral=True)
        result = randint(low, high, shape, dtype=dtype, device=device)
        zero_replacement = 1
    if exclude_zero and dtype is not _dtype.bool:
        result = result.masked_fill(result == 0, zero_replacement)
    if strided:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _limits(low, high, default_low, default_high, lowest, highest, integral):
    """``low``/``high`` with PyTorch's defaults and checks, clamped to the dtype's range."""
    if (low is not None and math.isnan(low)) or (high is not None and math.isnan(high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    low = default_low if low is None else low
    high = default_high if high is None else high
    if low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    low, high = max(low, lowest), min(high, highest)
    return (math.ceil(low), math.ceil(high)) if integral else (low, high)
