"""RMA windows on 2 ranks, and the halo-exchange example that needs them."""
from .launch import two_rank_checks


def test_put_get_signal_shared_map_and_the_halo_exchange_example():
    out = two_rank_checks()  # one launch with SyncBatchNorm's and DDP parity's checks
    assert out.count("windows ok") == 2
    assert "halo exchange on 2 ranks: max difference from one process 0.00e+00" in out
