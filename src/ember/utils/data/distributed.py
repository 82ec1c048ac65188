"""DistributedSampler: each rank reads its own share of a dataset.

Source: https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
"""
import math

from ..._sampling import randperm
from ..._random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Yields the indices of rank ``rank``'s share of ``dataset``: every ``num_replicas``-th
    index of one (optionally shuffled) order that all ranks agree on.

    Args:
        dataset: a sized dataset.
        num_replicas: number of ranks (default: the default group's world size).
        rank: this rank (default: its rank in the default group).
        shuffle: shuffle with a generator seeded by ``seed + epoch`` (call :meth:`set_epoch`
            each epoch for a new order).
        seed: the shuffling seed; the same on every rank.
        drop_last: drop the tail so every rank gets ``len(dataset) // num_replicas`` indices;
            otherwise the order is padded by repeating its start, to
            ``ceil(len(dataset) / num_replicas)`` per rank.

    Raises:
        ValueError: ``rank`` is outside ``[0, num_replicas - 1]``.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self._share(len(dataset))
        self.shuffle = shuffle
        self.seed = seed

    def _share(self, length):
        """Sets ``num_samples`` (per rank) and ``total_size`` for ``length`` indices."""
        if self.drop_last and length % self.num_replicas:
            self.num_samples = math.ceil((length - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(length / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def _epoch_order(self):
        """The order of the whole dataset that every rank agrees on this epoch."""
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            return randperm(len(self.dataset), generator=g).tolist()
        return list(range(len(self.dataset)))

    def __iter__(self):
        indices = self._epoch_order()
        # course:begin 21/distributed-sampler
        # hint: make the index list exactly total_size long: without drop_last, repeat indices from the start
        # hint: (several times if needed); with drop_last, cut it; then this rank takes every num_replicas-th from rank
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])
        # course:end 21/distributed-sampler

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which seeds the next shuffle (call it before each epoch's loader)."""
        self.epoch = epoch
