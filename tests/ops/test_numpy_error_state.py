"""ember silences NumPy's floating-point warnings inside its kernels (inf and nan are values in
torch), per op and once per op's backward formula, without changing what the program's own
NumPy code sees: its error state (``np.seterr``) is the same before, during user callbacks
(tensor hooks, a custom Function's backward) and after ember's ops, as with torch, which never
touches NumPy's state."""
import warnings

import numpy as np
import pytest
import torch

import ember

_EDGES = [0.0, -1.0, 3e38, float("inf"), float("nan"), 2.0]


def _overflowing_step(lib, seen):
    """Forward and backward through ops whose results and gradients hit inf and nan (log of 0
    and -1, float32 overflow, 0 * inf), with a tensor hook recording NumPy's error state."""
    x = lib.tensor(_EDGES, requires_grad=True)
    y = x * 1e10
    y.register_hook(lambda g: seen.append(np.geterr()))
    loss = (y.log() + (x * x).exp() + x / 0.0).sum()
    loss.backward()
    return loss.detach().numpy(), x.grad.numpy()


def test_the_users_numpy_error_state_is_kept_and_no_warning_escapes():
    before = np.geterr()
    old = np.seterr(all="raise")  # the program's own choice: ember's kernels must not raise,
    try:                          # the program's NumPy code and callbacks keep it
        want_seen = []
        want = _overflowing_step(torch, want_seen)
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = _overflowing_step(ember, seen)
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w)
        assert seen == want_seen == [np.geterr()] and seen[0]["over"] == "raise"
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1)) * np.float32(3e38) * np.float32(10)
    finally:
        np.seterr(**old)
    assert np.geterr() == before


def test_a_custom_functions_backward_runs_in_the_users_error_state():
    seen = []

    class SignedInfinity(ember.autograd.Function):  # forward: x; backward: g / (0 * x), an inf
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            seen.append(np.geterr()["divide"])  # the user's code: the user's state
            return g / 0.0  # an ember op inside the user's backward: quiet all the same

    old = np.seterr(divide="warn")
    try:
        x = ember.tensor([1.0, -2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            (SignedInfinity.apply(x) * ember.tensor([2.0, -3.0])).sum().backward()
        assert seen == ["warn"]
        np.testing.assert_array_equal(x.grad.numpy(), [np.inf, -np.inf])
    finally:
        np.seterr(**old)


def test_an_error_inside_an_op_or_a_backward_leaves_the_state_as_it_was():
    before = np.geterr()
    with pytest.raises(RuntimeError):
        ember.ones(2, 3) + ember.ones(4, 3)
    x = ember.ones(2, requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()  # the graph was freed: raised inside the engine
    assert np.geterr() == before
