"""Normalisation functions of ``ember.nn.functional``
(https://pytorch.org/docs/stable/nn.functional.html#normalization-functions).

Every one is ``(x - mean) / sqrt(var + eps) * weight + bias`` over its own axes, computed
by the fused ops of :mod:`ember._ops.norm` (statistics once, one normalising pass, a
hand-derived backward). Variances are biased (divided by the count); running variances are
updated with the unbiased one, as in PyTorch. With fixed (running) statistics the function
is an affine map and is written as one.
"""
import numpy as np

from ... import _dtype
from ..._creation import full
from ..._ops.join import cat
from ..._ops.pointwise_binary import div
from ..._ops import norm as _norm
from ..._memory_format import contiguous_format, suggested
from ..._ops.core import apply, named, recording
from ...autograd.grad_mode import no_grad
from ..._ops.refusals import float_only
from .image import pad
from .pooling import avg_pool2d

__all__ = ["batch_norm", "instance_norm", "group_norm", "layer_norm", "rms_norm", "normalize",
           "local_response_norm"]

# The grad_fn names torch shows for its fused norms.
_BATCH_NORM_NODE, _LAYER_NORM_NODE = "NativeBatchNormBackward0", "NativeLayerNormBackward0"


def _mixed_dtype(input, *tensors):
    """Whether ``input`` is float16/bfloat16 and the parameters (``tensors``, None skipped) float32:
    torch's CPU kernels take that mix ("mixed dtype") and compute in float32, returning the input's
    type; other parameters of a type not the input's raise its RuntimeError."""
    given = [t for t in tensors if t is not None and t.dtype is not input.dtype]
    if not given:
        return False
    if input.dtype in (_dtype.float16, _dtype.bfloat16) and all(t.dtype is _dtype.float32 for t in tensors
                                                                  if t is not None):
        return True
    raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")


def _check_channels(channels, **tensors):
    for name, t in tensors.items():
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")


def _channel_shape(ndim):
    """The shape (C, 1, ..., 1) in which a (C,) tensor broadcasts along dim 1 of an
    ``ndim``-D input."""
    return (-1,) + (1,) * (ndim - 2)


def _channel_view(t, ndim):
    return None if t is None else t.reshape(_channel_shape(ndim))


