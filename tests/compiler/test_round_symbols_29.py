"""An int Python makes of a float argument (``round(lr)``, ``math.floor(lr)``) on the right of a
float constant or global (``0.5 * round(lr)``, ``2.0 - math.floor(lr)``): torch 2.13 traces it
(2 graphs over the values); ember made a graph per value, as ``float.__mul__`` reads the int's
digits in C. The float constants' rewrite (compiler/float_constants.py) now runs in recordings of
float arguments too, and its operator makes a float Python computes at each call. Graph counts
are compared with torch's CompileCounter call by call and values with torch's, over values with
.5 ties (round half to even), negatives, 0 and -0.0."""
import math

import pytest
import torch
import torch._dynamo.testing

from graph_counts import graph_counts

import ember

LRS = [(lr,) for lr in (1.0, 2.3, 2.5, 3.5, -1.5, -2.5, 0.0, -0.0, 7.7, 0.5, float("nan"), float("inf"))]
SCALE = 0.25


def _half_round(x, lr):
    return x * (0.5 * round(lr))


def _two_minus_floor(x, lr):
    return x * (2.0 - math.floor(lr))


def _halved(lr):
    return 0.5 * round(lr)


def _in_a_callee_with_a_global(x, lr):  # (a global's load rewritten, beside a constant's)
    return x * (SCALE * math.ceil(lr)) + 1.0 * math.trunc(lr) + _halved(lr)


def _branch(x, lr):
    s = 0.5 * round(lr)
    return x * s if s > 1 else x - s


@pytest.mark.parametrize("fn", [_half_round, _two_minus_floor, _in_a_callee_with_a_global, _branch])
def test_a_float_constant_times_a_rounded_float_is_a_symbol(fn):
    want_counts, want = graph_counts(fn, torch, LRS)
    got_counts, got = graph_counts(fn, ember, LRS)
    assert got_counts == want_counts
    assert max(got_counts) <= 3
    assert str(got) == str(want)  # (nan: compared as text)
    assert _halved.__code__.co_consts == (None, 0.5) and type(_halved.__code__.co_consts[1]) is float  # (given back)


def _module(module):
    class Scaled(module.nn.Module):
        def forward(self, x, lr, k):
            return x * (2.0 - math.floor(lr)) + 0.01 * (k + 1)
    return Scaled()


def test_a_modules_forward_with_an_int_argument_too():
    calls = [(1.0, 1), (2.5, 2), (3.5, 3), (-0.5, 4), (0.0, 5), (6.2, 6)]
    counts = {}
    for module in (torch, ember):
        if module is torch:
            torch._dynamo.reset()
            counter = torch._dynamo.testing.CompileCounter()
            compiled, count = torch.compile(_module(torch), backend=counter), lambda: counter.frame_count
        else:
            ember.compiler.reset()
            compiled = ember.compile(_module(ember))
            count = lambda: ember._dynamo.utils.counters["stats"]["unique_graphs"]  # noqa: E731
        counts[module] = [(compiled(module.arange(4.0), lr, k).tolist(), count()) for lr, k in calls]
    assert counts[ember] == counts[torch]
    assert counts[ember][-1][1] == 2


def _sized(x, lr):
    return x * (0.5 * round(lr)) - 1.0 * math.floor(lr)


def test_new_sizes_with_a_rounded_float():
    """A dynamic graph's first call at new sizes is recorded again with its floats traced (and
    the rewrite run): one graph as torch's, where ember made a graph per call."""
    calls = [(4, 1.0), (5, 2.5), (6, 3.5), (7, -1.5), (8, 0.0), (5, 7.7), (9, 2.4)]
    got = {}
    for module in (torch, ember):
        if module is torch:
            torch._dynamo.reset()
            counter = torch._dynamo.testing.CompileCounter()
            compiled, count = torch.compile(_sized, backend=counter), lambda: counter.frame_count
        else:
            ember.compiler.reset()
            compiled, count = ember.compile(_sized), lambda: ember._dynamo.utils.counters["stats"]["unique_graphs"]
        got[module] = [(compiled(module.arange(float(n)), lr).tolist(), count()) for n, lr in calls]
    assert got[ember] == got[torch]
    assert got[ember][-1][1] == 2
