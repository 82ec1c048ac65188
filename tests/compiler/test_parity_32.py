"""Small compile/eager parity items session 31 left open (PARITY32), against torch 2.13: a float
attribute computed from two float arguments (``F.elu(x, a * b)``) beyond float32's range gave
-inf where eager and torch raise (WRONG31 guards one computed from one argument)."""
import math

import numpy as np
import pytest
import torch

from graph_counts import graph_counts

import ember

HUGE = ("RuntimeError", "value cannot be converted to type float without overflow")


def _module(x):
    return torch if isinstance(x, torch.Tensor) else ember


def _checked(x, a, b):  # (elu's alpha, threshold's value, clamp, where, full, leaky_relu's slope, add's alpha)
    lib = _module(x)
    F = lib.nn.functional
    return F.elu(x - 3, a * b) + F.threshold(x, 1.0, -a * b) + lib.clamp(x, max=a * b) \
        + lib.where(x > 2, x, a / b) + lib.full((6,), a - b) + F.leaky_relu(x - 3, b * a) \
        + lib.add(x, x, alpha=a * b * 1e-30)


def _product(x, a, b):  # (a product takes it as inf: torch's 2 graphs, no error)
    return x * (a * b) + (x - a * b)


CALLS = [(1.0, 2.0), (2.0, 3.0), (1e20, 1e19), (3.0, 1.0), (-1e20, 1e20), (math.inf, 2.0), (5.0, 0.5),
         (4e38, -1e38)]


def _close(got, want):
    if isinstance(want, tuple) or isinstance(got, tuple):
        return got == want
    return np.allclose(got, want, rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("fn", [_checked, _product])
def test_an_attribute_of_two_float_arguments_beyond_float32s_range_raises_as_eager(fn):
    want_counts, want = graph_counts(fn, torch, CALLS)
    got_counts, got = graph_counts(fn, ember, CALLS)
    assert got_counts == want_counts == [1] + [2] * 7
    assert all(_close(g, w) for g, w in zip(got, want)), (got, want)
    assert [r == HUGE for r in got] == [False, False, fn is _checked, False, fn is _checked, False, False,
                                        fn is _checked]
