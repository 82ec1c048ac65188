"""DistributedDataParallel: data parallelism with gradients averaged in buckets during backward.

Every rank holds a replica of the module and trains it on its own part of each batch. At
construction rank 0's parameters and buffers are broadcast, so replicas start equal. The
parameters are then packed, in reverse order of registration (roughly the order backward
produces their gradients), into buckets of at most ``bucket_cap_mb`` megabytes (with the
default cap the first bucket holds 1 MB, so communication starts early). During backward a
hook on each parameter copies its gradient, divided by the world size, into its bucket; when
the bucket's last gradient has arrived, the bucket's nonblocking ``all_reduce`` (MPI
``Iallreduce``) starts at once and runs while backward computes the remaining gradients.
The hook of the last parameter waits for every bucket and writes the averaged gradients into
``.grad``, so when ``backward()`` returns every rank holds the same averaged gradient and the
optimizer steps stay in lock step.

With equal per-rank batches of a mean loss, N ranks follow the trajectory of one process on
the concatenated batch (Goyal et al. 2017, "Accurate, Large Minibatch SGD").

Source: https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html;
Li et al. 2020, "PyTorch Distributed: Experiences on Accelerating Data Parallel Training".

The buckets are host (NumPy) buffers, as MPI sends host memory: this file is NumPy's by design,
like ``ember.distributed``.
"""
import contextlib

import numpy as np

from ... import distributed as dist
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ...distributed import _flight_recorder
from ...distributed._work import run
from ...distributed.distributed_c10d import _mpi, _resolve
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_UNFINISHED = ("Expected to have finished reduction in the prior iteration before starting a new one. "
               "This error indicates that your module has parameters that were not used in producing "
               "loss. You can enable unused parameter detection by passing the keyword argument "
               "`find_unused_parameters=True` to `ember.nn.parallel.DistributedDataParallel`. "
               "Parameters that received no gradient: {}")


class _Bucket:
    """Parameters whose gradients are reduced together, in one flat array of one dtype."""

    def __init__(self, params):
        self.params = params
        self.offsets = np.cumsum([0] + [p.numel() for p in params])
        self.flat = np.zeros(int(self.offsets[-1]), dtype=params[0]._data.dtype)

    def slot(self, i):
        p = self.params[i]
        return self.flat[self.offsets[i]:self.offsets[i + 1]].reshape(p._data.shape)


