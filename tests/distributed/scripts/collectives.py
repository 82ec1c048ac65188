"""Bad input (errors.py), then every collective on every dtype against a NumPy reference
(run on 2-4 ranks)."""
import runpy
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

import ember as torch
import ember.distributed as dist
from ember.distributed import ReduceOp

runpy.run_path(str(Path(__file__).with_name("errors.py")))  # one launch for both: they are slow
dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
DTYPES = [torch.float16, torch.float32, torch.float64, torch.uint8, torch.int8, torch.int16,
          torch.int32, torch.int64, torch.bool]


def wait_for(path, seconds=30):
    """Whether ``path`` exists within ``seconds`` (another rank's signal)."""
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return path.exists()


def data(r, dtype, shape=(3, 4), seed=0):
    """Rank r's input: the same on every rank that builds it."""
    g = np.random.default_rng(seed * 100 + r)
    if dtype is torch.bool:
        return torch.from_numpy(g.random(shape) > 0.5)
    if dtype.is_floating_point:
        return torch.from_numpy(g.standard_normal(shape).astype(dtype.np))
    return torch.from_numpy(g.integers(1, 4, shape).astype(dtype.np))


def everyone(dtype, shape=(3, 4), seed=0):
    return [data(r, dtype, shape, seed).numpy() for r in range(world)]


REF = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MIN: np.min, ReduceOp.MAX: np.max}
for async_op in (False, True):
    for dtype in DTYPES:
        for op, fn in REF.items():
            t = data(rank, dtype)
            work = dist.all_reduce(t, op=op, async_op=async_op)
            if async_op:
                assert work.wait() and work.is_completed()
            stack = np.stack(everyone(dtype))
            if dtype is torch.bool:
                want = stack.any(0) if op in (ReduceOp.SUM, ReduceOp.MAX) else stack.all(0)
            else:
                want = fn(stack.astype(np.float64 if dtype.is_floating_point else dtype.np), axis=0)
            tol = 1e-2 if dtype is torch.float16 else 1e-6
            np.testing.assert_allclose(t.numpy().astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol,
                                       err_msg=f"all_reduce {op.name} {dtype}")
            assert t.dtype is dtype
        t = data(rank, dtype)
        w = dist.broadcast(t, src=world - 1, async_op=async_op)
        w and w.wait()
        np.testing.assert_array_equal(t.numpy(), everyone(dtype)[world - 1])
        out = [torch.zeros(3, 4, dtype=dtype) for _ in range(world)]
        w = dist.all_gather(out, data(rank, dtype), async_op=async_op)
        w and w.wait()
        for r in range(world):
            np.testing.assert_array_equal(out[r].numpy(), everyone(dtype)[r])
        big = torch.zeros(world * 3, 4, dtype=dtype)
        w = dist.all_gather_into_tensor(big, data(rank, dtype), async_op=async_op)
        w and w.wait()
        np.testing.assert_array_equal(big.numpy(), np.concatenate(everyone(dtype)))
        if dtype is not torch.bool:
            t = data(rank, dtype)
            w = dist.reduce(t, dst=0, op=ReduceOp.MAX, async_op=async_op)
            w and w.wait()
            if rank == 0:
                np.testing.assert_array_equal(t.numpy(), np.max(np.stack(everyone(dtype)), 0))
            else:
                np.testing.assert_array_equal(t.numpy(), everyone(dtype)[rank])
            out = torch.zeros(3, 4, dtype=dtype)
            ins = [data(rank, dtype, seed=k + 1) for k in range(world)]
            w = dist.reduce_scatter(out, ins, op=ReduceOp.MIN, async_op=async_op)
            w and w.wait()
            np.testing.assert_array_equal(out.numpy(), np.min(np.stack([data(r, dtype, seed=rank + 1).numpy()
                                                                        for r in range(world)]), 0))
            out = torch.zeros(3, 4, dtype=dtype)
            w = dist.reduce_scatter_tensor(out, data(rank, dtype, shape=(world * 3, 4)), async_op=async_op)
            w and w.wait()
            full = np.sum(np.stack(everyone(dtype, (world * 3, 4))).astype(np.float64), 0)
            np.testing.assert_allclose(out.numpy().astype(np.float64), full[rank * 3:rank * 3 + 3],
                                       rtol=1e-2 if dtype is torch.float16 else 1e-6)
        gl = [torch.zeros(3, 4, dtype=dtype) for _ in range(world)] if rank == 1 else None
        w = dist.gather(data(rank, dtype), gl, dst=1, async_op=async_op)
        w and w.wait()
        if rank == 1:
            for r in range(world):
                np.testing.assert_array_equal(gl[r].numpy(), everyone(dtype)[r])
        t = torch.zeros(3, 4, dtype=dtype)
        sl = [data(r, dtype, seed=7) for r in range(world)] if rank == 0 else None
        w = dist.scatter(t, sl, src=0, async_op=async_op)
        w and w.wait()
        np.testing.assert_array_equal(t.numpy(), data(rank, dtype, seed=7).numpy())
        outs = [torch.zeros(r + 1, 2, dtype=dtype) for r in range(world)]
        ins = [data(rank * 10 + r, dtype, shape=(rank + 1, 2)) for r in range(world)]
        w = dist.all_to_all(outs, ins, async_op=async_op)
        w and w.wait()
        for r in range(world):
            np.testing.assert_array_equal(outs[r].numpy(), data(r * 10 + rank, dtype, shape=(r + 1, 2)).numpy())
        out = torch.zeros(world * 2, 3, dtype=dtype)
        w = dist.all_to_all_single(out, data(rank, dtype, shape=(world * 2, 3)), async_op=async_op)
        w and w.wait()
        want = np.concatenate([data(r, dtype, shape=(world * 2, 3)).numpy()[rank * 2:rank * 2 + 2]
                               for r in range(world)])
        np.testing.assert_array_equal(out.numpy(), want)

