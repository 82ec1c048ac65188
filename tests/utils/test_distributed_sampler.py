"""utils.data.DistributedSampler: the shares torch gives each rank, padding, drop_last, epochs."""
import pytest
from torch.utils.data import DistributedSampler as TorchSampler

from ember.utils.data import DistributedSampler


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (2, 4, False),
                                                    (12, 4, False), (0, 2, False), (7, 2, True)])
def test_unshuffled_shares_match_torch(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        mine = DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(mine) == list(theirs) and len(mine) == len(theirs)


def test_shuffled_shares_partition_one_order_per_epoch():
    data = list(range(23))
    shares = [list(DistributedSampler(data, 4, r, seed=3)) for r in range(4)]
    assert all(len(s) == 6 for s in shares)
    flat = sorted(i for s in shares for i in s)
    assert set(flat) == set(data) and len(flat) == 24  # one index repeated as padding
    again = DistributedSampler(data, 4, 1, seed=3)
    assert list(again) == shares[1]
    again.set_epoch(1)
    assert list(again) != shares[1] and sorted(again) != []


def test_invalid_rank_raises_like_torch():
    with pytest.raises(ValueError, match=r"Invalid rank 4, rank should be in the interval \[0, 3\]"):
        DistributedSampler(range(5), num_replicas=4, rank=4)
    with pytest.raises(ValueError, match="Invalid rank"):
        TorchSampler(range(5), num_replicas=4, rank=4)


def test_without_a_process_group_it_needs_rank_and_replicas():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(5))
