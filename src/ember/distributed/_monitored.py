"""``monitored_barrier``: a barrier that names the ranks that did not arrive."""
import time

import numpy as np

from .distributed_c10d import _mpi, _resolve, _timedelta

__all__ = ["monitored_barrier"]

_TAG = 32001  # a tag of its own, so the barrier's messages never match a user's recv


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """Every rank reports to rank 0, which acknowledges once all have (``torch.distributed.
    monitored_barrier``).

    Raises:
        RuntimeError: on rank 0, naming the rank (or with ``wait_all_ranks`` every rank) that
            did not report within ``timeout`` (default: the group's); on other ranks, when
            rank 0's acknowledgement does not come in time.
    """
    pg = _resolve(group)
    seconds = _timedelta(timeout, pg.timeout).total_seconds()
    deadline = time.monotonic() + seconds
    token = np.zeros(1, dtype=np.int8)
    if pg.rank() != 0:
        pg.comm.Isend(token, dest=0, tag=_TAG).Free()
        _poll({0: pg.comm.Irecv(np.empty(1, dtype=np.int8), source=0, tag=_TAG)}, deadline)
        return
    pending = {r: pg.comm.Irecv(np.empty(1, dtype=np.int8), source=r, tag=_TAG)
               for r in range(1, pg.size())}
    missing = _poll(pending, deadline, stop_at_first=not wait_all_ranks)
    if missing:
        for request in pending.values():
            request.Cancel()
        which = (f"Ranks {', '.join(map(str, missing))} failed" if wait_all_ranks
                 else f"Rank {missing[0]} failed")
        raise RuntimeError(f"{which} to pass monitoredBarrier in {seconds * 1000:.0f} ms")
    for r in range(1, pg.size()):
        pg.comm.Isend(token, dest=r, tag=_TAG).Free()


def _poll(requests, deadline, stop_at_first=True):
    """Waits for ``requests`` (peer -> request) until ``deadline``; the peers still missing."""
    MPI = _mpi()
    pending = dict(requests)
    while pending:
        for peer in [p for p, r in pending.items() if r.Test()]:
            del pending[peer]
        if pending and time.monotonic() > deadline:
            missing = sorted(pending)
            if len(requests) == 1 and 0 in requests:
                raise RuntimeError(f"monitored_barrier: rank 0 did not acknowledge in time "
                                   f"({MPI.COMM_WORLD.Get_rank()} waiting)")
            return missing[:1] if stop_at_first else missing
        time.sleep(1e-4)
    return []
