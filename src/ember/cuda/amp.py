"""``ember.cuda.amp``: PyTorch's deprecated CUDA spellings of ``autocast`` and ``GradScaler``.

Without CUDA both behave as on a PyTorch install without it: they warn that the spelling is
deprecated and that CUDA is unavailable, and they are disabled (``scaler.scale(loss)`` returns
the loss, ``scaler.step(opt)`` just steps), so a CUDA-first training script runs on the CPU.
"""
import warnings

from .. import amp as _amp
from .. import _dtype

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_amp.autocast):
    """``torch.cuda.amp.autocast``: ``ember.amp.autocast("cuda", ...)``, disabled here."""

    def __init__(self, enabled=True, dtype=_dtype.float16, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``torch.cuda.amp.GradScaler``: ``ember.amp.GradScaler("cuda", ...)``, disabled here."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.cuda.amp.custom_fwd``: :func:`ember.amp.custom_fwd` for "cuda"."""
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """``torch.cuda.amp.custom_bwd``: :func:`ember.amp.custom_bwd` for "cuda"."""
    return _amp.custom_bwd(bwd, device_type="cuda")
