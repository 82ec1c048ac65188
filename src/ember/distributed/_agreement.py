"""The agreement check that runs before every collective.

Every member contributes a descriptor of its call (operation, reduction, dtype, root, the shape
that must agree, and whether its own arguments were valid) to one small fixed-size
``Iallreduce``, so a rank with bad arguments, or ranks that disagree in operation, reduction,
dtype or shape, make *every* member raise the same clear error; only then does the data
collective start.
"""
import functools
import sys

import numpy as np

from .. import _dtype
from . import _flight_recorder
from ._work import Work, complete
from .distributed_c10d import ReduceOp, _mpi

__all__ = ["checked", "row_of"]

_NAMES = ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather", "scatter",
          "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "barrier")
_MAX_DIMS = 8
_UNCHECKED = -2  # descriptor fields that may differ across ranks
_DTYPE_CODE = {d: i for i, d in enumerate(_dtype._ALL)}
_FIELDS = 6 + _MAX_DIMS  # error flag, name, reduction, dtype, root, ndim, shape
_ROWS = {}  # (name, op, dtype, shape, root, group size) -> row_of's answer for a valid call


def _describe(name, op, dtype, shape, root, error):
    known = () if shape is None or len(shape) > _MAX_DIMS else (len(shape), *shape)
    return [int(error is not None), _NAMES.index(name),
            int(op) if isinstance(op, ReduceOp.RedOpType) else _UNCHECKED,
            _DTYPE_CODE.get(dtype, _UNCHECKED), root, *known, *[_UNCHECKED] * (1 + _MAX_DIMS - len(known))]


def row_of(size, name, op, dtype, shape, root, error):
    """This rank's contribution to the check, as bytes: its descriptor ``d``, then ``-d``, then
    zeros up to one int64 per rank (they keep Open MPI's reduce-scatter algorithm from falling
    back to a ring of 2 (p-1) steps on large groups; see distributed_c10d._ENGINE_DEFAULTS).
    Cached: a training loop makes the same calls every step."""
    key = (name, op, dtype, shape, root, size)
    row = _ROWS.get(key) if error is None else None
    if row is None:
        values = np.zeros(max(2 * _FIELDS, size), dtype=np.int64)
        values[:_FIELDS] = _describe(name, op, dtype, shape, root, error)
        values[_FIELDS:2 * _FIELDS] = -values[:_FIELDS]
        row = values.tobytes()
        if error is None:
            if len(_ROWS) > 4096:
                _ROWS.clear()
            _ROWS[key] = row
    return row


def _show(descriptor):
    flag, name, op, dtype, root, ndim = descriptor[:6]
    parts = [] if op == _UNCHECKED else [f"op={ReduceOp.RedOpType(op).name}"]
    if dtype != _UNCHECKED:
        parts.append(f"dtype={_flight_recorder._TORCH_DTYPE_NAMES[_dtype._ALL[dtype].name]}")
    if ndim != _UNCHECKED:
        parts.append(f"shape={descriptor[6:6 + ndim].tolist()}")
    if root >= 0:
        parts.append(f"root={root}")
    return f"{_NAMES[name]}({', '.join(parts)})"


def _start_check(pg, row):
    """Starts the check of this rank's descriptor ``row`` (bytes); returns the buffer that
    receives the bounds and the check's requests.

    Where the library has MPI-4 persistent collectives (probed once; Open MPI 4 lacks them)
    the check is one ``Allreduce_init`` per group, started again at each call: 0.6 us less
    per call than a new ``Iallreduce``. Its one buffer may be reused because a group's later
    call first finishes the checks of its earlier ones (:meth:`ProcessGroup.settle`).
    """
    comm, slot = pg.comm, pg.check_slot
    if slot is None or slot[0] is not comm:
        slot = pg.check_slot = (comm, *_persistent(comm, len(row)))
    _, bounds, request, requests = slot
    if request is None:
        MPI = _mpi()
        bounds = bytearray(row)
        return bounds, [comm.Iallreduce(MPI.IN_PLACE, [bounds, MPI.INT64_T], MPI.MAX)]
    bounds[:] = row
    request.Start()
    return bounds, requests


