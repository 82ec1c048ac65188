"""Floats read from a global, a dict, an object or a closure (``x * cfg["lr"]``, ``CFG.lr``,
``self.base_lr * (it + 1)``), changed by the user between calls (a schedule written into a
config) and inside the call: torch 2.13 takes them as symbols after one recompile (2 graphs),
ember too (compiler/read_floats.py). Graph counts are compared with torch's CompileCounter
call by call, values with torch's (by repr: -0.0 told from 0.0) over values far from the first."""
import dataclasses
import types

import pytest
import torch

from graph_counts import compiled_afresh, graph_counts, run

import ember

VALUES = (0.5, 1.5, 2.7, 10.25, -3.7, 1e10, -0.0, 1e-3, 3.0)

CFG = {"lr": 0.5}
NS = types.SimpleNamespace(lr=0.5, inner={"scale": 2.0})
LR = 0.5


@dataclasses.dataclass
class _Config:
    lr: float = 0.5


DC = _Config()


def _set_globals(v):
    global LR
    CFG["lr"], NS.lr, NS.inner["scale"], DC.lr, LR = v, v * 2, v - 1, -v, v / 4


def _globals(x):
    return x * CFG["lr"] + NS.lr * x - NS.inner["scale"] + x / DC.lr * 0 + LR


def _closure():
    lr, box = 0.5, [0.5]

    def f(x):
        return x * lr - box[0]

    def set_(v):
        nonlocal lr
        lr, box[0] = v, v * 3
    return f, set_


def _sweep(fn, set_value, module, values=VALUES, args=lambda v: ()):
    """``(counts, results)`` of ``fn`` compiled afresh by ``module``, ``set_value(v)`` before each call."""
    compiled, count = compiled_afresh(fn, module)
    counts, results = [], []
    for v in values:
        set_value(v)
        results.append(run(compiled, module, args(v)))
        counts.append(count())
    return counts, results


@pytest.mark.parametrize("case", ["globals", "closure"])
def test_floats_read_from_dicts_objects_and_closures_are_symbols(case):
    """``cfg["lr"]``, ``NS.lr``, ``NS.inner["scale"]``, a dataclass's field, a global float, a
    closure's float and a list in the closure, all changed before each call: 2 graphs as torch,
    values as torch's."""
    got = want = None
    for module in (torch, ember):
        fn, set_value = (_globals, _set_globals) if case == "globals" else _closure()
        counts, results = _sweep(fn, set_value, module)
        got, want = (counts, results), got
    assert got[0] == want[0] == [1] + [2] * (len(VALUES) - 1)
    assert repr(got[1]) == repr(want[1])


def _step(x):
    SCHEDULE["lr"] = SCHEDULE["lr"] * 0.5  # (a schedule written into the config inside the call)
    return x * SCHEDULE["lr"]


SCHEDULE = {"lr": 0.5}


def test_a_float_written_inside_the_call_and_between_calls_keeps_eagers_values():
    """The user writes the dict between calls and the function writes it too: each call's result
    and the dict after it are eager's (no stale value: the read written is a use)."""
    seen = []
    for module in (torch, ember):
        compiled, _ = compiled_afresh(_step, module)
        out = []
        for v in (*VALUES, 1e300, 7.0, 7.0):
            SCHEDULE["lr"] = v
            out.append((run(compiled, module, ()), repr(SCHEDULE["lr"])))
        seen.append(out)
    assert repr(seen[0]) == repr(seen[1])


def _branch(x):
    return x * NS.lr if NS.lr > 1.0 else x - NS.lr


def test_a_comparison_of_a_read_float_is_guarded_by_its_outcome():
    """``if NS.lr > 1.0``: each outcome a graph (torch's 3 over these values), values as torch's."""
    values = (0.5, 1.5, 2.7, -3.7, 10.25, 0.25, 1e10, -0.0, 1.0)
    want_counts, want = _sweep(_branch, _set_globals, torch, values)
    got_counts, got = _sweep(_branch, _set_globals, ember, values)
    assert got_counts == want_counts and max(got_counts) <= 3
    assert repr(got) == repr(want)


def _counter(x, lr, it):
    return x * (lr * (it + 1)) + 0.25 * it


