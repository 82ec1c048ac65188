"""Writes into an optimizer's groups inside a compiled step (compiler/group_replay.py): torch
2.13's dynamo replays the dict writes after its graphs; ember ran such a step eagerly on every
call (a side effect). Now the write is replayed after the graph: values against eager torch over
several calls, the group's value and type after each, graph counts."""

import pytest
import torch

import ember
from ember._dynamo.utils import counters


def _run(module, make_opt, body, calls, compiled, fullgraph=False):
    """``body(opt, model, x, arg)`` as a step of a small model over ``calls`` arguments:
    (losses, final parameters, [(lr, type) after each call], graphs after each call)."""
    module.manual_seed(0)
    model = module.nn.Sequential(module.nn.Linear(3, 4), module.nn.Tanh(), module.nn.Linear(4, 1))
    opt = make_opt(module, model.parameters())

    def step(x, arg):
        return body(module, opt, model, x, arg)

    if compiled:
        ember.compiler.reset()
        step = ember.compile(step, fullgraph=fullgraph)
    x, losses, lrs, counts = module.linspace(-1, 1, 15).reshape(5, 3), [], [], []
    for arg in calls:
        losses.append(float(step(x, arg).detach()))
        lrs.append((opt.param_groups[0]["lr"], type(opt.param_groups[0]["lr"])))
        counts.append(counters["stats"]["unique_graphs"] if compiled else None)
    return losses, [v for p in model.parameters() for v in p.detach().flatten().tolist()], lrs, counts


def _train(module, opt, model, x):
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def _write_before(module, opt, model, x, lr):  # (nanoGPT's warmup loop, lr computed outside)
    for g in opt.param_groups:
        g["lr"] = lr
    return _train(module, opt, model, x)


def _write_after(module, opt, model, x, lr):
    loss = _train(module, opt, model, x)
    opt.param_groups[0]["lr"] = lr * 0.5 + 0.01
    return loss


def _int_warmup(module, opt, model, x, it):  # (an int step counter: lr computed from it in the step)
    lr = (it + 1) * 0.01 / 3 if it < 3 else (40 - it) * 0.00025  # (not 0.01 * (it + 1): a float before
    for g in opt.param_groups:  # an expression of the int reads its value unseen: a graph per value)
        g["lr"] = lr
    return _train(module, opt, model, x)


def _halving(module, opt, model, x, it):  # (a value read from the group)
    for g in opt.param_groups:
        g["lr"] = g["lr"] * 0.5
    return _train(module, opt, model, x)


def _betas(module, opt, model, x, b):  # (a constant, and a tuple holding the argument)
    opt.param_groups[0]["betas"] = (b, 0.99)
    opt.param_groups[0]["weight_decay"] = 0.02
    return _train(module, opt, model, x)


_ADAMW = lambda m, ps: m.optim.AdamW(ps, lr=0.01)  # noqa: E731
_SGD = lambda m, ps: m.optim.SGD(ps, lr=0.1, momentum=0.9)  # noqa: E731
_LRS = [0.01, 0.02, 0.03, 0.025, 0.02, 0.01, 0.005]
_CASES = {  # body, optimizer, arguments, most graphs (ember's over the calls)
    "before": (_write_before, _ADAMW, _LRS, 2),
    "after": (_write_after, _SGD, _LRS, 2),
    "int": (_int_warmup, _SGD, list(range(6)), 3),  # (it < 3 outcomes: 2 ranges, each recorded once traced)
    "halving": (_halving, _SGD, list(range(3)), None),  # (the group's lr read: guarded by value, a graph
    # per value; torch 2.13 takes it as a symbol after one recompile: 2 graphs)
    "betas": (_betas, _ADAMW, [0.9, 0.8, 0.85, 0.7, 0.9], 2),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_group_write_replayed_after_the_graph(case):
    """Losses, parameters and the group's lr (a Python float) after each call equal eager
    torch's; the step is compiled (graphs counted, no eager run each call): before, ember
    ran each of these steps eagerly (0 graphs)."""
    body, make_opt, calls, most = _CASES[case]
    want = _run(torch, make_opt, body, calls, False)
    got = _run(ember, make_opt, body, calls, True)
    assert got[0] == pytest.approx(want[0], rel=1e-5, abs=1e-7)
    assert got[1] == pytest.approx(want[1], rel=1e-5, abs=1e-7)
    assert got[2] == want[2] and all(t is float for _, t in got[2])
    assert got[3][-1] >= 1
    if most is not None:
        assert got[3][-1] <= most


def _item_between(module, opt, model, x, lr):  # (a graph break after the write: pieces replay it)
    for g in opt.param_groups:
        g["lr"] = lr
    loss = model(x).pow(2).mean()
    loss.backward()
    loss.item()
    opt.step()
    opt.zero_grad()
    return loss


@pytest.mark.parametrize("body, fullgraph, most", [(_write_before, True, 2), (_item_between, False, 4)])
def test_group_write_with_fullgraph_and_around_a_graph_break(body, fullgraph, most):
    """``fullgraph=True`` raised Unsupported at the write (a side effect); now one graph a
    recording. Around ``loss.item()`` the pieces each replay their writes: values as eager."""
    want = _run(torch, _SGD, body, _LRS[:4], False)
    got = _run(ember, _SGD, body, _LRS[:4], True, fullgraph)
    assert got[0] == pytest.approx(want[0], rel=1e-5, abs=1e-7) and got[2] == want[2]
    assert got[1] == pytest.approx(want[1], rel=1e-5, abs=1e-7)
    assert 1 <= got[3][-1] <= most


def test_the_update_reads_the_value_written_in_the_same_call():
    """The write comes before ``opt.step()`` in the call: its update uses the new lr at once
    (a graph reading the group at the call's start would use the last call's). With lr 0
    written every other call, the parameters stand still exactly on those calls."""
    ember.compiler.reset()
    model = ember.nn.Linear(2, 1)
    opt = ember.optim.SGD(model.parameters(), lr=0.5)
    step = ember.compile(lambda x, lr: _write_before(ember, opt, model, x, lr))
    x = ember.ones(3, 2)
    for i, lr in enumerate([0.1, 0.2, 0.0, 0.3, 0.0, 0.4]):
        before = model.weight.detach().clone()
        step(x, lr)
        moved = not ember.equal(before, model.weight.detach())
        assert moved == (lr != 0), (i, lr)
        assert opt.param_groups[0]["lr"] == lr


def test_a_write_no_replay_can_repeat_still_runs_eagerly():
    """A list written into a group (no number): the step runs eagerly, as before, and the
    group holds each call's list."""
    ember.compiler.reset()
    model = ember.nn.Linear(2, 1)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)

    def step(x, lr):
        opt.param_groups[0]["seen"] = [lr]
        return _train(ember, opt, model, x)

    compiled = ember.compile(step)
    for lr in (0.1, 0.2, 0.3):
        compiled(ember.ones(3, 2), lr)
        assert opt.param_groups[0]["seen"] == [lr]
    assert counters["stats"]["unique_graphs"] == 0
