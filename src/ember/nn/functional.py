"""``ember.nn.functional``: layers, activations and losses as functions
(https://pytorch.org/docs/stable/nn.functional.html).

Everything here is written in ember ops. The few fused primitives (``linear``,
``cross_entropy``/``nll_loss``, ``binary_cross_entropy`` and activations whose PyTorch
derivative makes a choice at a kink) are entries in :mod:`ember._ops.nn`. Losses take
PyTorch's ``reduction`` ('mean' | 'sum' | 'none') and the legacy ``size_average``/``reduce``
flags; argument checks raise PyTorch's exception classes with its messages.
"""
import math
import warnings

import numpy as np

from .. import _dtype
from .. import _functional as _F
from .._creation import full as _full
from .._functional import one_hot, sigmoid, tanh  # noqa: F401  (re-exported, as in torch.nn.functional)
from .._ops import OPS
from .._ops.random import DropoutMask
from .._ops.core import _type_name, apply
from .._random import rng as _rng
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import STATE, no_grad

__all__ = [
    "linear", "bilinear", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "rrelu",
    "rrelu_", "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "softplus",
    "softsign", "sigmoid", "tanh", "hardtanh", "hardtanh_", "hardswish", "hardsigmoid", "logsigmoid",
    "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_", "softmax", "log_softmax",
    "softmin", "glu", "normalize", "one_hot", "cosine_similarity", "pairwise_distance",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
    "multilabel_margin_loss", "gaussian_nll_loss", "poisson_nll_loss", "pdist", "gumbel_softmax",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float_only(input, kernel):
    """NotImplementedError, as PyTorch's kernels raise, for integer or bool inputs."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'")


def _in_place(input, fn):
    """PyTorch's ``inplace=True``: writes ``fn(input)`` into ``input`` and returns ``input``.
    ``fn`` sees a copy of the old values when history is recorded, since the ops it runs may
    save their input for backward (PyTorch keeps the original ``self`` the same way)."""
    source = input._snapshot() if STATE.enabled and input.requires_grad else input
    return _F._inplace_result(input, fn(source))


def _unary(op, input, inplace, **attrs):
    if inplace:
        return _in_place(input, lambda x: apply(op, x, **attrs))
    return apply(op, input, **attrs)


# ---- linear layers ----------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (https://pytorch.org/docs/stable/generated/torch.nn.functional.linear.html).

    Shapes: input (*, in_features), weight (out_features, in_features) or (in_features),
    bias (out_features) or broadcastable to the output; output (*, out_features).
    Raises RuntimeError when ``in_features`` differ ("mat1 and mat2 shapes cannot be
    multiplied (AxB and CxD)"), when dtypes differ, or when ``bias`` does not broadcast.
    """
    weight_shape, input_shape = weight._data.shape, input._data.shape
    if len(weight_shape) == 2 and input_shape:
        if input_shape[-1] != weight_shape[1]:
            rows = _F._prod(input.shape[:-1])
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
                               f"and {weight.shape[1]}x{weight.shape[0]})")
        if input.dtype is not weight.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_F._c_type(input.dtype)} != {_F._c_type(weight.dtype)}")
        if bias is None:
            return apply(OPS["Linear"], input, weight)
        if bias._data.shape == weight_shape[:1] and bias.dtype is input.dtype:
            return apply(OPS["Linear"], input, weight, bias)
    out = _F.matmul(input, weight.t()) if weight.ndim == 2 else _F.matmul(input, weight)
    if bias is None:
        return out
    if bias.dtype is not out.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_name(bias.dtype)} and {_type_name(out.dtype)}")
    try:
        np.broadcast_shapes(tuple(bias.shape), tuple(out.shape))
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({out.shape[-1]}) must match the existing "
                           f"size ({bias.shape[-1]}) at non-singleton dimension {out.ndim - 1}.  Target "
                           f"sizes: {list(out.shape)}.  Tensor sizes: {list(bias.shape)}") from None
    return out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y_o = x1^T W_o x2 + b_o`` (https://pytorch.org/docs/stable/generated/torch.nn.functional.bilinear.html).

    Shapes: input1 (*, in1_features), input2 (*, in2_features) with the same leading
    dimensions, weight (out_features, in1_features, in2_features), bias (out_features);
    output (*, out_features). RuntimeError naming the sizes when they do not fit.
    """
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    for name, x, k in (("input1", input1, 1), ("input2", input2, 2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[k]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.ndim else 1} but expected {weight.shape[0]}")
    out = _F.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


# ---- dropout -----------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, p, shape):
    """A constant tensor: 0 with probability ``p``, else ``1 / (1 - p)`` (input's dtype)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_type_name(input.dtype)}")
    return apply(DropoutMask, shape=tuple(shape), p=p, dtype=input.dtype)


def _dropout(input, p, training, inplace, shape):
    _check_p(p)
    if not training or p == 0:
        return input
    mask = _keep_mask(input, p, shape)
    return _in_place(input, lambda x: x * mask) if inplace else input * mask


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
    return _in_place(input, batched) if inplace else batched(input)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, L) or (C, L) inputs. RuntimeError for other ranks."""
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
    (N, C, L) with a warning, as PyTorch does)."""
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
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) inputs."""
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
    else:
        alpha = _SELU_ALPHA * _SELU_SCALE
        a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
        keep = (_rng().random(shape) >= p).astype(input._data.dtype)
        scale = Tensor._make(keep * a)
        shift = Tensor._make(((keep - 1) * alpha * a + alpha * a * p).astype(input._data.dtype))
    return _in_place(input, lambda x: x * scale + shift) if inplace else input * scale + shift


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout for SELU networks; any shape. ValueError for ``p`` outside [0, 1]."""
    return _alpha_dropout(input, p, training, inplace, tuple(input.shape))


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels of an (N, C, *) input."""
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return _alpha_dropout(input, p, training, inplace, shape)


# ---- activations -------------------------------------------------------------------------------
def relu(input, inplace=False):
    """``max(input, 0)``; the gradient at 0 is 0. RuntimeError for bool inputs."""
    if input.dtype is _dtype.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _unary(OPS["Relu"], input, inplace)


def relu_(input):
    return relu(input, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(input, min_val, max_val)`` with zero gradient at and beyond the bounds.
    ValueError if ``min_val > max_val``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _unary(OPS["Hardtanh"], input, inplace, min_val=min_val, max_val=max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``: ``hardtanh(input, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, else ``negative_slope * input`` (gradient at 0: the slope)."""
    _float_only(input, "leaky_relu_cpu")
    return _unary(OPS["LeakyRelu"], input, inplace, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def prelu(input, weight):
    """Leaky ReLU with a learned slope per channel (He et al., 2015,
    https://arxiv.org/abs/1502.01852). ``weight`` has 1 or C elements, C = ``input.shape[1]``
    (1 for inputs with fewer than 2 dims). RuntimeError when the counts differ."""
    _float_only(input, "prelu_cpu")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter "
                           f"numbers = {weight.numel()} and channel size = {channels}.")
    if weight.numel() != 1 or weight.ndim:
        weight = weight.reshape((-1,) + (1,) * (input.ndim - 2)) if input.ndim >= 2 else weight.reshape(())
    return _F.where(input > 0, input, weight * input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (Xu et al., 2015, https://arxiv.org/abs/1505.00853): a slope drawn
    uniformly from [lower, upper] per element in training, their mean otherwise."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    _float_only(input, "rrelu_with_noise_cpu")
    slopes = _rng().uniform(lower, upper, tuple(input.shape)).astype(input._data.dtype)
    slope = Tensor._make(np.where(input._data >= 0, 1, slopes).astype(input._data.dtype))
    return _in_place(input, lambda x: x * slope) if inplace else input * slope


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """``input`` where positive, else ``alpha * (exp(input) - 1)`` (Clevert et al., 2015,
    https://arxiv.org/abs/1511.07289)."""
    _float_only(input, "elu_cpu")
    return _unary(OPS["Elu"], input, inplace, alpha=alpha)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """``scale * elu(input, alpha)`` with the self-normalizing constants of Klambauer et al.,
    2017 (https://arxiv.org/abs/1706.02515)."""
    _float_only(input, "elu_cpu")
    return _unary(OPS["Elu"], input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (Barron, 2017,
    https://arxiv.org/abs/1704.07483)."""
    _float_only(input, "elu_cpu")
    return _unary(OPS["Elu"], input, inplace, alpha=alpha, input_scale=1.0 / alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """``input * Phi(input)``, Phi the standard normal CDF; ``approximate="tanh"`` uses
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` (https://arxiv.org/abs/1606.08415).
    RuntimeError for another ``approximate``."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    return apply(OPS["Gelu"], input, approximate=approximate)


def silu(input, inplace=False):
    """``input * sigmoid(input)`` (a.k.a. swish; https://arxiv.org/abs/1702.03118)."""
    _float_only(input, "silu_cpu")
    return _in_place(input, silu) if inplace else input * input.sigmoid()


def mish(input, inplace=False):
    """``input * tanh(softplus(input))`` (Misra, 2019, https://arxiv.org/abs/1908.08681)."""
    _float_only(input, "mish_cpu")
    return _in_place(input, mish) if inplace else input * softplus(input).tanh()


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where ``beta * input >
    threshold`` (never overflows)."""
    _float_only(input, "softplus_cpu")
    return apply(OPS["Softplus"], input, beta=beta, threshold=threshold)


def softsign(input):
    """``input / (1 + |input|)``."""
    return input / (input.abs() + 1)


def hardsigmoid(input, inplace=False):
    """``relu6(input + 3) / 6``; gradient 1/6 strictly between -3 and 3, else 0."""
    _float_only(input, "hardsigmoid_cpu")
    return _unary(OPS["Hardsigmoid"], input, inplace)


def hardswish(input, inplace=False):
    """``input * relu6(input + 3) / 6`` (Howard et al., 2019, https://arxiv.org/abs/1905.02244)."""
    _float_only(input, "hardswish_cpu")
    return _unary(OPS["Hardswish"], input, inplace)


def logsigmoid(input):
    """``log(sigmoid(input))``, finite for any finite input."""
    _float_only(input, "log_sigmoid_cpu")
    return apply(OPS["LogSigmoid"], input)


def tanhshrink(input):
    """``input - tanh(input)``."""
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0.
    RuntimeError for negative ``lambd``."""
    _float_only(input, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    shrunk = _F.where(input < -lambd, input + lambd, input - lambd)
    return _F.where((input >= -lambd) & (input <= lambd), input.new_zeros(()), shrunk)


def hardshrink(input, lambd=0.5):
    """``input`` where ``|input| > lambd`` (or NaN), else 0."""
    _float_only(input, "hardshrink_cpu")
    return _F.where((input >= -lambd) & (input <= lambd), input.new_zeros(()), input)


def _threshold(input, threshold, value, inplace=False):
    """``input`` where ``input > threshold``, else ``value``."""
    return _unary(OPS["Threshold"], input, inplace, threshold=threshold, value=value)


threshold = _threshold


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, inplace=True)


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(name, input, dim, dtype, stacklevel, kernel):
    if dtype is None:
        _float_only(input, kernel)
    if dim is None:
        dim = _softmax_dim(name, input.ndim, stacklevel)
    return dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim`` (computed in ``dtype`` if given); never
    overflows. NotImplementedError for integer inputs without a floating ``dtype``."""
    dim = _softmax_input("softmax", input, dim, dtype, _stacklevel, "softmax_lastdim_kernel_impl")
    return _F.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x_i - log(sum_j exp(x_j))`` along ``dim``; finite for logits of any size."""
    dim = _softmax_input("log_softmax", input, dim, dtype, _stacklevel, "log_softmax_lastdim_kernel_impl")
    return _F.log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``."""
    dim = _softmax_input("softmin", input, dim, dtype, _stacklevel, "softmax_lastdim_kernel_impl")
    return _F.softmax(-input, dim, dtype)


def glu(input, dim=-1):
    """Gated linear unit ``a * sigmoid(b)``, ``a`` and ``b`` the halves of ``input`` along
    ``dim`` (Dauphin et al., 2016, https://arxiv.org/abs/1612.08083). RuntimeError for a
    0-dim input or an odd size."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    a, b = input.chunk(2, d)
    return a * b.sigmoid()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom if out is None else _F.div(input, denom, out=out)


# ---- distances ---------------------------------------------------------------------------------
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``, after broadcasting
    ``x1`` and ``x2`` (https://pytorch.org/docs/stable/generated/torch.nn.functional.cosine_similarity.html).
    Each input is divided by its norm first, which keeps the result within [-1, 1]."""
    if not x1.dtype.is_floating_point and not x2.dtype.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_type_name(_dtype.result_type(x1, x2))}")
    x1, x2 = _F.broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    # As in PyTorch, the clamp changes the value only: the norm's gradient is the unclamped one.
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension, after broadcasting. RuntimeError naming
    the sizes when ``x1`` and ``x2`` do not broadcast (from the subtraction)."""
    dim = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, max(dim, 0) if dim >= 0 else None, keepdim)


def pdist(input, p=2):
    """p-norm distances between the rows of ``input`` (N, M): the (N (N - 1) / 2) entries above
    the diagonal of the distance matrix, row by row."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    i, j = np.triu_indices(input.shape[0], 1)
    rows_i = input.index_select(0, Tensor._make(i.astype(np.int64)))
    rows_j = input.index_select(0, Tensor._make(j.astype(np.int64)))
    return (rows_i - rows_j).norm(p, 1)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax distribution (Jang et al., 2016,
    https://arxiv.org/abs/1611.01144): ``softmax((logits + g) / tau)`` with Gumbel noise g;
    ``hard`` returns the one-hot argmax with the soft sample's gradient (straight-through)."""
    noise = Tensor._make(-np.log(_rng().exponential(1.0, tuple(logits.shape))).astype(logits._data.dtype))
    soft = ((logits + noise) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot_sample = soft.new_zeros(soft.shape).scatter(dim, index, 1.0)
    return one_hot_sample - soft.detach() + soft


# ---- losses ------------------------------------------------------------------------------------
def _legacy_reduction(size_average, reduce, reduction):
    """The ``reduction`` that the deprecated ``size_average``/``reduce`` flags stand for."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{result}' instead.")
    return result


def _check_reduction(reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _broadcast_pair(input, target):
    """``input`` and ``target`` broadcast together, warning when their shapes differ."""
    if tuple(target.shape) == tuple(input.shape):
        return input, target
    warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                  f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
                  "Please ensure they have the same size.", stacklevel=3)
    return _F.broadcast_tensors(input, target)


def _weighted(loss, weight, reduction, input):
    """PyTorch's elementwise ``weight`` of mse/l1: the mean divides by the weight total."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    if reduction in ("sum", "none"):
        return _reduce(loss, reduction)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """``(input - target)^2``, reduced (https://pytorch.org/docs/stable/generated/torch.nn.MSELoss.html).

    input and target broadcast (with a warning when their shapes differ); ``weight``, if
    given, has input's shape and makes the mean divide by its total. NotImplementedError
    for integer inputs.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    diff = expanded_input - expanded_target
    _float_only(diff, "mse_cpu")
    loss = diff * diff
    return _reduce(loss, reduction) if weight is None else _weighted(loss, weight, reduction, input)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """``|input - target|``, reduced; the gradient at a tie is 0. Same rules as ``mse_loss``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    loss = (expanded_input - expanded_target).abs()
    return _reduce(loss, reduction) if weight is None else _weighted(loss, weight, reduction, input)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (d = input - target;
    Girshick, 2015, https://arxiv.org/abs/1504.08083); ``beta == 0`` is ``l1_loss``.
    RuntimeError for negative ``beta``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = expanded_input - expanded_target
    size = diff.abs()
    if beta == 0:
        return _reduce(size, reduction)
    return _reduce(_F.where(size < beta, diff * diff * (0.5 / beta), size - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)`` (d = input - target;
    Huber, 1964). ``weight`` (input's shape) scales elementwise; the mean stays a plain mean.
    RuntimeError for ``delta <= 0``."""
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = expanded_input - expanded_target
    size = diff.abs()
    loss = _F.where(size < delta, diff * diff * 0.5, (size - 0.5 * delta) * delta)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
        loss = loss * weight
    return _reduce(loss, reduction)


def _class_targets(input, target, weight):
    """Checks a class-index ``target`` against ``input`` (N, C, d1, ...) or (C,) as PyTorch's
    ``nll_loss_nd`` does; returns them batched (unbatched inputs gain a batch of 1)."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and target.ndim >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if target.dtype is _dtype.uint8:
        target = target.long()
    elif target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_type_name(target.dtype)}")
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 1:
            if target.ndim != 0:
                raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: "
                                   f"{list(target.shape)})")
            input, target = input.unsqueeze(0), target.unsqueeze(0)
    elif input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets "
                               f"of dimension: {target.ndim}")
        if tuple(target.shape) != tuple(input.shape[:1]) + tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    else:
        expected = list(input.shape[:1]) + list(input.shape[2:])
        if list(target.shape) != expected:
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    _check_weight(input, weight)
    return input, target


def _check_weight(input, weight):
    if weight is None:
        return
    classes = input.shape[1]
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(weight.dtype)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood ``-weight[t] * input[n, t]`` of log-probabilities ``input`` at
    class indices ``target`` (https://pytorch.org/docs/stable/generated/torch.nn.NLLLoss.html).

    Shapes: input (N, C), (C) or (N, C, d1, ..., dK); target (N), () or (N, d1, ..., dK) of
    int64 (or uint8) in [0, C) or equal to ``ignore_index``; weight (C) of input's dtype.
    'mean' divides by the total weight of the targets not ignored (nan if there are none).

    Raises ValueError for mismatched batch sizes ("Expected input batch_size (3) to match
    target batch_size (4)."), RuntimeError for other shape or dtype mismatches, IndexError
    for a class index out of range ("Target 7 is out of bounds.").
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    unbatched = input.ndim == 1
    input, target = _class_targets(input, target, weight)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for '{_type_name(input.dtype)}'")
    out = apply(OPS["NllLoss"], input, target, weight, ignore_index=ignore_index, reduction=reduction)
    return out.squeeze(0) if unbatched and reduction == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross-entropy between softmax(input) over dim 1 and ``target``
    (https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html).

    ``input`` holds unnormalized logits: (N, C), (C) or (N, C, d1, ..., dK). ``target`` is
    either class indices (as for :func:`nll_loss`, with ``ignore_index`` and ``weight``
    likewise) or class probabilities of input's shape (floating; 'mean' divides by the number
    of samples N * d1 * ... * dK). ``label_smoothing`` mixes the target with the uniform
    distribution (Szegedy et al., 2016, https://arxiv.org/abs/1512.00567). Finite for logits
    of any size: log-softmax and the loss are computed in one fused, max-shifted pass.

    Raises the errors of :func:`nll_loss`, RuntimeError for ``label_smoothing > 1`` or for
    integer probability targets, NotImplementedError for integer logits.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    smoothing = float(label_smoothing) if label_smoothing > 0 else 0.0  # PyTorch ignores negative values
    unbatched = input.ndim == 1
    if tuple(input.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, "
                               f"got {_type_name(target.dtype)}")
        _float_only(input, "log_softmax_lastdim_kernel_impl")
        common = _dtype.promote_types(input.dtype, target.dtype)
        input, target = input.to(common), target.to(common)
        if unbatched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        _check_weight(input, weight)
    else:
        input, target = _class_targets(input, target, weight)
        _float_only(input, "log_softmax_lastdim_kernel_impl")
    out = apply(OPS["CrossEntropy"], input, target, weight, ignore_index=ignore_index,
                label_smoothing=smoothing, reduction=reduction)
    return out.squeeze(0) if unbatched and reduction == "none" else out


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """``-weight * (t log(x) + (1 - t) log(1 - x))`` with each log clamped at -100, as in
    PyTorch (https://pytorch.org/docs/stable/generated/torch.nn.BCELoss.html).

    input: probabilities in [0, 1], any shape; target: same shape and dtype; weight
    broadcasts to it. Raises ValueError when the shapes differ, RuntimeError for inputs
    outside [0, 1] or a target of another dtype.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_type_name(target.dtype)} but expected {_type_name(input.dtype)}")
    if input.numel() and (bool((input._data < 0).any()) or bool((input._data > 1).any())):
        raise RuntimeError("all elements of input should be between 0 and 1")
    _check_reduction(reduction)
    if weight is not None:
        weight = weight.expand(_F.broadcast_shapes(target.shape, weight.shape))
        loss = apply(OPS["BinaryCrossEntropy"], input, target, weight)
    else:
        loss = apply(OPS["BinaryCrossEntropy"], input, target)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """``binary_cross_entropy(sigmoid(input), target, weight)`` computed stably from logits:
    ``(1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x)``, finite for logits of any size
    (https://pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html).

    input and target have the same shape; ``weight`` broadcasts to it; ``pos_weight``
    broadcasts along the last (class) dimension. ValueError when the shapes differ.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _check_reduction(reduction)
    log_sig = logsigmoid(input)
    if pos_weight is None:
        loss = (1 - target) * input - log_sig
    else:
        loss = (1 - target) * input - (target * (pos_weight - 1) + 1) * log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence ``target * (log(target) - input)`` for log-probabilities
    ``input`` (https://pytorch.org/docs/stable/generated/torch.nn.KLDivLoss.html); with
    ``log_target`` the target is given as log-probabilities too. Terms with ``target == 0``
    are 0. ``reduction='batchmean'`` divides the sum by ``input.size(0)`` (the KL
    divergence proper); 'mean' divides by the element count and warns, as PyTorch does.
    RuntimeError for integer inputs."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support "
                      "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                      "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                      "major release.", stacklevel=2)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not input.dtype.is_floating_point or not target.dtype.is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = _F.where(positive, target, target.new_ones(()))
        loss = _F.where(positive, target * safe.log(), target.new_zeros(())) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))`` for targets in {-1, 1}."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce(softplus(-target * input), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``; RuntimeError unless the three inputs
    have the same number of dimensions."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got "
                           f"sizes: input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    zero = input.new_zeros(())
    loss = _F.where(target != 1, (margin - input).clamp_min(0), zero) + _F.where(target != -1, input, zero)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``; cos over the last dimension of (N, D) or (D) inputs."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    dim = input1.ndim - 1
    eps = 1e-12
    dot = (input1 * input2).sum(dim)
    cos = dot / (((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)).sqrt()
    zero = cos.new_zeros(())
    loss = _F.where(target == 1, 1 - cos, zero) + _F.where(target == -1, (cos - margin).clamp_min(0), zero)
    return _reduce(loss, reduction)


def _check_triplet_dims(anchor, positive, negative):
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same "
                           f"number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the :func:`pairwise_distance`
    (Balntas et al., 2016); ``swap`` uses ``min(d(a, n), d(p, n))``. Inputs (N, D) or (D);
    RuntimeError unless they have the same number of dimensions."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_triplet_dims(anchor, positive, negative)
    distance = lambda x1, x2: pairwise_distance(x1, x2, p, eps)
    return triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=distance,
                                             margin=margin, swap=swap, reduction=reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """:func:`triplet_margin_loss` with any ``distance_function(x1, x2)`` (default
    :func:`pairwise_distance`). ValueError for ``margin <= 0`` or an unknown reduction."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = distance_function or pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = _F.minimum(d_neg, distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-class binary cross-entropy of logits averaged over the C classes:
    ``-mean_c(y log sigmoid(x) + (1 - y) log sigmoid(-x))``. Shape: input (N, C) or (C),
    target the same (0 or 1), weight (C); output (N) with reduction 'none'."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``, scaled by
    ``weight[y]``. Shape: input (N, C) or (C), target (N) or () int64. ValueError for ``p``
    other than 1 or 2 or a weight that is not 1-D."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_reduction(reduction)
    unbatched = input.ndim == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.reshape(1)
    classes = input.shape[1]
    index = target.unsqueeze(1)
    # The hinge's gradient is zero at its kink, as in PyTorch: relu, not clamp.
    z = (margin - input.gather(1, index) + input).relu()
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[target].unsqueeze(1)
    others = Tensor._make(np.arange(classes) != target._data[:, None])
    loss = (z * others).sum(1) / classes
    return _reduce(loss.squeeze(0) if unbatched else loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum_{j in y, i not in y} max(0, 1 - (x[j] - x[i])) / C``, the target classes ``y``
    being the entries of ``target`` before its first -1. Shape: input (N, C) or (C), target
    int64 of the same shape."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    unbatched = input.ndim == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    labels = target._data
    listed = np.cumprod(labels != -1, axis=1).astype(bool)  # entries before the first -1
    # A class listed twice counts twice, as in PyTorch's loop over the target entries.
    times_listed = np.zeros(labels.shape, input._data.dtype)
    np.add.at(times_listed, (np.nonzero(listed)[0], labels[listed]), 1)
    pairs = Tensor._make(times_listed[:, :, None] * (times_listed == 0)[:, None, :])  # [n, j target, i not]
    z = (1 - input.unsqueeze(2) + input.unsqueeze(1)).relu()
    loss = (z * pairs).sum((1, 2)) / input.shape[1]
    return _reduce(loss.squeeze(0) if unbatched else loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """``0.5 (log(var) + (input - target)^2 / var)`` (+ ``0.5 log(2 pi)`` if ``full``), with
    ``var`` clamped at ``eps`` (value only, as in PyTorch). ``var`` has input's shape, or
    lacks its last dim, or differs in one dim of size 1; ValueError otherwise or if negative."""
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _full(tuple(input.shape), float(var), dtype=input.dtype)
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = ((input - target) ** 2 / var + var.log()) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """``exp(input) - target * input`` (``log_input``) or ``input - target * log(input + eps)``,
    plus Stirling's ``target log(target) - target + 0.5 log(2 pi target)`` for targets > 1
    if ``full``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = _F.where(big, target, target.new_ones(()))
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        loss = loss + _F.where(big, stirling, target.new_zeros(()))
    return _reduce(loss, reduction)


# Areas that live in their own files (nn/_fn/); their ``__all__`` is the contract.
from ._fn.conv import *  # noqa: E402,F401,F403
from ._fn.pooling import *  # noqa: E402,F401,F403
from ._fn.norm import *  # noqa: E402,F401,F403
from ._fn.image import *  # noqa: E402,F401,F403
from ._fn.attention import *  # noqa: E402,F401,F403
from ._fn.sparse import *  # noqa: E402,F401,F403
from ._fn.rnn import *  # noqa: E402,F401,F403
from ._fn import attention as _attention, conv as _conv, image as _image, norm as _norm  # noqa: E402
from ._fn import pooling as _pooling, rnn as _rnn, sparse as _sparse  # noqa: E402

__all__ += [*_conv.__all__, *_pooling.__all__, *_norm.__all__, *_image.__all__, *_attention.__all__,
            *_sparse.__all__, *_rnn.__all__]
