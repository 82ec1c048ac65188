"""The names of ``torch._C`` that Python programs use to extend torch: the regions without
``__torch_function__`` overrides and the opt-out a subclass sets
(https://pytorch.org/docs/stable/notes/extending.html#subclassing-torch-tensor)."""
from ._tensor_subclass import (DisableTorchFunction, DisableTorchFunctionSubclass,
                               disabled_torch_function_impl as _disabled_torch_function_impl,
                               is_torch_function_enabled as _is_torch_function_enabled)

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "_is_torch_function_enabled"]
