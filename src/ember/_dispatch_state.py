"""What both the dispatcher (``_ops.core.apply``) and the backward engine read on every call:
who is watching them, and autocast's recast of an op's inputs.

It sits below both (beside the grad modes) so that the engine reads it without importing the
ops; ``_ops.core`` re-exports both lists, which is where the systems above find them.
"""

__all__ = ["OBSERVERS", "INPUT_CASTS", "META", "observed_range"]

# Objects watching op dispatch (the profiler, FlopCounterMode, the compiler's tracer): each has
# ``op_enter(op, inputs, attrs)`` and ``op_exit(op, inputs, attrs, output)``, and may have
# ``op_write(tensor, value)`` (an in-place write), ``node_enter(node)``/``node_exit(node)``
# (the engine running a graph node) and ``begin(name)``/``end(event)`` (a named range). The
# list is only mutated in place, so its truthiness is the one check an op pays when nobody is
# watching.
OBSERVERS = []
# At most one function ``(op, inputs) -> inputs`` that recasts an op's inputs before it runs:
# autocast's, inside an enabled ``ember.autocast`` region (ember.amp). Empty otherwise, so an
# op pays one list check; the engine empties it while gradients run.
INPUT_CASTS = []
# Non-empty once the default device was the ``meta`` one (``with device("meta")``,
# ``set_default_device``): until then a factory given no device pays one list check.
META = []


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
