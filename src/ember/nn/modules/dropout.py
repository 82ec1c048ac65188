"""Dropout layers (https://pytorch.org/docs/stable/nn.html#dropout-layers): in training mode
each element (or each channel) is zeroed with probability ``p`` and the survivors are scaled
by ``1 / (1 - p)``; in eval mode they return the input (Srivastava et al., 2014)."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes each element independently with probability ``p`` (ValueError outside [0, 1]);
    ``inplace`` writes into the input. Shape: input (*), output (*), the same shape."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels: input (N, C, L) or (C, L), output of the same shape."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels: input (N, C, H, W) or (N, C, L), output of the same shape."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels: input (N, C, D, H, W) or (C, D, H, W), output of the same shape."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the mean and variance of SELU activations (Klambauer et al., 2017).
    Shape: input (*), output (*)."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels: input (N, C, *), output of the same shape."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
