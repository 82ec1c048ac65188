"""Process groups on MPI communicators (``torch.distributed.distributed_c10d``).

Every :class:`ProcessGroup` owns one mpi4py communicator; the default group is a duplicate of
``MPI.COMM_WORLD``, so a rank's ``get_rank()`` is its MPI rank and the world is the job that
``mpiexec``/``ember run``/``srun`` started. Subgroups are split off their parent in the
background (``Comm.Split`` on a worker thread), so ``new_group`` and
``split_group`` return at once and the communicator is ready at the group's first use.

Source: https://pytorch.org/docs/stable/distributed.html
"""
import datetime
import enum
import functools
import os
import queue
import threading
import warnings

import numpy as np

from ._errors import DistBackendError, DistError, DistNetworkError, DistStoreError

__all__ = ["Backend", "ReduceOp", "ProcessGroup", "GroupMember", "group", "DistError",
           "DistBackendError", "DistNetworkError", "DistStoreError", "is_available",
           "is_initialized", "is_mpi_available", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "get_default_backend_for_device", "get_group_rank", "get_global_rank",
           "get_process_group_ranks", "new_group", "new_subgroups", "split_group", "set_timeout",
           "supports_ulfm"]

default_pg_timeout = datetime.timedelta(minutes=30)  # torch's default for CPU backends

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


# Open MPI's nonblocking all-reduce (libnbc) picks a binomial tree (reduce to one rank, then
# broadcast: the whole message crosses log2(p) links twice) whenever the call is in place, as
# ember's are, or p < 4: 2.3x the blocking MPI_Allreduce at 1 MB on 2 ranks here. Its
# reduce-scatter + allgather (Rabenseifner) is latency-optimal as well (2 log2(p) steps) and
# moves 2 (p-1)/p of the message: with it a 1 MB Iallreduce matches the blocking call. (It falls
# back to a ring for fewer elements than ranks.) A value the user set is kept.
_ENGINE_DEFAULTS = {"OMPI_MCA_coll_libnbc_iallreduce_algorithm": "3"}


@functools.cache
def _mpi():
    """The ``mpi4py.MPI`` module; importing it initialises MPI once per process, with
    ``_ENGINE_DEFAULTS`` in the environment. (Cached: it is called at every poll of a pending
    operation, where an import statement costs ~10 us.)"""
    for key, value in _ENGINE_DEFAULTS.items():
        os.environ.setdefault(key, value)
    from mpi4py import MPI
    return MPI


def is_available():
    """True when the MPI engine (mpi4py) can be imported."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


is_mpi_available = is_available


class Backend(str):
    """A backend name. ember serves ``"mpi"``; ``"gloo"``, ``"nccl"`` and friends are mapped
    to MPI with a warning, so a torch script runs unchanged."""
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    XCCL = "xccl"
    UNDEFINED = "undefined"
    default_device_backend_map = {"cpu": "mpi"}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        return str.__new__(cls, name.lower())


class ReduceOp:
    """Reduction operations (``torch.distributed.ReduceOp``): ``ReduceOp.SUM`` and friends."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


_PROBED = {}


def supports_ulfm():
    """True if the MPI library implements ULFM: probed once with ``Revoke`` on a throwaway
    duplicate (MPICH's mpi4py raises NotImplementedError there)."""
    if "ulfm" not in _PROBED:
        MPI = _mpi()
        probe = MPI.COMM_SELF.Dup()
        try:
            probe.Revoke()
            _PROBED["ulfm"] = True
        except (NotImplementedError, MPI.Exception):
            _PROBED["ulfm"] = False
        finally:
            probe.Free()
    return _PROBED["ulfm"]


