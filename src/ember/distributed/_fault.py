"""Fault tolerance on MPI's ULFM extension (Revoke, Shrink, Agree, Get_failed).

Launched with ULFM on (``ember run --fault-tolerant``, i.e. ``mpiexec --with-ft ulfm``), a
rank that dies makes the operations that need it fail with ``MPI_ERR_PROC_FAILED`` instead of
waiting; :class:`~ember.distributed.Work` then revokes the communicator (so every member
stops, not only the ones talking to the dead rank) and raises ``DistBackendError``. The
survivors call :func:`shrink_group` and go on. Without ULFM (MPICH, or launched without the
flag) the launcher ends the whole job when a rank dies, so nothing hangs either way.

A rank that *hangs* (alive, but never joining) is caught by the group's timeout: the rank
that times out revokes the communicator, so every other member's pending operation fails at
once. ULFM's ``Shrink`` needs every live rank, so :func:`shrink_group` first holds a roll
call on a private communicator that was never revoked: members that do not answer within a
couple of seconds are hung; a survivor on their host asks each for its flight-recorder dump
(SIGUSR1) and then kills it (SIGKILL), after which ULFM reports it dead and the shrink goes on.

A collective can complete on some ranks and fail on others, so after a shrink the survivors
must agree on where they are (``all_reduce`` of the step with MIN or MAX, or adopting rank
0's state as :mod:`ember.distributed.elastic` does) before going on.

Source: ULFM, Bland et al., "Post-failure recovery of MPI communication capability" (2013);
torch.distributed.shrink_group (PyTorch 2.14).
"""
import datetime
import os
import signal
import time

import numpy as np

from . import _flight_recorder
from .distributed_c10d import (DistBackendError, GroupMember, ProcessGroup, _World, _mpi, _resolve,
                               _spare, supports_ulfm)

__all__ = ["shrink_group", "_supports_reconfigure", "_get_reconfigure_handle", "_reconfigure",
           "agree"]

RECOVERED = []  # set once this process has shrunk a group: MPI_Finalize may then hang
_ROLL_CALL = datetime.timedelta(seconds=2)  # survivors reach it within ms; a loaded machine needs slack
_DUMP_WAIT_SECONDS = 1.0
_ROLL_CALL_TAG = 32002  # plus the number of shrinks so far: a late answer never meets a later call
_TOKEN = np.zeros(1, dtype=np.int8)


def _supports_reconfigure(group=None):
    """True where a group can shrink in place after a failure (ULFM present)."""
    _resolve(group)
    return supports_ulfm()


def revoke(pg):
    """Revokes ``pg``'s communicator where ULFM allows, so every member's pending operation
    fails instead of waiting for a rank that will never come."""
    if supports_ulfm() and pg.comm is not None:
        try:
            pg.comm.Revoke()
        except _mpi().Exception:
            pass


def failed_ranks(pg):
    """Ranks of ``pg`` known to have failed (empty without ULFM)."""
    if not supports_ulfm():
        return []
    MPI = _mpi()
    try:
        pg.comm.Ack_failed()
        failed = pg.comm.Get_failed()
    except (NotImplementedError, MPI.Exception):
        return []
    try:
        return list(MPI.Group.Translate_ranks(failed, list(range(failed.Get_size())),
                                              pg.comm.Get_group()))
    finally:
        failed.Free()


def shrink_group(ranks_to_exclude, group=None, shrink_flags=0, pg_options=None):
    """A process group of the survivors of ``group`` (default: the default group).

    Every live member calls it. Members that do not answer a roll call within 2 s (hung) are
    asked for their flight-recorder dump and killed first; dead ranks are then dropped by
    ULFM's ``Comm.Shrink`` (only survivors take part); ranks in ``ranks_to_exclude`` (group
    ranks) are dropped too, with ``Comm.Create_group`` among the others. Ranks are renumbered
    from 0 in the old order. Shrinking the default group makes the result the default group
    (``group.WORLD``).

    Raises:
        RuntimeError: the MPI library lacks ULFM (the job cannot continue without a rank).
        ValueError: ``ranks_to_exclude`` names a rank outside the group.
        DistBackendError: a hung rank runs on a host with no survivor to stop it.
    """
    pg = _resolve(group)
    if not supports_ulfm():
        raise RuntimeError("shrink_group needs an MPI with ULFM; launch with `ember run --fault-tolerant`")
    bad = [r for r in ranks_to_exclude if not 0 <= r < len(pg.ranks)]
    if bad:
        raise ValueError(f"shrink_group: ranks_to_exclude {bad} are outside the group of size {len(pg.ranks)}")
    MPI = _mpi()
    _evict(*_roll_call(pg, min(_ROLL_CALL, pg.timeout).total_seconds()))
    old_ranks = pg.comm.Get_group()
    comm = pg.comm.Shrink()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    kept = MPI.Group.Translate_ranks(comm.Get_group(), list(range(comm.Get_size())), old_ranks)
    excluded = set(ranks_to_exclude)
    if excluded & set(kept):
        members = [i for i, r in enumerate(kept) if r not in excluded]
        if comm.Get_rank() not in members:
            comm.Free()
            return GroupMember.NON_GROUP_MEMBER
        narrowed = comm.Create_group(comm.Get_group().Incl(members))
        narrowed.Set_errhandler(MPI.ERRORS_RETURN)
        comm.Free()
        comm, kept = narrowed, [kept[i] for i in members]
    old_ranks.Free()
    RECOVERED.append(True)
    world_ranks = [pg.ranks[r] for r in kept]
    new = ProcessGroup(comm, world_ranks, pg.group_name, pg.group_desc, pg.timeout, pg.pg_id)
    new.splitter = _spare(comm)
    new.collective_seq_id, new.p2p_seq_id, new.op_id = pg.collective_seq_id, pg.p2p_seq_id, pg.op_id
    _World.groups[pg.pg_id] = new
    if pg is _World.default_pg:
        # survivors are renumbered 0..n-1, so world ranks are the new group ranks
        new.ranks = list(range(comm.Get_size()))
        _World.default_pg = GroupMember.WORLD = new
    return new


