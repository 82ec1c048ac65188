"""``ember.ao.quantization``: dynamic quantization (PyTorch's ``torch.ao.quantization``).

``quantize_dynamic(model, {nn.Linear}, dtype=ember.qint8)`` stores Linear (and LSTM, GRU
and RNN-cell) weights as int8 with a scale, a quarter of the bytes; see :func:`quantize_dynamic`.
"""
from .observer import (MinMaxObserver, ObserverBase, PerChannelMinMaxObserver, PlaceholderObserver,
                       default_dynamic_quant_observer, default_per_channel_weight_observer,
                       default_weight_observer)
from .qconfig import QConfig, default_dynamic_qconfig, float16_dynamic_qconfig, per_channel_dynamic_qconfig
from .qtensor import (QuantizedTensor, per_channel_affine, per_channel_symmetric, per_tensor_affine,
                      per_tensor_symmetric, qint8, qint32, qscheme, quint8, quantize_per_channel,
                      quantize_per_tensor)
from .quantize import convert, get_default_dynamic_quant_module_mappings, propagate_qconfig_, quantize_dynamic

__all__ = ["quantize_dynamic", "convert", "propagate_qconfig_", "get_default_dynamic_quant_module_mappings",
           "QConfig", "default_dynamic_qconfig", "per_channel_dynamic_qconfig", "float16_dynamic_qconfig",
           "ObserverBase", "MinMaxObserver", "PerChannelMinMaxObserver", "PlaceholderObserver",
           "default_weight_observer", "default_per_channel_weight_observer",
           "default_dynamic_quant_observer", "QuantizedTensor", "qint8", "quint8", "qint32", "qscheme",
           "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
           "quantize_per_tensor", "quantize_per_channel"]
