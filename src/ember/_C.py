"""The names of ``torch._C`` that Python programs use to extend torch: the regions without
``__torch_function__`` overrides, the opt-out a subclass sets and the stack of
``TorchFunctionMode`` objects (https://pytorch.org/docs/stable/notes/extending.html#subclassing-torch-tensor)."""
from ._tensor_subclass import (DisableTorchFunction, DisableTorchFunctionSubclass,
                               disabled_torch_function_impl as _disabled_torch_function_impl,
                               is_torch_function_enabled as _is_torch_function_enabled,
                               is_torch_function_mode_enabled as _is_torch_function_mode_enabled, mode_stack,
                               pop_mode as _pop_torch_function_stack, push_mode as _push_on_torch_function_stack)

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "_is_torch_function_enabled", "_is_torch_function_mode_enabled", "_len_torch_function_stack",
           "_get_function_stack_at", "_push_on_torch_function_stack", "_pop_torch_function_stack"]


def _len_torch_function_stack():
    """How many ``TorchFunctionMode`` objects are on this thread's stack."""
    return len(mode_stack())


def _get_function_stack_at(idx):
    """The mode at ``idx`` of this thread's stack (0: the outermost).

    Raises:
        RuntimeError: ``idx`` is past the stack (torch's words).
    """
    stack = mode_stack()
    if not 0 <= idx < len(stack):
        raise RuntimeError("Tried to get stack at idx that's too big")
    return stack[idx]