class ProcessGroup:
    """A set of ranks that run collectives together, on one MPI communicator.

    Attributes:
        ranks: the world ranks of the members, in group-rank order.
        group_name: the name given at creation ("" for the default group unless named).
        group_desc: a short description (``"default_pg"``, ``"undefined"``...).
        timeout: a ``datetime.timedelta``; an operation not completed by then raises
            :class:`DistBackendError` after the flight recorder is dumped.
    """

    def __init__(self, comm, ranks, group_name, group_desc, timeout, pg_id, rank=None):
        self._comm = comm  # an mpi4py communicator, or a _Splitting one until the first use
        self._rank = rank
        self.splitter = None  # the duplicate subgroups are split from (see _Splitting)
        self.ranks = list(ranks)
        self.group_name = group_name
        self.group_desc = group_desc
        self.timeout = timeout
        self.pg_id = pg_id
        self.collective_seq_id = 0
        self.p2p_seq_id = 0
        self.op_id = 0
        self.last_started = -1
        self.last_completed = -1
        self.unsettled = []  # how to finish each async call whose agreement check may be pending
        self.check_slot = None  # (communicator, buffer, persistent request, [it]) of the checks
        self.all_reduce_calls = {}  # (op, dtype, shape) -> (reduction, check row): _collectives.all_reduce

    def settle(self):
        """Finishes the agreement checks of this group's earlier async calls, which starts
        their data collectives, before a later call starts its own: MPI needs every member to
        start a communicator's collectives in one order, and a check ends, and so lets its
        data start, at a different moment on each rank."""
        while self.unsettled:
            pending, self.unsettled = self.unsettled, []
            for finish_check in pending:
                finish_check()

    @property
    def comm(self):
        """The group's communicator (the first use of a group made by new_group, new_subgroups
        or split_group waits for it; DistBackendError after the timeout)."""
        if isinstance(self._comm, _Splitting):
            self._comm = self._comm.wait(self)
        return self._comm

    @comm.setter
    def comm(self, comm):
        self._comm = comm
        self.all_reduce_calls = {}  # their check rows hold the group's size

    def rank(self):
        """This process's rank in the group, 0 to ``size() - 1`` (torch's ``ProcessGroup.rank``)."""
        comm = self._comm
        return self._rank if isinstance(comm, _Splitting) else comm.Get_rank()

    def size(self):
        """The number of processes in the group (torch's ``ProcessGroup.size``)."""
        comm = self._comm
        return len(self.ranks) if isinstance(comm, _Splitting) else comm.Get_size()

    def name(self):
        """The backend's name, ``"mpi"``: every ember group is an MPI communicator."""
        return Backend.MPI

    def _get_backend_name(self):
        return Backend.MPI

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup {self.group_desc} ranks={self.ranks}>"


class _Splitting:
    """A communicator being split off a parent group in the background, so that ``new_group``
    and ``split_group`` return before it is ready (as PyTorch 2.14's nonblocking communicator
    creation). One worker thread per process runs the splits in the order they were asked
    for, with a blocking ``Comm.Split`` on the parent's ``splitter``: a duplicate reserved for
    this, so the split never interleaves with the parent's own operations. (``Comm.Idup`` is
    not used: Open MPI posts its later rounds lazily, and interleaved with the parent's other
    nonblocking collectives they mismatch across ranks.) The group's first use waits for the
    result against its timeout."""

    _jobs = queue.SimpleQueue()
    _worker = []

    def __init__(self, splitter, color, key):
        self._args = (splitter, color, key)
        self._done = threading.Event()
        self._result = None
        if _mpi().Query_thread() != _mpi().THREAD_MULTIPLE:  # MPI forbids a second calling thread
            self._split()
            return
        if not _Splitting._worker:  # a daemon: a split that never completes cannot block exit
            _Splitting._worker.append(threading.Thread(target=_Splitting._serve, daemon=True,
                                                       name="ember-comm-split"))
            _Splitting._worker[0].start()
        _Splitting._jobs.put(self)

    @staticmethod
    def _serve():
        while True:
            _Splitting._jobs.get()._split()

    def _split(self):
        MPI = _mpi()
        splitter, color, key = self._args
        try:
            comm = splitter.Split(MPI.UNDEFINED if color is None else color, key)
            if comm != MPI.COMM_NULL:
                comm.Set_errhandler(MPI.ERRORS_RETURN)
                self._result = (comm, _spare(comm))
        except MPI.Exception as error:
            self._result = DistBackendError(f"creating a process group failed in MPI: {error.Get_error_string()}")
        self._done.set()

    def wait(self, pg):
        """The communicator; sets ``pg``'s splitter."""
        seconds = pg.timeout.total_seconds()
        if not self._done.wait(seconds):
            raise DistBackendError(f"{pg!r} was not ready after {seconds * 1000:.0f} ms: a rank of its "
                                   f"parent group did not call new_group/new_subgroups/split_group")
        if isinstance(self._result, Exception):
            raise self._result
        comm, pg.splitter = self._result
        return comm


def _spare(comm):
    """A duplicate of ``comm`` reserved for splitting subgroups off it (blocking, collective)."""
    spare = comm.Dup()
    spare.Set_errhandler(_mpi().ERRORS_RETURN)
    return spare


