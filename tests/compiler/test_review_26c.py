"""REVIEW26C: the compiler's tracing versions of ``math``'s functions and the built-in ``min``/``max``
(put in while a call with int or float arguments records) are always put back: after an exception, a
BaseException, nested compiled calls, and two recordings in two threads ending
in either order; values are torch 2.13's (``min(k, 8)`` at edges, ints far outside those recorded)."""
import builtins
import math
import threading

import pytest
import torch as real
from torch._dynamo.testing import CompileCounter

import ember as torch
from ember._dynamo.utils import counters
from ember.compiler import traced_math

ORIGINAL = (math.sqrt, math.sin, builtins.min, builtins.max)


def _put_back():
    return (math.sqrt, math.sin, builtins.min, builtins.max) == ORIGINAL


def _both(fn, *argss, **options):
    """fn compiled by ember and by torch, called with each args; the results' lists."""
    ours, theirs = torch.compile(fn, **options), real.compile(fn, backend="eager", **options)
    out = []
    for make, args in argss:
        out.append((ours(make(torch), *args).tolist(), theirs(make(real), *args).tolist()))
    return out


class _Stop(BaseException):
    pass


def test_put_back_after_exceptions_and_nested_calls():
    def f(x, k, lr):
        n = min(k, 8) + max(k, -1)
        if k == 5:
            raise ValueError("boom")
        if k == 6:
            raise _Stop()
        return x * n * math.sqrt(lr)
    g = torch.compile(f)
    x = torch.ones(2)
    assert g(x, 1, 0.25).tolist() == [1.0, 1.0] and g(x, 2, 0.5).tolist() == pytest.approx([2.8284271] * 2)
    with pytest.raises(ValueError, match="boom"):
        g(x, 5, 0.36)
    assert _put_back()
    with pytest.raises(_Stop):
        g(x, 6, 0.49)
    assert _put_back()

    inner = torch.compile(lambda x, k: x * max(k, 2))
    outer = torch.compile(lambda x, k: inner(x, min(k, 8)) + 1)
    assert [outer(x, k)[0].item() for k in (1, 3, 9, 20)] == [3.0, 4.0, 9.0, 9.0]
    assert _put_back()


def test_put_back_when_recordings_end_out_of_order():
    # two threads' recordings: the first to start ends first (patch A, patch B, put back A, put back B)
    a = traced_math.patch_minmax()
    b = traced_math.patch_minmax()
    c = traced_math.patch_math()
    traced_math.unpatch_math(a, builtins)
    assert builtins.min is not ORIGINAL[2]  # (b still records: its min(k, 8) stays traced)
    traced_math.unpatch_math(b, builtins)
    traced_math.unpatch_math(c)
    assert _put_back()


def test_put_back_with_two_threads_recording():
    x = torch.ones(3)
    go, events, seen = [False], {n: threading.Event() for n in ("a_in", "b_in", "a_out")}, []

    def fa(x, k):
        if go[0]:
            events["a_in"].set()
            events["b_in"].wait(60)
        return x * min(k, 8)

    def fb(x, k):
        if go[0]:
            events["a_in"].wait(60)
            events["b_in"].set()
            events["a_out"].wait(60)
        return x * min(k, 8)
    ca, cb = torch.compile(fa), torch.compile(fb)
    ca(x, 1), cb(x, 1)
    go[0] = True

    def ta():
        seen.append(ca(x, 2).tolist())
        events["a_out"].set()
    threads = [threading.Thread(target=ta), threading.Thread(target=lambda: seen.append(cb(x, 9).tolist()))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(seen) == [[2.0] * 3, [8.0] * 3]
    assert _put_back()


def test_min_max_at_edges_match_torch():
    def f(x, k):
        return x[:min(k, 2)] * max(k, -5) + min(k, k) + max(8, k, 3)
    for dynamic in (None, True):
        calls = [(lambda t: t.arange(4.0, dtype=t.float64), (k,)) for k in (1, 3, 8, 8, -3, -10**12, 10**15, 2)]
        for ours, theirs in _both(f, *calls, dynamic=dynamic):
            assert ours == theirs
    assert _put_back()


def test_min_in_a_slice_bound_below_the_recorded_values():
    # recorded at k = 5, 3 (probes >= 2): every shape 2, the bound min(i0, 2) must still guard k < 2;
    # graphs as torch's: one for the k >= 2 (8 replays), then one each for 1, 0, -3
    def f(x, k):
        return x[:min(k, 2)] * k
    real._dynamo.reset()
    torch.compiler.reset()
    counter = CompileCounter()
    ours, theirs = torch.compile(f), real.compile(f, backend=counter)
    counts = []
    for k in (5, 3, 8, 1, 0, -3, 7):
        assert ours(torch.arange(4.0), k).tolist() == theirs(real.arange(4.0), k).tolist() == f(real.arange(4.0), k).tolist()
        counts.append((counters["stats"]["unique_graphs"], counter.frame_count))
    assert [a for a, _ in counts] == [b for _, b in counts]
