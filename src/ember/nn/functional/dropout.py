"""Dropout as functions: each element, or each channel, zeroed with probability ``p``
(https://pytorch.org/docs/stable/nn.functional.html#dropout-functions).

The keep mask is drawn from ember's default generator and enters the graph as a constant
factor, so the gradient is the same mask.
"""
import math
import warnings

from ... import _backend, _distributions, _memory_format
from ..._backend.meta import MetaArray, meta_array
from ..._ops.core import _type_name, apply
from ..._ops.random import DropoutMask
from ..._tensor import Tensor
from ._common import SELU_ALPHA, SELU_SCALE, in_place

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, p, shape):
    """A constant tensor: 0 with probability ``p``, else ``1 / (1 - p)`` (input's dtype)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_type_name(input.dtype)}")
    if type(input._data) is MetaArray:  # shapes only (a model traced on the meta device): no draw
        return Tensor._make(meta_array(tuple(shape), input.dtype.np))
    order = _memory_format.fill_order(input._data) if tuple(shape) == tuple(input.shape) else None
    draw = lambda size: apply(DropoutMask, shape=tuple(size), p=p, dtype=input.dtype)
    # torch draws into empty_like(input): in input's memory order
    mask = draw(shape) if order is None else _memory_format.made_in_order(draw, shape, order)
    # Drawn by the CPU generator (torch's numbers for a seed), then on the input's device.
    mask._data = _backend.from_host(mask._data, input._data)
    return mask


def _dropout(input, p, training, inplace, shape):
    _check_p(p)
    if not training or p == 0:
        return input
    mask = _keep_mask(input, p, shape)
    return in_place(input, lambda x: x * mask) if inplace else input * mask


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``
    (Srivastava et al., 2014; https://pytorch.org/docs/stable/generated/torch.nn.functional.dropout.html).

    Any shape; returns ``input`` itself when not ``training`` or ``p == 0``. ValueError for
    ``p`` outside [0, 1]; draws from the default generator.
    """
    return _dropout(input, p, training, inplace, tuple(input.shape))


def _feature_dropout(input, p, training, inplace):
    """Dropout of whole channels: one draw per (N, C) pair, broadcast over the rest."""
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return _dropout(input, p, training, inplace, shape)


def _unbatched_feature_dropout(input, p, training, inplace):
    """Channel-wise dropout of an input without its batch dimension."""
    if not training or p == 0:
        return input
    batched = lambda x: _feature_dropout(x.unsqueeze(0), p, training, False).squeeze(0)
    return in_place(input, batched) if inplace else batched(input)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, L) or (C, L) inputs. RuntimeError for other ranks.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.dropout1d.html"""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
                           "spatial dimension, a channel dimension, and an optional batch dimension "
                           "(i.e. 2D or 3D inputs).")
    if input.ndim == 2:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature_dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, H, W) or (C, H, W) inputs (a 3-D input is read as
    (N, C, L) with a warning, as PyTorch does).
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.dropout2d.html"""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. Note that dropout2d exists to "
                      "provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
                      "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
                      "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
                      "is the channel dim. This behavior will change in a future release to interpret "
                      "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
                      "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) inputs.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.dropout3d.html"""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. Note that dropout3d exists to "
                      "provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
                      "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if input.ndim == 4:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature_dropout(input, p, training, inplace)


def _alpha_dropout(input, p, training, inplace, shape):
    """SELU-preserving dropout (Klambauer et al., 2017, https://arxiv.org/abs/1706.02515):
    dropped units take SELU's negative saturation value, then an affine map restores the
    mean and variance."""
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        scale = shift = 0
    else:  # torch's draws: a mask of Bernoulli(1 - p) in the input's dtype, one 53-bit uniform each
        alpha = SELU_ALPHA * SELU_SCALE
        a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
        keep = _distributions.bernoulli_scalar(shape, 1 - p, input.dtype)
        scale = Tensor._make(keep * keep.dtype.type(a))
        shift = Tensor._make((keep - 1) * keep.dtype.type(alpha * a) + keep.dtype.type(alpha * a * p))
    return in_place(input, lambda x: x * scale + shift) if inplace else input * scale + shift


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout for SELU networks; any shape. ValueError for ``p`` outside [0, 1].
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.alpha_dropout.html"""
    return _alpha_dropout(input, p, training, inplace, tuple(input.shape))


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels of an (N, C, *) input.
    Source: https://pytorch.org/docs/stable/generated/torch.nn.functional.feature_alpha_dropout.html"""
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return _alpha_dropout(input, p, training, inplace, shape)

