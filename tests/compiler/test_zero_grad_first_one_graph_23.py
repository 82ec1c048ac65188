"""A training step that starts with ``zero_grad()`` (set_to_none) sets every parameter's
``.grad`` before reading any, so which parameters had a gradient before the call does not
matter: its first call (no gradients yet) and the later ones share one graph, as torch.compile's
(one frame compiled). A step that backpropagates first and zeroes last, or accumulates over
calls, keeps the guard, with eager's gradients."""
import numpy as np
import pytest
import torch

import ember
from ember._dynamo.utils import counters


def _step(lib, zero_first, accumulate=False):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
    with lib.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(np.linspace(-0.5, 0.5, p.numel()).reshape(tuple(p.shape)) * (k + 1)))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        if zero_first:
            opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if not accumulate:
            opt.step()
            if not zero_first:
                opt.zero_grad()
        return loss
    return model, step


@pytest.mark.parametrize("zero_first, accumulate, graphs", [(True, False, 1), (False, False, 1), (False, True, 2)])
def test_one_graph_for_the_step_and_eagers_results(zero_first, accumulate, graphs):
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((5, 4)).astype(np.float32), rng.integers(0, 2, 5)) for _ in range(4)]
    results = []
    for lib, compile_ in ((torch, False), (ember, True)):
        model, step = _step(lib, zero_first, accumulate)
        if compile_:
            ember.compiler.reset()
            counters.clear()
            step = ember.compile(step, backend="aot_eager")
        losses = [step(lib.tensor(x), lib.tensor(y)).item() for x, y in data]
        results.append((losses, [p.detach().numpy().copy() for p in model.parameters()],
                        [p.grad.numpy().copy() if p.grad is not None else None for p in model.parameters()]))
    assert counters["stats"]["unique_graphs"] == graphs
    (t_losses, t_params, t_grads), (e_losses, e_params, e_grads) = results
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-5)
    for e, t in zip(e_params + e_grads, t_params + t_grads):
        assert (e is None) == (t is None)
        if e is not None:
            np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-7)
