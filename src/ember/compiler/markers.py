"""What a user writes inside compiled code to steer the capture (``torch.compiler`` and
``torch._dynamo``'s markers): :func:`disable` and :func:`graph_break` end the graph there,
:func:`allow_in_graph` keeps a function's ops in it, :func:`is_dynamo_compiling` tells the
code it is being captured, :class:`set_stance` (a call, a ``with`` block or a decorator) says how
compiled functions behave; :func:`cudagraph_mark_step_begin` and :func:`mark_static_address`,
CUDA graphs' hints, have nothing to do in ember.

ember captures by running the function with a tracer on the dispatcher, so every Python
function called is already recorded op by op (torch's dynamo needs ``allow_in_graph`` to stop
introspecting one), and a break is the tracer's :meth:`~.capture.Tracer.graph_break`.
"""
import functools
import threading

from .._ops import core as _core
from .._tensor import Tensor
from .breaks import GRAPH_BREAK
from .capture import Tracer

__all__ = ["allow_in_graph", "cudagraph_mark_step_begin", "disable", "graph_break", "is_compiling",
           "is_dynamo_compiling", "mark_static_address", "set_stance"]

_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")
_stance = ["default"]  # the stance compiled functions read on each call


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
    _break(GRAPH_BREAK + (f": {msg}" if msg else ""))


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


class set_stance:
    """How compiled functions behave (``torch.compiler.set_stance``): ``"default"``,
    ``"force_eager"`` (run eagerly), ``"eager_on_recompile"`` (run eagerly instead of
    recompiling), ``"fail_on_recompile"`` (RuntimeError instead of recompiling).

    As torch's, three uses: a call sets the stance from now on
    (``set_stance("force_eager")``); ``with set_stance("force_eager"):`` sets it for the block
    and restores the one before; ``@set_stance("force_eager")`` sets it while the decorated
    function runs.

    Raises:
        RuntimeError: an unknown stance.
    """

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if stance not in _STANCES:
            raise RuntimeError(f"invalid stance {stance!r}, should be one of: {', '.join(_STANCES)}")
        self.stance, self.prev = stance, _stance[0]
        _stance[0] = stance

    def __enter__(self):
        _stance[0] = self.stance

    def __exit__(self, *exc_info):
        _stance[0] = self.prev

    def __call__(self, fn):
        """``fn`` run under this stance (the stance before the decoration is kept meanwhile)."""
        _stance[0] = self.prev
        stance = self.stance

        @functools.wraps(fn)
        def under_stance(*args, **kwargs):
            with set_stance(stance):
                return fn(*args, **kwargs)
        return under_stance


def is_compiling():
    """True while a function is being captured (``torch.compiler.is_compiling``) on this thread
    (another thread's recording does not make this thread's compiled calls run eagerly)."""
    return bool(_core.OBSERVERS) and any(isinstance(o, Tracer) and o.thread == threading.get_ident()
                                         for o in _core.OBSERVERS)


def is_dynamo_compiling():
    """True while a function is being captured by ``ember.compile`` (``torch.compiler.is_dynamo_compiling``)."""
    return is_compiling()


def cudagraph_mark_step_begin():
    """Marks the start of a new training or inference step (``torch.compiler.cudagraph_mark_step_begin``).
    ember records no CUDA graphs (``mode="reduce-overhead"`` replays its own), so nothing to do."""


def mark_static_address(t, guard=False):
    """Marks ``t``'s storage as the same on every call (``torch._dynamo.mark_static_address``,
    a hint to CUDA graphs). ember's compiled graphs read each call's tensors where they are, so
    nothing changes.

    Raises:
        TypeError: ``t`` is not a tensor (torch's words).
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
