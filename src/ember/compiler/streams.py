"""Positions of what a call may advance, compared before and after a recording
(:mod:`.side_effects`): random streams, Python's and NumPy's global ones and a user's own
(``random.Random(0)``, ``np.random.default_rng(0)``, a ``RandomState``), and iterators
(``iter(batches)``, a generator, ``itertools.count()``), held in a global, a closure cell, a
module's attribute or an argument object. ``next(it)`` or a draw moves it: the call is a graph
break (the statement runs eagerly on every call; torch's dynamo breaks there or traces the
iterator), not a replay giving back the recording's value. NumPy's draws and ``next`` are C
calls a profile function cannot tell apart from others."""
import collections.abc
import random
import types
import warnings

import numpy as np

__all__ = ["STREAMS", "position", "numpy_stream", "advances"]

STREAMS = (random.Random, np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def advances(value):
    """Whether ``value`` is a stream or iterator whose :func:`position` a call can move: one of
    :data:`STREAMS`, a generator, or a built-in iterator (a user's iterator class keeps its
    position in its attributes, compared as a plain object's)."""
    return isinstance(value, STREAMS) or isinstance(value, collections.abc.Iterator) and not hasattr(value, "__dict__")


def position(stream):
    """Where ``stream`` (one :func:`advances` holds for) is, hashable and comparable with ``==``."""
    if not isinstance(stream, STREAMS):
        return type(stream).__name__, id(stream), _iterator(stream, 0)
    if isinstance(stream, random.Random):
        return "random.Random", stream.getstate()
    if isinstance(stream, np.random.RandomState):
        return numpy_stream(stream)
    bits = stream.bit_generator if isinstance(stream, np.random.Generator) else stream
    return type(bits).__name__, repr(bits.state)  # (a dict of ints, or of arrays for MT19937)


def numpy_stream(stream=np.random):
    """The position of a ``RandomState`` (the legacy global ``numpy.random`` by default)."""
    name, key, pos, has_gauss, cached = stream.get_state()
    return name, key.tobytes(), pos, has_gauss, cached


def _iterator(it, depth):
    """An iterator's state: a generator's paused instruction and plain locals, a built-in one's
    ``__reduce__`` (a list iterator's index, ``count``'s next number, a ``cycle``'s or ``zip``'s
    iterators in turn); None where it has none to give (a file's lines)."""
    if isinstance(it, types.GeneratorType):
        frame = it.gi_frame
        return None if frame is None else (frame.f_lasti, tuple((k, _part(v, depth)) for k, v in frame.f_locals.items()))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (itertools' pickling, Python 3.12-3.13)
            return _part(it.__reduce__()[1:], depth)
    except Exception:  # an iterator that cannot say where it is
        return None


def _part(value, depth):
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is tuple:
        return tuple(_part(v, depth) for v in value)
    if type(value) is list:  # (a cycle's saved items: which list, how many)
        return "list", id(value), len(value)
    if depth < 3 and isinstance(value, collections.abc.Iterator) and not hasattr(value, "__dict__"):
        return _iterator(value, depth + 1)  # (a fresh one each __reduce__: its state, not its id)
    return id(value)