class GroupMember:
    """``group.WORLD`` is the default process group (None before ``init_process_group``);
    ``group.NON_GROUP_MEMBER`` is what ``new_group`` returns on ranks outside the group."""
    WORLD = None
    NON_GROUP_MEMBER = object()


group = GroupMember


class _World:
    """The process-wide state: the default group, a count for group ids and, where ULFM can
    evict hung ranks, a private duplicate of ``MPI.COMM_WORLD`` (never revoked, for the roll
    call) with every launched rank's (host, pid)."""
    default_pg = None
    next_pg_id = 0
    groups = {}
    control = None
    peers = []
    oversubscribed = False  # more ranks on this node than cores for them (see _work's polling)


def _check_initialized():
    if _World.default_pg is None:
        raise ValueError(_NOT_INITIALIZED)


def _resolve(group):
    """The ProcessGroup to act on: ``group`` or the default one (ValueError before init)."""
    if group is None and _World.default_pg is not None:  # every collective's first step
        return _World.default_pg
    _check_initialized()
    if group is None or group is GroupMember.WORLD:
        return _World.default_pg
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("the calling rank is not a member of this process group")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup or None, not {type(group).__name__}")
    if group._comm is None:
        raise ValueError(f"{group!r} was destroyed")
    return group


def _timedelta(timeout, default):
    if timeout is None:
        return default
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")
    return timeout


def _register(comm, ranks, group_name, group_desc, timeout, rank=None):
    pg = ProcessGroup(comm, ranks, group_name or str(_World.next_pg_id), group_desc, timeout,
                      _World.next_pg_id, rank)
    if not isinstance(comm, _Splitting):
        pg.splitter = _spare(comm)
    _World.next_pg_id += 1
    _World.groups[pg.pg_id] = pg
    return pg


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None, *,
                       enable_reconfigure=False):
    """Joins the job's world: the default process group becomes ``MPI.COMM_WORLD`` (duplicated).

    Rank and size come from MPI. ``world_size``/``rank``, or ``RANK``/``WORLD_SIZE`` when
    ``init_method`` is ``"env://"``, are checked against MPI's. Any backend other than
    ``"mpi"`` is served by MPI with a UserWarning. ``enable_reconfigure`` needs MPI's fault-
    tolerance extension (ULFM): it is checked, and a RuntimeError names the missing launch flag.

    Raises:
        ValueError: the group is already initialized, or ``rank``/``world_size`` disagree with
            the MPI job (launch with ``mpiexec -n N`` or ``ember run -n N``).
        RuntimeError: mpi4py is not installed (``pip install "ember[distributed]"``).
    """
    if _World.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if not is_available():
        raise RuntimeError('ember.distributed needs mpi4py and an MPI library: '
                           'pip install "ember[distributed]"')
    name = Backend(backend) if backend is not None else Backend.MPI
    if name.split(":")[-1] != Backend.MPI:
        warnings.warn(f"ember.distributed serves backend {backend!r} with MPI", UserWarning, stacklevel=2)
    MPI = _mpi()
    comm = MPI.COMM_WORLD.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    if init_method == "env://" or (init_method is None and "RANK" in os.environ):
        rank = int(os.environ.get("RANK", rank))
        world_size = int(os.environ.get("WORLD_SIZE", world_size))
    if world_size not in (-1, comm.Get_size()) or rank not in (-1, comm.Get_rank()):
        size, mine = comm.Get_size(), comm.Get_rank()
        comm.Free()
        raise ValueError(f"rank={rank}, world_size={world_size} disagree with the MPI job "
                         f"(rank {mine} of {size}); launch with `ember run -n {world_size} script.py` "
                         f"or `mpiexec -n {world_size} python script.py`")
    pg = _register(comm, range(comm.Get_size()), group_name, "default_pg",
                   _timedelta(timeout, default_pg_timeout))
    _World.default_pg = GroupMember.WORLD = pg
    _World.oversubscribed = _node_ranks(MPI) > _usable_cores()
    if supports_ulfm():
        _World.control, _World.peers = _control_channel(MPI)
    elif enable_reconfigure:
        raise RuntimeError("enable_reconfigure=True needs an MPI with ULFM (Open MPI 5, launched "
                           "with `ember run --fault-tolerant` or `mpiexec --with-ft ulfm`)")


def _node_ranks(MPI):
    """How many ranks of the job share this node (collective over the world)."""
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    size = node.Get_size()
    node.Free()
    return size


