"""What a user writes inside compiled code to steer the capture (``torch.compiler`` and
``torch._dynamo``'s markers): :func:`disable` and :func:`graph_break` end the graph there,
:func:`allow_in_graph` keeps a function's ops in it, :func:`is_dynamo_compiling` tells the
code it is being captured, :func:`cudagraph_mark_step_begin` marks a new step.

ember captures by running the function with a tracer on the dispatcher, so every Python
function called is already recorded op by op (torch's dynamo needs ``allow_in_graph`` to stop
introspecting one), and a break is the tracer's :meth:`~.capture.Tracer.graph_break`.
"""
import functools

from .._ops import core as _core
from .capture import Tracer

__all__ = ["allow_in_graph", "cudagraph_mark_step_begin", "disable", "graph_break", "is_compiling",
           "is_dynamo_compiling"]


def _break(reason):
    """Breaks the graph being captured here (no-op outside a capture)."""
    for o in _core.OBSERVERS:
        if isinstance(o, Tracer):
            o.graph_break(reason)


def _name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def disable(fn=None, recursive=True, *, reason=None):
    """``fn`` never compiled (``torch.compiler.disable``): called inside a compiled function, it
    is a graph break (that function runs eagerly). Usable as a decorator, with or without arguments."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        _break(f"call to {_name(fn)}, marked ember.compiler.disable" + (f" ({reason})" if reason else ""))
        return fn(*args, **kwargs)
    return disabled


def graph_break(msg=""):
    """Forces a graph break here (``torch._dynamo.graph_break``): the code before and after it
    are separate graphs. Does nothing when not compiling.

    Raises:
        ember._dynamo.exc.Unsupported: inside a function compiled with ``fullgraph=True``.
    """
    _break("call to ember._dynamo.graph_break()" + (f": {msg}" if msg else ""))


def allow_in_graph(fn):
    """Returns ``fn`` (``torch.compiler.allow_in_graph``): its ops go into the graph of the
    compiled function calling it, as every function's do in ember's capture. A list or tuple
    of functions gives a list.

    Raises:
        AssertionError: ``fn`` is not callable (torch's words).
    """
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def is_compiling():
    """True while a function is being captured (``torch.compiler.is_compiling``)."""
    return any(isinstance(o, Tracer) for o in _core.OBSERVERS)


def is_dynamo_compiling():
    """True while a function is being captured by ``ember.compile`` (``torch.compiler.is_dynamo_compiling``)."""
    return is_compiling()


def cudagraph_mark_step_begin():
    """Marks the start of a new training or inference step (``torch.compiler.cudagraph_mark_step_begin``).
    ember records no CUDA graphs (``mode="reduce-overhead"`` replays its own), so nothing to do."""
