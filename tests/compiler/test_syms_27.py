"""Int and float arguments, session 27 (compiler/group_writes.py, traced_ints.py ``FloatInt``,
traced_floats.py): graphs counted against torch 2.13's CompileCounter over the same calls,
values (and errors) against eager, at values far from the recorded ones too."""

import math

import pytest
import torch
import torch._dynamo

from graph_counts import graph_counts

import ember
from ember._dynamo.utils import counters


def _train_step(module, calls, write_after=False):
    """A compiled step writing ``lr`` into the optimizer's groups (before its ``step``, or after
    it), run over ``calls``: (graphs after each call, losses, final parameters and lr)."""
    module.manual_seed(0)
    lin = module.nn.Linear(3, 2)
    opt = module.optim.SGD(lin.parameters(), lr=0.1, momentum=0.5)

    def step(x, lr):
        if not write_after:
            for g in opt.param_groups:
                g["lr"] = lr
        loss = lin(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        if write_after:
            opt.param_groups[0]["lr"] = lr
        return loss

    if module is ember:
        ember.compiler.reset()
    compiled = ember.compile(step) if module is ember else step  # (torch eager: the values)
    x, counts, losses = module.ones(4, 3), [], []
    for lr in calls:
        losses.append(round(float(compiled(x, lr)), 4))
        counts.append(counters["stats"]["unique_graphs"] if module is ember else None)
    return counts, losses, [v for p in lin.parameters() for v in p.detach().flatten().tolist()], opt.param_groups[0]["lr"]


# the argument the optimizer was made with first (the write changes no value), values coming back
_LRS = (0.1, 0.2, 0.1, 0.2, 0.1, 1.0, 0.1, 0.05, 0.1)


@pytest.mark.parametrize("write_after", [False, True])
def test_group_write_in_compiled_step(write_after):
    """``g["lr"] = lr`` inside a compiled step: a replay of the first graph did not write it
    (the group kept the last eager call's lr: losses from the third call on were wrong). The
    write was then a side effect: the step ran eagerly (0 graphs). Now it is replayed after the
    graph (group_replay.py): 2 graphs (torch 2.13's CompileCounter counts 5 frames over these
    calls, its writes replayed after its graphs)."""
    want = _train_step(torch, _LRS, write_after)[1:]
    got_counts, *got = _train_step(ember, _LRS, write_after)
    assert got[0] == pytest.approx(want[0], rel=1e-5) and got[1] == pytest.approx(want[1], rel=1e-5)
    assert got[2] == want[2]
    assert 1 <= got_counts[-1] <= 2


def _round_arith(x, lr):
    y = x * (round(lr) + 1)
    return y - math.floor(lr) * 2 + (-math.ceil(lr)) * 0.25 + x * (3 - round(lr))


def _floor_branch(x, lr):
    if math.floor(lr) > 2:
        return x + math.ceil(lr) / 4
    if round(lr):
        return x * 2
    return x - 1


def _float_left(x, lr):
    r = round(lr)
    return x * (0.5 * r) + x * (1.5 * math.floor(lr)) + (2.5 < round(lr))


# ties (half to even), negatives, -0.0, values far from the recorded ones, then nan and inf
_FLOATS = [(v,) for v in (0.3, 0.7, 1.5, 2.5, -0.5, -1.5, -2.7, -0.0, 3.2, 7.9, 1e6 + 0.5, -3e9, 0.6,
                          float("nan"), float("inf"), 2.4)]


@pytest.mark.parametrize("fn", [_round_arith, _floor_branch])
def test_int_of_float_in_arithmetic_and_branches(fn):
    """``round(lr) + 1``, ``math.floor(lr) * 2``, ``math.ceil(lr) / 4``, ``if math.floor(lr) > 2``,
    ``if round(lr):``: torch 2.13 traces them (2-4 graphs); ember took each as a use of ``lr``, a
    graph per value up to the recompile limit."""
    want_counts, want = graph_counts(fn, torch, _FLOATS)
    got_counts, got = graph_counts(fn, ember, _FLOATS)
    assert got_counts == want_counts
    for args, a, b in zip(_FLOATS, got, want):
        assert a == b, args


def test_float_left_of_int_of_float():
    """``0.5 * round(lr)``, ``2.5 < round(lr)``: the float's own operator reads the int's value
    unseen. ember replayed the first traced value's product at every lr (0.5 where 2.0 was due);
    now a use: each value its graph (torch 2), the values right."""
    want_counts, want = graph_counts(_float_left, torch, _FLOATS)
    got_counts, got = graph_counts(_float_left, ember, _FLOATS)
    for args, a, b in zip(_FLOATS, got, want):
        assert a == b, args


def _int_after_float(x, k):
    return x * (k * 0.3) + k - (x * 2.5 - k) * 2


def _float_then_int(x, k):
    return x * (x.shape[0] * 0.5 + k)  # (a float left of ``k``: Python adds, the int is specialised)


@pytest.mark.parametrize("fn", [_int_after_float, _float_then_int])
def test_int_after_a_tensor_expression_holding_a_float(fn):
    """``x * (k * 0.3) + k``: the left of ``+ k`` holds the float 0.3 but is a tensor, whose own
    operator takes ``k`` as a symbol: 2 graphs as torch (ember specialised ``k``: 8). A float
    computed before ``+ k`` (``x.shape[0] * 0.5 + k``) still specialises it (values right)."""
    calls = [(k,) for k in (*range(1, 10), 10 ** 6 + 3, -7, 2 ** 40)]
    want_counts, want = graph_counts(fn, torch, calls)
    got_counts, got = graph_counts(fn, ember, calls)
    if fn is _int_after_float:
        assert got_counts == want_counts
    for args, a, b in zip(calls, got, want):
        assert a == pytest.approx(b, rel=1e-6), args
