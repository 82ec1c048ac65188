"""Evenly spaced values: ``linspace`` and ``logspace``, value for value as PyTorch's CPU kernels
(https://pytorch.org/docs/stable/generated/torch.linspace.html)."""
import builtins
import math

import numpy as np

from . import _dtype
from ._creation import _SCALAR_TYPE, _finish, _np, _overflow, real_if_fits
from ._device import check_device
from ._meta import placed
from ._ops.core import _type_name
from ._ops.outs import factory_out
from ._ops.refusals import refuse_unsigned
from ._tensor import Tensor

__all__ = ["linspace", "logspace"]


@factory_out("aten::linspace")
def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (numbers or 0-d
    tensors); a complex ``start`` or ``end`` gives the default complex dtype. RuntimeError
    for a complex end with a real ``dtype`` or an end ``dtype`` cannot hold (torch's checked
    conversion); NotImplementedError for bool
    (https://pytorch.org/docs/stable/generated/torch.linspace.html)."""
    check_device(device)
    refuse_unsigned("linspace_cpu", dtype)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = (_linspace_end(v, name) for v, name in ((start, "start"), (end, "end")))
    is_complex = isinstance(start, builtins.complex) or isinstance(end, builtins.complex)
    inferred = _dtype.get_default_dtype().to_complex() if is_complex else None
    dtype = dtype or inferred
    if is_complex and not dtype.is_complex:
        raise RuntimeError(f"torch.linspace(): inferred dtype {_SCALAR_TYPE[inferred.name]} can't be safely "
                           f"cast to passed dtype {_type_name(dtype)}")
    if dtype is _dtype.bool:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    for v in ((start, end)[:steps] if dtype is not None else ()):  # torch's checked conversions (fill_ for one step)
        real_if_fits(v, dtype)
        if dtype is _dtype.float16 and math.isfinite(v.real) and abs(v.real) > 65504:
            _overflow(dtype)
    if is_complex or (dtype is not None and dtype.is_complex):  # torch's complex step is taken part by part
        start, end, real = builtins.complex(start), builtins.complex(end), dtype.to_real()
        values = np.empty(int(steps), dtype.np)
        values.real = _spaced(start.real, end.real, int(steps), real)
        values.imag = _spaced(start.imag, end.imag, int(steps), real)
        return _finish(values, requires_grad)
    return _finish(_spaced(float(start), float(end), int(steps), dtype or _dtype.get_default_dtype()),
                   requires_grad)


def _linspace_end(value, name):
    """A Python number for linspace's ``start`` or ``end`` (a 0-d tensor's value)."""
    if not isinstance(value, Tensor):
        return value
    if value.ndim:
        raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, but got {name} with "
                           f"{value.ndim} dimension(s).")
    return value.item()


def _spaced(start, end, steps, dtype):
    """PyTorch's CPU linspace, value for value: ``start`` and ``end`` cast to ``dtype``,
    ``step = (end - start) / (steps - 1)`` in ``dtype`` (in float64 for integers), then
    ``start + step * i`` for the first half and ``end - step * (steps - 1 - i)`` for the rest,
    each a fused multiply-add (one rounding, as torch's kernels compiled for AVX2 and up), for
    floats; integers truncate. float16/bfloat16 round after each operation, as their scalar type."""
    i = np.arange(steps)
    first = i < max(steps // 2, 1)  # one step: start
    if dtype.is_floating_point and dtype.itemsize < 4:  # every operation rounds to the 16-bit type
        t = dtype.np.type
        s, e = t(start), t(end)
        step = (e - s) / t(max(steps - 1, 1))
        k = i.astype(dtype.np)
        return np.where(first, s + step * k, e - step * (t(steps - 1) - k)).astype(dtype.np)
    if dtype.is_floating_point:
        t = dtype.np.type
        s, e = t(start), t(end)
        step = (e - s) / t(max(steps - 1, 1))
        wide = np.longdouble if t is np.float64 else np.float64  # holds step * i exactly (mostly)
        k = i.astype(dtype.np).astype(wide)
    else:  # integers: the ends truncated to the type (uint8 wraps -255..-1), the step and values in float64
        s, e = (float(int(v) % 256 if dtype is _dtype.uint8 else int(v)) for v in (start, end))
        step = (e - s) / max(steps - 1, 1)
        wide = np.longdouble
        k = i.astype(wide)
    s, e, step = wide(s), wide(e), wide(step)
    values = np.where(first, s + step * k, e - step * (steps - 1 - k))
    values = values.astype(np.float64)  # the fused multiply-add's one rounding
    return values.astype(dtype.np) if dtype.is_floating_point else np.trunc(values).astype(dtype.np)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``steps`` values ``base ** x`` for x evenly spaced from ``start`` to ``end``
    (https://pytorch.org/docs/stable/generated/torch.logspace.html)."""
    check_device(device)
    arr = np.logspace(float(start), float(end), int(steps), base=base)
    return _finish(arr.astype(_np(dtype)), requires_grad)


linspace, logspace = placed(linspace), placed(logspace)  # on the meta device when asked
