"""``ember.cpu.amp``: PyTorch's deprecated CPU spellings of ``autocast`` and ``GradScaler``
(``torch.cpu.amp.autocast()`` is ``torch.amp.autocast("cpu")`` with a FutureWarning); older
programs train in bfloat16 through them."""
from .. import _dtype
from ..amp.deprecated import DeviceAutocast, DeviceGradScaler

__all__ = ["autocast", "GradScaler"]


class autocast(DeviceAutocast):
    """``torch.cpu.amp.autocast``: :class:`ember.amp.autocast` for "cpu" (bfloat16 by default)."""
    device, default_dtype = "cpu", _dtype.bfloat16


class GradScaler(DeviceGradScaler):
    """``torch.cpu.amp.GradScaler``: :class:`ember.amp.GradScaler` for "cpu"."""
    device = "cpu"
