"""Collectives and point-to-point operations on ember tensors, as MPI nonblocking calls.

Each collective first runs a small check (:mod:`._agreement`), so a rank with bad arguments,
or ranks that disagree in operation, dtype or shape, make *every* member raise the same clear
error instead of hanging or summing garbage (what ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` does for
torch). Then the MPI nonblocking call of the data starts. The two are stages of one :class:`~ember.distributed.Work`:
with ``async_op=True`` it is returned at once and both advance whenever it is tested or
waited on; else it is waited on (against the group's timeout).

Results are written into the caller's tensors in place, as torch does; float16 is reduced
in float32, and bool reductions are logical (SUM and MAX are OR, PRODUCT and MIN are AND).

Source: https://pytorch.org/docs/stable/distributed.html#collective-functions
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import _flight_recorder
from ._agreement import checked, row_of
from ._work import calls, run
from .distributed_c10d import ReduceOp, _mpi, _resolve, _World, get_group_rank

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all",
           "all_to_all_single", "barrier", "send", "recv", "isend", "irecv", "P2POp",
           "batch_isend_irecv", "all_gather_single", "gather_single"]

def _validate(fn):
    """Runs ``fn`` (argument checks) and returns the exception it raised, or None."""
    try:
        fn()
    except (RuntimeError, ValueError, TypeError) as error:
        return error
    return None


# ---- buffers -----------------------------------------------------------------------------------

def _check_tensor(t, argname):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument: {argname} should be an ember Tensor, "
                        f"got {type(t).__name__}")


def _send_array(t):
    return np.ascontiguousarray(t._data)


class _Into:
    """A contiguous array that MPI may fill, and how to put it back into tensor ``t``."""

    def __init__(self, t, compute_dtype=None):
        self.t = t
        data = t._data
        if compute_dtype is not None and data.dtype != compute_dtype:
            self.array = data.astype(compute_dtype)
        elif data.flags.c_contiguous:
            self.array = data
        else:
            self.array = np.ascontiguousarray(data)

    def store(self, values=None):
        values = self.array if values is None else values
        if values is not self.t._data:
            np.copyto(self.t._data, values.reshape(self.t._data.shape), casting="unsafe")
        self.t._versions[0] += 1


_RedOpType = ReduceOp.RedOpType
_REDUCTIONS = {}  # (op, dtype) -> what _reduction answers: it runs on every reducing call


def _reduction(op, dtype):
    """(MPI op, compute dtype, divide by size?) for ``op`` on tensors of ``dtype``."""
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"op must be an ember.distributed.ReduceOp, got {op!r}")
    found = _REDUCTIONS.get((op, dtype))
    if found is None:
        found = _REDUCTIONS[op, dtype] = _new_reduction(op, dtype)
    return found


def _new_reduction(op, dtype):
    MPI = _mpi()
    if op == ReduceOp.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is not supported by the MPI backend")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.is_floating_point:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op == ReduceOp.AVG and not dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_flight_recorder._TORCH_DTYPE_NAMES[dtype.name]}")
    if dtype is _dtype.bool:
        logical = {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR,
                   ReduceOp.PRODUCT: MPI.LAND, ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND,
                   ReduceOp.BXOR: MPI.LXOR}
        return logical[op], None, False
    table = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
             ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
             ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}
    compute = np.float32 if dtype is _dtype.float16 else None
    return table[op], compute, op == ReduceOp.AVG


def _root(pg, rank, group_rank, argname):
    """The group rank of a root given as world ``rank`` or as ``group_rank``."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {argname} and group_{argname}")
    if group_rank is None:
        group_rank = get_group_rank(pg, 0 if rank is None else rank)
    if not 0 <= group_rank < pg.size():
        raise RuntimeError(f"invalid root rank: {group_rank} (group size {pg.size()})")
    return group_rank


