"""``fit`` under ``compiled_steps`` compiles what a torch user compiles: the training step and the
evaluation forward (``torch.compile(model)``, called under ``no_grad`` in eval mode), with the same
scores as eager; ``History.graphs`` counts the training step's graphs only."""
import pytest

import ember
from ember import nn
from ember.milestones.milestone import compiled_steps
from ember.milestones.training import class_accuracy_and_loss, fit
from ember.utils.data import DataLoader, TensorDataset


@pytest.fixture(autouse=True)
def _fresh():
    ember.compiler.reset()
    yield
    ember.compiler.reset()


def _run(compile):
    ember.manual_seed(0)
    x, y = ember.randn(24, 3), ember.randint(0, 2, (24,))
    model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    seen = []

    def evaluate(scored):
        seen.append((type(scored).__name__, scored.training, ember.is_grad_enabled()))
        return class_accuracy_and_loss(scored, x, y)
    with compiled_steps(compile):
        history = fit(model, DataLoader(TensorDataset(x, y), batch_size=8), nn.CrossEntropyLoss(),
                      ember.optim.SGD(model.parameters(), lr=0.1), 2, evaluate, "t", quiet=True)
    return history, seen


def test_the_evaluation_forward_is_compiled_with_eager_scores():
    eager, seen_eager = _run(False)
    compiled, seen = _run(True)
    assert seen_eager == [("Sequential", False, False)] * 2
    assert seen == [("OptimizedModule", False, False)] * 2  # eval mode (no dropout), no_grad
    assert compiled.loss == pytest.approx(eager.loss, rel=1e-5)
    assert compiled.accuracy == eager.accuracy
    assert compiled.test_loss == pytest.approx(eager.test_loss, rel=1e-5)
    counters = ember._dynamo.utils.counters
    # one graph for the training step (what the run prints), one for the evaluation forward
    assert compiled.graphs == 1 and counters["stats"]["unique_graphs"] == 2


def test_a_compiled_module_mirrors_the_originals_mode():
    model = nn.Linear(2, 2)
    compiled = ember.compile(model)
    model.eval()
    assert compiled.training is False  # (it read True: the compiled eval ran in training mode)
    compiled.train()
    assert model.training is True and compiled.training is True
    compiled.eval()
    assert model.training is False
