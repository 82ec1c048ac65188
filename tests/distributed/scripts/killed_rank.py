"""A DDP loop that survives a rank killed with SIGKILL (launched with --fault-tolerant), or,
without ULFM, a job that ends promptly. Usage: killed_rank.py VICTIM STEP"""
import os
import signal
import sys
import time

import numpy as np

import ember as torch
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

victim, kill_at = int(sys.argv[1]), int(sys.argv[2])
dist.init_process_group()
torch.manual_seed(0)
module = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
model = DDP(module)
opt = torch.optim.SGD(module.parameters(), lr=0.1)
g = np.random.default_rng(0)
x = torch.from_numpy(g.standard_normal((64, 4)).astype(np.float32))
y = x.sum(1, keepdim=True) * 0.5
step, steps, recovered = 0, 12, None
while step < steps:
    if step == kill_at and dist.get_rank() == victim and recovered is None:
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        opt.zero_grad()
        part = slice(rank * 64 // world, (rank + 1) * 64 // world)
        loss = ((model(x[part]) - y[part]) ** 2).mean()
        loss.backward()
        opt.step()
        step += 1
    except dist.DistBackendError as error:
        start = time.monotonic()
        print(f"rank {dist.get_rank()} caught: {error}", flush=True)
        dist.shrink_group([])
        agreed = torch.tensor([step])
        dist.all_reduce(agreed, op=dist.ReduceOp.MIN)
        step = int(agreed.item())
        model = DDP(module)  # rank 0's weights to every survivor, hooks on the new group
        recovered = time.monotonic() - start
        print(f"rank {dist.get_rank()} recovered in {recovered:.3f} s at step {step} with "
              f"{dist.get_world_size()} ranks", flush=True)
final = torch.cat([p.detach().reshape(-1) for p in module.parameters()])
everyone = [torch.zeros_like(final) for _ in range(dist.get_world_size())]
dist.all_gather(everyone, final)
assert all(np.array_equal(e.numpy(), final.numpy()) for e in everyone), "replicas diverged"
loss = ((module(x) - y) ** 2).mean().item()
print(f"rank {dist.get_rank()} finished {step} steps with {dist.get_world_size()} ranks, loss {loss:.4f}", flush=True)
dist.barrier()
