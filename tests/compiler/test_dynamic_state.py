"""A whole training step under dynamic shapes: the probes that find the size symbols leave no
trace (gradients, optimizer state, running statistics, in-place updated tensors, the random
stream), and modules reached through called functions' closures and globals are parameters of
the graph (they get .grad), as torch's dynamo follows the functions it inlines."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo.utils import counters


pytestmark = pytest.mark.usefixtures("fresh_compiler")


SIZES = [5, 5, 8, 3, 12, 6, 9]


def _train(compiled, optimizer):
    """Losses, then parameters, buffers and the in-place counter after each step of a batch-size
    sweep. ``step`` calls ``loss``, which reads the model from its closure; ``zero_grad`` at the
    end of the step sets every .grad to None (the state each call starts from)."""
    ember.manual_seed(0)
    # no bias before batch norm: its gradient is 0 up to rounding, which Adam scales to full steps
    model = nn.Sequential(nn.Linear(5, 16, bias=False), nn.BatchNorm1d(16), nn.Tanh(), nn.Dropout(0.3),
                          nn.Linear(16, 4))
    opt = optimizer(model.parameters(), lr=0.01)
    seen = ember.zeros(())  # rows seen so far: updated in place, each step once

    def loss(x, y):
        return F.cross_entropy(model(x), y)

    def step(x, y):
        value = loss(x, y)
        value.backward()
        opt.step()
        opt.zero_grad()
        seen.add_(x.shape[0])
        return value
    run = ember.compile(step) if compiled else step
    rng = np.random.default_rng(1)
    trace = []
    for b in SIZES:
        x = ember.tensor(rng.standard_normal((b, 5)).astype(np.float32))
        value = run(x, ember.tensor(rng.integers(0, 4, b)))
        trace.append([value.item()] + [t.detach().numpy().copy() for t in (*model.state_dict().values(), seen)])
    return trace


@pytest.mark.parametrize("optimizer", [ember.optim.SGD, ember.optim.Adam])
def test_a_step_calling_a_closure_compiles_one_dynamic_graph_and_equals_eager(optimizer, capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "recompiles,dynamic")
    eager = _train(False, optimizer)
    compiled = _train(True, optimizer)
    for b, want, got in zip(SIZES, eager, compiled):
        for a, e in zip(got, want):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6, err_msg=f"batch {b}")
    assert compiled[-1][-1] == sum(SIZES)
    # SGD: a static graph (batch 5), then one dynamic graph for every later size; Adam's first
    # call makes its state eagerly (no graph), so the second is static and the third dynamic
    assert counters["stats"]["unique_graphs"] == 2
    err = capfd.readouterr().err
    assert "s0 = x.size(0) in [2," in err and "specialising" not in err


def test_parameters_of_a_module_reached_through_a_called_function_get_grad():
    lin = nn.Linear(4, 3)

    def predict(x):
        return lin(x)

    def step(x):
        out = predict(x).sum()
        out.backward()
        return out
    compiled = ember.compile(step)
    x = ember.ones(2, 4)
    for _ in range(3):
        lin.zero_grad()
        compiled(x)
        np.testing.assert_allclose(lin.weight.grad.numpy(), np.full((3, 4), 2.0))
        np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(3, 2.0))
    assert counters["stats"]["unique_graphs"] == 1


def test_rebinding_a_called_global_function_recompiles():
    compiled = ember.compile(lambda x: _helper(x) + 1)
    x = ember.ones(3)
    assert compiled(x).tolist() == [3.0] * 3
    global _helper
    saved = _helper
    try:
        _helper = lambda x: x * 5  # noqa: E731
        assert compiled(x).tolist() == [6.0] * 3
    finally:
        _helper = saved


def _helper(x):
    return x * 2
