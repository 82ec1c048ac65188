"""Upsampling layers (https://pytorch.org/docs/stable/nn.html#vision-layers): they hold the
arguments of :func:`ember.nn.functional.interpolate`, where modes, coordinate rules and
errors are described."""
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resamples (N, C, L) or (N, C, H, W) inputs to ``size`` or by ``scale_factor``.

    Args: size, scale_factor (stored as float), mode ("nearest", "linear", "bilinear",
    "bicubic", "nearest-exact", "area"), align_corners, recompute_scale_factor.

    Shape: input (N, C, L_in) or (N, C, H_in, W_in); output (N, C, L_out) or
    (N, C, H_out, W_out) with ``out = size`` or ``floor(in * scale_factor)``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.Upsample.html

    Example::

        >>> import ember
        >>> ember.nn.Upsample(scale_factor=2, mode="bilinear")(ember.randn(1, 1, 2, 2)).shape
        torch.Size([1, 1, 4, 4])
    """
    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """:class:`Upsample` with mode "nearest" on (N, C, H, W) inputs.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.UpsamplingNearest2d.html"""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """:class:`Upsample` with mode "bilinear" and ``align_corners=True`` on (N, C, H, W).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.UpsamplingBilinear2d.html"""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
