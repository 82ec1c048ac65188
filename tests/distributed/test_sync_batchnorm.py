"""nn.SyncBatchNorm on 2 MPI ranks (scripts/sync_batchnorm.py): each rank's share of a batch
normalised with the whole batch's statistics, as one BatchNorm over the whole batch."""
from .launch import two_rank_checks


def test_sync_batchnorm_on_two_ranks_is_batchnorm_on_the_whole_batch():
    out = two_rank_checks()  # one launch with test_windows.py's and test_collectives.py's DDP parity
    assert sorted(line for line in out.splitlines() if line.endswith("syncbn ok")) == [
        "rank 0: syncbn ok", "rank 1: syncbn ok"]
