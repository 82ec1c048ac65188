"""Floats the compiled call writes where it reads floats (``cfg["lr"] = cfg["lr"] * 0.5`` into a
global dict, ``self.decay = self.decay * 0.99``, ``CFG.lr = lr / 2``): writes a replay repeats.

torch 2.13's dynamo records such a write as a side effect and replays it after its graph: 2
graphs for ``cfg["lr"] = cfg["lr"] * 0.5`` over a changing ``cfg["lr"]`` (the first specialised,
then ``cfg["lr"]`` a symbol). ember's recording compares the Python state before and after the
call (:func:`~.side_effects.python_state`); a write there was a graph break (eagerly on every
call). Now each float at a path :mod:`.read_floats` can read (:func:`floats_at`, before and after
the call) that the call replaced by a traced float computed from the call's arguments and the
floats it read (:mod:`.traced_floats`) is a write a replay repeats: :func:`float_writes` gives
``(path, how, old value)``, the path holding the plain float eager leaves there; the state is
compared, and the guards made (``read_floats._relaxed``), with the old value put back
(:func:`as_before`), a dynamic recording's probes put it back too (:func:`put_back`), and each
replay puts the float ``how`` computes from that call's arguments and reads there after its
graph (:func:`replay_writes`), as torch's symbolic write. A float written that is no such traced float (the first recording, when
nothing was traced: ``0.5`` computed from the plain ``1.0`` read; ``time.time()``) stays a side
effect, and its path is traced by the next recording (:attr:`~.read_floats.Reads.written`), as
torch's automatic dynamic makes it a symbol after one recompile: 1 graph after the first call.
"""
import contextlib

from .read_floats import ABSENT as _ABSENT, REPLAYED, _get, _put, _resolve, float_reads, put_or_delete
from .traced_floats import _how, _of_arguments, _value
from .traced_ints import FloatInt, TracedFloat, plain

__all__ = ["floats_at", "float_writes", "as_before", "replay_writes", "put_back"]

_WRITTEN = (TracedFloat, FloatInt)


def floats_at(fn, args, kwargs):
    """``{path: value}`` of the floats (traced floats too) the call of ``fn`` can read
    (:func:`~.read_floats.float_reads`)."""
    return float_reads(fn, args, kwargs, (float, *_WRITTEN))


def float_writes(before, fn, args, kwargs, handled=frozenset()):
    """``(writes, others)``: ``writes``, ``[(path, how, old value)]`` for each path holding a traced
    float computed from the call's arguments and reads that was not there ``before`` (:func:`floats_at`
    at the call's start), the path given the plain float (eager's value); ``others``, the paths
    written otherwise (a plain float). ``handled``: ``(id of a dict, key)`` of writes replayed
    elsewhere (a module's float attributes: :mod:`.attribute_sets`)."""
    writes, others = [], []
    for path, value in floats_at(fn, args, kwargs).items():
        old = before.get(path, _ABSENT)
        if value is old:
            continue
        holder, key = _resolve(path, fn, args, kwargs)
        if (id(holder), key) in handled or old is _ABSENT and type(holder) is list \
                or type(holder) is dict and "params" in holder:  # (``hist.append(lr)``: no write; a group's: group_replay)
            continue
        if type(value) in _WRITTEN and _of_arguments(value):
            made = plain(value)
            _put(path, fn, args, kwargs, made)
            REPLAYED.add(id(made))
            writes.append((path, _how(value), old))
        elif type(value) is float:
            others.append(path)
    return writes, others


@contextlib.contextmanager
def as_before(writes, fn, args, kwargs):
    """The paths of ``writes`` (:func:`float_writes`) hold their old values while it runs."""
    now = [(path, _get_or_absent(path, fn, args, kwargs)) for path, _, _ in writes]
    for path, _, old in writes:
        put_or_delete(path, fn, args, kwargs, old)
    try:
        yield
    finally:
        for path, value in now:
            put_or_delete(path, fn, args, kwargs, value)


def _get_or_absent(path, fn, args, kwargs):
    try:
        return _get(path, fn, args, kwargs)
    except (LookupError, ValueError):  # (a key the call made; an empty cell)
        return _ABSENT


def replay_writes(writes, fn, args, kwargs, reads=()):
    """Puts at each path of ``writes`` (a capture's ``path_writes``: :func:`float_writes`) the number
    ``how`` computes from this call of ``fn`` on ``args``, ``kwargs`` and its ``reads``."""
    arguments = (*args, *kwargs.values(), *reads)
    for path, how, _ in writes:
        _put(path, fn, args, kwargs, _value(how, arguments.__getitem__))


def put_back(fn, args, floats):
    """Gives each path of ``floats`` (:func:`floats_at` of a call of ``fn`` on ``args``) the value it
    held then (a dynamic recording's probe, :class:`~.probe_state.State`, wrote it too)."""
    for path, value in floats.items():
        try:
            if _get(path, fn, args, {}) is not value:
                _put(path, fn, args, {}, value)
        except (LookupError, AttributeError, TypeError, ValueError):  # (no longer there: nothing to undo)
            pass
