"""``min``/``max`` of int arguments (compiler/traced_math.py ``patch_minmax``, symbolic.py's
``"min"``/``"max"`` expressions) and ``round(lr)``, ``math.floor``/``ceil``/``trunc`` of a float
argument (traced_ints.py ``FloatInt``): torch 2.13 traces them (2 graphs over 20 values), where
ember guarded each side of the corner, or each value. Graphs are counted against torch's
CompileCounter, call by call; values (and exceptions) against eager."""
import math

import pytest
import torch
import torch._dynamo

from graph_counts import graph_counts, run

import ember
from ember._dynamo.utils import counters
from ember.compiler.symbolic import evaluate, minimum, symbol


def _low(x, k):
    return x * min(k, 8)


def _high(x, k):
    return x * max(k, 1) + max(-3, k, 2)


def _pair(x, k, j):
    return x * min(k, j) - max(j, k)


def _rounded(x, lr):
    return x * round(lr) + math.trunc(lr)


def _floors(x, lr):
    return x * math.floor(lr) - math.ceil(lr)


@pytest.mark.parametrize("fn, calls", [
    (_low, [(k,) for k in range(20)]),
    (_high, [(k,) for k in (*range(-10, 10), 2 ** 40, -2 ** 40)]),
    (_pair, [(k, 20 - k) for k in range(20)]),
    # .5 ties (round half to even), negatives, -0.0, then nan and inf: eager's ValueError, OverflowError
    (_rounded, [(v,) for v in (0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 0.0, -0.0, 3.2, 7.9, float("nan"), float("inf"))]),
    (_floors, [(0.37 * i - 3,) for i in range(18)] + [(float("-inf"),), (float("nan"),)]),
])
def test_min_max_counts_and_values(fn, calls):
    want_counts, want = graph_counts(fn, torch, calls)
    got_counts, got = graph_counts(fn, ember, calls)
    assert got_counts == want_counts
    for args, a, b in zip(calls, got, want):
        assert a == b == run(fn, ember, args), args


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_huge_float_to_int():
    """``x * math.floor(lr)`` with an int past [-2**63, 2**64) (1e20, +-1e300): torch's eager
    raises OverflowError, and so do ember's eager and compiled calls (the graph's guard refuses
    such an int, and the recording that follows raises as eager); 2 graphs for the rest."""
    ember.compiler.reset()
    compiled = ember.compile(_floors)
    for v in (1.5, 2.5, 1e300, -1e300, 1e20, 3.5):
        want = run(_floors, torch, (v,))
        assert repr(run(compiled, ember, (v,))) == repr(run(_floors, ember, (v,))) == repr(want), v
        assert (want[0] == "OverflowError") is (abs(v) > 1e19), v
    assert counters["stats"]["unique_graphs"] == 2


def test_min_max_expressions():
    s = symbol("i0")
    low, high = minimum("min", s, 8), minimum("max", 1, s)
    assert repr(low) == "min(i0, 8)" and repr(high) == "max(1, i0)"
    assert [evaluate(low, {"i0": v}) for v in (-5, 8, 9)] == [-5, 8, 8]
    assert [evaluate(high, {"i0": v}) for v in (-5, 1, 9)] == [1, 1, 9]
    assert low.c_code(str) == "(i0 < 8 ? i0 : 8)" and minimum("min", 3, 5) == 3 and minimum("max", s, s) is s
