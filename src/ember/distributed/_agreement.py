"""The agreement check that runs before every collective.

Every member contributes a descriptor of its call (operation, dtype, root, the shape that must
agree, and whether its own arguments were valid) to one small fixed-size ``Iallreduce``, so a
rank with bad arguments, or ranks that disagree in operation, dtype or shape, make *every*
member raise the same clear error; only then does the data collective start.
"""
import itertools

import numpy as np

from .. import _dtype
from . import _flight_recorder
from ._work import Work
from .distributed_c10d import _mpi

__all__ = ["checked"]

_NAMES = ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather", "scatter",
          "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "barrier")
_MAX_DIMS = 8
_UNCHECKED = -2  # descriptor fields that may differ across ranks
_DTYPE_CODE = {d: i for i, d in enumerate(_dtype._ALL)}


_FIELDS = 5 + _MAX_DIMS  # error flag, name, dtype, root, ndim, shape
_ROWS = {}  # (name, dtype, shape, root, group size) -> _row's answer for a valid call


def _describe(name, dtype=None, shape=None, root=-1, error=None):
    known = () if shape is None or len(shape) > _MAX_DIMS else (len(shape), *shape)
    return [int(error is not None), _NAMES.index(name), _DTYPE_CODE.get(dtype, _UNCHECKED), root,
            *known, *[_UNCHECKED] * (1 + _MAX_DIMS - len(known))]


def _row(pg, name, dtype, shape, root, error):
    """This rank's contribution to the check: its descriptor ``d``, then ``-d``, then zeros up
    to one element per rank (they keep Open MPI's reduce-scatter algorithm from falling back to
    a ring of 2 (p-1) steps on large groups; see distributed_c10d._ENGINE_DEFAULTS). Cached:
    a training loop makes the same calls every step."""
    key = (name, dtype, shape, root, pg.size())
    row = _ROWS.get(key) if error is None else None
    if row is None:
        row = np.zeros(max(2 * _FIELDS, pg.size()), dtype=np.int64)
        row[:_FIELDS] = _describe(name, dtype, shape, root, error)
        row[_FIELDS:2 * _FIELDS] = -row[:_FIELDS]
        if error is None:
            if len(_ROWS) > 4096:
                _ROWS.clear()
            _ROWS[key] = row
    return row


def _show(row):
    name = _NAMES[row[1]]
    parts = [] if row[2] == _UNCHECKED else [f"dtype={_flight_recorder._TORCH_DTYPE_NAMES[_dtype._ALL[row[2]].name]}"]
    if row[4] != _UNCHECKED:
        parts.append(f"shape={row[5:5 + row[4]].tolist()}")
    if row[3] >= 0:
        parts.append(f"root={row[3]}")
    return f"{name}({', '.join(parts)})"


def _agreement(pg, name, dtype=None, shape=None, root=-1, error=None):
    """The stages (see :class:`~ember.distributed.Work`) by which every member learns whether
    every member made the same call with valid arguments; they raise the same error on all of
    them if not.

    One small fixed-size ``Iallreduce`` with MAX of each member's descriptor ``d`` and of
    ``-d`` gives every field's maximum and minimum: they are equal on every field exactly when
    all members agree. Only then may the data collective start, whose element counts therefore
    match on every rank (MPI has no defined behaviour otherwise: a hang, a truncation on one
    rank, or a silently wrong sum). When they differ, the members gather their descriptors to
    name who ran what.
    """
    mine = _row(pg, name, dtype, shape, root, error)
    bounds = mine.copy()
    MPI = _mpi()
    yield [pg.comm.Iallreduce(MPI.IN_PLACE, bounds, MPI.MAX)]
    if error is None and bounds.tobytes() == mine.tobytes():  # all maxima and minima are ours
        return
    table = np.empty((pg.size(), _FIELDS), dtype=np.int64)
    yield [pg.comm.Iallgather(mine[:_FIELDS].copy(), table)]
    if error is not None:
        raise error
    if table[:, 0].any():
        raise RuntimeError(f"{name} failed: rank(s) {np.flatnonzero(table[:, 0]).tolist()} of the group "
                           f"called it with invalid arguments (their error says which)")
    differing = np.flatnonzero((table[:, 1:] != table[0, 1:]).any(1)).tolist()
    raise RuntimeError(
        "Detected mismatch between collectives on ranks. "
        + "; ".join(f"Rank {r} is running {_show(table[r])}" for r in [0, *differing]))


def checked(pg, entry, data, outputs, async_op, name, dtype=None, shape=None, root=-1, error=None):
    """Runs the agreement check for the call, then the stages ``data`` (its data collective),
    as one Work; returns it with ``async_op``, else completes it. A rank whose own arguments
    are invalid (``error``) raises it at once, after its peers have learnt of it."""
    work = Work(pg, itertools.chain(_agreement(pg, name, dtype, shape, root, error), data), outputs, entry)
    if async_op and error is None:
        return work
    work.wait()
    return None
