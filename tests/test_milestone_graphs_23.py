"""One graph per compiled training step: a step that clears every ``.grad`` first (zero_grad)
does not depend on which parameters came in with one, and ``fit`` marks the batch dimension
dynamic, so the first step (no ``.grad`` yet) and a short last batch reuse the first graph."""
import numpy as np
import pytest

import ember
from ember import milestones, nn


def _graphs():
    return ember._dynamo.utils.counters["stats"]["unique_graphs"]


@pytest.fixture(autouse=True)
def _fresh():
    ember.compiler.reset()
    yield
    ember.compiler.reset()


@pytest.mark.parametrize("name", ["perceptron", "backprop"])
def test_a_compiled_milestone_builds_one_graph(name):
    result = milestones.MILESTONES[name].run(fast=True, quiet=True, compile=True)
    assert result.passed
    assert [h.graphs for h in result.histories.values()] == [1]
    assert _graphs() == 2  # and one for the evaluation forward (torch.compile(model), under no_grad)


def _train(clear, compiled, steps=3):
    """``steps`` SGD steps of a small linear model; ``clear`` runs before the backward."""
    ember.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)  # (no state: the first call is captured too)
    x = ember.arange(12.0).reshape(4, 3) / 10

    def step(x):
        clear(opt)
        loss = model(x).square().sum()
        loss.backward()
        opt.step()
        return loss
    fn = ember.compile(step) if compiled else step
    losses = [fn(x).item() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()], \
        [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("clear, graphs", [
    (lambda opt: opt.zero_grad(), 1),                     # every .grad set to None: one graph
    (lambda opt: opt.zero_grad(set_to_none=False), 2),    # reads .grad: None and present differ
    (lambda opt: None, 2),                                # accumulates into the incoming .grad
])
def test_which_grads_are_present_is_guarded_only_where_read(clear, graphs):
    eager = _train(clear, compiled=False)
    compiled = _train(clear, compiled=True)
    assert _graphs() == graphs
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-6)
    for got, want in zip(compiled[1] + compiled[2], eager[1] + eager[2]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
