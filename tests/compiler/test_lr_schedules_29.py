"""Learning-rate schedules computed in Python inside a compiled step (session 29), against torch
2.13: a float constant, global or closure's float on the left of an int counter (``0.01 * (it + 1)``, nanoGPT's
warmup ``learning_rate * (it + 1) / (warmup_iters + 1)``) is one symbol, as torch traces it
(compiler/float_constants.py); a graph constant equal to a traced float by coincidence
(``loss.backward()``'s seed, ``ones(())``) does not specialise it, while a float Python passed
on unseen still does (traced_floats.note_unseen); a group write of a value read from the group
(``g["lr"] = g["lr"] * 0.5``) gives eager's learning rates (guards.read_groups)."""
import struct

import pytest
import torch

import ember
from graph_counts import compiled_afresh, graph_counts

SCALE, LEARNING_RATE, WARMUP_ITERS = 0.01, 6e-3, 4
CALLS = [(k,) for k in range(5)]

LEFT_FLOATS = {  # (each a graph per value of k in ember before session 29)
    "a constant before the int": lambda x, k: x * (0.01 * (k + 1)),
    "a constant plus the int": lambda x, k: x * (0.5 + k),
    "a constant minus the int": lambda x, k: x * (2.0 - k),
    "nanoGPT's warmup, a global before the int": lambda x, k: x * (LEARNING_RATE * (k + 1) / (WARMUP_ITERS + 1)),
    "a closure's float before the int": (lambda base: lambda x, k: x * (base * (k + 1)))(0.01),
    "a constant equal to ones(())'s at k = 1": lambda x, k: x * (1.0 * k) * _ones(x),
}


def _ones(x):
    return (ember if isinstance(x, ember.Tensor) else torch).ones(())


@pytest.mark.parametrize("name", list(LEFT_FLOATS))
def test_a_float_before_an_int_counter_is_one_symbol(name):
    fn = LEFT_FLOATS[name]
    counts, results = graph_counts(fn, ember, CALLS)
    want_counts, want = graph_counts(fn, torch, CALLS)
    assert [v for r in results for v in r] == pytest.approx([v for r in want for v in r], rel=1e-6)
    assert counts == want_counts == [1, 2, 2, 2, 2]


def _warmup(module):
    class Warmup(module.nn.Module):
        def forward(self, x, k):
            return x * (0.01 * (k + 1))
    return Warmup()


def test_a_compiled_modules_forward_is_one_symbol():
    runs = {}
    for module in (torch, ember):
        compiled, count = compiled_afresh(_warmup(module), module)
        runs[module] = [(compiled(module.arange(3.0), k).tolist(), count()) for k in range(4)]
    assert [v for r, _ in runs[ember] for v in r] == pytest.approx([v for r, _ in runs[torch] for v in r], rel=1e-6)
    assert [c for _, c in runs[ember]] == [c for _, c in runs[torch]] == [1, 2, 2, 2]


def _scaled(x, k):
    return x * (SCALE * (k + 1))


def test_a_global_before_the_int_is_still_guarded():
    global SCALE
    compiled = ember.compile(_scaled)
    x = ember.arange(3.0)
    try:
        for k in range(4):
            assert compiled(x, k).tolist() == _scaled(x, k).tolist()
        SCALE = 0.02
        assert compiled(x, 5).tolist() == _scaled(x, 5).tolist() == pytest.approx([0.0, 0.12, 0.24])
    finally:
        SCALE = 0.01


UNSEEN = {  # (Python reads the traced float's value without its methods: its value guarded)
    "struct": lambda x, k: x * struct.unpack("d", struct.pack("d", 0.5 * k))[0],
    "tensor()": lambda x, k: x * ember.tensor([0.5 * k, 1.0]).sum(),
}


@pytest.mark.parametrize("name", list(UNSEEN))
def test_a_float_passed_on_unseen_keeps_eagers_values(name):
    fn = UNSEEN[name]
    compiled = ember.compile(fn)
    x = ember.arange(3.0)
    for k in range(6):
        assert compiled(x, k).tolist() == fn(x, k).tolist(), k


def _halving(module, compiled, steps=6):
    """(loss, lr) of each of ``steps`` SGD steps whose compiled step halves the group's lr first."""
    module.manual_seed(0)
    model = module.nn.Linear(3, 1)
    opt = module.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x):
        for g in opt.param_groups:
            g["lr"] = g["lr"] * 0.5
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    step = module.compile(step) if compiled else step
    x = module.linspace(-1, 1, 6).reshape(2, 3)
    return [(float(step(x).detach()), opt.param_groups[0]["lr"]) for _ in range(steps)]


def test_a_group_write_of_the_groups_value_gives_eagers_rates():
    ember.compiler.reset()
    got, want = _halving(ember, True), _halving(torch, False)
    assert [lr for _, lr in got] == [lr for _, lr in want] == [0.1 * 0.5 ** n for n in range(1, 7)]
    assert [loss for loss, _ in got] == pytest.approx([loss for loss, _ in want], rel=1e-5)


def test_a_closures_float_before_the_int_is_still_guarded():
    base = 0.01

    def fn(x, k):
        return x * (base * (k + 1))
    compiled, x = ember.compile(fn), ember.arange(3.0)
    for k in range(4):
        assert compiled(x, k).tolist() == fn(x, k).tolist()
    base = 0.02
    assert compiled(x, 5).tolist() == fn(x, 5).tolist() == pytest.approx([0.0, 0.12, 0.24])
