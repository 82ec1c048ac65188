"""The structure of a captured function's values: the tensors of a (nested) return value in
order (:func:`flatten`), the value with each replaced by a slot (:func:`skeleton`) and rebuilt
from a replay's results (:func:`unflatten`), and the ints a captured ``while_loop`` carries
(:class:`LoopInt`); where the user's code is (:func:`frames_below`, :func:`user_frame`)."""
import linecache
import os
import sys
import traceback

import numpy as np

from .._ops import core as _core
from .._tensor import Tensor
from .._tensor_subclass import disabled_torch_function_impl
from .symbolic import Expr, evaluate

__all__ = ["flatten", "holds_arrays", "skeleton", "same_container", "map_leaves", "unflatten", "is_slot", "LoopInt", "frames_below", "user_frame", "Where", "EMBER_DIR", "LARGE"]

EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the ember package's folder
LARGE = 4096  # items: a container larger is a data set, not compared or looked into (contents.py)


def flatten(value):
    """The tensors in a (nested) tuple, list or dict, in order (a :class:`LoopInt`'s tensor
    for it)."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, LoopInt):
        return [value.tensor]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in flatten(v)]
    return []


class _Slot:
    """Where a returned tensor goes in the structure a replay rebuilds."""

    def __repr__(self):  # read in errors naming two structures that differ
        return "Tensor"


_SLOT = _Slot()


class _SubclassSlot(_Slot):
    """Where a returned tensor of a Tensor subclass goes: the replay's tensor, made one of
    ``cls`` (``as_subclass``, as the default ``__torch_function__`` converts eager's results; the
    class the recording's ``__torch_function__`` or mode returned, as torch's dynamo's)."""

    def __init__(self, cls):
        self.cls = cls

    def __eq__(self, other):
        return type(other) is _SubclassSlot and other.cls is self.cls

    def __hash__(self):
        return hash(self.cls)

    def __repr__(self):
        return self.cls.__name__


class _IntSlot:
    """Where a returned :class:`LoopInt` goes: the int of its tensor at replay."""

    def __repr__(self):
        return "int"


_INT_SLOT = _IntSlot()


class LoopInt(int):
    """An int carried by a captured ``while_loop``: its value at this recording, and
    ``tensor``, the 0-d int64 result of the loop's node that computes it on every replay.
    Returned from the function, a replay gives that tensor's int. Any other use in Python
    (arithmetic, comparison, indexing, printing, an op's scalar argument) needs the value,
    so it is a graph break while ``tracer`` records, as ``.item()`` is."""

    def __new__(cls, tensor, tracer):
        self = super().__new__(cls, int(tensor._data))
        self.tensor, self.tracer = tensor, tracer
        return self


_LOOP_INT_USE = "an int from a while_loop's carry used in Python (its value is known only when the loop runs)"
_KEPT = {"__new__", "__init__", "__getattribute__", "__setattr__", "__delattr__", "__class__", "__init_subclass__",
         "__subclasshook__", "__reduce__", "__reduce_ex__", "__getnewargs__", "__sizeof__", "__dir__", "__doc__",
         "__getstate__"}


def _using(method):
    def use(self, *args):
        if self.tracer in _core.OBSERVERS:
            self.tracer.graph_break(_LOOP_INT_USE)
        return method(self, *args)
    return use


def _guard_uses(cls):
    for name in dir(int):
        if name.startswith("__") and name not in _KEPT and callable(getattr(int, name)):
            setattr(cls, name, _using(getattr(int, name)))


_guard_uses(LoopInt)


def _has_loop_int(value):
    if isinstance(value, LoopInt):
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_loop_int(v) for v in value)
    if isinstance(value, dict):
        return any(_has_loop_int(v) for v in value.values())
    if isinstance(value, slice):
        return any(_has_loop_int(v) for v in (value.start, value.stop, value.step))
    return False


def holds_arrays(value):
    """Whether ``value`` is a NumPy array or a (nested) tuple or list holding one (an op's attr)."""
    if isinstance(value, np.ndarray):
        return True
    return isinstance(value, (tuple, list)) and any(map(holds_arrays, value))


