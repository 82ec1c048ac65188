"""PyTorch's ``torch.typename``, which nn's error messages quote (one copy for ``modules``
and ``utils``, below both so neither imports the other for it)."""
from .._tensor import Tensor


def typename(obj):
    """"ember.FloatTensor" (the legacy type name) for tensors, else the class's
    ``module.qualname`` (just the qualname for builtins), as ``torch.typename``."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"
