"""The DataLoader worker process: its loop, :func:`get_worker_info`, and the wrapper that carries
an exception (with its traceback text) back to the main process.

Protocol: a task queue and a result pipe per worker. The main process sends
``(task_id, index)`` to fetch a
batch, a :class:`ResumeIteration` to start a new epoch (persistent workers), or ``None`` to
stop. The worker answers each task, in the order received, with ``(task_id, batch)``,
``(task_id, ExceptionWrapper)`` or, for an exhausted IterableDataset,
``(task_id, IterableDatasetStopIteration)`` after which it ignores tasks until resumed; it
acknowledges a resume with ``(ResumeIteration, None)``. Batches travel pickled: the peer is
this program's own child, not untrusted input.
"""
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ... import _random
from ._fetch import create_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]

# How often (seconds) an idle worker checks that the main process is still alive.
_PARENT_CHECK_INTERVAL = 1.0

_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """What a worker knows about itself (``torch.utils.data.WorkerInfo``); attributes cannot be
    reassigned (``dataclasses.FrozenInstanceError``).

    Attributes:
        id (int): this worker's id, 0 to ``num_workers - 1``.
        num_workers (int): how many workers the DataLoader started.
        seed (int): the seed this worker's random streams were seeded with (``base_seed + id``).
        dataset: this worker's own copy of the dataset.
    """
    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """The :class:`WorkerInfo` of the current DataLoader worker process, or None in the main
    process. An IterableDataset's ``__iter__`` uses it to read only its worker's shard.

    Source: https://pytorch.org/docs/stable/data.html#torch.utils.data.get_worker_info
    """
    return _worker_info


class KeyErrorMessage(str):
    """A KeyError prints ``repr`` of its message; this keeps a multi-line traceback readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """The type and formatted traceback of the exception being handled, re-raised elsewhere by
    :meth:`reraise` as ``exc_type("Caught <Type> <where>.\\nOriginal Traceback ...")``."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_type_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def __getstate__(self):
        state = dict(self.__dict__)
        try:
            pickle.dumps(self.exc_type)
        except Exception:
            # A class the main process cannot import by name (defined in a function, say)
            # is raised there as a RuntimeError, its name and traceback text kept.
            state["exc_type"] = RuntimeError
        return state

    def reraise(self):
        message = f"Caught {self.exc_type_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            message = KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except Exception:
            raise RuntimeError(message) from None
        raise exception


class ResumeIteration:
    """Tells a persistent worker a new epoch begins: reset the dataset iterator."""


@dataclass
class IterableDatasetStopIteration:
    """A worker's IterableDataset copy is exhausted for this epoch."""
    worker_id: int


def _send(conn, message, where):
    """Sends ``message``; if it cannot be pickled, sends that error in its place so the main
    process never waits for an answer that will not come."""
    try:
        payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        payload = pickle.dumps((message[0], ExceptionWrapper(where=where)), protocol=pickle.HIGHEST_PROTOCOL)
    conn.send_bytes(payload)


def _seed_worker(seed, worker_id, base_seed):
    random.seed(seed)
    _random.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))


def worker_loop(iterable, dataset, index_queue, result_conn, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers):
    """Runs in the worker process until told to stop or until the main process is gone.
    Exceptions from ``init_fn`` or fetching are answered, never raised."""
    global _worker_info
    where = f"in DataLoader worker process {worker_id}"
    # Our parent is the main process (or, with 'forkserver', the server); if it dies we are
    # adopted by another process and our parent id changes.
    parent_pid = os.getppid()
    try:
        seed = base_seed + worker_id
        _seed_worker(seed, worker_id, base_seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_error = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)
        ended = False
        while True:
            try:
                message = index_queue.get(timeout=_PARENT_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    return
                continue
            if message is None:
                return
            if isinstance(message, ResumeIteration):
                ended = False
                if init_error is None:
                    try:
                        fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                    except Exception:
                        init_error = ExceptionWrapper(where=where)
                _send(result_conn, (ResumeIteration, None), where)
                continue
            if ended:
                continue
            task_id, index = message
            if init_error is not None:
                data = init_error
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = IterableDatasetStopIteration(worker_id)
                        ended = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            _send(result_conn, (task_id, data), where)
    except (KeyboardInterrupt, BrokenPipeError):
        # The main process is handling the interrupt, or has already gone away.
        pass
    finally:
        result_conn.close()
