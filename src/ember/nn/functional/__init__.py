"""``ember.nn.functional``: layers, activations and losses as functions
(https://pytorch.org/docs/stable/nn.functional.html), one area per file.

Everything is written in ember ops; the few fused primitives (``linear``,
``cross_entropy``/``nll_loss``, ``binary_cross_entropy``, the normalisations, and
activations whose PyTorch derivative makes a choice at a kink) are entries in
:mod:`ember._ops`. Users import the functions from here, as from ``torch.nn.functional``.
"""
import sys

from ... import _tensor_subclass
from .linear import linear, bilinear
from .dropout import dropout, dropout1d, dropout2d, dropout3d, alpha_dropout, feature_alpha_dropout
from .activation import (
    relu, relu_, relu6, leaky_relu, leaky_relu_, prelu, rrelu, rrelu_, elu, elu_, selu, selu_,
    celu, celu_, gelu, silu, mish, softplus, softsign, sigmoid, tanh, hardtanh, hardtanh_,
    hardswish, hardsigmoid, logsigmoid, tanhshrink, softshrink, hardshrink, threshold,
    threshold_, softmax, log_softmax, softmin, glu, gumbel_softmax,
)
from .distance import cosine_similarity, pairwise_distance, pdist
from .loss import (
    mse_loss, l1_loss, smooth_l1_loss, huber_loss, cross_entropy, nll_loss,
    binary_cross_entropy, binary_cross_entropy_with_logits, kl_div, soft_margin_loss,
    margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss, triplet_margin_loss,
    triplet_margin_with_distance_loss, multilabel_soft_margin_loss, multi_margin_loss,
    multilabel_margin_loss, gaussian_nll_loss, poisson_nll_loss,
)
from .ctc import ctc_loss
from .conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from .pooling import (
    max_pool1d, max_pool2d, max_pool1d_with_indices, max_pool2d_with_indices, avg_pool1d,
    avg_pool2d, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,
    adaptive_max_pool2d, adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
    max_unpool1d, max_unpool2d, lp_pool1d, lp_pool2d, max_pool3d, max_pool3d_with_indices, avg_pool3d,
    adaptive_avg_pool3d, adaptive_max_pool3d, adaptive_max_pool3d_with_indices, max_unpool3d, lp_pool3d,
)
from .norm import (
    batch_norm, instance_norm, group_norm, layer_norm, rms_norm, normalize, local_response_norm,
)
from .grid import affine_grid, grid_sample
from .fractional import (fractional_max_pool2d, fractional_max_pool2d_with_indices, fractional_max_pool3d,
                         fractional_max_pool3d_with_indices)
from .image import (
    pad, interpolate, upsample, upsample_nearest, upsample_bilinear, unfold, fold,
    pixel_shuffle, pixel_unshuffle, channel_shuffle,
)
from .attention import scaled_dot_product_attention, multi_head_attention_forward
from .sparse import embedding, embedding_bag, one_hot

__all__ = [
    "linear", "bilinear", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "rrelu",
    "rrelu_", "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "softplus",
    "softsign", "sigmoid", "tanh", "hardtanh", "hardtanh_", "hardswish", "hardsigmoid", "logsigmoid",
    "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_", "softmax", "log_softmax",
    "softmin", "glu", "gumbel_softmax", "cosine_similarity", "pairwise_distance", "pdist",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
    "multilabel_margin_loss", "gaussian_nll_loss", "poisson_nll_loss", "ctc_loss",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d",
    "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "max_unpool1d", "max_unpool2d", "lp_pool1d", "lp_pool2d", "max_pool3d", "max_pool3d_with_indices",
    "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
    "max_unpool3d", "lp_pool3d",
    "batch_norm", "instance_norm", "group_norm", "layer_norm", "rms_norm", "normalize",
    "local_response_norm", "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
    "unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "affine_grid", "grid_sample",
    "scaled_dot_product_attention", "multi_head_attention_forward",
    "embedding", "embedding_bag", "one_hot",
]

_tensor_subclass.wrap_namespace(sys.modules[__name__])  # (when a Tensor subclass came first)
