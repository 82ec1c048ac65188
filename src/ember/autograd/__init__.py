"""Automatic differentiation (``torch.autograd``): the tape of :mod:`graph` nodes, the
:mod:`engine` that walks it, grad modes, custom :class:`Function`, and gradient checks."""
# In layer order: the tape and the grad modes (which the ops record onto), the engine, then
# Function, which loads the ops (ember/__init__.py imports this package first, for that).
from . import graph
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled, set_multithreading_enabled)
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from . import functional
from . import engine
_is_checkpoint_valid = engine._is_checkpoint_valid  # (torch.autograd's private name, read by checkpoint code)
from . import forward_ad
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "set_multithreading_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "Variable", "graph",
           "profiler", "functional", "forward_ad"]


def __getattr__(name):
    # torch.autograd.profiler, loaded on first use: it is the profiler's (a layer above).
    if name == "profiler":
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'ember.autograd' has no attribute {name!r}")
