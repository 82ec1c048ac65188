"""``ember.nn.utils``: gradient clipping, parameter/vector conversion and module hooks."""
import importlib

from . import hooks
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]


def __getattr__(name):
    # Submodules written elsewhere (``rnn``, ...) load on first use, as ``torch.nn.utils.rnn`` does.
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'") from None
