"""``ember.distributed``: PyTorch's ``torch.distributed`` on MPI (through mpi4py).

A script written for torch.distributed runs after ``import ember as torch``: launch it with
``ember run -n 4 train.py`` (or ``mpiexec -n 4 python train.py``, or Slurm's
``srun --mpi=pmix``), call ``init_process_group()`` and use the collectives. Every process
group is an MPI communicator, every operation an MPI nonblocking call completed against the
group's timeout, and a flight recorder keeps the last operations for post-mortems
(``ember fr-trace DIR``). With MPI's ULFM extension (``ember run --fault-tolerant``) the
survivors of a dead rank shrink the group and continue.

Source: https://pytorch.org/docs/stable/distributed.html
"""
from ._collectives import (P2POp, all_gather, all_gather_into_tensor, all_gather_single, all_reduce,
                           all_to_all, all_to_all_single, barrier, batch_isend_irecv, broadcast,
                           gather, gather_single, irecv, isend, recv, reduce, reduce_scatter,
                           reduce_scatter_tensor, scatter, send)
from ._fault import _get_reconfigure_handle, _reconfigure, _supports_reconfigure, shrink_group
from ._flight_recorder import _dump_fr_trace_json
from ._monitored import monitored_barrier
from ._objects import (all_gather_object, broadcast_object_list, gather_object, recv_object_list,
                       scatter_object_list, send_object_list)
from ._window import _new_window, _supports_window
from ._work import Work
from .distributed_c10d import (Backend, DistBackendError, DistError, DistNetworkError, DistStoreError,
                               GroupMember, ProcessGroup, ReduceOp, destroy_process_group, get_backend,
                               get_default_backend_for_device, get_global_rank, get_group_rank,
                               get_process_group_ranks, get_rank, get_world_size, group, init_process_group, is_available,
                               is_initialized, is_mpi_available, new_group, new_subgroups,
                               set_timeout, split_group)

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError", "GroupMember",
    "P2POp", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_gather_single", "all_reduce", "all_to_all", "all_to_all_single",
    "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list", "destroy_process_group",
    "gather", "gather_object", "gather_single", "get_backend", "get_default_backend_for_device",
    "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
    "irecv", "is_available", "is_initialized", "is_mpi_available", "isend", "monitored_barrier",
    "new_group", "new_subgroups", "recv", "recv_object_list", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "scatter", "scatter_object_list", "send", "send_object_list",
    "set_timeout", "shrink_group", "split_group",
]