def test_a_float_argument_times_an_int_counter_is_a_symbol():
    """``lr * (it + 1)``: a float of both (Python's at each call), with lr changing or not: 2 graphs
    as torch, values as torch's."""
    for calls in ([(0.5 + k, k) for k in (1, 2, 3, 7, 40, -6, 0)], [(0.5, k) for k in (1, 2, 3, 7, 40, -6, 0)]):
        want_counts, want = graph_counts(_counter, torch, calls)
        got_counts, got = graph_counts(_counter, ember, calls)
        assert got_counts == want_counts == [1] + [2] * (len(calls) - 1)
        assert repr(got) == repr(want)


def _module(module):
    class Warmup(module.nn.Module):
        def __init__(self):
            super().__init__()
            self.base_lr, self.cfg = 0.01, types.SimpleNamespace(lr=0.5)

        def forward(self, x, it):
            return x * self.cfg.lr + self.base_lr * (it + 1)
    return Warmup()


def test_a_module_attribute_float_times_an_int_argument_is_a_symbol():
    """``self.base_lr * (it + 1)`` with ``it`` counting and ``self.cfg.lr`` changed by the user: 2
    graphs as torch, values as torch's."""
    results = []
    for module in (torch, ember):
        model = _module(module)
        compiled, count = compiled_afresh(model, module)
        out = []
        for k, v in enumerate(VALUES):
            model.cfg.lr = v
            out.append((run(compiled, module, (k,)), count()))
        results.append(out)
    assert [c for _, c in results[1]] == [c for _, c in results[0]] == [1] + [2] * (len(VALUES) - 1)
    assert repr(results[0]) == repr(results[1])


def _scaled(x):
    return x * CFG["lr"]


def _calls_a_helper(x):
    return _scaled(x) + 1


def test_a_float_read_by_a_called_function_is_a_symbol():
    """``helper(x)`` reading ``cfg["lr"]``: 2 graphs as torch, values as torch's."""
    want_counts, want = _sweep(_calls_a_helper, _set_globals, torch)
    got_counts, got = _sweep(_calls_a_helper, _set_globals, ember)
    assert got_counts == want_counts == [1] + [2] * (len(VALUES) - 1)
    assert repr(got) == repr(want)


def _local_before_counter(x, it):
    base = 0.25
    return x * (base * (it + 1)) - base * it


def test_a_local_float_before_an_int_counter_is_a_symbol():
    """``base = 0.25; base * (it + 1)``: the local holds the constant's ConstFloat, 2 graphs as
    torch, values as torch's."""
    calls = [(k,) for k in (1, 2, 3, 7, 40, -6, 0)]
    want_counts, want = graph_counts(_local_before_counter, torch, calls)
    got_counts, got = graph_counts(_local_before_counter, ember, calls)
    assert got_counts == want_counts == [1] + [2] * (len(calls) - 1)
    assert repr(got) == repr(want)


def _training(module):
    """A step scaling its loss by ``SCHEDULE["lr"]`` and writing it into the optimizer's group."""
    lin = module.nn.Linear(3, 2)
    with module.no_grad():
        lin.weight.copy_(module.arange(6.0).reshape(2, 3) / 10)
        lin.bias.zero_()
    opt = module.optim.SGD(lin.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = (lin(x) * SCHEDULE["lr"]).sum() + (x * SCHEDULE["lr"]).sum()
        loss.backward()
        opt.param_groups[0]["lr"] = SCHEDULE["lr"]
        opt.step()
        return loss
    compiled = step if module is torch else compiled_afresh(step, module)[0]  # (torch eager: the reference)
    losses = []
    for v in (0.1, 0.2, 0.05, 1.5, -0.3, 2.0):
        SCHEDULE["lr"] = v
        losses.append(float(compiled(module.ones(4, 3)).detach()))
    return losses, lin.weight.tolist(), opt.param_groups[0]["lr"]


def test_a_read_float_written_into_an_optimizer_group_and_scaling_a_loss():
    """The group write (replayed from the read float) and the backward of ``loss * lr``: the
    losses, weights and the group's lr as torch's eager (the replay once indexed past the arguments)."""
    want, got = _training(torch), _training(ember)
    assert torch.allclose(torch.tensor(got[0]), torch.tensor(want[0]), rtol=1e-6)
    assert torch.allclose(torch.tensor(got[1]), torch.tensor(want[1]), rtol=1e-6) and got[2] == want[2]
