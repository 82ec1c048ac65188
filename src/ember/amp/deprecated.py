"""PyTorch's deprecated per-device spellings of ``autocast`` and ``GradScaler``
(``torch.cpu.amp``, ``torch.cuda.amp``): the device-generic classes bound to one device, each
made with torch's FutureWarning naming the spelling that replaces it
(https://pytorch.org/docs/stable/amp.html). Each device's module subclasses these two, setting
``device`` and, for autocast, ``default_dtype``."""
import warnings

from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["DeviceAutocast", "DeviceGradScaler"]


def _warn(device, name):
    warnings.warn(f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use "
                  f"`torch.amp.{name}('{device}', args...)` instead.", FutureWarning, stacklevel=3)


class DeviceAutocast(autocast):
    """``torch.<device>.amp.autocast(enabled=True, dtype=<default_dtype>, cache_enabled=True)``:
    :class:`~ember.amp.autocast` on the class's ``device``."""
    device = default_dtype = None

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        _warn(self.device, "autocast")
        super().__init__(self.device, dtype=self.default_dtype if dtype is None else dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


class DeviceGradScaler(GradScaler):
    """``torch.<device>.amp.GradScaler(...)``: :class:`~ember.amp.GradScaler` on the class's
    ``device``, with the same arguments and defaults."""
    device = None

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _warn(self.device, "GradScaler")
        super().__init__(self.device, init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
