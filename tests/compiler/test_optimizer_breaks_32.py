"""An optimizer that updates its parameters on their arrays (Adadelta, Adamax, NAdam, ...: no
update op) is one graph break a step, as torch's one break there: mnist/main.py's compiled step
with Adadelta counted a break per parameter (8 for its Net: ``explain`` said 1 graph, 8 breaks,
``counters["graph_break"]`` 8 a recording) before session 32."""
import copy

import numpy as np
import pytest

import ember
from ember._dynamo.utils import counters


def _step_of(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = ember.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


@pytest.mark.parametrize("name", ["Adadelta", "Adamax"])
def test_one_break_a_step_not_one_a_parameter(name):
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(6, 8), ember.nn.ReLU(), ember.nn.Linear(8, 3))  # 4 parameters
    twin = copy.deepcopy(model)
    x, y = ember.randn(5, 6), ember.randint(0, 3, (5,))
    optimizer = getattr(ember.optim, name)
    third = copy.deepcopy(model)
    explained = ember._dynamo.explain(_step_of(third, optimizer(third.parameters())))(x, y)
    assert (explained.graph_count, explained.graph_break_count) == (1, 1)
    assert f"{name}.step updates the parameters outside ember's ops" in explained.break_reasons[0].reason
    ember.compiler.reset()
    counters.clear()
    compiled = ember.compile(_step_of(model, optimizer(model.parameters())))
    eager = _step_of(twin, optimizer(twin.parameters()))
    got, want = [float(compiled(x, y)) for _ in range(4)], [float(eager(x, y)) for _ in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert sum(counters["graph_break"].values()) == 1 and counters["stats"]["unique_graphs"] == 1
    ember.compiler.reset()
