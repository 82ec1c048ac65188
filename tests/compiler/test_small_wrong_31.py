"""Small wrong numbers of compiled functions that session 30 left open (WRONG31), against torch 2.13:
an op's float attribute computed from a float argument (``F.elu(x - 3, v * 1e10)``) beyond
float32's range gave -inf where eager and torch raise (the range guard saw the argument only);
``softplus``'s gradient gave sigmoid's 1.0 and 0.0 where torch's formula gives nan (inf / inf) and
3.78e-44; ``x @ x.t()`` with an inner size of 1 gave 0.0 where torch's gives -0.0."""
import math

import numpy as np
import pytest
import torch

from graph_counts import compiled_afresh, graph_counts

import ember

HUGE = ("RuntimeError", "value cannot be converted to type float without overflow")


def _module(x):
    return torch if isinstance(x, torch.Tensor) else ember


def _checked(x, v):  # (elu's alpha, threshold's value, clamp, where, full, leaky_relu's slope: converted checked)
    lib = _module(x)
    F = lib.nn.functional
    return F.elu(x - 3, v * 1e10) + F.threshold(x, 1.0, -v * 1e10) + lib.clamp(x, max=v * 1e10) \
        + lib.where(x > 2, x, -v * 1e10) + lib.full((6,), v * 1e10) + F.leaky_relu(x - 3, v * 1e10)


def _product(x, v):  # (a product takes it as inf: no guard on its range, torch's 2 graphs)
    return x * (v * 1e10)


CALLS = [(v,) for v in (1.0, 2.0, 1e29, 3.0, -1e30, math.inf, 5.0)]


@pytest.mark.parametrize("fn", [_checked, _product])
def test_an_attribute_computed_beyond_float32s_range_raises_as_eager(fn):
    want_counts, want = graph_counts(fn, torch, CALLS)
    got_counts, got = graph_counts(fn, ember, CALLS)
    assert got_counts == want_counts == [1] + [2] * 6
    assert repr(got) == repr(want)
    assert (got[2] == HUGE) is (fn is not _product)


def _softplus(x, beta):
    return _module(x).nn.functional.softplus(x, beta, 1000.0).sum()


def test_a_compiled_softplus_gradient_is_torchs_formula():
    """nan from 89 (exp overflows below the raised threshold), exp(-100)'s 3.78e-44 at -100, with
    beta a graph input (2 graphs over 3 values, the backward taking it too)."""
    xs = [-100.0, -1.0, 0.0, 88.0, 89.0, 100.0, 1001.0]
    compiled, count = compiled_afresh(_softplus, ember)
    for beta in (1.0, 2.0, 0.5):
        grads = []
        for lib, fn in ((torch, _softplus), (ember, compiled)):
            x = lib.tensor(xs, requires_grad=True)
            fn(x, beta).backward()
            grads.append(np.array(x.grad.tolist(), np.float32))
        want, got = grads
        assert (np.isnan(got) == np.isnan(want)).all() and np.isnan(got[4:6]).all() == (beta >= 1.0)
        np.testing.assert_allclose(got, want, rtol=2.4e-7, atol=0)  # (2 ulp of float32: exp's)
        assert got[0] == want[0] > 0 or beta == 2.0
    assert count() == 2


def _outer(x):
    return x @ x.t()


def test_a_compiled_outer_product_keeps_minus_zero():
    x = [[-1.0], [0.0], [1.0]]
    want = torch.tensor(x) @ torch.tensor(x).t()
    compiled, _ = compiled_afresh(_outer, ember)
    got = compiled(ember.tensor(x))
    assert np.array_equal(np.signbit(np.array(got.tolist())), np.signbit(want.numpy()))
    assert np.signbit(want.numpy()).sum() == 4
