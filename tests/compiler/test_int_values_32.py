"""Ints Python makes of a changing float that torch 2.13 takes as symbols after one recompile (2
graphs, ``CompileCounter``) where ember made a graph per value (issue 10, session 32): an int64
fill ``full((2,), round(lr))``, ``int(lr) ** 2``, ``abs(round(lr))``, ``round(lr) >> 1``,
``round(lr) // round(lr * 0.5 + 1)``; and ``x[:, :round(lr)]``, a size torch takes as a symbol
(ember: after one graph of its own, an int position, ``compiler/closure_ints.py``). Graph counts
are compared call by call, values (and errors: past int64, a zero divisor, nan) with torch's by repr."""
import math

import pytest
import torch

from graph_counts import compiled_afresh, graph_counts

import ember

LRS = [(v,) for v in (0.7, 3.1, -4.2, 1e10, -0.0, 2.5, -1e15)]


def module_of(x):
    """The module ``x`` comes from."""
    return torch if isinstance(x, torch.Tensor) else ember


def _int64_fill(x, lr):
    t = module_of(x)
    return t.cat([t.full((2,), round(lr)), x.long().new_full((2,), abs(round(lr)) * 3 - 7)]) + 1


def _power_and_abs(x, lr):
    return x * (int(lr) ** 2) + abs(round(lr))


def _shift_and_floor(x, lr):
    return x * (round(lr) >> 1) + (round(lr) // round(lr * 0.5 + 1)) - (round(lr) & 6)


@pytest.mark.parametrize("fn", [_int64_fill, _power_and_abs, _shift_and_floor])
def test_an_int_of_a_float_in_int_arithmetic_is_a_symbol(fn):
    want_counts, want = graph_counts(fn, torch, LRS)
    got_counts, got = graph_counts(fn, ember, LRS)
    assert got_counts == want_counts == [1] + [2] * (len(LRS) - 1)
    assert repr(got) == repr(want)


def test_past_int64_and_a_zero_divisor_are_eagers():
    """A fill past int64 (1e19), one a double cannot hold (``3 * 2**60 - 7``), a divisor of 0
    (lr = -2.0): torch's errors and values, on the graphs the guards pick."""
    lrs = [(v,) for v in (0.7, 1.9, 1e19, 2.0 ** 60, -2.0, 3.1, 2.0 ** 62)]
    for fn in (_int64_fill, _shift_and_floor):
        _, want = graph_counts(fn, torch, lrs)
        _, got = graph_counts(fn, ember, lrs)
        assert repr(got) == repr(want), fn.__name__
    assert want[4][0] == "ZeroDivisionError"


def _sliced(x, lr):
    return x.reshape(2, 3).repeat(1, 3)[:, :round(lr)] * lr


def test_an_int_of_a_float_as_a_slice_bound():
    """torch 2 graphs over these values; ember 3 (the second call's graph specialises ``lr``,
    then ``round(lr)`` is a size symbol; was a graph per value); nan (eager's ValueError) and
    1e300 (an int past int64: a value of its own) on graphs of their own."""
    lrs = [(v,) for v in (1.2, 2.6, 3.4, 8.4, 4.5, math.nan, 1e300)]
    want_counts, want = graph_counts(_sliced, torch, lrs)
    got_counts, got = graph_counts(_sliced, ember, lrs)
    assert repr(got) == repr(want) and want[5][0] == "ValueError"
    assert want_counts[:5] == [1] + [2] * 4 and got_counts[:5] == [1, 2] + [3] * 3


def test_a_slice_bound_beside_closure_numbers():
    """A graph recorded before ``round(lr)`` became a derived int, reading a closure's float, runs
    again after (its float read stays where it was recorded, past the closure's int): torch's values."""
    def run(module):
        c, n = 0.5, 2

        def f(x, lr):
            return x[:round(lr)] * c + n * lr
        compiled = compiled_afresh(f, module)[0]
        out = []
        for c, n, lr in ((0.5, 2, 1.2), (0.25, 2, 2.6), (1.5, 3, 3.4), (0.5, 2, 2.6)):
            out.append(compiled(module.arange(10.0), lr).tolist())
        return out
    assert repr(run(ember)) == repr(run(torch))
