"""What a ``TorchFunctionMode`` around a compiled call appends to its own lists: replayed after the graph.

A logging mode (``self.calls.append(func.__name__)``, or ``func``, in its ``__torch_function__``) changes Python
state at every call, which a replay of the graph alone would skip (:mod:`.side_effects` found it a
side effect, so the call ran eagerly: 0 frames). torch's dynamo traces the appends and replays
them after its graph (1 frame). A recording now notes, per mode on the stack around the call
(outermost first) and per list among its attributes, the strings, bools, Nones and functions the
call appended (:func:`appended`; anything else, or another change of the list, stays a side effect);
its side-effect check compares the lists as before the call, and each replay appends the same
items to the lists of the modes then on the stack (:func:`replay_appends`: the guards hold their
types, each call may bring a new mode object).
"""
import contextlib
import types

from .._tensor_subclass import Overridable, mode_stack

__all__ = ["mode_lists", "appended", "replay_appends"]

_PLAIN = (str, bool, type(None), Overridable, types.BuiltinFunctionType, types.MethodWrapperType)
# (not an int or float: a size or value a replay may change; nor a function made in the call)


def _replayable(item):
    return type(item) in _PLAIN or type(item) is types.FunctionType and "<locals>" not in item.__qualname__


def mode_lists():
    """``[(position on the mode stack, attribute name, the list, its length)]`` of the lists the
    modes around a call hold as attributes, before the call."""
    return [(i, name, value, len(value)) for i, mode in enumerate(mode_stack())
            for name, value in vars(mode).items() if type(value) is list]


@contextlib.contextmanager
def appended(lists):
    """While it runs, the ``lists`` (:func:`mode_lists`) a call only appended plain items to
    (strings, bools, None, functions) hold their items from before the call; yields ``[(position, name,
    items)]`` of those appends, for :func:`replay_appends`."""
    stack, appends = mode_stack(), []
    for i, name, value, n in lists:
        mode = stack[i] if i < len(stack) else None
        if (mode is not None and vars(mode).get(name) is value and len(value) > n
                and all(map(_replayable, value[n:]))):
            appends.append((i, name, value[n:], value, n))
    for *_, value, n in appends:
        del value[n:]
    try:
        yield [(i, name, items) for i, name, items, *_ in appends]
    finally:
        for _, _, items, value, _ in appends:
            value.extend(items)


def replay_appends(appends):
    """Makes a replay's appends (:func:`appended`) to the lists of the modes on the stack."""
    for i, name, items in appends:  # (none: nothing paid but the call)
        getattr(mode_stack()[i], name).extend(items)
