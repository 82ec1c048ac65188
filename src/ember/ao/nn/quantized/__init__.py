"""``ember.ao.nn.quantized``: quantized modules; ember has the dynamic ones
(:mod:`ember.ao.nn.quantized.dynamic`)."""
from . import dynamic

__all__ = ["dynamic"]