def launch_ranks(pg):
    """The ``COMM_WORLD`` ranks of ``pg``'s members, in group order (a shrink renumbers
    ``pg.ranks``; the roll call and the host/pid table speak launch ranks)."""
    MPI = _mpi()
    mine, launched = pg.comm.Get_group(), MPI.COMM_WORLD.Get_group()
    try:
        return MPI.Group.Translate_ranks(mine, list(range(mine.Get_size())), launched)
    finally:
        mine.Free()
        launched.Free()


def _roll_call(pg, seconds):
    """``(hung, present)``: the launch ranks of ``pg``'s members that neither answer a roll
    call within ``seconds`` nor are known dead, and those present (this rank included). Every
    live member calls this from shrink_group."""
    MPI = _mpi()
    control = _World.control
    me = control.Get_rank()
    tag = _ROLL_CALL_TAG + len(RECOVERED)
    peers = [r for r in launch_ranks(pg) if r != me]
    for peer in peers:
        try:
            control.Isend(_TOKEN, dest=peer, tag=tag).Free()
        except MPI.Exception:
            pass  # a dead peer: its receive below fails too
    pending = {peer: control.Irecv(np.empty(1, dtype=np.int8), source=peer, tag=tag) for peer in peers}
    present = [me]
    deadline = time.monotonic() + seconds
    while pending and time.monotonic() < deadline:
        for peer, request in list(pending.items()):
            try:
                if request.Test():
                    del pending[peer]
                    present.append(peer)
            except MPI.Exception:  # ULFM: the peer died, nothing to evict
                del pending[peer]
        time.sleep(1e-4)
    for request in pending.values():
        request.Cancel()
        request.Wait()
    return sorted(pending), present


def _evict(hung, present):
    """Has every hung rank on this host dump its flight recorder (SIGUSR1), then kills it, so
    ULFM declares it failed. Only the first survivor of a host acts; the others would only
    repeat the signals.

    Raises:
        DistBackendError: a hung rank runs on a host where no survivor can signal it.
    """
    if not hung:
        return
    MPI = _mpi()
    here = MPI.Get_processor_name()
    elsewhere = [r for r in hung if _World.peers[r][0] != here]
    if any(all(_World.peers[s][0] != _World.peers[r][0] for s in present) for r in elsewhere):
        raise DistBackendError(f"ranks {hung} hung and some run on hosts without a survivor to stop them; "
                               f"end the job (their hosts: {sorted({_World.peers[r][0] for r in elsewhere})})")
    me = _World.control.Get_rank()
    mine = [r for r in hung if _World.peers[r][0] == here
            and me == min(s for s in present if _World.peers[s][0] == here)]
    asked = time.time()
    for r in mine:
        _signal(_World.peers[r][1], signal.SIGUSR1)
    deadline = time.monotonic() + _DUMP_WAIT_SECONDS
    waiting = set(mine)
    while waiting and time.monotonic() < deadline:
        waiting = {r for r in waiting if not _dumped_since(r, asked)}
        time.sleep(0.01)
    for r in mine:
        _signal(_World.peers[r][1], signal.SIGKILL)


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass  # it ended by itself


def _dumped_since(rank, moment):
    try:
        return os.stat(_flight_recorder.dump_path(rank)).st_mtime >= moment
    except FileNotFoundError:
        return False


def agree(flag, group=None):
    """ULFM's fault-tolerant agreement: the bitwise AND of ``flag`` (an int) over the live
    members of ``group``; it completes even when members have died."""
    pg = _resolve(group)
    if not supports_ulfm():
        raise RuntimeError("agree needs an MPI with ULFM; launch with `ember run --fault-tolerant`")
    try:
        return pg.comm.Agree(int(flag))
    except _mpi().Exception as error:
        raise DistBackendError(f"agree failed: {error.Get_error_string()}") from None


def _get_reconfigure_handle(group=None):
    """This rank's handle for :func:`_reconfigure`: its world rank."""
    return _resolve(group).ranks[_resolve(group).rank()]


def _reconfigure(uuid, handles, group=None):
    """Reconfigures ``group`` in place to the ranks whose handles are given (survivors)."""
    pg = _resolve(group)
    keep = set(handles)
    return shrink_group([i for i, r in enumerate(pg.ranks) if r not in keep], group=group)
