"""Instance normalisation layers (https://pytorch.org/docs/stable/nn.html#normalization-layers):
each (sample, channel) plane is normalised by its own statistics (Ulyanov et al., 2016).
Unlike batch norm, ``affine`` and ``track_running_stats`` default to False."""
import warnings

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can "
                          "silence this warning by not passing in num_features, which is not used "
                          "because affine=False", stacklevel=2)
        if input.ndim == self._no_batch_dim:
            return self._normalize(input.unsqueeze(0)).squeeze(0)
        return self._normalize(input)

    def _normalize(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               0.0 if self.momentum is None else self.momentum, self.eps)

    def _check_input_dim(self, input):
        if input.ndim not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise ValueError(f"expected {self._no_batch_dim}D or {self._no_batch_dim + 1}D input "
                             f"(got {input.ndim}D input)")


class InstanceNorm1d(_InstanceNorm):
    """Normalises each (sample, channel) of (N, C, L) or (C, L) inputs over L.

    Args: num_features (C), eps, momentum (for the running statistics), affine (learn a
    per-channel weight and bias; default False), track_running_stats (default False: the
    input's statistics are used in eval mode too), device, dtype; keyword ``bias``.

    Shape: input (N, C, L) or (C, L); output the same. ValueError for other ranks, for a
    channel count other than ``num_features`` when ``affine``, and for L = 1 when using
    input statistics. Source: https://pytorch.org/docs/stable/generated/torch.nn.InstanceNorm1d.html
    """
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Normalises each (sample, channel) of (N, C, H, W) or (C, H, W) inputs over H, W;
    see :class:`InstanceNorm1d`. Source: https://pytorch.org/docs/stable/generated/torch.nn.InstanceNorm2d.html"""
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Normalises each (sample, channel) of (N, C, D, H, W) or (C, D, H, W) inputs; see
    :class:`InstanceNorm1d`. Source: https://pytorch.org/docs/stable/generated/torch.nn.InstanceNorm3d.html"""
    _no_batch_dim = 4


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """:class:`InstanceNorm1d` with ``num_features`` from the first input's dimension 1
    (``affine`` and ``track_running_stats`` default to True here, as in PyTorch)
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyInstanceNorm1d.html)."""
    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """:class:`InstanceNorm2d` with ``num_features`` from the first input; see :class:`LazyInstanceNorm1d`."""
    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """:class:`InstanceNorm3d` with ``num_features`` from the first input; see :class:`LazyInstanceNorm1d`."""
    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
