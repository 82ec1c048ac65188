"""SyncBatchNorm on N ranks, each holding its share of a batch, equals BatchNorm on the whole
batch: outputs, input gradients, summed weight and bias gradients, running statistics (two
steps, shares of unequal sizes or none, 2-D to 4-D input, a subgroup) and, in eval mode, the same output;
and ember.distributed.nn.functional.all_reduce's gradient."""
import time

import numpy as np

import ember as torch
import ember.distributed as dist
from ember import nn

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
start = time.perf_counter()


def check(shape, shares, make_reference, group=None, steps=2):
    torch.manual_seed(0)
    reference = make_reference()
    sync = nn.SyncBatchNorm.convert_sync_batchnorm(make_reference(), group)
    with torch.no_grad():
        for p, q in zip(sync.parameters(), reference.parameters()):
            p.copy_(torch.randn(p.shape))
            q.copy_(p)
    bounds = np.cumsum([0, *shares])
    mine = slice(bounds[rank], bounds[rank + 1])
    rng = np.random.default_rng(7)
    for step in range(steps):
        x = rng.standard_normal((bounds[-1], *shape)) * 2 + 0.5
        g = rng.standard_normal((bounds[-1], *shape))
        whole = torch.tensor(x, requires_grad=True)
        part = torch.tensor(x[mine], requires_grad=True)
        for p in (*sync.parameters(), *reference.parameters()):
            p.grad = None
        y_whole, y_part = reference(whole), sync(part)
        assert not isinstance(sync, nn.SyncBatchNorm) or type(y_part.grad_fn).__name__ == "SyncBatchNormBackward"
        (y_whole * torch.tensor(g)).sum().backward()
        (y_part * torch.tensor(g[mine])).sum().backward()
        np.testing.assert_allclose(y_part.detach().numpy(), y_whole.detach().numpy()[mine], rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(part.grad.numpy(), whole.grad.numpy()[mine], rtol=1e-8, atol=1e-10)
        for p, q in zip(sync.parameters(), reference.parameters()):
            dist.all_reduce(p.grad)  # each rank's share of the loss: the sum is the whole batch's
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-10)
        for b, c in zip(sync.buffers(), reference.buffers()):
            np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-9, atol=1e-12)
    sync.eval(), reference.eval()
    x = torch.tensor(rng.standard_normal((3, *shape)))
    np.testing.assert_allclose(sync(x).detach().numpy(), reference(x).detach().numpy(), rtol=1e-9, atol=1e-12)


torch.set_default_dtype(torch.float64)
check((3,), [4] * world, lambda: nn.BatchNorm1d(3))
check((2, 3, 4), [1 + 2 * r for r in range(world)], lambda: nn.BatchNorm2d(2, momentum=None))
check((3, 2), [0] + [5] * (world - 1), lambda: nn.BatchNorm1d(3))  # rank 0 holds no samples
check((3, 5), [3] * world, lambda: nn.Sequential(nn.Linear(5, 5), nn.BatchNorm1d(3), nn.Tanh()),
      group=dist.new_group(list(range(world))))
# the differentiable all_reduce underneath: its backward sums (averages) the ranks' gradients
from ember.distributed.nn.functional import all_reduce  # noqa: E402

for op, scale in ((dist.ReduceOp.SUM, 1.0), (dist.ReduceOp.AVG, 1.0 / world)):
    x = torch.full((3,), float(rank + 1), requires_grad=True)
    y = all_reduce(x * 2, op=op)
    assert x.grad is None and y.tolist() == [scale * world * (world + 1)] * 3, y
    (y * (rank + 1)).sum().backward()
    assert x.grad.tolist() == [2 * scale * world * (world + 1) / 2] * 3, x.grad
print(f"rank {rank}: the checks took {time.perf_counter() - start:.2f} s", flush=True)
print(f"rank {rank}: syncbn ok", flush=True)
dist.destroy_process_group()
