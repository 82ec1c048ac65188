"""ElasticSampler: after a shrink, the survivors' shares cover exactly the rest of the epoch."""
import pytest

from ember.distributed import elastic
from ember.utils.data import DistributedSampler


class _Group:
    def __init__(self, size, rank):
        self._size, self._rank = size, rank

    def size(self):
        return self._size

    def rank(self):
        return self._rank


def _as(monkeypatch, size, rank):
    """Makes the default group look like rank ``rank`` of ``size`` to the sampler."""
    monkeypatch.setattr(elastic, "_resolve", lambda group: _Group(size, rank))


@pytest.mark.parametrize("drop_last", [False, True])
def test_the_survivors_share_the_rest_of_the_epoch(monkeypatch, drop_last):
    dataset, per_rank = list(range(53)), 3
    order = DistributedSampler(dataset, num_replicas=1, rank=0, seed=3)
    order.set_epoch(2)
    order = list(order)
    samplers, first = [], []
    for r in range(4):
        _as(monkeypatch, 4, r)
        sampler = elastic.ElasticSampler(dataset, seed=3, drop_last=drop_last)
        sampler.set_epoch(2)
        first += list(sampler)[:2 * per_rank]  # two steps of 3 samples per rank
        for _ in range(2):
            sampler.advance(per_rank)
        samplers.append(sampler)
    assert sorted(first) == sorted(order[:24])
    state = samplers[0].state_dict()
    assert state == {"epoch": 2, "consumed": 24}
    rest = []
    for r in range(3):  # rank 3 died: the survivors take rank 0's position
        _as(monkeypatch, 3, r)
        samplers[r].load_state_dict(state)
        share = list(samplers[r])
        assert len(share) == len(samplers[r]) == (9 if drop_last else 10)
        rest += share
    if drop_last:
        assert sorted(rest) == sorted(order[24:24 + 27])
    else:  # 29 left: one index repeated as padding, as DistributedSampler pads
        assert sorted(set(rest)) == sorted(order[24:]) and len(rest) == 30
    samplers[2].set_epoch(3)  # a new epoch starts from its first sample, over the 3 ranks
    assert samplers[2].consumed == 0 and len(samplers[2]) == (17 if drop_last else 18)
