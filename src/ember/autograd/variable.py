"""``torch.autograd.variable``: the pre-0.4 ``Variable`` wrapper that old programs still call
(``Variable(x, requires_grad=True)``, ``isinstance(h, Variable)``)."""
import warnings

from .._creation import empty
from .._tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    """Every tensor is a Variable since PyTorch 0.4: ``isinstance(x, Variable)`` asks whether
    ``x`` is a tensor, and calling ``Variable`` builds a tensor, not a Variable."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        if data is None:
            return empty(0, requires_grad=bool(requires_grad))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if _grad_fn is not None:
            raise RuntimeError("_grad_fn argument to legacy Variable constructor is no longer supported. "
                               "Instead, please invoke your _grad_fn to produce a variable with it as the _grad_fn.")
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        return data.detach().requires_grad_(bool(requires_grad))


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: a new leaf tensor
    sharing ``data``'s storage and version counter (``data.detach()``), with ``requires_grad``
    as given; ``data`` itself is left as it was (no ``data``: an empty float tensor of shape
    ``(0,)``). ``volatile`` only warns (UserWarning). Raises TypeError when ``data`` is not a
    tensor, RuntimeError when ``requires_grad`` is asked of an integer or bool tensor.
    ``isinstance(x, Variable)`` is True for every tensor.
    Source: https://pytorch.org/docs/stable/autograd.html#variable-deprecated"""
