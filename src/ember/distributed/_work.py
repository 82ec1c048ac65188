"""Work: a handle on MPI nonblocking requests, completed against the group's deadline.

Every operation, blocking or not, is started as MPI nonblocking calls and then polled
(``Test``) until it completes, a peer is reported dead, or the group's timeout passes, so
no call waits forever: on a timeout or a peer failure the flight recorder is dumped and a
:class:`DistBackendError` names what happened.
"""
import os
import time

from . import _flight_recorder
from ._fault import failed_ranks, revoke
from .distributed_c10d import DistBackendError, _mpi, _World, supports_ulfm

__all__ = ["Work", "Future", "run", "complete", "calls"]

# MPI's nonblocking collectives advance only inside MPI calls, so a sleeping poller stalls
# every stage of a multi-step algorithm: poll continuously first (as a blocking MPI call
# would), in bursts of Tests of the pending request with nothing else in between (a large
# message crosses shared memory in many fragments, each moved by one of the peers' Tests), and
# only back off into short sleeps once an operation has been waiting for long. With more ranks
# than cores the CPU is yielded between polls (as Open MPI's yield_when_idle does then): a
# spinning rank would otherwise take the core from the peer it waits for. With a core each,
# yielding hands the core to any other process of a busy machine for a whole time slice: a
# 1 MB all_reduce took 17 ms instead of 1.2 ms on 2 loaded cores.
_BURST = 64
_SPIN_SECONDS = 1.0
_SLEEP = 1e-4


class Future:
    """The result of a Work (``torch.futures.Future``'s ``wait``, ``value``, ``done``, ``then``)."""

    def __init__(self, work):
        self._work = work
        self._callbacks = []

    def done(self):
        return self._work.is_completed()

    def wait(self):
        self._work.wait()
        return self._work.result()

    def value(self):
        return self.wait()

    def then(self, callback):
        """A Future whose value is ``callback(self)``, run when this one completes."""
        parent = self

        class _Chained(Future):
            def wait(self):
                parent.wait()
                return callback(parent)
        return _Chained(self._work)


class Work:
    """An operation in flight (``torch.distributed.Work``).

    Args:
        pg: the ProcessGroup it runs on.
        stages: the operation as a generator: it starts MPI nonblocking calls and yields the
            requests it must wait for; the code after each ``yield`` runs once they complete
            (check a result, start the next calls, copy results into place). An agreement check
            and the data collective after it are two stages of one Work, so with
            ``async_op=True`` both progress while the caller computes.
        outputs: the tensors it fills; ``result()`` returns them.
        entry: its flight-recorder entry (or None when the recorder is off).
    """

    def __init__(self, pg, stages, outputs=(), entry=None):
        self.pg = pg
        self.outputs = list(outputs)
        self.entry = entry
        self._stages = stages
        self._error = None
        self._requests = ()  # those of the current stage; None once the operation has ended
        try:
            self._run(_progress)
        finally:  # its first MPI calls are posted: the caller's frames are still those that called it
            _flight_recorder.describe(entry)

    def _run(self, advance, *args):
        """Advances the operation with ``advance`` (:func:`_progress` or :func:`_finish`); an
        error ends it, and is raised again by every later call."""
        if self._requests is None:
            if self._error is not None:
                raise self._error
            return
        try:
            self._requests = advance(self.pg, self.entry, self._stages, self._requests, *args)
        except Exception as error:
            self._error, self._requests = error, None
            raise

    def is_completed(self):
        """True if the operation has completed (never blocks; raises if it failed)."""
        self._run(_progress)
        return self._requests is None

    def wait(self, timeout=None):
        """Blocks until done; ``timeout`` (a timedelta) overrides the group's.

        Raises:
            DistBackendError: a peer died (ULFM reports it) or the deadline passed; the
                flight recorder has been dumped first.
        """
        self._run(_finish, (timeout or self.pg.timeout).total_seconds())
        return True

    def _finish_stage(self, requests):
        """If the operation still waits for ``requests`` (its current stage's), waits for them
        (against the group's timeout) and runs it up to its next stage's requests."""
        if self._requests is requests:
            self._run(_finish, self.pg.timeout.total_seconds(), 1)

    def result(self):
        """The operation's output tensors (a list; call after :meth:`wait`), as torch's
        ``Work.result``."""
        return self.outputs

    def get_future(self):
        """A :class:`Future` completed with :meth:`result` when the operation finishes
        (torch's ``Work.get_future``)."""
        return Future(self)

    def exception(self):
        """The error the operation failed with (a ``DistBackendError``, a timeout), or None."""
        return self._error


def _next(pg, entry, stages):
    """Runs the operation's code up to its next wait: the requests it waits for, or None at
    its end."""
    try:
        return next(stages)
    except StopIteration:
        _flight_recorder.completed(entry, pg)
        return None


def _progress(pg, entry, stages, requests):
    """Tests ``requests`` (the current stage's) and runs the stages their completion unblocks,
    without waiting; returns the requests still pending (None: the operation has ended)."""
    try:
        while requests is not None:
            for request in requests:  # one by one, so a failure reports its own error class
                if not request.Test():
                    return requests
            requests = _next(pg, entry, stages)
    except _mpi().Exception as error:  # a call failed, or could not start (a dead peer, a revoked group)
        raise _failure(pg, entry, error) from None
    return None


