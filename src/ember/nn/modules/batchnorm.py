"""Batch normalisation layers (https://pytorch.org/docs/stable/nn.html#normalization-layers)
and their shared base with the instance-norm layers: affine parameters, running statistics
and the ``num_batches_tracked`` counter, with PyTorch's names, defaults and state_dict keys."""
import sys

from ..._creation import empty, ones, tensor, zeros
from ..._dtype import int64
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..functional.norm import _sync_batch_norm
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter, is_lazy
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


class _NormBase(Module):
    """``weight`` (ones) and ``bias`` (zeros) of size ``num_features`` when ``affine``;
    buffers ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked``
    (int64 0) when ``track_running_stats``, else those names hold None."""
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    _version = 2  # num_batches_tracked appeared in version 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Resets the running statistics, and the weight to 1 and the bias to 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # State dicts from before the counter existed (no version recorded) load with the
        # current count, as in PyTorch.
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None \
                else tensor(0, dtype=int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # Cumulative moving average: the k-th batch weighs 1/k.
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return self._normalize(input, self.running_mean if track else None,
                               self.running_var if track else None, use_batch_stats, factor)

    def _normalize(self, input, running_mean, running_var, use_batch_stats, momentum):
        return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, use_batch_stats,
                            momentum, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs over N (and L), per channel
    (Ioffe & Szegedy, 2015).

    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``. In training the batch's
    statistics normalise (biased variance) and, with ``track_running_stats``, the running
    ones move by ``momentum`` towards them (unbiased variance; ``momentum=None`` keeps a
    cumulative average); in eval mode the running statistics normalise.

    Args: num_features (C), eps, momentum, affine, track_running_stats, device, dtype;
    keyword ``bias`` (False drops the bias).

    Shape: input (N, C) or (N, C, L); output the same. ValueError for other ranks, and (from
    :func:`~ember.nn.functional.batch_norm`) for one value per channel in training.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm1d.html

    Example::

        >>> import ember
        >>> m = ember.nn.BatchNorm1d(100)
        >>> m(ember.randn(20, 100)).shape
        torch.Size([20, 100])
    """

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs over N, H, W per channel; see
    :class:`BatchNorm1d` for the rules and arguments.

    Shape: input (N, C, H, W); output the same. ValueError for other ranks.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm2d.html
    """

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs; see :class:`BatchNorm1d`.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm3d.html"""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose training statistics are those of the whole batch spread over the
    ranks of ``process_group`` (the default group when None): each channel's sum and count,
    then its sum of squared deviations, are all-reduced (MPI, :mod:`ember.distributed`), and in
    backward so are the two summed gradient terms. In eval mode, without an initialized process
    group or on a group of one rank it is :class:`BatchNorm1d`-:class:`BatchNorm3d` exactly
    (Ioffe & Szegedy, 2015; the synchronised form as in Peng et al., MegDet, 2018).

    Args: num_features (C), eps, momentum, affine, track_running_stats, process_group, device,
    dtype; keyword ``bias``. Unlike PyTorch's (CUDA only when synchronising), it synchronises CPU
    tensors: that is what ember's MPI groups carry.

    Shape: input (N, C, *), at least 2-D; output the same. ValueError for a 1-D input, C = 0,
    or one value per channel in training over all ranks together.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.SyncBatchNorm.html

    Example::

        >>> import ember
        >>> m = ember.nn.SyncBatchNorm(3)
        >>> m(ember.randn(4, 3, 5)).shape
        torch.Size([4, 3, 5])
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def _normalize(self, input, running_mean, running_var, use_batch_stats, momentum):
        # nn sits below distributed: a group can only exist once ember.distributed is loaded.
        dist = sys.modules.get("ember.distributed")
        if self.training and dist is not None and dist.is_initialized() \
                and dist.get_world_size(self.process_group) > 1:
            from ...distributed.nn.functional import all_reduce
            group = self.process_group
            return _sync_batch_norm(input, running_mean, running_var, self.weight, self.bias, momentum,
                                    self.eps, lambda t: all_reduce(t, group=group))
        return super()._normalize(input, running_mean, running_var, use_batch_stats, momentum)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*D in its tree (itself included) replaced by a
        SyncBatchNorm on ``process_group`` that shares its weight, bias and running statistics
        (the same tensors) and its training mode; other modules are kept, children re-added under
        their names. Returns the converted module (a new one when ``module`` itself was replaced).
        Source: https://pytorch.org/docs/stable/generated/torch.nn.SyncBatchNorm.html#torch.nn.SyncBatchNorm.convert_sync_batchnorm"""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    converted.weight, converted.bias = module.weight, module.bias
            converted.running_mean, converted.running_var = module.running_mean, module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A normalisation whose ``num_features`` is its first input's dimension 1; it becomes its
    ``cls_to_become`` then. Args: eps, momentum, affine, track_running_stats, device, dtype;
    keyword ``bias``."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None,
                 *, bias=True):
        super().__init__(0, eps, momentum, False, False, bias=bias)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self):
        """The layer's initialisation, once the parameters have a shape (a no-op before)."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Materializes the (C,) weight, bias and running statistics from ``input`` (N, C, ...)."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if is_lazy(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """:class:`BatchNorm1d` with ``num_features`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyBatchNorm1d.html)."""
    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """:class:`BatchNorm2d` with ``num_features`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyBatchNorm2d.html)."""
    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """:class:`BatchNorm3d` with ``num_features`` from the first input
    (https://pytorch.org/docs/stable/generated/torch.nn.LazyBatchNorm3d.html)."""
    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim
