"""Helpers shared by the files of ``ember.nn.functional``: PyTorch's ``inplace=True``
convention and the SELU constants (its dtype check for floating-only kernels is
``_ops.refusals.float_only``)."""
from ..._ops.inplace import write_result as _inplace_result
from ..._ops.core import apply
from ...autograd.grad_mode import STATE

# Klambauer et al., 2017 (https://arxiv.org/abs/1706.02515), to PyTorch's precision.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def in_place(input, fn):
    """PyTorch's ``inplace=True``: writes ``fn(input)`` into ``input`` and returns ``input``.
    ``fn`` sees a copy of the old values when history is recorded, since the ops it runs may
    save their input for backward (PyTorch keeps the original ``self`` the same way)."""
    source = input._snapshot() if STATE.enabled and input.requires_grad else input
    return _inplace_result(input, fn(source))


def unary(op, input, inplace, **attrs):
    """``op`` applied to ``input``, written into it when ``inplace``."""
    if inplace:
        return in_place(input, lambda x: apply(op, x, **attrs))
    return apply(op, input, **attrs)
