"""``torch.overrides``: the helpers for types that override ``__torch_function__``
(https://pytorch.org/docs/stable/notes/extending.html#extending-torch-python-api).

Importing this module turns overrides on (see :mod:`ember._tensor_subclass`): from then on a
tensor-like type that is no Tensor subclass (torch's ``ScalarTensor`` example, with its
``HANDLED_FUNCTIONS`` table) is handed every public function called with it. A Tensor
subclass turns them on by itself, when its class is made.
"""
from ._tensor_subclass import (enable, get_default_nowrap_functions, handle_torch_function, has_torch_function,
                               is_tensor_like)

__all__ = ["has_torch_function", "handle_torch_function", "is_tensor_like", "get_default_nowrap_functions"]

enable()
