"""Observers: they watch float tensors and choose quantization parameters
(``torch.ao.quantization.observer``, https://pytorch.org/docs/stable/quantization-support.html).

From the observed range [min, max], widened to contain 0 so that 0 is exactly representable,
and the integer range [qmin, qmax] of the dtype (one bit less with ``reduce_range``):

- affine: ``scale = (max - min) / (qmax - qmin)``,
  ``zero_point = clamp(qmin - round(min / scale), qmin, qmax)``;
- symmetric: ``scale = max(-min, max) / ((qmax - qmin) / 2)``, ``zero_point = 0`` for qint8
  (128 for quint8).

``scale`` is at least ``eps`` (float32 machine epsilon by default). All arithmetic is float32,
as PyTorch's observers compute it, so the chosen scales equal PyTorch's.
"""
import numpy as np

from ..._creation import from_numpy
from ..._dtype import float32
from .qtensor import (per_channel_affine, per_channel_symmetric, per_tensor_affine,
                      per_tensor_symmetric, qint8, quant_range, quint8)

__all__ = ["ObserverBase", "MinMaxObserver", "PerChannelMinMaxObserver", "PlaceholderObserver",
           "default_weight_observer", "default_per_channel_weight_observer",
           "default_dynamic_quant_observer"]


class _WithArgs:
    """What ``Observer.with_args(...)`` returns: a constructor with some arguments bound, whose
    repr names them (as PyTorch's ``_PartialWrapper`` does)."""

    def __init__(self, cls, **kwargs):
        self.cls = cls
        self.kwargs = kwargs

    def __call__(self, **kwargs):
        return self.cls(**{**self.kwargs, **kwargs})

    def with_args(self, **kwargs):
        """A factory like this one with ``kwargs`` added to the constructor arguments."""
        return _WithArgs(self.cls, **{**self.kwargs, **kwargs})

    def __repr__(self):
        args = ", ".join(f"{k}={v}" for k, v in self.kwargs.items())
        return f"functools.partial(<class '{self.cls.__module__}.{self.cls.__qualname__}'>, {args}){{}}"


class ObserverBase:
    """Base of all observers: ``observer(x)`` records ``x`` and returns it unchanged;
    ``calculate_qparams()`` returns ``(scale, zero_point)`` Tensors."""

    def __init__(self, dtype=quint8, is_dynamic=False):
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    @classmethod
    def with_args(cls, **kwargs):
        """A factory making ``cls(**kwargs)`` when called (``MinMaxObserver.with_args(dtype=...)``),
        as qconfigs hold (https://pytorch.org/docs/stable/quantization.html)."""
        return _WithArgs(cls, **kwargs)


class PlaceholderObserver(ObserverBase):
    """Records nothing; stands for a dtype whose parameters are chosen elsewhere (at run time
    for dynamically quantized activations, or a float16 cast). ``custom_op_name``,
    ``compute_dtype`` and ``eps`` are accepted for PyTorch compatibility and unused."""

    def __init__(self, dtype=float32, custom_op_name="", compute_dtype=None, quant_min=None,
                 quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype, is_dynamic)
        self.qscheme = qscheme if qscheme is not None else per_tensor_affine
        self.quant_min, self.quant_max = quant_min, quant_max

    def __call__(self, x):
        return x

    def calculate_qparams(self):
        """Raises Exception, as PyTorch's: a placeholder only records the dtype."""
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


