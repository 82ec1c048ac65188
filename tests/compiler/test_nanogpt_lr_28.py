"""nanoGPT's learning-rate schedule (``get_lr(it)``: linear warmup, cosine decay, a floor)
computed from an int step counter inside a compiled training step that writes it into AdamW's
groups (compiler/group_replay.py): losses and parameters against eager torch 2.13 over steps
crossing warmup into decay and past it, and graph counts against torch's (a CompileCounter)."""
import math

import pytest
import torch

import ember
from graph_counts import compiled_afresh, graph_counts

LEARNING_RATE, MIN_LR, WARMUP_ITERS, LR_DECAY_ITERS = 6e-3, 6e-4, 4, 10
STEPS = range(14)


def get_lr(it):  # (nanoGPT's train.py, its constants smaller)
    if it < WARMUP_ITERS:
        return LEARNING_RATE * (it + 1) / (WARMUP_ITERS + 1)
    if it > LR_DECAY_ITERS:
        return MIN_LR
    decay_ratio = (it - WARMUP_ITERS) / (LR_DECAY_ITERS - WARMUP_ITERS)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return MIN_LR + coeff * (LEARNING_RATE - MIN_LR)


def _train(module, compiled):
    """(losses, final parameters, lr after each step, graph counts after each step)."""
    module.manual_seed(0)
    model = module.nn.Sequential(module.nn.Linear(3, 4), module.nn.Tanh(), module.nn.Linear(4, 1))
    opt = module.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.1)

    def step(x, it):
        lr = get_lr(it)
        for g in opt.param_groups:
            g["lr"] = lr
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    count = None
    if compiled:
        step, count = compiled_afresh(step, module)
    x, losses, lrs, counts = module.linspace(-1, 1, 15).reshape(5, 3), [], [], []
    for it in STEPS:
        losses.append(float(step(x, it).detach()))
        lrs.append(opt.param_groups[0]["lr"])
        counts.append(count() if count else None)
    return losses, [v for p in model.parameters() for v in p.detach().flatten().tolist()], lrs, counts


@pytest.fixture(scope="module")
def runs():
    return {name: _train(module, compiled) for name, module, compiled in (
        ("torch", torch, False), ("torch compiled", torch, True), ("ember", ember, True))}


def test_nanogpt_schedule_in_a_compiled_step_matches_eager_torch(runs):
    want_losses, want_params, want_lrs, _ = runs["torch"]
    losses, params, lrs, _ = runs["ember"]
    assert lrs == want_lrs == [get_lr(it) for it in STEPS]
    assert losses == pytest.approx(want_losses, rel=1e-5, abs=1e-6)
    assert params == pytest.approx(want_params, rel=1e-5, abs=1e-6)


def test_nanogpt_schedule_graph_counts_match_torch(runs):
    """No graph per step: after the warm-up, the steps that add a graph are torch's, where the
    schedule's branch changes (``it = 4`` into the decay, ``it = 11`` onto the floor). torch counts
    two frames a step (it splits the optimizer's step off) and makes its dynamic frames at the
    first change; ember counts one graph and makes its dynamic one at the second. ember specialised
    each warmup step (``LEARNING_RATE * (it + 1)``: a float before the int) and, at ``it = 4``,
    every later one (``coeff`` is 1.0 there, as ``loss.backward()``'s seed is) before session 29."""
    def added(counts):
        return [b - a for a, b in zip(counts, counts[1:])]
    assert added(runs["ember"][3])[2:] == added(runs["torch compiled"][3])[2:] == [0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0]
    assert runs["ember"][3][-1] == 4


SCHEDULE_PIECES = {  # (each a graph per value of k in ember before session 28: 6 for the 6 calls)
    "a float before a true division of the int": lambda x, k: x * (0.5 * ((k - 4) / 6)),
    "math.cos of the int's float": lambda x, k: x * (0.5 * (1.0 + math.cos(math.pi * ((k - 4) / 6)))),
    "nanoGPT's decay": lambda x, k: x * (MIN_LR + 0.5 * (1.0 + math.cos(math.pi * ((k - 4) / 6))) * (
        LEARNING_RATE - MIN_LR)),
}


@pytest.mark.parametrize("name", list(SCHEDULE_PIECES))
def test_the_cosine_decay_of_an_int_is_one_symbol(name):
    fn = SCHEDULE_PIECES[name]
    calls = [(k,) for k in (5, 6, 7, 9, 13, 21)]
    counts, results = graph_counts(fn, ember, calls)
    want_counts, want = graph_counts(fn, torch, calls)
    assert [v for r in results for v in r] == pytest.approx([v for r in want for v in r], rel=1e-6)
    assert counts == want_counts == [1, 2, 2, 2, 2, 2]