# ---- collectives -------------------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` over the group with ``op``; every rank gets the result in place.

    Raises:
        RuntimeError: shapes, dtypes or ops differ across ranks (on every rank), an op that
            does not apply to the dtype (BAND on floats, AVG on integers).
    """
    if not isinstance(tensor, Tensor):
        _check_tensor(tensor, "tensor")
    # A repeated call (every training step's) finds its reduction and check row in its group's
    # cache and starts the check after as little Python as possible: on 2 loaded ranks a 1 MB
    # reduction empties the caches, so each function and object touched before the check
    # costs there (resolving the group and its size first: 2-9 us more at 1 MB, best of 400).
    pg = _World.default_pg if group is None else None
    if pg is None:
        pg = _resolve(group)
    tensors, dtype, shape = [tensor], tensor.dtype, tensor._data.shape
    key = (op, dtype, shape)
    known = pg.all_reduce_calls.get(key) if isinstance(op, _RedOpType) else None
    if known is not None:  # a valid call made before: start its check without more Python
        reduction, row = known
        return checked(pg, tensors, _all_reduce_data(pg, tensor, reduction), tensors, async_op, "all_reduce",
                       row=row)
    try:
        reduction, error = _reduction(op, dtype), None
    except (RuntimeError, ValueError, TypeError) as invalid:
        reduction, error = None, invalid
    work = checked(pg, tensors, _all_reduce_data(pg, tensor, reduction), tensors, async_op, "all_reduce",
                   dtype, shape, error=error, op=op)
    if error is None:  # (an invalid call raised above)
        if len(pg.all_reduce_calls) > 4096:
            pg.all_reduce_calls.clear()
        pg.all_reduce_calls[key] = reduction, row_of(pg.size(), "all_reduce", op, dtype, shape, -1, None)
    return work


def _all_reduce_data(pg, tensor, reduction):
    """Stages of an in-place all-reduce of ``tensor`` with ``reduction`` (see _reduction)."""
    mpi_op, compute, average = reduction
    into = _Into(tensor, compute)
    yield [pg.comm.Iallreduce(_mpi().IN_PLACE, into.array, mpi_op)]
    if average:
        into.array /= pg.size()
    into.store()


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copies ``tensor`` of rank ``src`` (a world rank; or ``group_src``) into every rank's."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    found = []
    error = _validate(lambda: found.append(_root(pg, src, group_src, "src")))
    def data():
        into = _Into(tensor)
        yield [pg.comm.Ibcast(into.array, root=found[0])]
        into.store()
    return checked(pg, [tensor], data(), [tensor], async_op, "broadcast", tensor.dtype, tensor.shape,
                    found[0] if found else -1, error)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces ``tensor`` over the group into rank ``dst``'s tensor (others are unchanged)."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    found = []
    error = _validate(lambda: found.extend([_root(pg, dst, group_dst, "dst"),
                                            _reduction(op, tensor.dtype)]))
    def data():
        root, (mpi_op, compute, average) = found
        into = _Into(tensor, compute)
        mine = pg.rank() == root
        send = _mpi().IN_PLACE if mine else into.array
        yield [pg.comm.Ireduce(send, into.array if mine else None, mpi_op, root=root)]
        if mine:
            if average:
                into.array /= pg.size()
            into.store()
    return checked(pg, [tensor], data(), [tensor], async_op, "reduce", tensor.dtype, tensor.shape,
                    found[0] if found else -1, error, op)


def _check_list(tensors, like, count, argname, shape=None):
    if not isinstance(tensors, (list, tuple)) or len(tensors) != count:
        got = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise RuntimeError(f"invalid {argname}: expected a list of {count} tensors, got {got}")
    shape = like.shape if shape is None else shape
    for i, t in enumerate(tensors):
        _check_tensor(t, argname)
        if t.shape != shape or t.dtype is not like.dtype:
            raise RuntimeError(f"invalid tensor at index {i} of {argname}: expected {like.dtype} "
                               f"{tuple(shape)}, got {t.dtype} {tuple(t.shape)}")


def _scatter_into(tensors, flat):
    """Copies consecutive equal blocks of ``flat`` into ``tensors``."""
    for t, block in zip(tensors, np.split(flat.reshape(-1), len(tensors)) if tensors else ()):
        _Into(t).store(block)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fills ``tensor_list[r]`` with rank r's ``tensor`` on every rank.

    Raises:
        RuntimeError: ``tensor_list`` is not one tensor per rank of ``tensor``'s shape and
            dtype, or ranks' tensors differ in shape or dtype (on every rank).
    """
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    error = _validate(lambda: _check_list(tensor_list, tensor, pg.size(), "tensor_list"))
    def data():
        flat = np.empty((pg.size(), *tensor.shape), dtype=tensor._data.dtype)
        yield [pg.comm.Iallgather(_send_array(tensor), flat)]
        _scatter_into(tensor_list, flat)
    return checked(pg, [tensor], data(), list(tensor_list), async_op, "all_gather", tensor.dtype,
                    tensor.shape, error=error)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gathers every rank's ``input_tensor`` into ``output_tensor``, stacked along dim 0
    (shape ``(world * n, ...)`` or ``(world, n, ...)``).

    Raises:
        RuntimeError: ``output_tensor`` has not ``world_size`` times the input's elements or
            another dtype, or the ranks' inputs differ (on every rank).
    """
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _resolve(group)

    def check():
        if (output_tensor.numel() != pg.size() * input_tensor.numel()
                or output_tensor.dtype is not input_tensor.dtype):
            raise RuntimeError(
                f"all_gather_into_tensor: output tensor must have world_size ({pg.size()}) times "
                f"the input's {input_tensor.numel()} elements and its dtype {input_tensor.dtype}, "
                f"got {output_tensor.dtype} {tuple(output_tensor.shape)}")
    error = _validate(check)
    def data():
        into = _Into(output_tensor)
        yield [pg.comm.Iallgather(_send_array(input_tensor), into.array)]
        into.store()
    return checked(pg, [input_tensor], data(), [output_tensor], async_op, "all_gather_into_tensor",
                    input_tensor.dtype, input_tensor.shape, error=error)


all_gather_single = all_gather_into_tensor


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank ``dst`` receives every rank's ``tensor`` into ``gather_list`` (None elsewhere)."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    found = []

    def check():
        found.append(_root(pg, dst, group_dst, "dst"))
        if pg.rank() == found[0]:
            if gather_list is None:
                raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
            _check_list(gather_list, tensor, pg.size(), "gather_list")
        elif gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    error = _validate(check)
    def data():
        mine = pg.rank() == found[0]
        flat = np.empty((pg.size(), *tensor.shape), dtype=tensor._data.dtype) if mine else None
        yield [pg.comm.Igather(_send_array(tensor), flat, root=found[0])]
        if mine:
            _scatter_into(gather_list, flat)
    return checked(pg, [tensor], data(), list(gather_list or []), async_op, "gather", tensor.dtype,
                    tensor.shape, found[0] if found else -1, error)


def gather_single(output_tensor, input_tensor, dst=None, group=None, async_op=False, group_dst=None):
    """``gather`` into one tensor on rank ``dst``: ``output_tensor`` holds ``world`` times the
    input's elements there (None elsewhere), stacked along dim 0."""
    _check_tensor(input_tensor, "input_tensor")
    pg = _resolve(group)
    found = []

    def check():
        found.append(_root(pg, dst, group_dst, "dst"))
        if pg.rank() == found[0] and (output_tensor is None or output_tensor.dtype is not input_tensor.dtype
                                      or output_tensor.numel() != pg.size() * input_tensor.numel()):
            raise RuntimeError(f"gather_single: output_tensor must have world_size ({pg.size()}) times "
                               f"the input's {input_tensor.numel()} elements and dtype {input_tensor.dtype}")
    error = _validate(check)
    mine = bool(found) and pg.rank() == found[0]

    def data():
        into = _Into(output_tensor) if mine else None
        yield [pg.comm.Igather(_send_array(input_tensor), into.array if into else None, root=found[0])]
        if into:
            into.store()
    return checked(pg, [input_tensor], data(), [output_tensor] if mine else [], async_op, "gather",
                    input_tensor.dtype, input_tensor.shape, found[0] if found else -1, error)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's ``tensor`` receives ``scatter_list[r]`` of rank ``src``."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    found = []

    def check():
        found.append(_root(pg, src, group_src, "src"))
        if pg.rank() == found[0]:
            if scatter_list is None:
                raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
            _check_list(scatter_list, tensor, pg.size(), "scatter_list")
        elif scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    error = _validate(check)
    def data():
        mine = pg.rank() == found[0]
        flat = np.stack([_send_array(t) for t in scatter_list]) if mine else None
        into = _Into(tensor)
        yield [pg.comm.Iscatter(flat, into.array, root=found[0])]
        into.store()
    return checked(pg, list(scatter_list or []), data(), [tensor], async_op, "scatter", tensor.dtype,
                   tensor.shape, found[0] if found else -1, error)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input_list[r]`` over the group into rank r's ``output``."""
    _check_tensor(output, "output")
    pg = _resolve(group)
    found = []
    error = _validate(lambda: (_check_list(input_list, output, pg.size(), "input_list"),
                               found.append(_reduction(op, output.dtype))))
    data = _reduce_scatter_data(pg, output, lambda: np.stack([_send_array(t) for t in input_list]), found)
    return checked(pg, list(input_list), data, [output], async_op, "reduce_scatter", output.dtype,
                   output.shape, error=error, op=op)


