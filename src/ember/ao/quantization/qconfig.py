"""Quantization configurations: which observers choose the parameters of a module's
activations and weights (``torch.ao.quantization.qconfig``,
https://pytorch.org/docs/stable/generated/torch.ao.quantization.qconfig.QConfig.html).

The dynamic configurations quantize weights ahead of time (int8, scale from the weight's
range, symmetric so the zero point is 0) and leave activations float: PyTorch quantizes them
at run time inside its int8 kernels, ember's reference kernels multiply by the dequantized
weight instead.
"""
from collections import namedtuple

from ..._dtype import float16
from .observer import (PlaceholderObserver, default_dynamic_quant_observer,
                       default_per_channel_weight_observer, default_weight_observer)

__all__ = ["QConfig", "default_dynamic_qconfig", "per_channel_dynamic_qconfig",
           "float16_dynamic_qconfig"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """A pair of observer constructors (classes or ``Observer.with_args(...)``), not
    instances. Raises ValueError when given an observer instance."""

    def __new__(cls, activation, weight):
        for observer in (activation, weight):
            if hasattr(observer, "calculate_qparams"):
                raise ValueError("QConfig received observer instance, please pass observer class "
                                 "instead. Use MyObserver.with_args(x=1) to override arguments to "
                                 "constructor if needed")
        return super().__new__(cls, activation, weight)


default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float16_dynamic_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=float16, is_dynamic=True),
                                  weight=PlaceholderObserver.with_args(dtype=float16))
