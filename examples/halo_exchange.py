"""Heat diffusion on a rod split across ranks, with halo exchange through RMA windows.

Each rank owns ``cells`` points of the rod plus one ghost cell at each end. Every step it
writes its edge values straight into its neighbours' ghost cells (``window.put``: one-sided,
the neighbour takes no part), signals them, waits for their signals, and then applies the
explicit finite-difference update ``u += alpha * (u[i-1] - 2 u[i] + u[i+1])``. The result
equals the same update run on the whole rod in one process, which rank 0 checks.

Run: ``ember run -n 4 examples/halo_exchange.py``
"""
import numpy as np

import ember as torch
import ember.distributed as dist

CELLS, STEPS, ALPHA = 16, 50, 0.25


def initial(n):
    x = np.linspace(0, 1, n)
    return np.exp(-((x - 0.3) / 0.05) ** 2)


def step(u):
    """One update of the interior of ``u`` (ends are ghosts or fixed boundaries)."""
    u[1:-1] += ALPHA * (u[:-2] - 2 * u[1:-1] + u[2:])


def main():
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    rod = initial(CELLS * world)
    local = torch.zeros(CELLS + 2, dtype=torch.float64)  # [ghost, owned cells..., ghost]
    local.numpy()[1:-1] = rod[rank * CELLS:(rank + 1) * CELLS]
    window = dist._new_window(local)
    u = window.tensor.numpy()
    left, right = rank - 1, rank + 1
    for _ in range(STEPS):
        if left >= 0:   # my first cell is my left neighbour's right ghost
            window.put(torch.from_numpy(u[1:2].copy()), left, target_offset=CELLS + 1)
            window.signal(left)
        if right < world:
            window.put(torch.from_numpy(u[-2:-1].copy()), right, target_offset=0)
            window.signal(right)
        for peer in (p for p in (left, right) if 0 <= p < world):
            window.wait_signal(peer)
        if rank == 0:
            u[0] = u[1]        # insulated ends
        if rank == world - 1:
            u[-1] = u[-2]
        step(u)
        dist.barrier()  # nobody overwrites a ghost before its owner has used it
    pieces = [torch.zeros(CELLS, dtype=torch.float64) for _ in range(world)]
    dist.all_gather(pieces, torch.from_numpy(u[1:-1].copy()))
    if rank == 0:
        whole = np.concatenate([[rod[0]], rod, [rod[-1]]])
        for _ in range(STEPS):
            whole[0], whole[-1] = whole[1], whole[-2]
            step(whole)
        error = np.abs(np.concatenate([p.numpy() for p in pieces]) - whole[1:-1]).max()
        print(f"halo exchange on {world} ranks: max difference from one process {error:.2e}")
        assert error < 1e-12
    window.free()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
