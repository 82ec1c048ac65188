"""DDP on N ranks follows one process on the concatenated batch (MLP and LeNet, 20 steps)."""
import copy

import numpy as np

import ember as torch
import ember.distributed as dist
from ember import nn
from ember.milestones.lenet import lenet5
from ember.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()


def mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))


def check(make, shape, steps=20, batch=4, wrap=lambda module: module, outer=lambda ddp: ddp, **ddp_args):
    torch.manual_seed(0)
    reference = make()
    torch.manual_seed(rank + 1)  # replicas start different: DDP must broadcast rank 0's weights
    model = DDP(wrap(make()), **ddp_args) if rank else None
    if rank == 0:
        model = DDP(wrap(copy.deepcopy(reference)), **ddp_args)
    model = outer(model)
    single = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = np.random.default_rng(42)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(steps):
        x = torch.from_numpy(g.standard_normal((world * batch, *shape)).astype(np.float32))
        y = torch.from_numpy(g.integers(0, 3, world * batch))
        mine = slice(rank * batch, (rank + 1) * batch)
        opt.zero_grad()
        loss_fn(model(x[mine]), y[mine]).backward()
        opt.step()
        single.zero_grad()
        loss_fn(reference(x), y).backward()
        single.step()
    for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-4, atol=2e-5,
                                   err_msg=f"{name} after {steps} steps")
    return model


check(mlp, (8,))
many = check(mlp, (8,), bucket_cap_mb=0.0005, gradient_as_bucket_view=True)  # many buckets

# overlap: with many buckets, the first all_reduce starts while gradients are still to come
started_with = []
start = many._start
many._start = lambda b: (started_with.append(many._expected), start(b))
many(torch.ones(2, 8)).sum().backward()
assert len(many._buckets) >= 3 and started_with[0] > 0 and started_with[-1] == 0, started_with
check(lambda: nn.Sequential(lenet5(), nn.Linear(10, 3)), (1, 32, 32), steps=20, batch=2)
check(mlp, (8,), steps=5, wrap=torch.compile)  # DDP around a compiled module averages too
check(mlp, (8,), steps=5, outer=torch.compile)  # and a compiled DDP module (its hooks run every step)

# no_sync: two local micro-batches, then one synchronised backward = the whole batch once
torch.manual_seed(0)
model = DDP(mlp())
reference = copy.deepcopy(model.module)
x = torch.from_numpy(np.random.default_rng(1).standard_normal((world * 4, 8)).astype(np.float32))
parts = x.reshape(world, 2, 2, 8)[rank]
with model.no_sync():
    model(parts[0]).sum().backward()
first = [p.grad.clone() for p in model.parameters()]
model(parts[1]).sum().backward()
reference(x).sum().backward()
for p, q in zip(model.parameters(), reference.parameters()):
    np.testing.assert_allclose(p.grad.numpy() * world, q.grad.numpy(), rtol=1e-4, atol=1e-5)
assert not all(np.allclose(a.numpy(), p.grad.numpy()) for a, p in zip(first, model.parameters()))


# unused parameters: an error at the next forward without find_unused_parameters, fine with it
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 2), nn.Linear(4, 2)

    def forward(self, x):
        return self.a(x)


model = DDP(TwoHeads())
model(torch.ones(1, 4)).sum().backward()
try:
    model(torch.ones(1, 4))
except RuntimeError as error:
    assert "Expected to have finished reduction" in str(error) and "b.weight" in str(error)
else:
    raise AssertionError("an unused parameter went unnoticed")
model = DDP(TwoHeads(), find_unused_parameters=True)
for _ in range(2):
    model(torch.ones(1, 4) * (rank + 1)).sum().backward()
assert model.module.b.weight.grad is None
np.testing.assert_allclose(model.module.a.weight.grad.numpy(), np.full((2, 4), 2 * (1 + world) / 2))
assert list(model.state_dict())[0] == "module.a.weight"
dist.destroy_process_group()
print(f"rank {rank}: ddp ok")
