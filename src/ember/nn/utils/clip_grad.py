"""Gradient clipping (https://pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html)."""
import math

from ..._creation import tensor as _tensor
from ..._ops.join import stack
from ..._ops.linalg import vector_norm
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..init import _deprecated

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _tensor_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` taken together (as if concatenated), as a
    0-d tensor of their dtype (``tensor(0.)`` for none). RuntimeError if it is nan or inf and
    ``error_if_nonfinite``."""
    tensors = _tensor_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _tensor(0.0)
    norms = [vector_norm(t, norm_type) for t in tensors]
    total = norms[0] if len(norms) == 1 else vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and scale the "
                           "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm +
    1e-6))``."""
    grads = [p.grad for p in _tensor_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescales the gradients of ``parameters`` (a tensor or an iterable of them) in place so
    that their total ``norm_type``-norm (``inf`` for the max-norm) is at most ``max_norm``.

    Returns the total norm before clipping, a 0-d tensor. RuntimeError when that norm is not
    finite and ``error_if_nonfinite`` is True. ``foreach`` is accepted for compatibility.
    """
    parameters = _tensor_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps the gradients of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    for p in _tensor_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)


clip_grad_norm = _deprecated(clip_grad_norm_, "torch.nn.utils")
