"""Module 20, capstone: the bytes a training step holds by role (parameters, buffers,
gradients, optimizer state), against the same count on torch's objects."""
import torch

import ember
from ember.utils import memory_footprint

from . import check, same


def _bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)



@check("20/memory-footprint", points=3)
def footprint():
    for make_opt, name in ((lambda L, p: L.optim.Adam(p), "Adam"),
                           (lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.9), "SGD with momentum")):
        models, opts = [], []
        for L in (ember, torch):
            L.manual_seed(0)
            model = L.nn.Sequential(L.nn.Linear(20, 30), L.nn.BatchNorm1d(30), L.nn.Linear(30, 5))
            opt = make_opt(L, model.parameters())
            model(L.randn(8, 20)).sum().backward()
            opt.step()
            models.append(model)
            opts.append(opt)
        report = memory_footprint(models[0], opts[0])
        t_model, t_opt = models[1], opts[1]
        same(f"parameters bytes ({name})", report.parameters, _bytes(t_model.parameters()))
        same(f"buffers bytes ({name})", report.buffers, _bytes(t_model.buffers()))
        same(f"gradients bytes ({name})", report.gradients, _bytes(p.grad for p in t_model.parameters()))
        state = [v for s in t_opt.state.values() for v in s.values() if torch.is_tensor(v)]
        same(f"optimizer state bytes ({name})", report.optimizer_state, _bytes(state))
