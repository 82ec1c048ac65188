"""PyTorch's DDP tutorial start (https://pytorch.org/tutorials/intermediate/ddp_tutorial.html),
the import changed: ``python spawn_ddp.py`` calls ``mp.spawn(demo, nprocs=2)`` and each process
sets MASTER_ADDR/MASTER_PORT and calls ``init_process_group("gloo", rank, world_size)``.
Each rank checks that DDP's step equals one process's step on both ranks' batches.
Usage: spawn_ddp.py [fail]  (with ``fail``, rank 1 raises after its step)"""
import os
import sys

import numpy as np

import ember as torch
import ember.distributed as dist
import ember.multiprocessing as mp
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

LOADED_AS = __name__  # "__mp_main__" on a rank that mp.spawn started


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def demo(rank, world_size, fail):
    setup(rank, world_size)
    g = np.random.default_rng(0)
    x = torch.from_numpy(g.standard_normal((8, 10)).astype(np.float32))
    torch.manual_seed(rank)  # different weights per rank: DDP broadcasts rank 0's
    model = DDP(nn.Linear(10, 5))
    torch.manual_seed(0)
    alone = nn.Linear(10, 5)  # rank 0's weights, trained on the whole batch in this process
    half = slice(rank * 4, rank * 4 + 4)
    for net, batch in ((model, x[half]), (alone, x)):
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        net(batch).pow(2).mean().backward()
        opt.step()
    if fail and rank == 1:
        raise RuntimeError("rank 1 fails on purpose")
    same = all(np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
               for p, q in zip(model.module.parameters(), alone.parameters()))
    dist.barrier()
    print(f"rank {rank} of {dist.get_world_size()} (loaded as {LOADED_AS}): matches one process: {same}",
          flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(demo, args=(2, sys.argv[1:] == ["fail"]), nprocs=2, join=True)
    print("spawn returned", flush=True)
