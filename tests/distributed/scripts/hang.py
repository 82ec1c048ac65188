"""Rank 1 hangs (sleeps) instead of joining step 3's all_reduce; rank 0's timeout catches it,
dumps its flight recorder and ends the job. Rank 1 is asked for its dump by SIGUSR1 as it
hangs, as an operator would do to a stuck process."""
import datetime
import os
import signal
import time

import ember as torch
import ember.distributed as dist

dist.init_process_group(timeout=datetime.timedelta(seconds=2))
rank = dist.get_rank()
for step in range(5):
    if step == 3 and rank == 1:
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(3600)  # (the job's end kills it: a job that waited would outlive the test's limit)
    t = torch.ones(4, dtype=torch.float64)
    try:
        dist.all_reduce(t)
    except dist.DistBackendError as error:
        print(f"rank {rank} caught: {error}", flush=True)
        raise
print("not reached", flush=True)
