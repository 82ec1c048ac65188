"""``ember.ao.nn``: quantized modules (PyTorch's ``torch.ao.nn``)."""
from . import quantized

__all__ = ["quantized"]
