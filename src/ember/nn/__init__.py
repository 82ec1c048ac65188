"""``ember.nn``: modules, parameters, functional forms, initialisation and utilities
(PyTorch's ``torch.nn``, https://pytorch.org/docs/stable/nn.html)."""
from . import functional, init, utils
from .parameter import Parameter, Buffer
from .modules import *  # noqa: F401,F403  (modules/__init__.py curates the layer list)
from . import modules as _modules

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", *_modules.__all__]