def _usable_cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _control_channel(MPI):
    """A duplicate of COMM_WORLD and the (host, pid) of every launched rank, gathered as bytes
    (no pickle): what a survivor needs to find and stop a hung rank later."""
    control = MPI.COMM_WORLD.Dup()
    control.Set_errhandler(MPI.ERRORS_RETURN)
    mine = np.zeros(MPI.MAX_PROCESSOR_NAME + 8, dtype=np.uint8)
    host = MPI.Get_processor_name().encode()[:MPI.MAX_PROCESSOR_NAME]
    mine[:len(host)] = np.frombuffer(host, dtype=np.uint8)
    mine[-8:] = np.array([os.getpid()], dtype=np.int64).view(np.uint8)
    table = np.empty((control.Get_size(), mine.size), dtype=np.uint8)
    control.Allgather(mine, table)
    return control, [(bytes(row[:-8]).rstrip(b"\0").decode(), int(row[-8:].view(np.int64)[0]))
                     for row in table]


def is_initialized():
    """Whether :func:`init_process_group` has made the default group (and it is not destroyed).
    Source: https://pytorch.org/docs/stable/distributed.html#torch.distributed.is_initialized"""
    return _World.default_pg is not None


def destroy_process_group(group=None):
    """Frees ``group``'s communicator, or every group's when ``group`` is None (the default)."""
    pg = _resolve(group)
    doomed = list(_World.groups.values()) if pg is _World.default_pg else [pg]
    for member in doomed:
        if member.check_slot is not None and member.check_slot[2] is not None:
            member.check_slot[2].Free()
        if not isinstance(member._comm, (_Splitting, type(None))):  # a split still running is left to finish
            member._comm.Free()
        if member.splitter is not None:
            member.splitter.Free()
        member.comm = member.splitter = None
        _World.groups.pop(member.pg_id, None)
    if pg is _World.default_pg:
        _World.default_pg = GroupMember.WORLD = None
        if _World.control is not None:
            _World.control.Free()
            _World.control = None


def get_rank(group=None):
    """This process's rank in ``group`` (the default group's rank is the MPI world rank)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).rank()


def get_world_size(group=None):
    """The number of processes in ``group`` (the default group when None); -1 for a rank outside
    the group (``GroupMember.NON_GROUP_MEMBER``). ValueError before :func:`init_process_group`.
    Source: https://pytorch.org/docs/stable/distributed.html#torch.distributed.get_world_size"""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).size()


def get_backend(group=None):
    """``group``'s backend (the default group's when None): ``"mpi"``; ValueError before init.
    Source: https://pytorch.org/docs/stable/distributed.html#torch.distributed.get_backend"""
    _resolve(group)
    return Backend.MPI


_DEVICES_WITH_BACKENDS = ("cpu", "cuda", "xpu", "mps")  # torch's default_device_backend_map


def get_default_backend_for_device(device):
    """The backend that serves ``device`` (``"cpu"``, ``"cuda:1"``, an ``ember.device``): ``"mpi"``
    for every device torch has a default for (torch answers ``"gloo"`` for the CPU, ``"nccl"``
    for CUDA; ember serves them all with MPI).

    Raises:
        ValueError: a device type with no default backend (``"meta"``).
        RuntimeError: an accelerator index (an int): ember has no accelerator.
    """
    if isinstance(device, int):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    kind = str(device).split(":")[0]
    if kind not in _DEVICES_WITH_BACKENDS:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return Backend.MPI


def get_process_group_ranks(group):
    """The world ranks of ``group``'s members, in group-rank order (a list of ints).
    Source: https://pytorch.org/docs/stable/distributed.html#torch.distributed.get_process_group_ranks"""
    return list(_resolve(group).ranks)


def get_group_rank(group, global_rank):
    """The rank in ``group`` of world rank ``global_rank``; ValueError if it is not a member."""
    pg = _resolve(group)
    try:
        return pg.ranks.index(global_rank)
    except ValueError:
        raise ValueError(f"Group {pg!r} does not contain rank {global_rank}") from None


def get_global_rank(group, group_rank):
    """The world rank of ``group``'s member ``group_rank``; ValueError if the group has no such
    rank. Source: https://pytorch.org/docs/stable/distributed.html#torch.distributed.get_global_rank"""
    pg = _resolve(group)
    if not 0 <= group_rank < len(pg.ranks):
        raise ValueError(f"Group {pg!r} does not contain group rank {group_rank}")
    return pg.ranks[group_rank]


