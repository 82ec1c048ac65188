"""Automatic differentiation (``torch.autograd``): the tape of :mod:`graph` nodes, the
:mod:`engine` that walks it, grad modes, custom :class:`Function`, and gradient checks."""
from . import graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "Variable", "graph",
           "profiler", "functional"]


def __getattr__(name):
    # torch.autograd.profiler and .functional, loaded on first use: the profiler sits above
    # autograd, and functional uses the ops, which import autograd's grad modes first.
    if name in ("profiler", "functional"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'ember.autograd' has no attribute {name!r}")


def Variable(data, requires_grad=False, volatile=False):
    """The pre-0.4 wrapper: returns ``data`` itself, with ``requires_grad`` set if asked."""
    if requires_grad:
        data.requires_grad_(True)
    return data