class DistributedDataParallel(Module):
    """Wraps ``module`` so that ``backward()`` averages its gradients over ``process_group``.

    Args:
        module: the module to replicate (the same architecture on every rank).
        device_ids, output_device, dim: accepted for torch's signature (CPU: unused).
        broadcast_buffers: broadcast rank 0's buffers (BatchNorm statistics) before each forward.
        process_group: the group to average over (default: the default group).
        bucket_cap_mb: bucket size in MB (default 25).
        find_unused_parameters: find, at each forward, parameters the output does not depend
            on and count them as ready (zero gradient) so the reduction completes.
        gradient_as_bucket_view: ``.grad`` of each parameter is a view into its bucket (saves
            a copy; ``zero_grad(set_to_none=True)`` still works).
        static_graph: accepted; every graph is handled the same way.

    Attributes:
        module: the wrapped module.

    Raises:
        RuntimeError: at a forward, when the previous backward left parameters without a
            gradient and ``find_unused_parameters`` is False (the reduction could not finish).
        ValueError: before ``init_process_group``.

    Example (run with ``ember run -n 2 train.py``)::

        dist.init_process_group()
        model = DistributedDataParallel(nn.Linear(10, 1))
        loss = model(x).pow(2).mean(); loss.backward()   # .grad is averaged over ranks
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        self.module = module
        self.process_group = _resolve(process_group)
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        # torch's small first bucket only applies with the default cap
        self._first_bucket_bytes = _FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        self._params = list(dict.fromkeys(p for p in module.parameters() if p.requires_grad))
        if init_sync:
            self._sync_module_states()
        self._buckets, self._where = self._make_buckets()
        self._hooks = [p.register_hook(self._hook_for(i)) for i, p in enumerate(self._params)]
        self._expected = 0   # gradients still to come in this backward (0: nothing to sync)

    # ---- construction -----------------------------------------------------------------------

    def _sync_module_states(self):
        for t in [*self._params, *self.module.buffers()]:
            dist.broadcast(t.detach(), src=self.process_group.ranks[0], group=self.process_group)

    def _make_buckets(self):
        """Buckets in reverse registration order, one dtype each; ``where[i]`` is parameter
        i's (bucket, slot)."""
        buckets, where, current, size = [], {}, [], 0
        cap = self._first_bucket_bytes

        def close():
            nonlocal current, size, cap
            if current:
                buckets.append(_Bucket([self._params[i] for i in current]))
                for slot, i in enumerate(current):
                    where[i] = (len(buckets) - 1, slot)
                current, size, cap = [], 0, self.bucket_bytes_cap
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            if current and (size + p._data.nbytes > cap or
                            self._params[current[0]]._data.dtype != p._data.dtype):
                close()
            current.append(i)
            size += p._data.nbytes
        close()
        return buckets, where

    # ---- forward ----------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        if self._expected:
            missing = [n for n, p in self.module.named_parameters() if any(
                p is self._params[i] for i in self._waiting)]
            self._expected = 0
            raise RuntimeError(_UNFINISHED.format(missing))
        syncing = self.require_backward_grad_sync and is_grad_enabled() and bool(self._params)
        if self.broadcast_buffers and syncing:
            for b in self.module.buffers():
                dist.broadcast(b.detach(), src=self.process_group.ranks[0], group=self.process_group)
        output = self.module(*inputs, **kwargs)
        if syncing:
            self._prepare_for_backward(output)
        return output

    def _prepare_for_backward(self, output):
        self._remaining = [len(b.params) for b in self._buckets]
        self._works = [None] * len(self._buckets)
        self._next = 0
        self._waiting = set(range(len(self._params)))
        self._expected = len(self._params)
        self._unused = set()
        if self.find_unused_parameters:
            used = _reachable_leaves(output)
            for i, p in enumerate(self._params):
                if id(p) not in used:
                    if p.grad is None:
                        self._unused.add(i)
                    b, slot = self._where[i]
                    self._buckets[b].slot(slot)[...] = 0 if p.grad is None else p.grad._data / self._world()
                    self._arrived(i)

    # ---- backward hooks ---------------------------------------------------------------------

    def _world(self):
        return self.process_group.size()

    def _hook_for(self, i):
        def hook(grad):
            if not self._expected or i not in self._waiting:
                return None
            try:
                return self._on_gradient(i, grad)
            except dist.DistBackendError:
                self._expected = 0  # a peer failed: this backward syncs nothing more
                raise
        return hook

    def _on_gradient(self, i, grad):
        """Copies parameter i's gradient into its bucket; the last one finishes the sync."""
        p = self._params[i]
        b, slot = self._where[i]
        local = grad._data if p.grad is None else grad._data + p.grad._data
        np.divide(local, self._world(), out=self._buckets[b].slot(slot), casting="unsafe")
        self._arrived(i)
        if self._expected:
            return None
        self._finish(skip=i)
        p.grad = None  # the engine stores the returned average as this parameter's .grad
        return Tensor._make(self._buckets[b].slot(slot).copy())

    def _arrived(self, i):
        self._waiting.discard(i)
        self._expected -= 1
        b, _ = self._where[i]
        self._remaining[b] -= 1
        while self._next < len(self._buckets) and self._remaining[self._next] == 0:
            self._start(self._next)
            self._next += 1
        for work in self._works:  # drive MPI's progress engine while backward computes
            if work is not None:
                work.is_completed()

    def _start(self, b):
        pg, flat = self.process_group, self._buckets[b].flat
        pg.settle()  # a user's async collectives started before start first, on every rank
        view = Tensor._make(flat)
        entry = _flight_recorder.record(pg, "all_reduce", [view], [view])
        self._works[b] = run(pg, _sum_in_place(pg, flat), entry=entry, async_op=True)

    def _finish(self, skip):
        """Waits for every bucket and sets each parameter's ``.grad`` to its average."""
        for work in self._works:
            work.wait()
        skipped = {id(self._params[i]) for i in self._unused | {skip}}
        for bucket in self._buckets:
            for slot, p in enumerate(bucket.params):
                if id(p) in skipped:  # unused with no .grad stay None, as in torch
                    continue
                averaged = bucket.slot(slot)
                if self.gradient_as_bucket_view:
                    p.grad = Tensor._make(averaged)
                elif p.grad is not None and p.grad._data.shape == averaged.shape:
                    p.grad._data[...] = averaged
                    p.grad._versions[0] += 1
                else:
                    p.grad = Tensor._make(averaged.copy())

    # ---- torch's API ------------------------------------------------------------------------

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside the block accumulate gradients locally without communication;
        the first backward after it averages the accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def __getstate__(self):
        raise TypeError("DistributedDataParallel cannot be pickled; save .module.state_dict() instead")


def _sum_in_place(pg, flat):
    """The stages (see ``ember.distributed.Work``) of a bucket's all-reduce. Buckets are laid
    out alike on every rank, so it needs no agreement check."""
    MPI = _mpi()
    yield [pg.comm.Iallreduce(MPI.IN_PLACE, flat, MPI.SUM)]


def _reachable_leaves(output):
    """ids of the leaf tensors whose gradient ``output`` (tensors in any nesting) needs."""
    roots = []
    stack = [output]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            if item.grad_fn is not None:
                roots.append(item.grad_fn)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    seen, leaves = set(), set()
    while roots:
        node = roots.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        roots.extend(n for n, _ in node.next_functions if n is not None)
    return leaves