_PERSISTENT = []  # [True or False] once probed


def _persistent(comm, nbytes):
    """(buffer, persistent in-place MAX all-reduce of its ``nbytes`` as int64, the list of
    that one request: the stage that waits for it), or Nones without persistent collectives."""
    MPI = _mpi()
    buffer = bytearray(nbytes)
    if _PERSISTENT == [False]:
        return None, None, None
    try:
        request = comm.Allreduce_init(MPI.IN_PLACE, [buffer, MPI.INT64_T], MPI.MAX)
    except (NotImplementedError, MPI.Exception):
        _PERSISTENT[:] = [False]
        return None, None, None
    _PERSISTENT[:] = [True]
    return buffer, request, [request]


def _stages(pg, entry, row, bounds, check, error, data):
    """The stages (see :class:`~ember.distributed.Work`) of the check of a call whose
    descriptor row is ``row`` (``check``: its started requests, filling ``bounds``), then of
    ``data``, its data collective; the flight recorder's ``entry`` is described while the
    data moves.

    One small fixed-size all-reduce with MAX of each member's descriptor ``d`` and of
    ``-d`` gives every field's maximum and minimum: they are equal on every field exactly when
    all members agree. Only then may the data collective start, whose element counts therefore
    match on every rank (MPI has no defined behaviour otherwise: a hang, a truncation on one
    rank, or a silently wrong sum). When they differ, the members gather their descriptors to
    name who ran what, and every one raises the same error.
    """
    yield check
    if error is None and bounds == row:  # all maxima and minima are ours
        posted = next(data)
        _flight_recorder.describe(entry)
        yield posted
        yield from data
        return
    mine = np.frombuffer(row, dtype=np.int64, count=_FIELDS).copy()
    table = np.empty((pg.size(), _FIELDS), dtype=np.int64)
    yield [pg.comm.Iallgather(mine, table)]
    if error is not None:
        raise error
    name = _NAMES[mine[1]]
    if table[:, 0].any():
        raise RuntimeError(f"{name} failed: rank(s) {np.flatnonzero(table[:, 0]).tolist()} of the group "
                           f"called it with invalid arguments (their error says which)")
    differing = np.flatnonzero((table[:, 1:] != table[0, 1:]).any(1)).tolist()
    raise RuntimeError(
        "Detected mismatch between collectives on ranks. "
        + "; ".join(f"Rank {r} is running {_show(table[r])}" for r in [0, *differing]))


def checked(pg, inputs, data, outputs, async_op, name, dtype=None, shape=None, root=-1, error=None, op=None,
            row=None):
    """Runs the agreement check for the call, then the stages ``data`` (its data collective),
    as one Work; returns it with ``async_op``, else completes it. ``inputs`` and ``outputs``
    are the call's tensors (``result()`` returns ``outputs``); ``shape`` is a tuple (the
    array's, not a torch.Size: it keys a cache); ``op`` the reduction of reducing
    collectives; ``row`` its descriptor row (:func:`row_of`) where the caller has it already.
    A rank whose own arguments are invalid (``error``) raises it at once, after its peers
    have learnt of it.

    The check is started first: the flight-recorder entry is made while it travels, and
    described while the data does (see :func:`_flight_recorder.record`).
    """
    if pg.unsettled:
        pg.settle()
    if row is None:
        row = row_of(pg.size(), name, op, dtype, shape, root, error)
    bounds, check = _start_check(pg, row)
    entry = _flight_recorder.record(pg, name, inputs, outputs, caller=sys._getframe(2))
    stages = _stages(pg, entry, row, bounds, check, error, data)
    if async_op and error is None:
        work = Work(pg, stages, outputs, entry)
        if work._requests is check:  # the check is pending: the group's next call finishes it
            pg.unsettled.append(functools.partial(work._finish_stage, check))
        return work
    complete(pg, stages, entry)
    return None
