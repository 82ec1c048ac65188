"""A DDP loop that survives a rank that is killed (SIGKILL) or hangs (sleeps), launched with
--fault-tolerant, through ember.distributed.elastic; without ULFM, a job that ends promptly.
Usage: faulty_rank.py VICTIM STEP [kill|hang]"""
import datetime
import os
import signal
import sys
import time

import numpy as np

import ember as torch
import ember.distributed as dist
from ember import nn
from ember.distributed import elastic
from ember.nn.parallel import DistributedDataParallel as DDP

victim, fail_at = int(sys.argv[1]), int(sys.argv[2])
hang = sys.argv[3:] == ["hang"]
dist.init_process_group(timeout=datetime.timedelta(seconds=3))
torch.manual_seed(0)
module = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
model = DDP(module)
opt = torch.optim.SGD(module.parameters(), lr=0.1, momentum=0.9)
g = np.random.default_rng(0)
x = torch.from_numpy(g.standard_normal((60, 4)).astype(np.float32))
y = x.sum(1, keepdim=True) * 0.5
step, steps, failed = 0, 12, False
while step < steps:
    if step == fail_at and dist.get_rank() == victim and not failed:
        if hang:
            time.sleep(3600)
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        opt.zero_grad()
        part = slice(rank * 60 // world, (rank + 1) * 60 // world)
        loss = ((model(x[part]) - y[part]) ** 2).mean()
        loss.backward()
        opt.step()
        step += 1
    except dist.DistBackendError as error:
        start = time.monotonic()
        print(f"rank {dist.get_rank()} caught: {error}", flush=True)
        step = elastic.recover(module=module, optimizer=opt, step=step)["step"]
        model = DDP(module)  # hooks on the survivors' group
        failed = True
        print(f"rank {dist.get_rank()} recovered in {time.monotonic() - start:.3f} s at step {step} with "
              f"{dist.get_world_size()} ranks", flush=True)
final = torch.cat([p.detach().reshape(-1) for p in module.parameters()])
everyone = [torch.zeros_like(final) for _ in range(dist.get_world_size())]
dist.all_gather(everyone, final)
assert all(np.array_equal(e.numpy(), final.numpy()) for e in everyone), "replicas diverged"
loss = ((module(x) - y) ** 2).mean().item()
print(f"rank {dist.get_rank()} finished {step} steps with {dist.get_world_size()} ranks, loss {loss:.4f}", flush=True)
dist.barrier()
