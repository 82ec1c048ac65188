"""``ember.nn.utils``: gradient clipping, parameter/vector conversion, module hooks, packed
sequences (``rnn``), pruning (``prune``) and the hook-based ``weight_norm``/``spectral_norm``,
batch-norm fusion, ``skip_init``, conv weight memory formats and the deprecated ``stateless``,
as ``torch.nn.utils``."""
import importlib

from . import hooks, prune, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "weight_norm", "remove_weight_norm",
           "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format", "hooks", "prune", "rnn", "parametrize", "stateless"]

# These import nn.modules, which imports this package (module.py reads hooks): loaded on first use.
_LAZY = {"fuse_conv_bn_eval": "fusion", "fuse_conv_bn_weights": "fusion", "fuse_linear_bn_eval": "fusion",
         "fuse_linear_bn_weights": "fusion", "skip_init": "init", "convert_conv2d_weight_memory_format":
         "memory_format", "convert_conv3d_weight_memory_format": "memory_format"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    if name in ("parametrize", "stateless", "fusion", "memory_format", "parametrizations"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
