"""Padding layers (https://pytorch.org/docs/stable/nn.html#padding-layers). ``padding`` is an
int (the same on every side) or PyTorch's tuple of (before, after) pairs starting from the
last dim: (left, right) for 1-D, (left, right, top, bottom) for 2-D, then (front, back).
Each layer calls :func:`ember.nn.functional.pad`, where the modes and errors are described."""
from .. import functional as F
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _expand(padding, dims):
    if isinstance(padding, (tuple, list)):
        if len(padding) != 2 * dims:
            raise ValueError(f"Padding must be an int or a {2 * dims}-element tuple, got {len(padding)} elements")
        return tuple(padding)
    return (padding,) * (2 * dims)


class _PadNd(Module):
    __constants__ = ["padding"]
    mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _expand(padding, self.dims)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Pads with ``value``; negative padding crops. Shape: input (N, C, *) or (C, *); the
    padded dims grow by before + after."""
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``: (N, C, W) or (C, W) to width W + left + right.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ConstantPad1d.html"""
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``: (N, C, H, W) or (C, H, W) to
    (H + top + bottom, W + left + right).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ConstantPad2d.html"""
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``: (N, C, D, H, W) or (C, D, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ConstantPad3d.html"""
    dims = 3


class _ZeroPadNd(_ConstantPadNd):
    """Zero padding: each ``ZeroPadNd`` is the ``ConstantPadNd`` of value 0, as in PyTorch."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pads the last dim with zeros: (N, C, W) or (C, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ZeroPad1d.html"""


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pads the last 2 dims with zeros: (N, C, H, W) or (C, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ZeroPad2d.html

    Example::

        >>> import ember
        >>> ember.nn.ZeroPad2d((1, 1, 2, 0))(ember.ones(1, 1, 3, 3)).shape
        ember.Size([1, 1, 5, 5])
    """


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pads the last 3 dims with zeros: (N, C, D, H, W) or (C, D, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ZeroPad3d.html"""


class _ReflectionPadNd(_PadNd):
    """Base of the reflection paddings (PyTorch's class of the same name)."""
    mode = "reflect"


class _ReplicationPadNd(_PadNd):
    """Base of the replication paddings (PyTorch's class of the same name)."""
    mode = "replicate"


class ReflectionPad1d(_ReflectionPadNd):
    """Mirrors the last dim about its edges (edge not repeated); each pad must be smaller
    than the dim. Shape: (N, C, W) or (C, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ReflectionPad1d.html"""
    dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Mirrors the last 2 dims about their edges. Shape: (N, C, H, W) or (C, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ReflectionPad2d.html"""
    dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Mirrors the last 3 dims. Shape: (N, C, D, H, W) or (C, D, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ReflectionPad3d.html"""
    dims = 3


class ReplicationPad1d(_ReplicationPadNd):
    """Repeats the edge values of the last dim. Shape: (N, C, W) or (C, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ReplicationPad1d.html"""
    dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Repeats the edge values of the last 2 dims. Shape: (N, C, H, W) or (C, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ReplicationPad2d.html"""
    dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Repeats the edge values of the last 3 dims. Shape: (N, C, D, H, W) or (C, D, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ReplicationPad3d.html"""
    dims = 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got {input.ndim}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Wraps the last dim around (pads at most the dim's size). Shape: (N, C, W) or (C, W);
    ValueError for other ranks. Source: https://pytorch.org/docs/stable/generated/torch.nn.CircularPad1d.html"""
    dims = 1


class CircularPad2d(_CircularPadNd):
    """Wraps the last 2 dims around. Shape: (N, C, H, W) or (C, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.CircularPad2d.html"""
    dims = 2


class CircularPad3d(_CircularPadNd):
    """Wraps the last 3 dims around. Shape: (N, C, D, H, W) or (C, D, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.CircularPad3d.html"""
    dims = 3
