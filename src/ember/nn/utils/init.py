"""``torch.nn.utils.skip_init``: a module built without running its parameter initialisation."""
import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with uninitialised parameters and buffers: built on the
    ``meta`` device (no memory, no initialisers run), then given empty storage on ``device``
    (default ``"cpu"``) with :meth:`~ember.nn.Module.to_empty`.

    Raises:
        RuntimeError: ``module_cls`` is not a Module subclass, or takes no ``device`` argument.

    Source: https://pytorch.org/docs/stable/generated/torch.nn.utils.skip_init.html
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
