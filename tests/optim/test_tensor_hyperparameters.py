"""Hyperparameters given as 0-d tensors (``lr=torch.tensor(0.01)``, tensor ``betas``), which torch
accepts and its LR schedulers update in place: the steps equal torch's. Before, ember's update
kernels multiplied by the tensor, made new arrays and left every parameter unchanged."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [("SGD", dict(momentum=0.9)), ("Adam", {}), ("AdamW", {}), ("Adam", dict(betas="tensor")),
         ("RMSprop", {}), ("Adagrad", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}),
         ("Adadelta", {}), ("ASGD", {}), ("Rprop", {})]


@pytest.mark.parametrize("name, options", CASES, ids=lambda c: c if isinstance(c, str) else str(c))
def test_tensor_lr_steps_equal_torchs_and_follow_a_scheduler(name, options):
    results = []
    for L in (ember, torch):
        L.manual_seed(0)
        w = L.nn.Parameter(L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
        extra = dict(options)
        if extra.get("betas") == "tensor":
            extra["betas"] = (L.tensor(0.9), L.tensor(0.99))
        if name not in ("SGD", "Adadelta", "ASGD", "Rprop", "Adagrad"):
            extra["foreach"] = False  # torch: a tensor lr needs the for-loop implementation here
        opt = getattr(L.optim, name)([w], lr=L.tensor(0.05), **extra)
        scheduler = L.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
        for _ in range(3):
            opt.zero_grad()
            (w * L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).pow(2).sum().backward()
            opt.step()
            scheduler.step()
        results.append(np.array(w.detach().tolist()))
    assert not np.allclose(results[0], [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])  # it moved
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)