def same_container(value, items):
    """``items`` in a container of ``value``'s type: a tuple, a list, or a named tuple (by position)."""
    return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)


def map_leaves(value, leaf):
    """``value`` (a returned structure: tuples, named tuples, lists, dicts, nested) with each item
    that is none of those replaced by ``leaf(item)``, the containers rebuilt of their types."""
    if isinstance(value, (tuple, list)):
        return same_container(value, [map_leaves(v, leaf) for v in value])
    if isinstance(value, dict):
        return type(value)((k, map_leaves(v, leaf)) for k, v in value.items())
    return leaf(value)


def skeleton(value):
    """``value`` with each tensor replaced by a slot: the shape of a return value, holding no
    tensor (so an entry keeps no activations of the call it was recorded from alive)."""
    return map_leaves(value, _slot)


def _slot(value):
    if isinstance(value, Tensor):
        plain = type(value) is Tensor or type(value).__torch_function__ is disabled_torch_function_impl  # (a Parameter)
        return _SLOT if plain else _SubclassSlot(type(value))
    return _INT_SLOT if isinstance(value, LoopInt) else value


def is_slot(value):
    """Whether ``value`` is a :func:`skeleton`'s slot (of a tensor or a loop's int)."""
    return value is _SLOT or value is _INT_SLOT or type(value) is _SubclassSlot


def unflatten(value, tensors, sizes=None):
    """``value`` (a :func:`skeleton`) with its slots filled from ``tensors`` (an iterator), and
    each expression of a dynamic graph's returned int its value at ``sizes`` ({symbol: int})."""
    if value is _SLOT:
        return next(tensors)
    if type(value) is _SubclassSlot:
        tensor = next(tensors)
        return tensor if type(tensor) is value.cls else tensor.as_subclass(value.cls)
    if value is _INT_SLOT:
        return int(next(tensors)._data)
    if isinstance(value, (tuple, list)):
        items = [unflatten(v, tensors, sizes) for v in value]
        return same_container(value, items)
    if isinstance(value, dict):
        return type(value)((k, unflatten(v, tensors, sizes)) for k, v in value.items())
    if sizes is not None and isinstance(value, Expr):
        return int(evaluate(value, sizes))
    return value


def frames_below(code):
    """``(code object, line)`` of each frame from the caller's caller outwards, up to the
    innermost one running ``code`` (left out): at a graph break, the frames of the recording
    (``code``: :func:`~.capture.capture`'s), from which :mod:`.split` finds the statement of
    the compiled function that broke. Empty where ``code``'s frame called the caller itself."""
    frame, chain = sys._getframe(2), []
    while frame is not None and frame.f_code is not code:
        chain.append((frame.f_code, frame.f_lineno))
        frame = frame.f_back
    return chain


class Where(str):
    """``"file:line: code"`` (a graph break's place, compared and printed as that text) that
    knows its function too: :meth:`summary`, torch's ``explain`` ``user_stack`` entry."""

    def __new__(cls, filename, lineno, name, line):
        where = super().__new__(cls, f"{filename}:{lineno}: {line}")
        where.filename, where.lineno, where.name, where.line = filename, lineno, name, line
        return where

    def summary(self):
        """The place as a ``traceback.FrameSummary`` (``.filename``, ``.lineno``, ``.name``, ``.line``)."""
        return traceback.FrameSummary(self.filename, self.lineno, self.name, line=self.line)


def user_frame():
    """``"file:line: code"`` of the innermost caller outside the ember package (a :class:`Where`)."""
    # (walked without traceback.extract_stack, which reads every frame's source line: a backward
    # breaking at each of its nodes called this hundreds of times a recording)
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(EMBER_DIR + os.sep):
            line = linecache.getline(filename, frame.f_lineno or 0).strip()
            return Where(filename, frame.f_lineno, frame.f_code.co_name, line)
        frame = frame.f_back
    return "<ember>"
