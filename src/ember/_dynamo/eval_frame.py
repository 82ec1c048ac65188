"""``torch._dynamo.eval_frame``'s names programs reach for: ``isinstance(model, OptimizedModule)``,
and ``export`` (torch's older whole-graph export, kept by tutorials) with its ``ExportResult``."""
import warnings
from typing import NamedTuple

from ..compiler.eval_frame import OptimizedModule
from ..export import export as _export
from ..nn.modules.module import Module

__all__ = ["OptimizedModule", "ExportResult", "export"]


class ExportResult(NamedTuple):
    """What ``export(f)(*args)`` returns: ``graph_module``, the captured program (a module called
    as ``f`` is), and ``guards``. ember's graph module checks its inputs itself when called, so
    ``guards`` is empty."""
    graph_module: Module
    guards: frozenset


class _Function(Module):
    """A function as a module, so that it can be exported as ``forward`` (same signature)."""

    def __init__(self, fn):
        super().__init__()
        self.forward = fn


def export(f, *extra_args, aten_graph=False, pre_dispatch=False, decomposition_table=None,
           tracing_mode="symbolic", dynamic_shapes=None, same_signature=True, **extra_kwargs):
    """``export(f)(*args, **kwargs)``: ``f`` (a module or a function) captured as one graph on
    the example inputs, returned as an :class:`ExportResult` (torch._dynamo.export). The
    deprecated ``export(f, *args)`` form warns (torch's FutureWarning) and exports at once.
    ``aten_graph``, ``pre_dispatch``, ``decomposition_table`` and ``tracing_mode`` are
    accepted: ember's graphs are of its ops already.

    Raises:
        ember._dynamo.exc.Unsupported: ``f`` needs a tensor's value in Python (a graph break).
    """
    def inner(*args, **kwargs):
        ep = _export(f if isinstance(f, Module) else _Function(f), tuple(args), kwargs,
                     dynamic_shapes=dynamic_shapes, strict=True)
        return ExportResult(ep.module(), frozenset())
    if extra_args or extra_kwargs:
        warnings.warn("export(f, *args, **kwargs) is deprecated, use export(f)(*args, **kwargs) instead.  If you "
                      "don't migrate, we may break your export call in the future if your user defined kwargs "
                      "conflict with future kwargs added to export(f).", FutureWarning, stacklevel=2)
        return inner(*extra_args, **extra_kwargs)
    return inner
