"""``ember.cpu``: PyTorch's ``torch.cpu`` device module, which device-generic programs query
as they query ``torch.cuda`` (``getattr(torch, device_type).synchronize()``), and its deprecated
``amp`` spellings (https://pytorch.org/docs/stable/cpu.html)."""
from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "set_device", "synchronize", "is_initialized"]


def is_available():
    """True: the CPU is always there."""
    return True


def device_count():
    """1: one CPU device."""
    return 1


def current_device():
    """``"cpu"``."""
    return "cpu"


def set_device(device):
    """No-op: there is one CPU device (as in PyTorch)."""


def synchronize(device=None):
    """Nothing to wait for: CPU work is done when a call returns."""


def is_initialized():
    """True: the CPU needs no initialisation."""
    return True