# AVG, bitwise ops, non-contiguous tensors, uneven all_to_all_single
t = data(rank, torch.float64)
dist.all_reduce(t, op=ReduceOp.AVG)
np.testing.assert_allclose(t.numpy(), np.mean(np.stack(everyone(torch.float64)), 0), rtol=1e-12)
t = data(rank, torch.int32)
dist.all_reduce(t, op=ReduceOp.BXOR)
np.testing.assert_array_equal(t.numpy(), np.bitwise_xor.reduce(np.stack(everyone(torch.int32)), 0))
base = data(rank, torch.float32, shape=(4, 6))
view = base.t()
dist.all_reduce(view)
np.testing.assert_allclose(base.numpy(), np.sum(np.stack(everyone(torch.float32, (4, 6))), 0), rtol=1e-5)
splits_in = [r + 1 for r in range(world)]
out = torch.zeros((rank + 1) * world, dtype=torch.int64)
dist.all_to_all_single(out, torch.arange(sum(splits_in)) + 100 * rank, [rank + 1] * world, splits_in)
want = np.concatenate([np.arange(sum(splits_in))[sum(splits_in[:rank]):sum(splits_in[:rank + 1])] + 100 * r
                       for r in range(world)])
np.testing.assert_array_equal(out.numpy(), want)

# point to point, batch, objects
if world >= 2:
    t = torch.arange(5, dtype=torch.float32) * (rank + 1)
    peer = (rank + 1) % world
    prev = (rank - 1) % world
    got = torch.zeros(5)
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, t, peer), dist.P2POp(dist.irecv, got, prev)])
    for w in works:
        w.wait()
    np.testing.assert_array_equal(got.numpy(), np.arange(5) * (prev + 1))
    if rank == 0:
        dist.send(torch.full((3,), 7.0), 1)
        dist.send_object_list([{"a": torch.ones(2)}, 3], 1)
    elif rank == 1:
        r = torch.zeros(3)
        assert dist.recv(r, 0) == 0
        assert r.tolist() == [7.0, 7.0, 7.0]
        objs = [None, None]
        dist.recv_object_list(objs, 0)
        assert objs[1] == 3 and objs[0]["a"].tolist() == [1.0, 1.0]

