"""What Python values and containers hold, as the guards compare it (see :mod:`.guards`).

A graph bakes in the Python values it read (:func:`baked`: numbers and strings by type and value,
containers by structure and contents) and holds the tensors found in them as fixed sources; a
write anywhere in a container (``ws[1] = w``, ``cfg["lr"] = 0.1``, ``v[0][0] = 2.0``) must fail a
guard. :func:`flat` lists what a container holds, nested containers included, for comparisons by
identity at C speed on every call (:func:`same`). :func:`sharing` tells which arrays are one or
overlap in memory.
"""
import math
import operator
from collections import deque

import numpy as np

from .._tensor import Tensor
from ..nn.modules.module import Module
from .side_effects import plain_object
from .structure import LARGE

__all__ = ["scalar", "flat", "flat_or_over", "held_contents", "flats", "members", "container", "function_like", "baked",
           "contents",
           "same", "sharing", "owner", "alias_pattern", "LARGE", "DEPTH"]


_SCALARS = (int, float, bool, str, type(None))


def scalar(value):
    """A Python number or string (an IntEnum, an int, float or str subclass too: by value, not
    by an identity a later object may take), or a NumPy scalar (np.float32(2.0)): a graph bakes
    its value in."""
    return type(value) in _SCALARS or isinstance(value, (int, float, str, np.generic))


class _NaN:
    """What a NaN argument is guarded as: NaN equals no float, this equals itself (torch's
    guards check ``math.isnan`` of a NaN constant)."""

    def __repr__(self):
        return "nan"


NAN = _NaN()


def scalar_key(value):
    """``value`` (a :func:`scalar`) as a guard compares it: :data:`NAN` for a NaN (the mean of
    an empty tensor passed from an eager statement is NaN at every call), an int itself (a
    dynamic graph binds it to a size symbol), else with its type: ``2``, ``2.0`` and ``True``
    are equal in Python but give other graphs (``x * 2.0`` is float), as torch's guards tell them
    apart; a zero float with its sign (``inf * 0.0`` is nan, ``1 / -0.0`` -inf)."""
    if type(value) is int:
        return value
    if value == 0 and type(value) is float:
        return float, value, math.copysign(1.0, value)
    return NAN if value != value else (type(value), value)


# The containers a function reads are compared item by item on every call (at C speed, by
# identity), with the containers in them, up to DEPTH levels down and LARGE items in all: one
# larger or deeper (a list holding itself) is not compared but makes the function run eagerly
# (a graph break naming it), as torch's guards do for what they cannot guard cheaply
# (LARGE: structure.py, which group_writes reads too).
DEPTH = 32
_LEAVES = frozenset([Tensor, int, float, bool, str, type(None)])  # not looked into


def _items(obj):
    """A list's, tuple's, deque's or set's items, a dict's keys and values, a plain object's
    attribute names and values."""
    if isinstance(obj, (list, tuple, deque)):
        return obj
    if isinstance(obj, (set, frozenset)):
        return tuple(obj)
    items = obj if isinstance(obj, dict) else vars(obj)
    return (*items, *items.values())


def flat(obj):
    """What the container or plain object ``obj`` holds, with what the containers in it hold
    (depth first, each one's items ended by ``_END``), or None past ``LARGE`` items in all.
    Compared by identity with an earlier one, it shows a write anywhere in it (``ws[1] = w``,
    ``cfg["lr"] = 0.1``, ``v[0][0] = 2.0``, ``s.add(3)``)."""
    out = []
    return tuple(out) if _flat_into(obj, out, 0) else None


def _flat_into(obj, out, depth):
    items = _items(obj)
    if len(out) + len(items) > LARGE:
        return False
    out += items
    out.append(_END)
    if not set(map(type, items)) <= _LEAVES:
        if depth == DEPTH:
            return False
        for v in items:
            if type(v) not in _LEAVES and container(v) and not _flat_into(v, out, depth + 1):
                return False
    return True


def flat_or_over(obj):
    """:func:`flat`, ``(_OVER,)`` for a container too large (a read of the walk: see :func:`~.reads.reads_hold`)."""
    return flat(obj) or (_OVER,)


def held_contents(obj):
    """What a module's list, dict or plain object holds as compared on every call: see
    :func:`flat`; one too large for it, one level down."""
    return flat(obj) or contents(obj)


def flats(containers):
    """``(what the containers and plain objects hold, one after the other (see :func:`flat`),
    the first too large to look into or None)``."""
    out, too_large = [], None
    for o in containers:
        items = flat(o)
        if items is None:
            too_large = too_large or o
            items = (_OVER,)
        out += items
    return out, too_large


def members(containers):
    """What the containers and plain objects ``containers`` hold (see :func:`flat`)."""
    return flats(containers)[0]


def container(obj):
    """Whether ``obj`` is a list, tuple, deque, dict, set or plain object: looked into by the guards."""
    return isinstance(obj, (list, tuple, deque, dict, set, frozenset)) or plain_object(obj)


