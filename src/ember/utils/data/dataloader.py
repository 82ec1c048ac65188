"""DataLoader: batches from a dataset, in the main process or in worker processes
(``torch.utils.data.DataLoader``, https://pytorch.org/docs/stable/data.html).

An iterator over a loader takes index lists from the batch sampler (or placeholder indices for
an IterableDataset), fetches and collates each batch (``_fetch``), and yields it. With
``num_workers > 0`` the fetching runs in worker processes (``_worker``): each worker has its own
task queue and result pipe, tasks go to workers round-robin, at most ``prefetch_factor`` ahead per
worker, and the main process reads the result of task ``k`` from the worker that owns it, so
batches arrive in sampler order. While waiting it also watches every worker's process sentinel,
so a worker that dies is reported at once rather than waited on.

Tasks travel through a ``multiprocessing.Queue`` because its put never blocks (a feeder thread
writes the pipe): a blocking send could wait on a worker that is itself blocked writing a
large batch the main process has not read yet. Results travel through a pipe per worker, read
only when the main process needs that worker's next batch.
"""
import collections
import math
import multiprocessing
import multiprocessing.connection
import os
import pickle
import time
import warnings
import weakref
from typing import Generic, TypeVar

from ... import _distributions
from . import _worker
from ._collate import default_collate, default_convert
from ._fetch import create_fetcher
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info

T_co = TypeVar("T_co", covariant=True)

# Seconds to wait for a worker to exit after being told to, before terminating it.
_SHUTDOWN_TIMEOUT = 5.0


