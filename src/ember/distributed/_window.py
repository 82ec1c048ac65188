"""One-sided communication: RMA windows on MPI windows (PyTorch 2.14's ``_new_window``).

A window exposes one tensor of every member to the others. ``put``/``get`` move data into or
out of a peer's tensor without the peer taking part (passive target: ``Lock``, ``Put``/``Get``,
``Unlock``); ``signal``/``wait_signal`` are counters incremented atomically with
``Fetch_and_op`` so a peer can say "your data is there". Ranks on one node can also read each
other's tensors directly: :meth:`Window.map_remote_tensor` returns a zero-copy tensor on a
shared-memory window (``Win.Allocate_shared``).

Source: MPI 4.0 standard, chapter 12 (one-sided communications).
"""
import time

import numpy as np

from .._tensor import Tensor
from .distributed_c10d import _mpi, _resolve

__all__ = ["Window", "_new_window", "_supports_window"]


def _supports_window(group=None):
    """True if ``group``'s members can share windows (every MPI-3 library can)."""
    _resolve(group)
    return _mpi().Get_version() >= (3, 0)


class Window:
    """A window over one tensor per rank; see :func:`_new_window`.

    Attributes:
        tensor: this rank's exposed tensor: ``put`` by peers writes into it. On a shared-memory
            window it lives in the shared segment (a copy of the tensor given at creation).
    """

    def __init__(self, pg, tensor, shared):
        MPI = _mpi()
        self.pg = pg
        self.shared = shared
        data = np.ascontiguousarray(tensor._data)
        self.itemsize = data.itemsize
        self.dtype, self.shape = data.dtype, data.shape
        self.node = self.node_comm(pg) if shared else None
        if shared:
            self.win = MPI.Win.Allocate_shared(data.nbytes, data.itemsize, comm=self.node)
            buffer = np.frombuffer(self.win.Shared_query(pg.rank())[0], dtype=data.dtype, count=data.size)
            buffer[...] = data.reshape(-1)
            self.tensor = Tensor._make(buffer.reshape(data.shape))
        else:
            self.tensor = tensor if data is tensor._data else Tensor._make(data)
            self.win = MPI.Win.Create(self.tensor._data, data.itemsize, comm=pg.comm)
        self.counters = np.zeros(pg.size(), dtype=np.int64)
        self.counter_win = MPI.Win.Create(self.counters, self.counters.itemsize, comm=pg.comm)
        self.seen = np.zeros(pg.size(), dtype=np.int64)
        pg.comm.Barrier()

    @staticmethod
    def node_comm(pg):
        MPI = _mpi()
        comm = pg.comm.Split_type(MPI.COMM_TYPE_SHARED)
        if comm.Get_size() != pg.size():
            comm.Free()
            raise RuntimeError("map_remote_tensor needs every rank of the group on one node")
        return comm

    def _check(self, t, dst_rank, target_offset):
        if not 0 <= dst_rank < self.pg.size():
            raise ValueError(f"rank {dst_rank} is outside the group of size {self.pg.size()}")
        if t._data.dtype != self.dtype:
            raise TypeError(f"tensor dtype {t.dtype} differs from the window's {self.dtype}")
        total = int(np.prod(self.shape))
        if target_offset < 0 or target_offset + t.numel() > total:
            raise ValueError(f"{t.numel()} elements at offset {target_offset} overrun the window "
                             f"of {total} elements")

    def put(self, tensor, dst_rank, target_offset=0):
        """Writes ``tensor`` into rank ``dst_rank``'s window at element ``target_offset``;
        complete at return (the target sees it after its next ``wait_signal``/barrier)."""
        self._check(tensor, dst_rank, target_offset)
        self.win.Lock(dst_rank)
        self.win.Put(np.ascontiguousarray(tensor._data), dst_rank, target=target_offset)
        self.win.Unlock(dst_rank)

    def get(self, tensor, src_rank, target_offset=0):
        """Reads ``tensor.numel()`` elements of rank ``src_rank``'s window at ``target_offset``
        into ``tensor``; returns it."""
        self._check(tensor, src_rank, target_offset)
        out = np.empty(tensor._data.size, dtype=self.dtype)
        self.win.Lock(src_rank, _mpi().LOCK_SHARED)
        self.win.Get(out, src_rank, target=target_offset)
        self.win.Unlock(src_rank)
        tensor._data[...] = out.reshape(tensor._data.shape)
        tensor._versions[0] += 1
        return tensor

    def signal(self, peer):
        """Adds one to ``peer``'s counter for this rank (atomic ``Fetch_and_op``)."""
        MPI = _mpi()
        one, old = np.ones(1, dtype=np.int64), np.empty(1, dtype=np.int64)
        self.counter_win.Lock(peer)
        self.counter_win.Fetch_and_op(one, old, peer, target_disp=self.pg.rank(), op=MPI.SUM)
        self.counter_win.Unlock(peer)

    def wait_signal(self, peer, timeout=None):
        """Waits until ``peer`` has signalled this rank once more than was already waited for.

        Raises:
            TimeoutError: no signal within ``timeout`` seconds (default: the group's timeout).
        """
        MPI = _mpi()
        limit = timeout if timeout is not None else self.pg.timeout.total_seconds()
        deadline = time.monotonic() + limit
        value = np.empty(1, dtype=np.int64)
        me = self.pg.rank()
        while True:
            self.counter_win.Lock(me, MPI.LOCK_SHARED)
            self.counter_win.Get(value, me, target=peer)
            self.counter_win.Unlock(me)
            if value[0] > self.seen[peer]:
                self.seen[peer] += 1
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"no signal from rank {peer} within {limit:.1f} s")
            time.sleep(1e-4)

    def map_remote_tensor(self, rank):
        """Rank ``rank``'s window as a tensor sharing its memory (zero copy; shared windows)."""
        if not self.shared:
            raise RuntimeError("map_remote_tensor needs a window made with shared=True")
        buffer, _ = self.win.Shared_query(rank)
        data = np.frombuffer(buffer, dtype=self.dtype, count=int(np.prod(self.shape)))
        return Tensor._make(data.reshape(self.shape))

    def free(self):
        """Frees the window (collective)."""
        self.win.Free()
        self.counter_win.Free()
        if self.node is not None:
            self.node.Free()


def _new_window(tensor, group=None, shared=False):
    """Exposes ``tensor`` of every member of ``group`` in a window (collective).

    Args:
        tensor: this rank's tensor, of one dtype and shape on every rank.
        shared: allocate the window in shared memory (all ranks on one node) so that
            :meth:`Window.map_remote_tensor` works; the window then holds a copy of ``tensor``.

    Returns:
        :class:`Window`.
    """
    return Window(_resolve(group), tensor, shared)