def function_like(obj):
    """Whether ``obj`` is a function, built-in, bound method, ``functools.partial``, class...:
    callable and no tensor, module, container or plain object (those have their own guards).
    A graph ran what it is, so it is compared as itself (torch's guards match its identity)."""
    return callable(obj) and not isinstance(obj, (Tensor, Module)) and not container(obj)


def baked(obj, depth=0, walk=None):
    """What a graph may have baked in of a Python value: numbers and strings (with their type),
    the structure and contents of containers and plain objects, ``DEPTH`` levels deep, ``LARGE``
    of them in all (one over ``LARGE`` items by its length: :func:`flat` makes reading it a graph
    break; one deeper or past ``LARGE`` containers, a new object every time: a guard that never
    holds); function-like objects (:func:`function_like`) by identity; tensors and other objects
    by kind (their own guards cover them). A container met again in the walk is ``("again", its
    number in the walk)``: objects linked to each other (a tree of nodes holding their parent)
    are walked, and compared, once each, not once per path. ``walk``: ``{id: number}``."""
    if scalar(obj):  # (a zero float with its sign: ``x * -0.0`` is -0.0; read_floats.LiftedFloat: its guard)
        if type(obj) not in _SCALARS and hasattr(obj, "guard"):
            return obj.guard
        return (float, obj, math.copysign(1.0, obj)) if type(obj) is float and obj == 0 else (type(obj), obj)
    if isinstance(obj, _CONTAINERS):
        items = obj.values() if isinstance(obj, dict) else obj
    elif isinstance(obj, Tensor):
        return type(obj)
    elif plain_object(obj):
        items = vars(obj).items()
    else:  # (function-like: by identity)
        return ("is", id(obj)) if callable(obj) and not isinstance(obj, Module) else type(obj)
    n = len(items)
    if n > LARGE:  # (its length only; a plain object by kind)
        return (dict, tuple(obj)) if isinstance(obj, dict) else (type(obj), n) if items is obj else type(obj)
    if walk is None:
        walk = {}
    elif id(obj) in walk:
        return "again", walk[id(obj)]
    if depth == DEPTH or len(walk) == LARGE:
        return object()
    walk[id(obj)], depth = len(walk), depth + 1
    if isinstance(obj, (list, tuple, deque)):
        return (type(obj), n, *[baked(v, depth, walk) for v in obj])
    if isinstance(obj, dict):
        return (dict, tuple(obj), *[baked(v, depth, walk) for v in items])
    if isinstance(obj, (set, frozenset)):
        return type(obj), n, frozenset([baked(v, depth, walk) for v in obj])
    return type(obj), tuple([(k, baked(v, depth, walk)) for k, v in items])


_CONTAINERS = (list, tuple, deque, dict, set, frozenset)


def contents(container):
    """What a list, tuple, set or dict holds (its keys too), or a plain object's attributes (names too)."""
    if isinstance(container, (list, tuple, deque, set, frozenset)):
        return tuple(container)
    items = container if isinstance(container, dict) else vars(container)
    return (*items, *items.values())


def same(a, b):
    """Whether two sequences hold the same objects (identity: a tensor's ``==`` is elementwise)."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def sharing(arrays):
    """Which of ``arrays`` are one array or overlap in memory: None when none do, else
    ``(alias_pattern of their ids, the pairs (i, j) of different arrays that may overlap)``.
    Views of one memory (``x[0:3]``, ``x[1:4]``) are different arrays: a graph that writes
    one reads the other as another array (eagerly it sees the write), so a call whose inputs
    overlap otherwise than the capture's is another program, and one that writes such an
    input runs eagerly (``capture``). Arrays with different owners (:func:`owner`) never overlap."""
    roots = [id(owner(a)) for a in arrays]
    if len(set(roots)) == len(roots):
        return None
    ids = list(map(id, arrays))
    groups = {}
    for i, r in enumerate(roots):
        groups.setdefault(r, []).append(i)
    overlaps = tuple([(i, j) for group in groups.values() for k, i in enumerate(group) for j in group[k + 1:]
                      if ids[i] != ids[j] and np.may_share_memory(arrays[i], arrays[j])])
    pattern = alias_pattern(ids)
    return None if pattern is None and not overlaps else (pattern, overlaps)


def owner(array):
    """The object whose memory ``array`` views: its last ``.base`` (through the ``DummyArray``
    NumPy's ``as_strided`` leaves between, as ``unfold`` makes), or ``array`` itself."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def alias_pattern(ids):
    """For each of ``ids`` (arrays' ids) the first position with the same id, or None when all differ."""
    if len(set(ids)) == len(ids):
        return None
    first = {}
    return tuple([first.setdefault(k, i) for i, k in enumerate(ids)])


_END = object()  # ends a container's items in flat()
_OVER = object()  # a container too large to look into