class _InfiniteConstantSampler(Sampler):
    """Placeholder indices for an IterableDataset: the dataset decides what comes next."""

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterates over ``dataset`` in batches.

    Args:
        dataset (Dataset or IterableDataset): where samples come from.
        batch_size (int or None): samples per batch (default 1); None turns automatic batching
            off, so each sample is yielded after ``default_convert``.
        shuffle (bool): reshuffle the indices every epoch (a :class:`RandomSampler` drawing
            from ``generator``, or from ember's default generator, so ``ember.manual_seed``
            makes the order reproducible).
        sampler (Sampler or iterable): the index order; excludes ``shuffle``.
        batch_sampler (Sampler or iterable of lists): whole batches of indices; excludes
            ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers (int): worker processes fetching batches (0: fetch in this process).
            Workers start with the 'fork' method where the platform has it (so datasets need
            not be picklable), otherwise the platform default.
        collate_fn (callable): list of samples -> batch; default :func:`default_collate`.
        pin_memory (bool): accepted; ember has no accelerator to pin for, so it warns and has
            no effect (as PyTorch does without an accelerator).
        drop_last (bool): drop the last batch when it has fewer than ``batch_size`` samples.
        timeout (float): seconds to wait for a worker's batch before RuntimeError (0: no limit).
        worker_init_fn (callable): called as ``worker_init_fn(worker_id)`` in each worker after
            seeding and before fetching.
        multiprocessing_context (str or context): start method for the workers.
        generator (Generator): the random stream for shuffling and for the workers' base seed.
        prefetch_factor (int): tasks queued ahead per worker (default 2 with workers).
        persistent_workers (bool): keep the workers alive between epochs.
        in_order (bool): accepted; batches are always delivered in sampler order.

    Worker ``i`` seeds ``random``, ember's default generator and NumPy's global generator from
    ``base_seed + i`` (a fresh ``base_seed`` per iterator, drawn from ``generator``). An
    exception in a worker is raised in the main process with the same type and a message
    naming the worker and quoting its traceback; a worker that dies raises
    RuntimeError("DataLoader worker (pid(s) ...) exited unexpectedly").

    Iterating yields one batch per step: with the default ``collate_fn``, the samples'
    tensors stacked along a new first dimension (``(B, *sample_shape)`` for ``B = batch_size``
    samples, the last batch smaller unless ``drop_last``), numbers made into 1-D tensors
    (``int`` → int64, ``float`` → float64), and tuples, lists and dicts collated field by
    field. ``len(loader)`` is the number of batches, ``ceil(len(dataset) / batch_size)`` (floor
    with ``drop_last``).

    Raises:
        ValueError: contradictory options, with PyTorch's messages (``sampler`` with
            ``shuffle``; ``batch_sampler`` with ``batch_size``, ``shuffle``, ``sampler`` or
            ``drop_last``; ``shuffle``/``sampler``/``batch_sampler`` with an IterableDataset;
            negative ``num_workers``, ``timeout`` or ``prefetch_factor``; ``prefetch_factor``
            or ``persistent_workers`` without workers).
        RuntimeError: a worker exits unexpectedly, or takes longer than ``timeout``.

    Source: https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader

    Example::

        >>> import ember
        >>> from ember.utils.data import DataLoader, TensorDataset
        >>> dataset = TensorDataset(ember.arange(10.0).reshape(5, 2), ember.arange(5))
        >>> loader = DataLoader(dataset, batch_size=2)
        >>> len(loader)
        3
        >>> for x, y in loader:
        ...     print(tuple(x.shape), y.tolist())
        (2, 2) [0, 1]
        (2, 2) [2, 3]
        (1, 2) [4]
        >>> shuffled = DataLoader(dataset, batch_size=2, shuffle=True,
        ...                       generator=ember.Generator().manual_seed(0))
        >>> sorted(i for _, y in shuffled for i in y.tolist())   # each sample once per epoch
        [0, 1, 2, 3, 4]
        >>> DataLoader(dataset, sampler=range(5), shuffle=True)
        Traceback (most recent call last):
            ...
        ValueError: sampler option is mutually exclusive with shuffle
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let "
                             "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._iterable = True
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler "
                                 f"option, but got batch_sampler={batch_sampler}")
        else:
            self._iterable = False
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive "
                             "with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        self._check_worker_number_rationality()

    def __setattr__(self, attr, value):
        if getattr(self, "_initialized", False) and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method "
                                     f"in {methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a "
                                f"string specifying the start method, but got multiprocessing_context={context}")
        self._multiprocessing_context = context

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        """A fresh iterator per epoch; with persistent workers, the same one, reset."""
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = _MultiProcessingDataLoaderIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __len__(self):
        """Batches per epoch: ``len(batch_sampler)``; for an IterableDataset,
        ``len(dataset)`` divided by ``batch_size`` (rounded up unless ``drop_last``)."""
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def _check_worker_number_rationality(self):
        if self.num_workers == 0:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cpus is not None and self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. Our "
                          f"suggested max number of worker in current system is {cpus}, which is smaller "
                          "than what this DataLoader is going to create. Please be aware that excessive "
                          "worker creation might get DataLoader running slow or even freeze, lower the "
                          "worker number to avoid potential slowness/freeze if necessary.", stacklevel=3)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device "
                          "pinned memory won't be used.", stacklevel=3)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _distributions.random_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            message = (f"Length of IterableDataset {self._dataset} was reported to be "
                       f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                       f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                message += ("For multiprocessing data-loading, this could be caused by not properly "
                            "configuring the IterableDataset replica at each worker. Please see "
                            "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset "
                            "for examples.")
            warnings.warn(message, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("timeout only applies to multi-process loading (num_workers > 0)")
        self._fetcher = create_fetcher(self._iterable, self._dataset, self._auto_collation,
                                       self._collate_fn, self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(next(self._sampler_iter))


def _context(loader):
    if loader.multiprocessing_context is not None:
        return loader.multiprocessing_context
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class _WorkerPool:
    """The worker processes of one iterator and their task queues and result pipes.

    It holds no reference to the iterator, so ``weakref.finalize(iterator, pool.shutdown)``
    keeps the pool's processes, queues and pipes alive until the iterator is gone and shuts
    them down then (or at interpreter exit), even when the iterator dies as cyclic garbage and
    its other referents are finalized in arbitrary order.
    """

    def __init__(self, ctx, num_workers, worker_args):
        self.owner_pid = os.getpid()
        self.closed = False
        self.workers, self.index_queues, self.result_conns = [], [], []
        try:
            for worker_id in range(num_workers):
                index_queue = ctx.Queue()
                result_recv, result_send = ctx.Pipe(duplex=False)
                worker = ctx.Process(target=_worker.worker_loop, daemon=True,
                                     args=worker_args(worker_id, index_queue, result_send))
                self.index_queues.append(index_queue)
                self.result_conns.append(result_recv)
                worker.start()
                self.workers.append(worker)
                # Only the worker writes results; without our copy of its end, a worker that
                # ends mid-message shows as EOF here instead of a read that never completes.
                result_send.close()
        except BaseException:
            self.shutdown(wait=False)
            raise

    def put(self, w, message):
        self.index_queues[w].put(message)

    def receive(self, w, timeout):
        """The next message from worker ``w``. Raises RuntimeError (after shutting the pool
        down) if any worker has died, or if ``timeout`` seconds (> 0) pass first."""
        conn = self.result_conns[w]
        deadline = time.monotonic() + timeout if timeout > 0 else None
        sentinels = [worker.sentinel for worker in self.workers]
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = multiprocessing.connection.wait([conn, *sentinels], wait)
            if conn in ready:
                try:
                    return pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    # The pipe closes only when the worker ends; let it finish exiting.
                    self.workers[w].join(_SHUTDOWN_TIMEOUT)
                    self._raise_dead([self.workers[w]])
            if not ready:
                self.shutdown(wait=False)
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")
            self._raise_dead([worker for worker in self.workers if worker.exitcode is not None])

    def _raise_dead(self, dead):
        if dead:
            pids = ", ".join(str(worker.pid) for worker in dead)
            self.shutdown(wait=False)
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")

    def shutdown(self, wait=True):
        """Tells every worker to stop, waits for each (reading and dropping what it still sends
        so none blocks on a full pipe), and terminates any that do not stop in time; with
        ``wait=False`` (the loader has failed) terminates them at once. Only the process that
        started the workers shuts them down (a forked child holds a copy of this object)."""
        if self.closed or os.getpid() != self.owner_pid:
            return
        self.closed = True
        for index_queue in self.index_queues:
            index_queue.put(None)
        deadline = time.monotonic() + (_SHUTDOWN_TIMEOUT if wait else 0.0)
        for worker, conn in zip(self.workers, self.result_conns):
            while worker.exitcode is None and time.monotonic() < deadline:
                ready = multiprocessing.connection.wait([conn, worker.sentinel],
                                                        max(0.0, deadline - time.monotonic()))
                if conn in ready:
                    try:
                        conn.recv_bytes()
                    except (EOFError, OSError):
                        worker.join(max(0.0, deadline - time.monotonic()))
            if worker.exitcode is None:
                worker.terminate()
                worker.join()
        for index_queue in self.index_queues:
            # The workers are gone: drop unsent tasks rather than wait to flush them at exit.
            index_queue.cancel_join_thread()
            index_queue.close()
        for conn in self.result_conns:
            conn.close()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        worker_init_fn = loader.worker_init_fn

        def worker_args(worker_id, index_queue, result_conn):
            return (self._iterable, self._dataset, index_queue, result_conn, self._auto_collation,
                    self._collate_fn, self._drop_last, self._base_seed, worker_init_fn, worker_id,
                    self._num_workers)
        self._pool = _WorkerPool(_context(loader), self._num_workers, worker_args)
        self._finalizer = weakref.finalize(self, self._pool.shutdown)
        self._reset(loader, first_iter=True)

    @property
    def _shutdown(self):
        return self._pool.closed

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._next_task = 0
        self._pending = collections.deque()  # (task_id, worker_id) in the order sent and delivered
        self._outstanding = [0] * self._num_workers
        self._active = [True] * self._num_workers
        self._worker_cycle = 0
        if not first_iter:
            # Results of the previous epoch still in flight are read and dropped until each
            # worker acknowledges the new epoch.
            for w in range(self._num_workers):
                self._pool.put(w, _worker.ResumeIteration())
            for w in range(self._num_workers):
                while self._pool.receive(w, self._timeout)[0] is not _worker.ResumeIteration:
                    pass
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        for _ in range(self._num_workers):
            w = self._worker_cycle
            self._worker_cycle = (w + 1) % self._num_workers
            if self._active[w] and self._outstanding[w] < self._prefetch_factor:
                break
        else:
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        self._pool.put(w, (self._next_task, index))
        self._pending.append((self._next_task, w))
        self._outstanding[w] += 1
        self._next_task += 1

    def _next_data(self):
        while True:
            if self._pool.closed:
                raise StopIteration
            # Tasks owned by workers whose IterableDataset ran out get no answer: skip them.
            while self._pending and not self._active[self._pending[0][1]]:
                self._outstanding[self._pending.popleft()[1]] -= 1
            if not self._pending:
                if not self._persistent_workers:
                    self._pool.shutdown()
                raise StopIteration
            task_id, w = self._pending.popleft()
            received_id, data = self._pool.receive(w, self._timeout)
            self._outstanding[w] -= 1
            if received_id != task_id:
                raise RuntimeError(f"DataLoader worker {w} answered task {received_id} while task "
                                   f"{task_id} was expected")
            if isinstance(data, _worker.IterableDatasetStopIteration):
                self._active[w] = False
                self._try_put_index()
                continue
            self._try_put_index()
            if isinstance(data, _worker.ExceptionWrapper):
                data.reraise()
            return data
