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

__all__ = ["Work", "Future", "run", "calls"]

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
        self.completed = False
        self._error = None
        self._stages = stages
        self.requests = ()
        self._pending = None  # the request the last test found incomplete
        _flight_recorder.started(entry, pg)
        self._advance()

    def _advance(self):
        """Runs the operation's code up to its next wait, or to its end."""
        try:
            self.requests = next(self._stages)
        except StopIteration:
            self.completed = True
            _flight_recorder.completed(self.entry, self.pg)
        except _mpi().Exception as error:  # starting a call failed (a revoked group, a dead peer)
            self._fail(error)
        except Exception as error:  # the operation's own error, e.g. ranks that disagree
            self._error, self.completed = error, True
            raise

    def _test(self):
        """Completes what MPI has finished and runs the stages it unblocks; True once done."""
        while not self.completed:
            try:  # one by one, so a failure reports its own error class, not MPI_ERR_IN_STATUS
                for request in self.requests:
                    if not request.Test():
                        self._pending = request
                        return False
            except _mpi().Exception as error:
                self._fail(error)
            self._advance()
        if self._error is not None:
            raise self._error
        return True

    def _spin(self):
        """Tests the pending request up to _BURST times, until it completes."""
        request = self._pending
        try:
            if _World.oversubscribed:
                for _ in range(_BURST):
                    if request.Test():
                        return
                    os.sched_yield()
            else:
                for _ in range(_BURST):
                    if request.Test():
                        return
        except _mpi().Exception as error:
            self._fail(error)

    def is_completed(self):
        """True if the operation has completed (never blocks; raises if it failed)."""
        return self._test()

    def wait(self, timeout=None):
        """Blocks until done; ``timeout`` (a timedelta) overrides the group's.

        Raises:
            DistBackendError: a peer died (ULFM reports it) or the deadline passed; the
                flight recorder has been dumped first.
        """
        if self._test():
            return True
        limit = (timeout or self.pg.timeout).total_seconds()
        start = time.monotonic()
        while True:
            self._spin()
            if self._test():
                return True
            waited = time.monotonic() - start
            if waited > limit:
                self._timeout(limit)
            if waited > _SPIN_SECONDS:
                time.sleep(_SLEEP)

    def result(self):
        return self.outputs

    def get_future(self):
        return Future(self)

    def exception(self):
        return self._error

    def _timeout(self, seconds):
        name = self.entry.profiling_name if self.entry else "operation"
        seq = self.entry.collective_seq_id if self.entry else "?"
        _flight_recorder.failed(self.entry, self.pg, "timeout")
        self._cancel()
        advice = "call ember.distributed.shrink_group() to evict it and continue; " if supports_ulfm() else ""
        raise DistBackendError(
            f"[rank {_world_rank()}] {name} (collective_seq_id {seq}) on process group "
            f"{self.pg.group_desc!r} timed out after {seconds * 1000:.0f} ms: a peer did not join; "
            f"{advice}flight recorder dumped to {_flight_recorder.dump_path()}")

    def _cancel(self):
        """Stops waiting; with ULFM the communicator is revoked so every member stops too."""
        revoke(self.pg)

    def _fail(self, error):
        MPI = _mpi()
        code = error.Get_error_class()
        name = self.entry.profiling_name if self.entry else "operation"
        dead = failed_ranks(self.pg)  # a peer's death may surface as another error class
        if dead or code in (MPI.ERR_PROC_FAILED, MPI.ERR_PROC_FAILED_PENDING, MPI.ERR_REVOKED):
            _flight_recorder.failed(self.entry, self.pg, f"peer failure: ranks {dead}" if dead else "revoked")
            self._cancel()
            what = (f"rank(s) {dead} of process group {self.pg.group_desc!r} died" if dead else
                    "a member revoked the process group after a peer failure or timeout")
            self._error = DistBackendError(
                f"[rank {_world_rank()}] {name} failed: {what}; call "
                f"ember.distributed.shrink_group() to continue without them; flight recorder "
                f"dumped to {_flight_recorder.dump_path()}")
        else:
            self._error = DistBackendError(f"[rank {_world_rank()}] {name} failed in MPI: "
                                              f"{error.Get_error_string()}")
        self.completed = True
        raise self._error from None


def _world_rank():
    return _mpi().COMM_WORLD.Get_rank()


def run(pg, stages, outputs=(), entry=None, async_op=False):
    """Starts the operation ``stages`` (see :class:`Work`); completes it now (``async_op=False``,
    returns None) or returns its Work."""
    work = Work(pg, stages, outputs, entry)
    if async_op:
        return work
    work.wait()
    return None


def calls(requests, finish=None):
    """The stages of an operation that is MPI calls already started (their ``requests``),
    then ``finish()``."""
    yield requests
    if finish is not None:
        finish()
