"""One recompile is logged and counted once (MILE32).

``ember milestones run xor --compile`` trains two models with one training loop: the second
``torch.compile(train_step)`` of the same ``def`` (a closure over the other model and its Adam)
recompiles, as torch's dynamo does (its cache is per code object: ``[0/1] Recompiling function
train_step``, once). ember logged ``recompiling ...`` and counted ``counters["recompiles"]``
twice: the first call of the new closure ran eagerly to make Adam's state (a recording would
break there) and was logged as the recompile, then the next call, which captures, was logged
again. The log line and the count now belong to the call that captures, and its reason no
longer prints object ids (``module structure: expected (), got (1396..., ...)``).
"""
import numpy as np
import pytest

import ember
from ember._dynamo.utils import counters

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _train_two_models(lib, compile_step):
    """The xor milestone's shape: one ``fit`` (a ``train_step`` closure, compiled by
    ``compile_step``) run for a one-layer model, then for an MLP; the final losses."""
    lib.manual_seed(0)
    nn = lib.nn
    inputs = lib.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    targets = lib.tensor([[0.], [1.], [1.], [0.]])

    def fit(model, optimizer, loss_fn):
        def train_step(inputs, targets):
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            optimizer.step()
            return loss
        step = compile_step(train_step)
        return [step(inputs, targets).item() for _ in range(4)][-1]

    losses = []
    for model in (nn.Linear(2, 1), nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))):
        losses.append(fit(model, lib.optim.Adam(model.parameters(), lr=0.05), nn.BCEWithLogitsLoss()))
    return losses


def test_a_second_closure_of_one_training_step_recompiles_once(monkeypatch, capsys):
    monkeypatch.setenv("EMBER_LOGS", "recompiles")
    got = _train_two_models(ember, ember.compile)
    logged = [line for line in capsys.readouterr().err.splitlines() if "recompiling" in line]
    assert len(logged) == 1 and "fit.<locals>.train_step" in logged[0], logged
    # (the ids it compares are no use to a reader: how many modules the call reached is)
    assert logged[0].endswith("guard failed: module structure: other objects (3 where the graph had 0)")
    assert list(counters["recompiles"].values()) == [1]
    assert counters["stats"]["unique_graphs"] == 2
    expected = _train_two_models(torch, lambda f: f)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
