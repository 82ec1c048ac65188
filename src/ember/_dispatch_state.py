"""What both the dispatcher (``_ops.core.apply``) and the backward engine read on every call:
who is watching them, and autocast's recast of an op's inputs.

It sits below both (beside the grad modes) so that the engine reads it without importing the
ops; ``_ops.core`` re-exports both lists, which is where the systems above find them.
"""

import threading

__all__ = ["OBSERVERS", "Observer", "INPUT_CASTS", "AUTOCAST", "META", "observed_range"]

# Objects watching op dispatch (the profiler, FlopCounterMode, the compiler's tracer, forward
# AD, checkpoint's first run): each is an ``Observer`` (below), and may also have ``op_write(tensor, value)`` (an
# in-place write) and ``begin(name)``/``end(event)`` (a named range). The list is only mutated
# in place, so its truthiness is the one check an op pays when nobody is watching.
OBSERVERS = []
# At most one function ``(op, inputs) -> inputs`` that recasts an op's inputs before it runs:
# autocast's, while some thread is inside an enabled ``ember.autocast`` region (ember.amp); it
# casts in the threads whose ``AUTOCAST.dtype`` is set. Empty otherwise, so an op pays one list check.
INPUT_CASTS = []


class _Autocast(threading.local):
    """This thread's CPU autocast dtype: set inside an enabled region, None outside it and
    while the engine runs gradients (which keep the dtypes the forward recorded). Per thread,
    as torch's autocast state."""

    def __init__(self):
        self.dtype = None


AUTOCAST = _Autocast()
# Non-empty once the default device was the ``meta`` one (``with device("meta")``,
# ``set_default_device``): until then a factory given no device pays one list check.
META = []


class Observer:
    """What an entry of ``OBSERVERS`` is called with: the dispatcher calls ``op_enter`` before
    and ``op_exit`` after each op it applies (``output`` is None when the op raised), and the
    backward engine calls ``node_enter``/``node_exit`` around each graph node it runs. Each call
    does nothing here: an observer overrides the ones it watches."""

    def op_enter(self, op, inputs, attrs):
        """Before ``op`` runs on ``inputs`` (a tuple) with keyword ``attrs`` (a dict); may return
        ``(inputs, attrs)`` to run it on instead (the compiler's plain ints for traced ones)."""

    def op_exit(self, op, inputs, attrs, output):
        """After ``op`` ran: ``output`` is its result (a tuple for several), None if it raised."""

    def node_enter(self, node):
        """Before the backward engine runs autograd ``node``."""

    def node_exit(self, node):
        """After the backward engine ran ``node`` (also when it raised)."""

    def function_exit(self, function, inputs, outputs):
        """After a custom ``autograd.Function`` ran with grad mode off (so recording nothing):
        ``outputs`` are the results it would have made differentiable from ``inputs``."""


def observed_range(name, fn, *args):
    """``fn(*args)`` inside a range called ``name`` for each observer that records ranges (the
    profiler's ``begin``/``end``): how work outside op dispatch, such as an optimizer's update,
    shows in a profile. Callers check ``OBSERVERS`` first, so nothing is paid unwatched."""
    events = [(o, o.begin(name)) for o in tuple(OBSERVERS) if hasattr(o, "begin")]
    try:
        return fn(*args)
    finally:
        for o, event in reversed(events):
            o.end(event)