def _reduce_scatter_data(pg, output, flat, found):
    """Stages of a reduce-scatter of ``flat()`` into ``output`` with ``found[0]``, the
    reduction."""
    mpi_op, compute, average = found[0]
    flat = flat()
    if compute is not None:
        flat = flat.astype(compute)
    into = _Into(output, compute)
    yield [pg.comm.Ireduce_scatter_block(flat, into.array, mpi_op)]
    if average:
        into.array /= pg.size()
    into.store()


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input`` (``world`` blocks along dim 0) over the group; rank r's ``output``
    gets block r."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _resolve(group)
    found = []

    def check():
        if input.numel() != pg.size() * output.numel() or input.dtype is not output.dtype:
            raise RuntimeError(
                f"reduce_scatter_tensor: input must have world_size ({pg.size()}) times the "
                f"output's {output.numel()} elements and its dtype {output.dtype}, got "
                f"{input.dtype} {tuple(input.shape)}")
        found.append(_reduction(op, output.dtype))
    error = _validate(check)
    data = _reduce_scatter_data(pg, output, lambda: _send_array(input), found)
    return checked(pg, [input], data, [output], async_op, "reduce_scatter_tensor", input.dtype,
                    input.shape, error=error, op=op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank r's ``output_tensor_list[s]`` receives rank s's ``input_tensor_list[r]``
    (tensors may differ in size between pairs of ranks)."""
    pg = _resolve(group)

    def check():
        for argname, tensors in (("output_tensor_list", output_tensor_list),
                                 ("input_tensor_list", input_tensor_list)):
            if len(tensors) != pg.size():
                raise RuntimeError(f"invalid {argname}: expected {pg.size()} tensors, got {len(tensors)}")
            for t in tensors:
                _check_tensor(t, argname)
        if len({t.dtype for t in (*output_tensor_list, *input_tensor_list)}) > 1:
            raise RuntimeError("all_to_all: every input and output tensor must have one dtype")
    error = _validate(check)
    dtype = input_tensor_list[0].dtype if error is None else None
    def data():
        intos = [_Into(t) for t in output_tensor_list]
        yield from _alltoallv(pg, [_send_array(t).reshape(-1) for t in input_tensor_list],
                              [i.array.reshape(-1) for i in intos])
        for into in intos:
            into.store()
    return checked(pg, list(input_tensor_list), data(), list(output_tensor_list), async_op, "all_to_all",
                   dtype, error=error)


def _alltoallv(pg, send_blocks, recv_blocks):
    """Stages of an ``Ialltoallv`` from ``send_blocks[r]`` to rank r, filling ``recv_blocks``."""
    counts = [b.size for b in send_blocks]
    recv_counts = [b.size for b in recv_blocks]
    sendbuf = np.concatenate(send_blocks) if send_blocks else np.empty(0)
    recvbuf = np.empty(sum(recv_counts), dtype=sendbuf.dtype)
    yield [pg.comm.Ialltoallv([sendbuf, (counts, None)], [recvbuf, (recv_counts, None)])]
    for block, part in zip(recv_blocks, np.split(recvbuf, np.cumsum(recv_counts)[:-1])):
        block[...] = part


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """``all_to_all`` on single tensors split along dim 0 (equally, or by the split sizes)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _resolve(group)
    size = pg.size()

    def splits(t, given, argname):
        rows = t.shape[0] if t.dim() else 1
        if given is None or len(given) == 0:
            if rows % size:
                raise RuntimeError(f"all_to_all_single: {argname[:-12]} dim 0 ({rows}) is not divisible "
                                   f"by the group size ({size})")
            return [rows // size] * size
        if len(given) != size or sum(given) != rows:
            raise RuntimeError(f"all_to_all_single: {argname} {list(given)} must have {size} entries "
                               f"summing to dim 0 ({rows})")
        return list(given)
    found = []

    def check():
        if output.dtype is not input.dtype:
            raise RuntimeError(f"all_to_all_single: output dtype {output.dtype} differs from input dtype {input.dtype}")
        found.append(splits(input, input_split_sizes, "input_split_sizes"))
        found.append(splits(output, output_split_sizes, "output_split_sizes"))
    error = _validate(check)
    def data():
        row_in = input.numel() // max(input.shape[0], 1) if input.dim() else 1
        row_out = output.numel() // max(output.shape[0], 1) if output.dim() else 1
        into = _Into(output)
        send = np.split(_send_array(input).reshape(-1), np.cumsum([n * row_in for n in found[0]])[:-1])
        recv = np.split(into.array.reshape(-1), np.cumsum([n * row_out for n in found[1]])[:-1])
        yield from _alltoallv(pg, send, recv)
        into.store()
    return checked(pg, [input], data(), [output], async_op, "all_to_all_single", input.dtype,
                    error=error)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Returns when every member has entered (``Ibarrier``; the group's timeout applies)."""
    pg = _resolve(group)
    def data():
        yield [pg.comm.Ibarrier()]
    work = checked(pg, [], data(), [], True, "barrier")
    if async_op:
        return work
    work.wait(timeout)


# ---- point to point ----------------------------------------------------------------------------

def _peer(pg, rank, group_rank, argname, name):
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {argname} and group_{argname}")
    if rank is None and group_rank is None:
        raise ValueError(f"Must specify {argname} or group_{argname}")
    peer = get_group_rank(pg, rank) if group_rank is None else group_rank
    if not 0 <= peer < pg.size():
        raise ValueError(f"Invalid {name} rank {peer}: the group has {pg.size()} ranks")
    if peer == pg.rank():
        raise ValueError(f"Invalid {name} rank: {name} rank should not be the same as the rank "
                         f"of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Starts sending ``tensor`` to rank ``dst``; returns a Work."""
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    peer = _peer(pg, dst, group_dst, "dst", "destination")
    entry = _flight_recorder.record(pg, "send", [tensor], [tensor], is_p2p=True)
    return run(pg, calls([pg.comm.Isend(_send_array(tensor), dest=peer, tag=tag)]), [], entry, True)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Starts receiving into ``tensor`` from rank ``src``; returns a Work.

    Raises (at wait): DistBackendError when the message is larger than ``tensor``.
    """
    _check_tensor(tensor, "tensor")
    pg = _resolve(group)
    peer = _peer(pg, src, group_src, "src", "source")
    entry = _flight_recorder.record(pg, "recv", [tensor], [tensor], is_p2p=True)
    into = _Into(tensor)
    return run(pg, calls([pg.comm.Irecv(into.array, source=peer, tag=tag)], into.store), [tensor], entry,
               True)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends ``tensor`` to rank ``dst`` and waits until the buffer may be reused."""
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into ``tensor`` from rank ``src``; returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    pg = _resolve(group)
    return pg.ranks[_peer(pg, src, group_src, "src", "source")]


class P2POp:
    """One point-to-point operation for :func:`batch_isend_irecv`: ``op`` is
    :func:`isend` or :func:`irecv`."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``ember.distributed.isend`` "
                             "or ``ember.distributed.irecv``.")
        _check_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = \
            op, tensor, peer, group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Starts every operation of ``p2p_op_list``; returns their Works."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``ember.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]
