"""A plain PyTorch DDP training script, as a PyTorch user writes it; the one change for ember
is its import line. Usage: torch_ddp.py OUT_DIR BACKEND (rank 0 writes OUT_DIR/checkpoint.pt;
then, as PyTorch's DDP tutorial does, rank 0 saves the DDP model's state, every rank waits at a
barrier and loads it into a fresh DDP model)."""
import os
import sys

import ember as torch


def main(out_dir, backend):
    torch.distributed.init_process_group(backend=backend)
    rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    g = torch.Generator().manual_seed(0)
    centers = torch.randn(4, 10, generator=g)
    labels = torch.randint(0, 4, (1024,), generator=g)
    inputs = centers[labels] + 0.8 * torch.randn(1024, 10, generator=g)
    train = torch.utils.data.TensorDataset(inputs[:768], labels[:768])
    sampler = torch.utils.data.distributed.DistributedSampler(train, shuffle=True, seed=0)
    loader = torch.utils.data.DataLoader(train, batch_size=32 // world, sampler=sampler)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(ddp(x), y).backward()
            opt.step()
        if rank == 0:
            torch.save({"epoch": epoch, "model": ddp.module.state_dict(), "optimizer": opt.state_dict()},
                       os.path.join(out_dir, "checkpoint.pt"))
    path = os.path.join(out_dir, "ddp_model.checkpoint")
    if rank == 0:
        torch.save(ddp.state_dict(), path)
    torch.distributed.barrier()
    torch.manual_seed(rank + 1)  # a different start on every rank: the load must replace it
    fresh = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    reloaded = torch.nn.parallel.DistributedDataParallel(fresh)
    reloaded.load_state_dict(torch.load(path, map_location={"cuda:0": f"cuda:{rank}"}, weights_only=True))
    with torch.no_grad():
        correct = (model(inputs[768:]).argmax(1) == labels[768:]).float().mean().item()
        again = (reloaded(inputs[768:]).argmax(1) == labels[768:]).float().mean().item()
    print(f"rank {rank} of {world}: test accuracy {correct:.4f}, reloaded {again:.4f}", flush=True)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