def _affine(input, mean, var, weight, bias, eps):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` with fixed per-channel statistics,
    written as ``x * scale + shift``."""
    scale = (var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    return input * _channel_view(scale, input.ndim) + _channel_view(shift, input.ndim)


def _update_running(running, value, momentum):
    """``running = (1 - momentum) * running + momentum * value`` in place (in ops, so
    ember.compile records it); called under ``no_grad``, as the statistics carry history."""
    running.lerp_(value.reshape(running.shape).to(running.dtype), momentum)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Batch normalisation over all dims but the channel dim 1 (Ioffe & Szegedy, 2015;
    https://pytorch.org/docs/stable/generated/torch.nn.functional.batch_norm.html).

    Shapes: input (N, C, *); running_mean, running_var, weight, bias (C) or None; output
    like input. With ``training`` the batch statistics normalise (biased variance) and the
    running ones, if given, move towards them by ``momentum`` (unbiased variance), in
    place; otherwise the running statistics normalise. Raises ValueError for a single value
    per channel in training, RuntimeError for missing running statistics in evaluation,
    sizes other than C, or mixed dtypes; NotImplementedError for integer inputs.
    """
    channels = input.shape[1] if input.ndim > 1 else 0
    _check_channels(channels, running_mean=running_mean, running_var=running_var, weight=weight,
                    bias=bias)
    float_only(input, "batch_norm")
    if _mixed_dtype(input, running_mean, running_var, weight, bias):
        return batch_norm(input.float(), running_mean, running_var, weight, bias, training, momentum,
                          eps).to(input.dtype)
    if not training:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        out = _affine(input, running_mean, running_var, weight, bias, eps)
        fmt = suggested(input._data) if hasattr(input._data, "flags") else contiguous_format
        if not out.is_contiguous(memory_format=fmt):  # torch's kernel: the input's suggested format
            out = out.contiguous(memory_format=fmt)
        return named(out, _BATCH_NORM_NODE)
    count = input.numel() // channels if channels else 0
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{input.size()}")
    axes = (0,) + tuple(range(2, input.ndim))
    mean, var = apply(_norm.NormStats, input, axes=axes)
    with no_grad():
        if count and running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if count and running_var is not None:
            _update_running(running_var, var * (count / (count - 1)), momentum)
    return named(apply(_norm.Normalize, input, mean, var, weight, bias, axes=axes, eps=eps,
                       affine_shape=_channel_shape(input.ndim), layout="suggested", grad_layout="suggested"),
                 _BATCH_NORM_NODE)


def _sync_batch_norm(input, running_mean, running_var, weight, bias, momentum, eps, all_reduce):
    """Training-mode :func:`batch_norm` whose statistics are those of the batch split over ranks:
    ``all_reduce`` (a differentiable sum over the ranks) totals each channel's sum and count, then
    its sum of squared deviations from that mean (two passes, no cancellation). Written in ops,
    so autograd's backward of those two reductions is the two summed gradient terms of
    SyncBatchNorm (https://pytorch.org/docs/stable/generated/torch.nn.SyncBatchNorm.html).
    Shapes as :func:`batch_norm`; ValueError when all ranks together hold one value per channel."""
    axes, shape = (0,) + tuple(range(2, input.ndim)), _channel_shape(input.ndim)
    local = input.numel() // input.shape[1]
    sums = all_reduce(cat([input.sum(axes), full((1,), local, dtype=input.dtype, device=input.device)]))
    count = int(sums[-1].item())
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {count}")
    mean = sums[:-1] / count
    centered = input - mean.reshape(shape)
    var = all_reduce(centered.square().sum(axes)) / count
    with no_grad():
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, var * (count / (count - 1)), momentum)
    scale = (var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    out = centered * scale.reshape(shape)
    return named(out if bias is None else out + bias.reshape(shape), "SyncBatchNormBackward")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    """Normalises each (sample, channel) plane by its own statistics (Ulyanov et al., 2016;
    https://pytorch.org/docs/stable/generated/torch.nn.functional.instance_norm.html).

    Shapes: input (N, C, *); weight, bias, running statistics (C) or None. With
    ``use_input_stats`` the running statistics (if given) move towards the batch average of
    the per-plane statistics; otherwise they normalise. ValueError for a single spatial
    element when using input statistics; RuntimeError for sizes other than C.
    """
    if use_input_stats:
        spatial = 1
        for n in input.shape[2:]:
            spatial *= n
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{input.size()}")
    # PyTorch's message counts N * C elements: it runs batch norm on the (1, N * C, ...) view.
    planes = input.shape[0] * input.shape[1] if input.ndim > 1 else 0
    repeats = {name: None if t is None else t.numel() * input.shape[0] for name, t in
               (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                ("bias", bias))}
    for name, n in repeats.items():
        if n is not None and n != planes:
            raise RuntimeError(f"{name} should contain {planes} elements not {n}")
    float_only(input, "batch_norm")
    if _mixed_dtype(input, running_mean, running_var, weight, bias):
        return instance_norm(input.float(), running_mean, running_var, weight, bias, use_input_stats, momentum,
                             eps).to(input.dtype)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        return named(_affine(input, running_mean, running_var, weight, bias, eps), "ViewBackward0")
    axes = tuple(range(2, input.ndim))
    mean, var = apply(_norm.NormStats, input, axes=axes)
    count = input.numel() // planes if planes else 0
    planes = tuple(input.shape[:2])
    with no_grad():
        if count and running_mean is not None:
            _update_running(running_mean, mean.reshape(planes).mean(0), momentum)
        if count and running_var is not None:
            _update_running(running_var, var.reshape(planes).mean(0) * (count / (count - 1)), momentum)
    out = apply(_norm.Normalize, input, mean, var, weight, bias, axes=axes, eps=eps,
                affine_shape=_channel_shape(input.ndim), grad_layout="row_major")
    return named(out.contiguous(), "ViewBackward0")  # (row-major for a channels-last input, as torch's)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalises each group of ``C / num_groups`` channels of each sample (Wu & He, 2018;
    https://pytorch.org/docs/stable/generated/torch.nn.functional.group_norm.html).

    Shapes: input (N, C, *); weight, bias (C) or None; output like input. RuntimeError when
    C is not divisible by ``num_groups``, for a weight or bias not of C elements, or an
    input with fewer than 2 dims.
    """
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, channels = input.shape[0], input.shape[1]
    if channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but "
                           f"got input of shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels "
                               f"in input, but got {name} of shape {list(t.shape)} and input of shape "
                               f"{list(input.shape)}")
    float_only(input, "group_norm")
    if _mixed_dtype(input, weight, bias):
        return group_norm(input.float(), num_groups, weight, bias, eps).to(input.dtype)
    grouped = input.reshape(n, num_groups, channels // num_groups, -1)
    mean, var = apply(_norm.NormStats, grouped, axes=(2, 3))
    out = apply(_norm.Normalize, grouped, mean, var, weight, bias, axes=(2, 3), eps=eps,
                affine_shape=(num_groups, channels // num_groups, 1), layout="suggested",
                grad_layout="suggested", layout_shape=tuple(input.shape))
    return named(out.reshape(input.shape), "NativeGroupNormBackward0")


def _normalized_axes(input, normalized_shape, weight, bias, star):
    """The trailing axes that ``normalized_shape`` names, after PyTorch's checks."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    shape = [int(v) for v in normalized_shape]
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                           "least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(t.shape)} and normalized_shape = {shape}")
    k = len(shape)
    if input.ndim < k or list(input.shape[input.ndim - k:]) != shape:
        expected = "[*" + (", " if star else "") + ", ".join(str(v) for v in shape) + "]"
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape {expected}, but "
                           f"got input of size{list(input.shape)}")
    return tuple(range(input.ndim - k, input.ndim))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalises over the last ``len(normalized_shape)`` dims (Ba et al., 2016;
    https://pytorch.org/docs/stable/generated/torch.nn.functional.layer_norm.html).

    Shapes: input (*, normalized_shape); weight, bias ``normalized_shape`` or None; output
    like input. RuntimeError when the trailing dims, weight or bias do not match
    ``normalized_shape``; NotImplementedError for integer inputs.
    """
    shape = input._data.shape
    if type(normalized_shape) is tuple and len(normalized_shape) == 1 and shape[-1:] == normalized_shape \
            and (weight is None or weight._data.shape == normalized_shape) \
            and (bias is None or bias._data.shape == normalized_shape):
        axes = (len(shape) - 1,)  # the common case, which passes every check below
    else:
        axes = _normalized_axes(input, normalized_shape, weight, bias, star=True)
    float_only(input, "LayerNormKernelImpl")
    if _mixed_dtype(input, weight, bias):
        return layer_norm(input.float(), normalized_shape, weight, bias, eps).to(input.dtype)
    if not recording(input, weight, bias):
        return named(apply(_norm.Normalize, input, None, None, weight, bias, axes=axes, eps=eps,
                           layout="row_major"), _LAYER_NORM_NODE)
    mean, var = apply(_norm.NormStats, input, axes=axes)
    return named(apply(_norm.Normalize, input, mean, var, weight, bias, axes=axes, eps=eps, layout="row_major",
                       grad_layout="row_major"), _LAYER_NORM_NODE)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x ** 2) + eps) * weight`` over the last ``len(normalized_shape)`` dims
    (Zhang & Sennrich, 2019; https://pytorch.org/docs/stable/generated/torch.nn.functional.rms_norm.html).

    ``eps`` None means ``finfo(input.dtype).eps`` (float32's for float16 and bfloat16). Shapes and errors as :func:`layer_norm`.
    """
    axes = _normalized_axes(input, normalized_shape, weight, None, star=False)
    float_only(input, "rms_norm")
    if eps is None:
        # PyTorch computes half precision in float32 and takes that type's eps.
        eps = float(np.finfo(np.float64 if input.dtype.np == np.float64 else np.float32).eps)
    if input.dtype in (_dtype.float16, _dtype.bfloat16):
        # torch's composite, op for op: normalised and weighted in float32, rounded once
        # (the fused op in half precision lost bits and overflowed backward).
        wide = input.float()
        out = wide * (wide.square().mean(axes, keepdim=True) + eps).rsqrt()
        return (out if weight is None else out * weight).to(input.dtype)
    mean, var = apply(_norm.NormStats, input, axes=axes, centered=False)
    out = apply(_norm.Normalize, input, mean, var, weight, None, axes=axes, eps=eps, centered=False,
                layout="suggested", grad_layout="grad")
    return named(out, "MulBackward0")  # torch's rms_norm is composite: its last op multiplies


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x ** 2 over size neighbouring channels) ** beta``
    (Krizhevsky et al., 2012; https://pytorch.org/docs/stable/generated/torch.nn.functional.local_response_norm.html).

    The neighbourhood of channel c is ``[c - size // 2, c + (size - 1) // 2]``, zero outside.
    Shapes: input (N, C, *) with at least 3 dims; output like input. ValueError otherwise.
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    squares = (input * input).reshape(input.shape[0], 1, input.shape[1], -1)
    squares = pad(squares, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(squares, (size, 1), stride=1).reshape(input.shape)
    return input / (div * alpha + k).pow(beta)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.normalize.html"""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom if out is None else div(input, denom, out=out)

