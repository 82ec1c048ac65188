"""Converting the weights of a model's 2-d or 3-d convolutions to a memory format
(``torch.nn.utils.memory_format``), e.g. ``channels_last`` for NHWC kernels.

Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.convert_conv2d_weight_memory_format.html
"""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Rewrites, in place, the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module``
    (itself included) in ``memory_format`` (``ember.channels_last`` or
    ``ember.contiguous_format``); the values and the Parameters stay. Returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """As :func:`convert_conv2d_weight_memory_format`, for ``Conv3d``/``ConvTranspose3d``
    (``ember.channels_last_3d``)."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
