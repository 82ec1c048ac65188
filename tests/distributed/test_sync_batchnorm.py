"""nn.SyncBatchNorm on 2 MPI ranks (scripts/sync_batchnorm.py): each rank's share of a batch
normalised with the whole batch's statistics, as one BatchNorm over the whole batch."""
from .launch import launch


def test_sync_batchnorm_on_two_ranks_is_batchnorm_on_the_whole_batch():
    out = launch("sync_batchnorm.py", 2, timeout=60).stdout
    assert sorted(line for line in out.splitlines() if line.endswith("syncbn ok")) == [
        "rank 0: syncbn ok", "rank 1: syncbn ok"]
