"""Python numbers torch 2.13 takes as a symbol after one recompile (2 graphs) where ember made a
graph per value: ``int(lr)`` (Python's ``int`` copies what ``__int__`` returns into a plain int;
the user's call of ``int`` is rewritten for the recording, compiler/float_constants.py). Graph
counts are compared with torch's CompileCounter call by call, values with torch's (by repr:
-0.0 told from 0.0) over values far from the first, negatives, ties and huge ones."""
import math

import pytest
import torch

from graph_counts import graph_counts

import ember

LRS = [(v,) for v in (0.5, 1.5, 2.7, 10.25, -3.7, 1e10, 3.3, -0.0, 2.0, -1e15)]
ERRORS = [(v,) for v in (1e30, math.nan, math.inf)]


def _int_lr(x, lr):
    return x * int(lr)


def _int_of_arithmetic(x, lr):
    n = int(lr * 3)
    return x * n + 0.5 * int(lr) - int(-lr)


def _int_branch(x, lr):
    n = int(lr)
    return x * n if n > 2 else x - n


def _half(lr):
    return int(lr / 2)


def _int_in_a_callee(x, lr):
    return x + _half(lr)


@pytest.mark.parametrize("fn", [_int_lr, _int_of_arithmetic, _int_branch, _int_in_a_callee])
def test_int_of_a_float_is_a_symbol(fn):
    want_counts, want = graph_counts(fn, torch, LRS)
    got_counts, got = graph_counts(fn, ember, LRS)
    assert got_counts == want_counts
    assert max(got_counts) <= 3
    assert repr(got) == repr(want)
    assert _half.__code__.co_names == ("int",)  # (the callee's code given back)


def test_int_of_a_float_beyond_int64_nan_and_inf_raise_as_eager():
    """``int(1e30)`` is beyond an op's int64: eager's OverflowError; nan and inf: Python's
    (torch 2.13 wraps those in its InternalTorchDynamoError)."""
    _, got = graph_counts(_int_lr, ember, LRS[:3] + ERRORS + LRS[3:5])
    assert [r[0] for r in got[3:6]] == ["OverflowError", "ValueError", "OverflowError"]
    assert got[3] == ("OverflowError", "int too big to convert")
    assert repr(got[:3] + got[6:]) == repr(graph_counts(_int_lr, torch, LRS[:5])[1])
