"""Fault tolerance on MPI's ULFM extension (Revoke, Shrink, Agree, Get_failed).

Launched with ULFM on (``ember run --fault-tolerant``, i.e. ``mpiexec --with-ft ulfm``), a
rank that dies makes the operations that need it fail with ``MPI_ERR_PROC_FAILED`` instead of
waiting; :class:`~ember.distributed.Work` then revokes the communicator (so every member
stops, not only the ones talking to the dead rank) and raises ``DistBackendError``. The
survivors call :func:`shrink_group` and go on. Without ULFM (MPICH, or launched without the
flag) the launcher ends the whole job when a rank dies, so nothing hangs either way.

A collective can complete on some ranks and fail on others, so after a shrink the survivors
must agree on where they are (``all_reduce`` of the step with MIN or MAX) before going on.

Source: ULFM, Bland et al., "Post-failure recovery of MPI communication capability" (2013);
torch.distributed.shrink_group (PyTorch 2.14).
"""
from .distributed_c10d import (DistBackendError, GroupMember, ProcessGroup, _World, _mpi, _resolve,
                               supports_ulfm)

__all__ = ["shrink_group", "_supports_reconfigure", "_get_reconfigure_handle", "_reconfigure",
           "agree"]

RECOVERED = []  # set once this process has shrunk a group: MPI_Finalize may then hang


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

    Dead ranks are dropped by ULFM's ``Comm.Shrink`` (only survivors take part); ranks in
    ``ranks_to_exclude`` (group ranks, such as a straggler that timed out) are dropped too,
    with ``Comm.Create_group`` among the others. Ranks are renumbered from 0 in the old order.
    Shrinking the default group makes the result the default group (``group.WORLD``).

    Raises:
        RuntimeError: the MPI library lacks ULFM (the job cannot continue without a rank).
        ValueError: ``ranks_to_exclude`` names a rank outside the group.
    """
    pg = _resolve(group)
    if not supports_ulfm():
        raise RuntimeError("shrink_group needs an MPI with ULFM; launch with `ember run --fault-tolerant`")
    bad = [r for r in ranks_to_exclude if not 0 <= r < len(pg.ranks)]
    if bad:
        raise ValueError(f"shrink_group: ranks_to_exclude {bad} are outside the group of size {len(pg.ranks)}")
    MPI = _mpi()
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
    new.collective_seq_id, new.p2p_seq_id, new.op_id = pg.collective_seq_id, pg.p2p_seq_id, pg.op_id
    _World.groups[pg.pg_id] = new
    if pg is _World.default_pg:
        # survivors are renumbered 0..n-1, so world ranks are the new group ranks
        new.ranks = list(range(comm.Get_size()))
        _World.default_pg = GroupMember.WORLD = new
    return new


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
