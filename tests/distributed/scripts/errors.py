"""Bad input: every rank raises a clear error, nobody hangs."""
import pytest

import ember as torch
import ember.distributed as dist

with pytest.raises(ValueError, match="Default process group has not been initialized"):
    dist.all_reduce(torch.ones(2))
with pytest.raises(ValueError, match="Default process group has not been initialized"):
    dist.get_rank()
with pytest.warns(UserWarning, match="serves backend 'gloo' with MPI"):
    dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == "mpi"

with pytest.raises(ValueError, match=rf"ranks \[{world}\] are outside the world of size {world}"):
    dist.new_group([0, world])
# one rank's output is the wrong size: every rank raises
out = torch.zeros(world * 3 + (1 if rank == 1 else 0))
with pytest.raises(RuntimeError, match=r"all_gather_into_tensor.*(world_size|rank\(s\) \[1\])"):
    dist.all_gather_into_tensor(out, torch.ones(3))
# valid calls first, so that the mismatches below go through all_reduce's cached fast path
for shape in (3, 4):
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX):
        t = torch.ones(shape)
        dist.all_reduce(t, op=op)
        dist.all_reduce(t, op=op)
        assert t.tolist() == [world ** 2 if op == dist.ReduceOp.SUM else 1] * shape
dist.all_reduce(torch.ones(3, dtype=torch.int64))
# shapes differ across ranks: every rank raises, naming both shapes
with pytest.raises(RuntimeError, match=r"Detected mismatch between collectives on ranks\. Rank 0 is "
                                       r"running all_reduce\(op=SUM, dtype=Float, shape=\[3\]\).*shape=\[4\]"):
    dist.all_reduce(torch.ones(3 if rank == 0 else 4))
# reductions differ (MPI leaves mixed ops undefined: each rank would reduce its own way)
t = torch.ones(3)
with pytest.raises(RuntimeError, match=r"Rank 0 is running all_reduce\(op=SUM, .*; Rank 1 is running "
                                       r"all_reduce\(op=MAX, dtype=Float, shape=\[3\]\)"):
    dist.all_reduce(t, op=dist.ReduceOp.MAX if rank == 1 else dist.ReduceOp.SUM)
assert t.tolist() == [1, 1, 1]  # untouched
with pytest.raises(RuntimeError, match=r"Rank 1 is running reduce_scatter_tensor\(op=MIN"):
    dist.reduce_scatter_tensor(torch.zeros(1), torch.ones(world),
                               op=dist.ReduceOp.MIN if rank == 1 else dist.ReduceOp.SUM)
# dtypes differ
with pytest.raises(RuntimeError, match="dtype=Long"):
    dist.all_reduce(torch.ones(3, dtype=torch.int64 if rank == 1 else torch.float32))
# different collectives on different ranks
with pytest.raises(RuntimeError, match="Rank 1 is running broadcast"):
    (dist.all_reduce if rank == 0 else lambda t: dist.broadcast(t, 0))(torch.ones(3))
with pytest.raises(RuntimeError, match="Cannot use ReduceOp.BAND with non-integral dtype"):
    dist.all_reduce(torch.ones(3), op=dist.ReduceOp.BAND)
with pytest.raises(TypeError, match="ReduceOp"):
    dist.all_reduce(torch.ones(3), op="sum")
with pytest.raises(ValueError, match="does not contain rank 9"):
    dist.broadcast(torch.ones(3), src=9)
with pytest.raises(ValueError, match="should not be the same as the rank"):
    dist.send(torch.ones(2), rank)
with pytest.raises(RuntimeError, match="invalid tensor at index 0 of tensor_list"):
    dist.all_gather([torch.zeros(4)] * world, torch.ones(3))
# a collective after all those errors still works: nobody was left behind
t = torch.ones(2)
dist.all_reduce(t)
assert t.tolist() == [world, world]
# weights_only: a peer's pickle that names an arbitrary global is refused on every receiver
objs = [None] * world
with pytest.raises(Exception, match="refusing to load global posix.system|refusing to load global os.system"):
    import os
    dist.all_gather_object(objs, os.system)
dist.all_gather_object(objs, (rank, [1.5, "x"], {"k": torch.ones(1)}))
assert objs[world - 1][0] == world - 1
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {rank}: errors ok")