def set_timeout(timeout, group=None):
    """Sets the timeout of ``group``'s later operations (a ``datetime.timedelta``; TypeError
    otherwise)."""
    if timeout is None:
        raise TypeError("Expected timeout argument to be of type datetime.timedelta, got NoneType")
    _resolve(group).timeout = _timedelta(timeout, None)


def _split(parent, parts, timeout, group_desc):
    """This rank's group among the disjoint ``parts`` (lists of ``parent``'s ranks, each in
    group-rank order), or None; every rank of ``parent`` calls it, and it returns at once."""
    me = parent.rank()
    color = next((i for i, part in enumerate(parts) if me in part), None)
    rank = None if color is None else parts[color].index(me)
    if parent.splitter is None:
        parent.comm  # a group made in the background gets its splitter at its first use
    splitting = _Splitting(parent.splitter, color, rank or 0)
    if color is None:
        return None
    return _register(splitting, [parent.ranks[r] for r in parts[color]], "", group_desc,
                     _timedelta(timeout, parent.timeout), rank)


def _check_ranks(ranks, world):
    ranks = [int(r) for r in ranks]
    bad = [r for r in ranks if not 0 <= r < world]
    if bad:
        raise ValueError(f"new_group: ranks {bad} are outside the world of size {world} "
                         f"(valid ranks: 0..{world - 1})")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} contain duplicates")
    return ranks


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None, sort_ranks=True):
    """A process group of the world ranks ``ranks`` (all ranks if None).

    Every rank of the world calls it, as in torch; it returns at once (ranks outside the
    group get ``GroupMember.NON_GROUP_MEMBER``) and the communicator is split off in the
    background, ready at the group's first use. With ``use_local_synchronization=True`` only
    the members call it, and it blocks until they all have.

    Raises:
        ValueError: a rank outside ``[0, world_size)`` or a repeated rank (on every caller).
    """
    world = _resolve(None)
    ranks = list(range(world.size())) if ranks is None else _check_ranks(ranks, world.size())
    if sort_ranks:
        ranks = sorted(ranks)
    if not use_local_synchronization:
        return _split(world, [ranks], timeout, group_desc or "undefined") or GroupMember.NON_GROUP_MEMBER
    if world.rank() not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    comm = world.comm.Create_group(world.comm.Get_group().Incl(ranks))
    comm.Set_errhandler(_mpi().ERRORS_RETURN)
    return _register(comm, [world.ranks[r] for r in ranks], "", group_desc or "undefined",
                     _timedelta(timeout, world.timeout))


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Splits ``group`` into consecutive subgroups of ``group_size`` ranks (default: one group).

    Returns ``(the subgroup of this rank, [all subgroups])``; entries for the other subgroups
    are ``GroupMember.NON_GROUP_MEMBER`` here, since this rank holds no communicator for them.

    Raises:
        ValueError: ``group_size`` is not positive, exceeds the group, or does not divide it.
    """
    parent = _resolve(group)
    size = parent.size()
    group_size = size if group_size is None else group_size
    if group_size <= 0:
        raise ValueError("The arg 'group_size' must be positive")
    if group_size > size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({size})")
    if size % group_size:
        raise ValueError(f"The world size ({size}) must be divisible by 'group_size' ({group_size})")
    blocks = [list(range(start, start + group_size)) for start in range(0, size, group_size)]
    mine = _split(parent, blocks, timeout, group_desc or "undefined")
    subgroups = [GroupMember.NON_GROUP_MEMBER] * len(blocks)
    subgroups[parent.rank() // group_size] = mine
    return mine, subgroups


def split_group(parent_pg=None, split_ranks=None, timeout=None, pg_options=None, group_desc=None,
                backend=None):
    """Splits ``parent_pg`` into the disjoint groups ``split_ranks`` (lists of parent ranks)
    with one ``Comm.Split``; returns this rank's group, or None if it is in none of them.
    Every rank of the parent calls it; it returns at once, the split runs in the background
    and the group is ready at its first use.

    Raises:
        ValueError: ``split_ranks`` is empty, overlaps, or names ranks outside the parent.
    """
    parent = _resolve(parent_pg)
    if not split_ranks:
        raise ValueError("split_ranks cannot be None or empty")
    flat = [r for part in split_ranks for r in part]
    _check_ranks(flat, parent.size())
    return _split(parent, [sorted(part) for part in split_ranks], timeout, group_desc or "undefined")
