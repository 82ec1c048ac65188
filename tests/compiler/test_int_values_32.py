"""Ints Python makes of a changing float that torch 2.13 takes as symbols after one recompile (2
graphs, ``CompileCounter``) where ember made a graph per value (issue 10, session 32): an int64
fill ``full((2,), round(lr))``, ``int(lr) ** 2``, ``abs(round(lr))``, ``round(lr) >> 1``,
``round(lr) // round(lr * 0.5 + 1)``. Graph counts are compared call by call, values (and
errors: past int64, a zero divisor) with torch's by repr."""
import pytest
import torch

from graph_counts import graph_counts

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