objs = [None] * world
dist.all_gather_object(objs, {"rank": rank, "t": torch.full((2,), float(rank)), "s": (1, "x")})
assert [o["rank"] for o in objs] == list(range(world)) and objs[1]["t"].tolist() == [1.0, 1.0]
lst = [rank, "hello"] if rank == 0 else [None, None]
dist.broadcast_object_list(lst, src=0)
assert lst == [0, "hello"]
gathered = [None] * world if rank == 0 else None
dist.gather_object(rank * 2, gathered, dst=0)
assert rank != 0 or gathered == [2 * r for r in range(world)]
out = [None]
dist.scatter_object_list(out, [f"to{r}" for r in range(world)] if rank == 0 else None, src=0)
assert out[0] == f"to{rank}"
fut = dist.all_reduce(torch.ones(2), async_op=True).get_future()
assert fut.wait()[0].tolist() == [float(world)] * 2

# async_op=True returns at once, its agreement check included: the last rank joins only once
# rank 0 has polled (a file says so, not a clock: a busy machine's rank 0 may be late itself),
# so rank 0's Work stays incomplete (is_completed drives it) until then; a call that waited for
# every rank would leave the last rank waiting for the file in vain
signals = [tempfile.mkdtemp() if rank == 0 else None]
dist.broadcast_object_list(signals, src=0)
signals = Path(signals[0])
t = torch.full((1000,), float(rank))
if rank == world - 1:
    assert wait_for(signals / "polled"), "rank 0's async all_reduce did not return before the last rank's call"
work = dist.all_reduce(t, async_op=True)
if rank == 0:
    incomplete = [work.is_completed() for _ in range(100)] == [False] * 100
    (signals / "polled").touch()
assert work.wait() and work.is_completed() and t.tolist() == [float(sum(range(world)))] * 1000
if rank == 0:
    assert incomplete
# ranks that disagree learn it at wait(), every one of them
work = dist.all_reduce(torch.ones(rank + 1), async_op=True)
try:
    work.wait()
    raise AssertionError("mismatched shapes were not detected")
except RuntimeError as error:
    assert "Detected mismatch between collectives" in str(error) and not isinstance(error, dist.DistBackendError)

# several async calls in flight, one rank polling each as it computes: the polling rank's
# checks end earlier and start their data sooner, yet every rank starts the group's MPI calls
# in one order (main raised MPI_ERR_TRUNCATE here: a data call met a later call's check)
sizes = [3, 300, 5, 70, 1]
tensors = [torch.full((n,), float(rank + 1)) for n in sizes]
works = []
for t in tensors:
    works.append(dist.all_reduce(t, async_op=True))
    if rank == world - 1:
        time.sleep(0.02)
        for _ in range(50):
            works[-1].is_completed()
gathered = [torch.zeros(2) for _ in range(world)]
dist.all_gather(gathered, torch.full((2,), float(rank)))  # a blocking call while they are pending
assert [w.wait() for w in works] == [True] * len(sizes)
assert all(t.tolist() == [float(sum(range(1, world + 1)))] * n for t, n in zip(tensors, sizes))
assert [g.tolist() for g in gathered] == [[float(r)] * 2 for r in range(world)]

# subgroups
evens = dist.new_group([r for r in range(world) if r % 2 == 0])
if rank % 2 == 0:
    t = torch.ones(1)
    dist.all_reduce(t, group=evens)
    assert t.item() == len(range(0, world, 2)) and dist.get_rank(evens) == rank // 2
else:
    assert evens is dist.GroupMember.NON_GROUP_MEMBER
mine, parts = dist.new_subgroups(1)
assert dist.get_world_size(mine) == 1
half = dist.split_group(split_ranks=[[0], list(range(1, world))])
t = torch.ones(1)
dist.all_reduce(t, group=half)
assert t.item() == (1 if rank == 0 else world - 1)
# groups are created without blocking: rank 1 calls split_group and new_group only once rank 0's
# have returned (a file says so), and the groups' first use waits for their communicators
if rank == 1:
    assert wait_for(signals / "split"), "rank 0's split_group/new_group waited for rank 1"
late = dist.split_group(split_ranks=[list(range(world))])
pair = dist.new_group([0, 1])
if rank == 0:
    (signals / "split").touch()
dist.barrier()  # the default group still works while the splits run in the background
t = torch.ones(1)
dist.all_reduce(t, group=late)
assert t.item() == world
if rank < 2:
    dist.all_reduce(t, group=pair)
    assert t.item() == 2 * world and dist.get_rank(pair) == rank
dist.barrier()
if rank == 0:
    shutil.rmtree(signals)
dist.monitored_barrier()
dist.destroy_process_group()
print(f"rank {rank}: ok")
