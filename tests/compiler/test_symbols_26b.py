"""``min``/``max`` of int arguments (compiler/traced_ints.py ``patch_minmax``, symbolic.py's
``"min"``/``"max"`` expressions): torch 2.13 traces ``min(k, 8)`` as ``sym_min`` (2 graphs over
20 values), where ember guarded each side of the corner. Graphs are counted against torch's
CompileCounter, call by call; values against eager."""
import pytest
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters
from ember.compiler.symbolic import evaluate, minimum, symbol


def _low(x, k):
    return x * min(k, 8)


def _high(x, k):
    return x * max(k, 1) + max(-3, k, 2)


def _pair(x, k, j):
    return x * min(k, j) - max(j, k)


def _counts(fn, module, calls):
    """Graph counts after each call and the results, for torch (module torch) or ember."""
    counts, results = [], []
    if module is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        compiled = torch.compile(fn, backend=counter)
    else:
        ember.compiler.reset()
        compiled = ember.compile(fn)
    for args in calls:
        results.append(compiled(module.arange(6.0), *args))
        counts.append(counter.frame_count if module is torch else counters["stats"]["unique_graphs"])
    return counts, results


@pytest.mark.parametrize("fn, calls", [
    (_low, [(k,) for k in range(20)]),
    (_high, [(k,) for k in (*range(-10, 10), 2 ** 40, -2 ** 40)]),
    (_pair, [(k, 20 - k) for k in range(20)]),
])
def test_min_max_counts_and_values(fn, calls):
    want_counts, want = _counts(fn, torch, calls)
    got_counts, got = _counts(fn, ember, calls)
    assert got_counts == want_counts
    for args, a, b in zip(calls, got, want):
        assert a.tolist() == b.tolist(), args
        assert a.tolist() == fn(ember.arange(6.0), *args).tolist(), args


def test_min_max_expressions():
    s = symbol("i0")
    low, high = minimum("min", s, 8), minimum("max", 1, s)
    assert repr(low) == "min(i0, 8)" and repr(high) == "max(1, i0)"
    assert [evaluate(low, {"i0": v}) for v in (-5, 8, 9)] == [-5, 8, 8]
    assert [evaluate(high, {"i0": v}) for v in (-5, 1, 9)] == [1, 1, 9]
    assert low.c_code(str) == "(i0 < 8 ? i0 : 8)" and minimum("min", 3, 5) == 3 and minimum("max", s, s) is s
