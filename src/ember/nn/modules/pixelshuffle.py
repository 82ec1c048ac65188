"""Sub-pixel rearrangement layers (Shi et al., 2016;
https://pytorch.org/docs/stable/nn.html#vision-layers)."""
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearranges (*, C * r^2, H, W) into (*, C, H * r, W * r), ``r = upscale_factor``.
    RuntimeError when the channels are not divisible by r^2.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.PixelShuffle.html

    Example::

        >>> import ember
        >>> ember.nn.PixelShuffle(3)(ember.randn(1, 9, 4, 4)).shape
        torch.Size([1, 1, 12, 12])
    """
    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearranges (*, C, H * r, W * r) into (*, C * r^2, H, W), ``r = downscale_factor``:
    the inverse of :class:`PixelShuffle`. RuntimeError when H or W is not divisible by r.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.PixelUnshuffle.html"""
    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
