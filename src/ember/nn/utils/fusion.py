"""Folding an eval-mode batch norm into the convolution or linear layer before it
(``torch.nn.utils.fusion``): ``bn(conv(x)) == fused(x)`` with the running statistics.

For running mean μ, variance σ², scale γ and shift β of the batch norm, each output channel c of
the layer becomes ``w'[c] = w[c] · γ[c] / √(σ²[c] + ε)`` and ``b'[c] = (b[c] − μ[c]) · γ[c] /
√(σ²[c] + ε) + β[c]``. Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.fuse_conv_bn_eval.html
"""
import copy

from ..._creation import ones_like, zeros_like
from ..._ops.pointwise_unary import rsqrt
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_running_stats(bn):
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` (a ConvNd or, with ``transpose``, a ConvTransposeNd) whose weight and
    bias include the eval-mode batch norm ``bn`` that follows it.

    Raises:
        AssertionError: either module is in training mode; ``bn`` keeps no running statistics.
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_running_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused ``(weight, bias)`` Parameters of a convolution (weight ``(C_out, C_in/groups,
    *kernel)``, or ``(C_in, C_out/groups, *kernel)`` with ``transpose``) and batch-norm tensors of
    shape ``(C_out,)``; a None bias, ``bn_w`` or ``bn_b`` counts as zeros, ones, zeros. The results
    keep the convolution's dtypes and ``requires_grad``."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    var_rsqrt = rsqrt(bn_rv + bn_eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    weight = (conv_w * (bn_w * var_rsqrt).reshape(shape)).to(dtype=weight_dtype)
    bias = ((conv_b - bn_rm) * var_rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose weight and bias include the eval-mode batch norm ``bn`` that
    follows it (``bn.num_features`` equal to ``linear.out_features``, or 1).

    Raises:
        AssertionError: either module is in training mode; the feature counts differ;
            ``bn`` keeps no running statistics.
    """
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    _check_running_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused ``(weight, bias)`` Parameters of a linear layer (weight ``(out, in)``) and
    batch-norm tensors of shape ``(out,)`` or ``(1,)``; a None bias counts as zeros. The results
    keep the layer's dtypes and ``requires_grad``."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)
