"""``ember.distributed.elastic``: a training loop that survives lost ranks without a restart.

When a rank dies or hangs, the survivors' next operation raises ``DistBackendError``
(launched with ``ember run --fault-tolerant``, Open MPI's ULFM). :func:`recover` then does
what a survivor needs to go on from memory: it shrinks the group (evicting hung ranks, see
:func:`~ember.distributed.shrink_group`), and every survivor takes the state of the new
rank 0 (model, optimizer, sampler position, step), since a collective may have completed on
some ranks and not on others. An :class:`ElasticSampler` then splits the rest of the
epoch's order over the survivors::

    sampler = elastic.ElasticSampler(dataset, seed=0)
    model, step = DDP(module), 0
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        finished = False
        while not finished:
            try:
                for x, y in DataLoader(dataset, batch_size=8, sampler=sampler):
                    train_step(model, x, y)
                    sampler.advance(len(y))
                    step += 1
                finished = True
            except dist.DistBackendError:
                step = elastic.recover(module=module, optimizer=opt, sampler=sampler, step=step)["step"]
                model = DDP(module)       # its hooks on the survivors' group

This is not torchelastic (``torch.distributed.elastic``, which restarts every worker from a
checkpoint); it is the in-place recovery of PyTorch 2.14's fault-tolerant process groups.

Source: torch.distributed.shrink_group (PyTorch 2.14); torchdata's StatefulDistributedSampler
for a sampler that resumes mid-epoch.
"""
from ..utils.data.distributed import DistributedSampler
from . import _fault
from ._objects import broadcast_object_list
from .distributed_c10d import _resolve

__all__ = ["ElasticSampler", "recover", "launch_ranks"]


class ElasticSampler(DistributedSampler):
    """A :class:`~ember.utils.data.DistributedSampler` over the default group that can resume
    mid-epoch on a different number of ranks.

    ``consumed`` counts the samples of this epoch that all ranks together have trained on;
    the loop adds each step with :meth:`advance`. Iterating yields this rank's share of the
    epoch's order after the first ``consumed`` samples, so after :func:`recover` (which loads
    rank 0's ``epoch`` and ``consumed`` and re-shards over the survivors) a new DataLoader
    over the sampler continues the epoch where the group stopped.

    Args:
        dataset, shuffle, seed, drop_last: as DistributedSampler's.
    """

    def __init__(self, dataset, shuffle=True, seed=0, drop_last=False):
        pg = _resolve(None)
        super().__init__(dataset, pg.size(), pg.rank(), shuffle, seed, drop_last)
        self.consumed = 0

    def _epoch_order(self):
        return super()._epoch_order()[self.consumed:]

    def set_epoch(self, epoch):
        """Starts epoch ``epoch`` from its first sample."""
        self.load_state_dict({"epoch": epoch, "consumed": 0})

    def advance(self, batch_size):
        """Counts one step of ``batch_size`` samples per rank as trained by every rank."""
        self.consumed += batch_size * self.num_replicas

    def state_dict(self):
        """The sampler's position, ``{"epoch": int, "consumed": int}`` (samples consumed by all
        ranks this epoch), for :meth:`load_state_dict` on the survivors after a shrink."""
        return {"epoch": self.epoch, "consumed": self.consumed}

    def load_state_dict(self, state):
        """Takes ``state``'s position and shares the rest of the epoch over the default group
        as it is now (after a shrink: the survivors)."""
        pg = _resolve(None)
        self.num_replicas, self.rank = pg.size(), pg.rank()
        self.epoch, self.consumed = int(state["epoch"]), int(state["consumed"])
        self._share(len(self.dataset) - self.consumed)


def recover(group=None, **state):
    """Shrinks ``group`` to its live members, then gives every survivor the new rank 0's state.

    Call it on every survivor after catching ``DistBackendError``. Dead ranks are dropped,
    hung ones (that do not answer within ~2 s) are asked for their flight-recorder dump and
    killed first (:func:`~ember.distributed.shrink_group`).

    Args:
        group: the group that failed (default: the default group; its replacement becomes the
            default group).
        **state: what the survivors must agree on. Objects with ``state_dict()`` and
            ``load_state_dict()`` (modules, optimizers, schedulers, :class:`ElasticSampler`)
            are loaded in place with rank 0's state; other values (a step count) are replaced.

    Returns:
        A dict of the same names: rank 0's plain values, and the objects given.

    Raises:
        RuntimeError: the MPI library lacks ULFM (launch with ``ember run --fault-tolerant``).
        DistBackendError: a hung rank cannot be evicted (no survivor on its host).
    """
    pg = _fault.shrink_group([], group=group)
    snapshot = [{name: value.state_dict() if hasattr(value, "state_dict") else value
                 for name, value in state.items()}]
    broadcast_object_list(snapshot, group=pg, group_src=0)
    agreed = {}
    for name, value in state.items():
        if hasattr(value, "load_state_dict"):
            value.load_state_dict(snapshot[0][name])
            agreed[name] = value
        else:
            agreed[name] = snapshot[0][name]
    return agreed


def launch_ranks(group=None):
    """The ranks ``group``'s members had at launch (their ``MPI.COMM_WORLD`` ranks), in group
    order: a shrink renumbers the survivors of the default group from 0; this says who they
    are (for logs and timelines)."""
    return _fault.launch_ranks(_resolve(group))
