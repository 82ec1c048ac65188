"""Sliding-block layers ``Unfold`` (im2col) and ``Fold`` (col2im)
(https://pytorch.org/docs/stable/nn.html#vision-layers)."""
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sums blocks (N, C * prod(kernel_size), L) into (N, C, *output_size); overlapping
    blocks add. Args: output_size, kernel_size, dilation, padding, stride (int or pair).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.Fold.html"""
    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts sliding blocks: (N, C, H, W) to (N, C * prod(kernel_size), L), L the number
    of blocks. Args: kernel_size, dilation, padding, stride (int or pair).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.Unfold.html

    Example::

        >>> import ember
        >>> ember.nn.Unfold(kernel_size=(2, 3))(ember.randn(2, 5, 3, 4)).shape
        torch.Size([2, 30, 4])
    """
    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")
