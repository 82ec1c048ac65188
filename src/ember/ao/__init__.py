"""``ember.ao``: model compression (PyTorch's ``torch.ao``): dynamic quantization in
:mod:`ember.ao.quantization`, the quantized modules in :mod:`ember.ao.nn.quantized.dynamic`."""
from . import nn, quantization

__all__ = ["nn", "quantization"]
