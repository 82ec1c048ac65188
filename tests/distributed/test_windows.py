"""RMA windows on 2 ranks, and the halo-exchange example that needs them."""
from .launch import launch


def test_put_get_signal_shared_map_and_the_halo_exchange_example():
    out = launch("windows.py", 2, timeout=60).stdout
    assert out.count("windows ok") == 2
    assert "halo exchange on 2 ranks: max difference from one process 0.00e+00" in out
