"""Ints Python makes of a changing float, and floats read from submodules, that torch 2.13 takes
as symbols after one recompile (2 graphs) where ember made a graph per value: ``int(lr * 2) //
3`` (a remainder or floor of such an int), ``self.c * round(lr)`` (an attribute's float times
it), ``new_full((2,), round(lr))`` (a fill), ``0.5 * round(lr)`` past int64's range (no op takes
the int), ``self.block.scale`` read in the parent's forward, and a bound of inf in ``hardtanh``,
``celu``, ``softplus`` (a third graph). Graph counts are compared with torch's CompileCounter
call by call, values with torch's (by repr) over far values, negatives, 0 and ties."""
import math

import pytest
import torch

from graph_counts import compiled_afresh, graph_counts, run

import ember

LRS = [(v,) for v in (0.7, 1.9, 3.1, 10.25, -4.2, 1e10, -0.0, 2.5, -1e15)]


def module_of(x):
    """The module ``x`` comes from."""
    return torch if isinstance(x, torch.Tensor) else ember


def _floor_of_int(x, lr):
    return x + int(lr * 2) // 3 - round(lr) % 4 + int(lr) // 2.5


def _fill_of_round(x, lr):
    return module_of(x).cat([x.new_full((2,), round(lr)), module_of(x).full((2,), math.floor(lr), dtype=x.dtype)])


def _half_of_round(x, lr):
    return x * (0.5 * round(lr))


@pytest.mark.parametrize("fn", [_floor_of_int, _fill_of_round, _half_of_round])
def test_an_int_of_a_float_is_a_symbol(fn):
    want_counts, want = graph_counts(fn, torch, LRS)
    got_counts, got = graph_counts(fn, ember, LRS)
    assert got_counts == want_counts == [1] + [2] * (len(LRS) - 1)
    assert repr(got) == repr(want)


def test_an_int_no_op_takes_may_pass_int64():
    """``0.5 * round(lr)`` is a float whatever the int (torch 2); ``x * round(lr)`` past int64
    raises eager's error on a graph of its own (the guard checks the range an op takes)."""
    lrs = [(v,) for v in (0.7, 1.9, 3.1, 1e19, 3e20, -1e25, 5.6)]
    want_counts, want = graph_counts(_half_of_round, torch, lrs)
    got_counts, got = graph_counts(_half_of_round, ember, lrs)
    assert got_counts == want_counts == [1] + [2] * 6
    assert repr(got) == repr(want)
    _, got = graph_counts(lambda x, lr: x * round(lr), ember, lrs)
    assert got == [run(lambda x, lr: x * round(lr), ember, v) for v in lrs]  # (eager's, uncompiled)
    assert got[4] == ("OverflowError", "int too big to convert") and got[3][1] == float(ember.tensor(1e19))
    for fn in (_fill_of_round, lambda x, lr: ember.full((2,), round(lr) * 2 + 1, dtype=ember.float64) * x[:2]):
        _, got = graph_counts(fn, ember, lrs)  # (a fill past int64: eager's OverflowError, not a value)
        assert got == [run(fn, ember, v) for v in lrs]


def _scaled_by_round(module):
    class Scaled(module.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = 0.25

        def forward(self, x, lr):
            return x * (self.c * round(lr)) + round(lr) * self.c - self.c * math.floor(lr)
    return Scaled()


def test_an_attributes_float_times_an_int_of_a_float():
    got_counts, got = graph_counts(_scaled_by_round(ember), ember, LRS)
    want_counts, want = graph_counts(_scaled_by_round(torch), torch, LRS)
    assert got_counts == want_counts == [1] + [2] * (len(LRS) - 1)
    assert repr(got) == repr(want)


def _parent(module):
    class Block(module.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 0.5

    class Parent(module.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.blocks = module.nn.Sequential(Block())

        def forward(self, x):
            return x * self.block.scale + self.blocks[0].scale
    return Parent()


SCALES = (0.5, 0.7, -3.0, 0.0, 1e10, -0.0, 2.5, -1e30, math.inf, 0.7, math.nan, 1.5)


def test_a_submodules_float_is_a_symbol():
    """``self.block.scale`` changed between calls (and ``self.blocks[0].scale``, through a
    Sequential): torch 2, ember a graph per value; values as eager's on every call. (torch 2.13
    makes a third graph at nan, ember keeps 2.)"""
    found = {}
    for module in (torch, ember):
        model = _parent(module)
        compiled, count = compiled_afresh(model, module)
        counts, results = [], []
        for v in SCALES:
            model.block.scale = v
            model.blocks[0].scale = -v / 4
            results.append(run(compiled, module, ()))
            counts.append(count())
            assert repr(results[-1]) == repr(run(model, module, ())), v  # (eager's, this call)
        found[module] = counts, results
    assert found[ember][0] == [1] + [2] * (len(SCALES) - 1)
    assert found[torch][0] == [1] + [2] * 9 + [3, 3]
    assert repr(found[ember][1]) == repr(found[torch][1])


def _bounded(x, v):
    F = module_of(x).nn.functional
    return module_of(x).cat([F.hardtanh(x - 3, -v, v), F.celu(x - 3, v), F.softplus(x * 7 - 20, 1.0, v)])


def test_a_bound_of_inf_shares_the_graph():
    """A bound of inf passes the range check as one in range does (one comparison, guarded):
    torch's 2 graphs, not 3; a finite bound past float32 still raises eager's RuntimeError."""
    calls = [(v,) for v in (1.0, 2.0, 3.0, math.inf, 0.5, 7.0, 1e300, 2.5)]
    want_counts, want = graph_counts(_bounded, torch, calls)
    got_counts, got = graph_counts(_bounded, ember, calls)
    assert got_counts[:6] == want_counts[:6] == [1] + [2] * 5
    assert got[6] == want[6]
    for a, b in zip(got[:6] + got[7:], want[:6] + want[7:]):
        assert a == pytest.approx(b, rel=1e-6, nan_ok=True)  # (celu, softplus: within an ulp of torch's)
    assert got[6] == ("RuntimeError", "value cannot be converted to type float without overflow")


def _summed_by_round(module):
    linear = module.nn.Linear(3, 3)
    with module.no_grad():
        linear.weight.copy_(module.arange(9.0).reshape(3, 3) / 8 - 0.5)
        linear.bias.fill_(0.25)
    return lambda x, lr: linear(x.reshape(2, 3)).sum(1) * round(lr)


def test_an_int_of_a_float_equal_to_a_dim_of_the_graph():
    """``round(lr)`` at 1 or 2 beside a module's transposes and ``sum(1)``: the plain ints there
    came from ember's code and the user's ints, not from the traced int (a graph per value
    before: a use of ``lr`` at its first dynamic recording)."""
    lrs = [(v,) for v in (0.4, 1.2, 2.2, 3.3, 0.6, -1.7, 2.9, 1e6)]
    want_counts, want = graph_counts(_summed_by_round(torch), torch, lrs)
    got_counts, got = graph_counts(_summed_by_round(ember), ember, lrs)
    assert got_counts == want_counts == [1] + [2] * 7
    for a, b in zip(got, want):
        assert a == pytest.approx(b, rel=1e-6)