class MinMaxObserver(ObserverBase):
    """Tracks the running min and max of every element it sees; per-tensor parameters.

    Args:
        dtype: ember.qint8 or ember.quint8.
        qscheme: ember.per_tensor_affine or ember.per_tensor_symmetric.
        reduce_range: use one bit less of the integer range.
        quant_min, quant_max: a narrower integer range (both or neither).
        eps: the smallest scale.
        factory_kwargs: accepted for PyTorch compatibility (ember keeps the range in NumPy).

    Raises NotImplementedError for another qscheme, AssertionError (as PyTorch's asserts do)
    for a dtype that is not quantized or a range that does not contain 0.
    """
    _schemes = (per_tensor_affine, per_tensor_symmetric)

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=float(np.finfo(np.float32).eps),
                 is_dynamic=False):
        super().__init__(dtype, is_dynamic)
        if qscheme not in self._schemes:
            raise NotImplementedError(f"{type(self).__name__}'s qscheme only supports "
                                      f"{' and '.join(map(repr, self._schemes))}, got {qscheme}")
        if dtype not in (qint8, quint8):
            raise AssertionError(f"Default Observer only works for qint8 and quint8 data type, got {dtype}")
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.eps = np.float32(eps)
        if quant_min is None:
            quant_min, quant_max = quant_range(dtype)
            if reduce_range:
                quant_min, quant_max = quant_min // 2, quant_max // 2
        elif not quant_min <= 0 <= quant_max:
            raise AssertionError(f"Used-specified quantization range must include 0, got quant_min="
                             f"{quant_min}, quant_max={quant_max}")
        self.quant_min, self.quant_max = quant_min, quant_max
        self.min_val = self.max_val = None

    def _reduce(self, x):
        return x.min(), x.max()

    def __call__(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().cpu().numpy().astype(np.float32)
        lo, hi = self._reduce(x)
        if self.min_val is not None:
            lo, hi = np.minimum(lo, self.min_val), np.maximum(hi, self.max_val)
        self.min_val, self.max_val = lo, hi
        return x_orig

    def calculate_qparams(self):
        """``(scale, zero_point)``: float32 and int64 Tensors of one element per tensor (scale 1
        and zero point 0 before anything was observed, as PyTorch returns), one per channel."""
        if self.min_val is None:
            return from_numpy(np.ones(1, np.float32)), from_numpy(np.zeros(1, np.int64))
        # course:begin 15/minmax-qparams
        # hint: the range must include 0; affine: scale = (max - min) / (qmax - qmin), zero_point =
        # hint: qmin - round(min / scale) clipped to [qmin, qmax]; symmetric: scale = max|x| / ((qmax - qmin) / 2)
        # hint: scale is at least self.eps; float32 scale, int64 zero point (torch.ao.quantization.MinMaxObserver)
        lo, hi = self.min_val, self.max_val
        lo, hi = np.minimum(lo, np.float32(0)), np.maximum(hi, np.float32(0))
        qmin, qmax = self.quant_min, self.quant_max
        if self.qscheme in (per_tensor_symmetric, per_channel_symmetric):
            hi = np.maximum(-lo, hi)
            scale = np.maximum(hi / np.float32((qmax - qmin) / 2), self.eps)
            zero_point = np.full(np.shape(scale), 128 if self.dtype is quint8 else 0, np.int64)
        else:
            scale = np.maximum((hi - lo) / np.float32(qmax - qmin), self.eps)
            zero_point = np.clip(qmin - np.rint(lo / scale), qmin, qmax).astype(np.int64)
        return (from_numpy(np.atleast_1d(scale).astype(np.float32)),
                from_numpy(np.atleast_1d(zero_point).astype(np.int64)))
        # course:end 15/minmax-qparams

    def extra_repr(self):
        """``min_val=..., max_val=...``: the range observed so far."""
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def __repr__(self):
        return f"{type(self).__name__}({self.extra_repr()})"


class PerChannelMinMaxObserver(MinMaxObserver):
    """:class:`MinMaxObserver` with one range, scale and zero point per slice along
    ``ch_axis`` (qscheme ember.per_channel_affine or ember.per_channel_symmetric)."""
    _schemes = (per_channel_affine, per_channel_symmetric)

    def __init__(self, ch_axis=0, dtype=quint8, qscheme=per_channel_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=float(np.finfo(np.float32).eps), is_dynamic=False):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps,
                         is_dynamic)
        self.ch_axis = ch_axis

    def _reduce(self, x):
        rows = np.moveaxis(x, self.ch_axis, 0).reshape(x.shape[self.ch_axis], -1)
        return rows.min(axis=1), rows.max(axis=1)


default_weight_observer = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=qint8, qscheme=per_channel_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=quint8, quant_min=0, quant_max=255, is_dynamic=True)
