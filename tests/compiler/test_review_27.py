"""Session 27's review: compiled training steps that read an optimizer's hyperparameters.

A graph reads ``lr`` (and ``momentum``, ``weight_decay``, ...) of an optimizer's groups as
inputs of its update ops at each call, and guarded only whether each is zero: a scheduler
never recompiles. A step whose own code read ``opt.param_groups[0]["lr"]`` and computed with it
(``loss * (1 + lr)``, ``x * lr``, ``f"{lr}"``) had that value baked into its graph, unguarded:
the replays used the recording's ``lr`` while the scheduler moved on (losses and weights wrong
from the 3rd call of a ``CosineAnnealingLR`` loop). torch guards the value it reads (a graph
per value, then eager at its recompile limit). Such a read from the user's code now keeps that
optimizer's hyperparameters guarded by value (``group_writes.watched_groups``).
"""
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _losses(lib, compiled, use):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.5)
    sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, 5)

    def step(x):
        opt.zero_grad()
        lr = opt.param_groups[0]["lr"]
        loss = ((w * x).sum() - 1) ** 2
        if use == "branch":
            loss = loss * 2 if lr > 0.05 else loss
        else:
            loss = loss * (1 + lr) if use == "arithmetic" else loss + x.sum() * lr
        loss.backward()
        opt.step()
        return loss

    f = ember.compile(step) if compiled else step
    out = []
    for i in range(6):
        out.append(f(lib.tensor([0.5, 0.25 * i])).item())
        sched.step()
    return out + w.tolist()


@pytest.mark.parametrize("use", ["arithmetic", "operand", "branch"])
def test_lr_read_by_the_step_follows_the_scheduler(use):
    expected = _losses(torch, False, use)
    assert _losses(ember, False, use) == pytest.approx(expected, rel=1e-6)
    assert _losses(ember, True, use) == pytest.approx(expected, rel=1e-6)
