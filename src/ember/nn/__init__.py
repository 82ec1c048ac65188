"""``ember.nn``: modules, parameters, functional forms, initialisation and utilities
(PyTorch's ``torch.nn``, https://pytorch.org/docs/stable/nn.html)."""
from . import functional, init, utils
from .parameter import Parameter, Buffer
from .modules import *  # noqa: F401,F403  (modules/__init__.py curates the layer list)
from . import modules as _modules

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", *_modules.__all__]


def __getattr__(name):  # nn.parallel sits on ember.distributed, a layer above: load it on first use
    if name in ("parallel", "DataParallel"):
        import importlib
        parallel = importlib.import_module(".parallel", __name__)
        return parallel if name == "parallel" else parallel.DataParallel
    raise AttributeError(f"module 'ember.nn' has no attribute {name!r}")
