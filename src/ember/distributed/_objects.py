"""Collectives of picklable Python objects (``all_gather_object`` and friends).

Objects travel pickled, as in torch. A peer's bytes are decoded with ``weights_only=True``
(the default) by a restricted unpickler that only rebuilds plain data: None, bools, numbers,
strings, bytes, lists, tuples, dicts, sets, OrderedDicts, ember tensors, Parameters, dtypes,
Sizes and devices (and the NumPy arrays inside tensors). Any other global in the stream
raises ``pickle.UnpicklingError`` instead of being imported or called, so a hostile peer
cannot run code. ``weights_only=False`` unpickles anything (trusted peers only).

Source: https://pytorch.org/docs/stable/distributed.html#object-collectives
"""
import io
import pickle

import numpy as np

from .. import _dtype
from ._work import calls, run
from . import _flight_recorder
from .distributed_c10d import _resolve
from ._collectives import _root, _peer

__all__ = ["all_gather_object", "gather_object", "broadcast_object_list", "scatter_object_list",
           "send_object_list", "recv_object_list"]

_ALLOWED = {
    ("builtins", name) for name in
    ("list", "tuple", "dict", "set", "frozenset", "int", "float", "complex", "bool", "str",
     "bytes", "bytearray", "slice", "range")
} | {
    ("collections", "OrderedDict"), ("ember._tensor", "_rebuild"), ("ember._tensor", "Tensor"),
    ("ember.nn.parameter", "Parameter"), ("ember.nn.parameter", "Buffer"), ("ember._size", "Size"),
    ("ember._device", "device"), ("numpy", "dtype"), ("numpy", "ndarray"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
}
_DTYPE_MODULE = "ember._dtype"


class _WeightsOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED or (module == _DTYPE_MODULE and name in _dtype._FROM_NAME):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"weights_only: refusing to load global {module}.{name} sent by a peer; only plain "
            f"data and tensors are allowed (pass weights_only=False for trusted peers)")


def _encode(obj):
    return np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)


def _decode(buffer, weights_only):
    data = bytes(buffer)
    if not weights_only:
        return pickle.loads(data)
    return _WeightsOnlyUnpickler(io.BytesIO(data)).load()


def _gathered(pg, name, payload, root=None):
    """Every rank's ``payload`` bytes (to ``root`` only, when given): a list or None."""
    pg.settle()
    entry = _flight_recorder.record(pg, name, [], [])
    sizes = np.empty(pg.size(), dtype=np.int64)
    mine = np.array([payload.size], dtype=np.int64)
    if root is None:
        run(pg, calls([pg.comm.Iallgather(mine, sizes)]), entry=entry)
    else:
        run(pg, calls([pg.comm.Igather(mine, sizes, root=root)]), entry=entry)
    receives = root is None or pg.rank() == root
    flat = np.empty(int(sizes.sum()) if receives else 0, dtype=np.uint8)
    spec = [flat, (list(sizes), None)] if receives else None
    if root is None:
        run(pg, calls([pg.comm.Iallgatherv(payload, spec)]), entry=entry)
    else:
        run(pg, calls([pg.comm.Igatherv(payload, spec, root=root)]), entry=entry)
    return np.split(flat, np.cumsum(sizes)[:-1]) if receives else None


def all_gather_object(object_list, obj, group=None, *, weights_only=True):
    """Fills ``object_list`` (one slot per rank) with every rank's ``obj``.

    Raises:
        pickle.UnpicklingError: with ``weights_only``, a peer sent something other than
            plain data and tensors.
    """
    pg = _resolve(group)
    if len(object_list) != pg.size():
        raise ValueError(f"object_list must have world_size ({pg.size()}) slots, got {len(object_list)}")
    for i, chunk in enumerate(_gathered(pg, "all_gather_object", _encode(obj))):
        object_list[i] = _decode(chunk, weights_only)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None, *,
                  weights_only=True):
    """Rank ``dst`` receives every rank's ``obj`` into ``object_gather_list``."""
    pg = _resolve(group)
    root = _root(pg, dst, group_dst, "dst")
    if pg.rank() == root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError(f"object_gather_list must have world_size ({pg.size()}) slots on the destination rank")
    chunks = _gathered(pg, "gather_object", _encode(obj), root)
    if chunks is not None:
        for i, chunk in enumerate(chunks):
            object_gather_list[i] = _decode(chunk, weights_only)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None, *,
                          weights_only=True):
    """Replaces ``object_list``'s items on every rank with rank ``src``'s."""
    pg = _resolve(group)
    root = _root(pg, src, group_src, "src")
    pg.settle()
    entry = _flight_recorder.record(pg, "broadcast_object_list", [], [])
    payload = _encode(list(object_list)) if pg.rank() == root else None
    size = np.array([payload.size if payload is not None else 0], dtype=np.int64)
    run(pg, calls([pg.comm.Ibcast(size, root=root)]), entry=entry)
    if payload is None:
        payload = np.empty(int(size[0]), dtype=np.uint8)
    run(pg, calls([pg.comm.Ibcast(payload, root=root)]), entry=entry)
    if pg.rank() != root:
        received = _decode(payload, weights_only)
        if len(received) != len(object_list):
            raise ValueError(f"broadcast_object_list: rank {src} sent {len(received)} objects, "
                             f"this rank's object_list has {len(object_list)} slots")
        object_list[:] = received


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None, *, weights_only=True):
    """``scatter_object_output_list[0]`` of rank r receives ``scatter_object_input_list[r]``
    of rank ``src``."""
    pg = _resolve(group)
    root = _root(pg, src, group_src, "src")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    received = [None]
    broadcast_object_list(received if pg.rank() != root else [list(scatter_object_input_list)],
                          group_src=root, group=group, weights_only=weights_only)
    everything = received[0] if pg.rank() != root else scatter_object_input_list
    scatter_object_output_list[0] = everything[pg.rank()]


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None, use_batch=False):
    """Sends ``object_list`` to rank ``dst`` (matched by :func:`recv_object_list`)."""
    pg = _resolve(group)
    peer = _peer(pg, dst, group_dst, "dst", "destination")
    entry = _flight_recorder.record(pg, "send_object_list", [], [], is_p2p=True)
    payload = _encode(list(object_list))
    run(pg, calls([pg.comm.Isend(np.array([payload.size], dtype=np.int64), dest=peer),
                   pg.comm.Isend(payload, dest=peer)]), entry=entry)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None,
                     use_batch=False, *, weights_only=True):
    """Receives objects from rank ``src`` into ``object_list``; returns the sender's rank."""
    pg = _resolve(group)
    peer = _peer(pg, src, group_src, "src", "source")
    entry = _flight_recorder.record(pg, "recv_object_list", [], [], is_p2p=True)
    size = np.empty(1, dtype=np.int64)
    run(pg, calls([pg.comm.Irecv(size, source=peer)]), entry=entry)
    payload = np.empty(int(size[0]), dtype=np.uint8)
    run(pg, calls([pg.comm.Irecv(payload, source=peer)]), entry=entry)
    received = _decode(payload, weights_only)
    object_list[:len(received)] = received
    return pg.ranks[peer]
