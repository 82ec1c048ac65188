"""RMA windows: put, get, signal/wait_signal, a shared-memory zero-copy map, bad offsets."""
import runpy
from pathlib import Path

import pytest

import ember as torch
import ember.distributed as dist

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
assert dist._supports_window()
win = dist._new_window(torch.zeros(8, dtype=torch.int32))
peer = (rank + 1) % world
win.put(torch.full((3,), rank + 10, dtype=torch.int32), peer, target_offset=2)
win.signal(peer)
win.wait_signal((rank - 1) % world)
assert win.tensor.tolist() == [0, 0] + [(rank - 1) % world + 10] * 3 + [0, 0, 0]
got = win.get(torch.zeros(2, dtype=torch.int32), peer, target_offset=1)
assert got.tolist() == [0, rank + 10]
with pytest.raises(ValueError, match="overrun the window"):
    win.put(torch.ones(4, dtype=torch.int32), peer, target_offset=6)
with pytest.raises(TypeError, match="dtype"):
    win.put(torch.ones(1), peer)
with pytest.raises(TimeoutError, match=f"no signal from rank {peer}"):
    win.wait_signal(peer, timeout=0.2)
dist.barrier()
win.free()
shared = dist._new_window(torch.full((4,), float(rank)), shared=True)
dist.barrier()
remote = shared.map_remote_tensor(peer)
assert remote.tolist() == [float(peer)] * 4
dist.barrier()
shared.tensor.numpy()[0] = 100.0 + rank  # the peer sees it without any copy
dist.barrier()
assert shared.map_remote_tensor(peer).tolist()[0] == 100.0 + peer and remote.tolist()[0] == 100.0 + peer
dist.barrier()
shared.free()
dist.destroy_process_group()
print(f"rank {rank}: windows ok")
runpy.run_path(str(Path(__file__).parents[3] / "examples" / "halo_exchange.py"), run_name="__main__")