def _finish(pg, entry, stages, requests, seconds, stages_left=-1):
    """Runs the operation to its end (or through ``stages_left`` more stages): waits for
    ``requests`` and each later stage's, for at most ``seconds`` in all; returns the requests
    then pending (None at the end).

    Raises:
        DistBackendError: a peer died, or the deadline passed (see :func:`_failure`).
    """
    start = None  # see _spin
    try:
        while requests is not None and stages_left != 0:
            for request in requests:
                if not request.Test():
                    start = _spin(pg, entry, request, start, seconds)
            requests = _next(pg, entry, stages)
            stages_left -= 1
    except _mpi().Exception as error:
        raise _failure(pg, entry, error) from None
    return requests


def _spin(pg, entry, request, start, seconds):
    """Tests ``request`` until it completes: in bursts of Tests with nothing in between, the
    clock read between bursts. Returns ``start``, the time the operation's deadline counts
    from: when None, that of the first clock read (a burst after it first waited), so an
    operation that never waits long reads no clock (0.2-0.3 us each on a virtual machine).
    ``seconds``: the deadline, None for the group's timeout."""
    idle = _World.oversubscribed
    if seconds is None:
        seconds = pg.timeout.total_seconds()
    while True:
        for _ in range(_BURST):
            if request.Test():
                return start
            if idle:
                os.sched_yield()
        now = time.monotonic()
        if start is None:
            start = now
        waited = now - start
        if waited > seconds:
            raise _timed_out(pg, entry, seconds)
        if waited > _SPIN_SECONDS:
            time.sleep(_SLEEP)


def _timed_out(pg, entry, seconds):
    """The error of an operation that outlived its deadline, after the flight recorder is
    dumped and (with ULFM) the group revoked, so that every member stops waiting too."""
    name, seq = _flight_recorder.label(entry)
    _flight_recorder.failed(entry, pg, "timeout")
    pg.check_slot = None  # its request may still be active: the group's next check makes another
    revoke(pg)
    advice = "call ember.distributed.shrink_group() to evict it and continue; " if supports_ulfm() else ""
    return DistBackendError(
        f"[rank {_world_rank()}] {name} (collective_seq_id {seq}) on process group "
        f"{pg.group_desc!r} timed out after {seconds * 1000:.0f} ms: a peer did not join; "
        f"{advice}flight recorder dumped to {_flight_recorder.dump_path()}")


def _failure(pg, entry, error):
    """The error for MPI's ``error``: a peer failure (the recorder dumped, the group revoked)
    or another MPI error."""
    MPI = _mpi()
    code = error.Get_error_class()
    name, _ = _flight_recorder.label(entry)
    pg.check_slot = None  # as in _timed_out
    dead = failed_ranks(pg)  # a peer's death may surface as another error class
    if dead or code in (MPI.ERR_PROC_FAILED, MPI.ERR_PROC_FAILED_PENDING, MPI.ERR_REVOKED):
        _flight_recorder.failed(entry, pg, f"peer failure: ranks {dead}" if dead else "revoked")
        revoke(pg)
        what = (f"rank(s) {dead} of process group {pg.group_desc!r} died" if dead else
                "a member revoked the process group after a peer failure or timeout")
        return DistBackendError(
            f"[rank {_world_rank()}] {name} failed: {what}; call "
            f"ember.distributed.shrink_group() to continue without them; flight recorder "
            f"dumped to {_flight_recorder.dump_path()}")
    return DistBackendError(f"[rank {_world_rank()}] {name} failed in MPI: {error.Get_error_string()}")


def _world_rank():
    return _mpi().COMM_WORLD.Get_rank()


def complete(pg, stages, entry=None):
    """Runs the operation ``stages`` (see :class:`Work`) to its end in this call, against the
    group's timeout: ``Work(...).wait()`` without the Work.

    The loop of :func:`_finish` with nothing else: a synchronous call's stages run once each,
    from their start, so this needs no bookkeeping of where the operation stands. (It runs
    right after a large message has evicted the interpreter's code and data from the caches,
    where each function called costs: 2-4 us less per 1 MB ``all_reduce`` than going
    through ``_finish`` and ``_next``, 2 ranks, loaded.)
    """
    start = None  # see _spin
    try:
        for requests in stages:
            for request in requests:
                if not request.Test():
                    start = _spin(pg, entry, request, start, None)
    except _mpi().Exception as error:
        raise _failure(pg, entry, error) from None
    finally:  # unless its stages did, once the data was posted
        _flight_recorder.describe(entry)
    _flight_recorder.completed(entry, pg)


def run(pg, stages, outputs=(), entry=None, async_op=False):
    """Starts the operation ``stages`` (see :class:`Work`); completes it now (``async_op=False``,
    returns None) or returns its Work."""
    if async_op:
        return Work(pg, stages, outputs, entry)
    complete(pg, stages, entry)
    return None


def calls(requests, finish=None):
    """The stages of an operation that is MPI calls already started (their ``requests``),
    then ``finish()``."""
    yield requests
    if finish is not None:
        finish()
