"""The channel shuffle layer of ShuffleNet (Zhang et al., 2017, https://arxiv.org/abs/1707.01083;
https://pytorch.org/docs/stable/generated/torch.nn.ChannelShuffle.html)."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Splits the channels of (N, C, *) into ``groups`` groups and interleaves them (ShuffleNet,
    Zhang et al., 2017): output shape = input shape, see :func:`ember.nn.functional.channel_shuffle`.
    RuntimeError when C is not divisible by ``groups``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.ChannelShuffle.html"""
    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
