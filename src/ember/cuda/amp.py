"""``ember.cuda.amp``: PyTorch's deprecated CUDA spellings of ``autocast`` and ``GradScaler``.

Without CUDA both behave as on a PyTorch install without it: they warn that the spelling is
deprecated and that CUDA is unavailable, and they are disabled (``scaler.scale(loss)`` returns
the loss, ``scaler.step(opt)`` just steps), so a CUDA-first training script runs on the CPU.
"""
from .. import amp as _amp
from .. import _dtype
from ..amp.deprecated import DeviceAutocast, DeviceGradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(DeviceAutocast):
    """``torch.cuda.amp.autocast``: ``ember.amp.autocast("cuda", ...)``, disabled here."""
    device, default_dtype = "cuda", _dtype.float16


class GradScaler(DeviceGradScaler):
    """``torch.cuda.amp.GradScaler``: ``ember.amp.GradScaler("cuda", ...)``, disabled here."""
    device = "cuda"


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.cuda.amp.custom_fwd``: :func:`ember.amp.custom_fwd` for "cuda"."""
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """``torch.cuda.amp.custom_bwd``: :func:`ember.amp.custom_bwd` for "cuda"."""
    return _amp.custom_bwd(bwd, device_type="cuda")
