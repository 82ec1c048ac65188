"""What REVIEW30 found wrong around session 30's float attributes (FLOATS30), against torch 2.13:
``elu``/``leaky_relu``/``rrelu`` took an attribute beyond float32's range for a float32 or 16-bit
input (torch's RuntimeError; ember gave inf), ``rrelu`` took bounds not finite or ``lower > upper``,
and ``elu``/``celu``/``selu``/``softplus``/``softshrink``/``threshold`` of a float16 or bfloat16
input computed in 16 bits where torch computes at float32 (opmath): ``elu(x_half, 70000.0)`` was
-inf for torch's -44256, ``threshold(x_bf16, 1.7, ...)`` replaced 1.703125."""
import math

import numpy as np
import pytest
import torch

from graph_counts import graph_counts

import ember

HUGE = "value cannot be converted to type float without overflow"


def _module(x):
    return torch if isinstance(x, torch.Tensor) else ember


def _attempt(fn):
    try:
        return fn().tolist()
    except RuntimeError as error:
        return "RuntimeError", str(error)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_an_attribute_beyond_float32s_range_is_refused_but_for_float64(dtype):
    for lib in (torch, ember):
        x = lib.tensor([-1.0, 0.0, 2.0], dtype=getattr(lib, dtype))
        F = lib.nn.functional
        got = [_attempt(lambda: F.elu(x, v)) for v in (1e300, -1e300, 3.5e38, math.inf, 70000.0)]
        got += [_attempt(lambda: F.leaky_relu(x, v)) for v in (1e300, -3.5e38, math.inf)]
        got += [_attempt(lambda: F.elu_(x.clone(), 1e300)), _attempt(lambda: F.leaky_relu_(x.clone(), 1e300)),
                _attempt(lambda: F.rrelu(x, 1e300, 1e300)), _attempt(lambda: F.rrelu(x, -1e300, 1e300))]
        if lib is torch:
            want = got
    assert repr(got) == repr(want)
    assert (got[0] == ("RuntimeError", HUGE)) is (dtype != "float64")


def test_rrelu_bounds_not_finite_or_crossed_are_refused():
    x = [-1.0, 2.0]
    for args in [(math.inf, 1.0), (0.1, math.inf), (0.3, 0.1), (math.nan, 0.1), (0.1, math.nan), (-math.inf, 0.1)]:
        for training in (False, True):
            want = _attempt(lambda: torch.nn.functional.rrelu(torch.tensor(x), *args, training=training))
            assert _attempt(lambda: ember.nn.functional.rrelu(ember.tensor(x), *args, training=training)) == want
            assert want[0] == "RuntimeError"


def _elu(x, v):
    return _module(x).nn.functional.elu(x, v)


def test_a_compiled_elu_refuses_a_huge_alpha_with_torchs_graphs():
    calls = [(v,) for v in (0.5, 1.5, 1e300, -0.0, math.inf, 3.5e38, 2.0)]
    want_counts, want = graph_counts(_elu, torch, calls)
    got_counts, got = graph_counts(_elu, ember, calls)
    assert got_counts == want_counts == [1] + [2] * 6
    assert [r[0] for r in got if r[0] == "RuntimeError"] == ["RuntimeError"] * 2
    np.testing.assert_allclose(np.array([r for r in got if r[0] != "RuntimeError"], float),
                               np.array([r for r in want if r[0] != "RuntimeError"], float), rtol=3e-7)


def _sixteen_bit_ops(x, v):
    F = _module(x).nn.functional
    return [F.elu(x, v), F.celu(x, v), F.selu(x), F.softplus(x, v), F.softshrink(x, v), F.threshold(x, v, v / 3)]


@pytest.mark.parametrize("dtype, rtol", [("float16", 2 ** -10), ("bfloat16", 2 ** -7)])
def test_sixteen_bit_activations_compute_at_float32(dtype, rtol):
    """Within an ulp of torch's (float32's expm1 and log1p differ by CPU): computed at float32 and rounded
    once, the attribute not rounded to 16 bits first (celu's 1 / 1e-6, softplus's beta)."""
    values = np.random.default_rng(0).standard_normal(300) * 3
    values = np.concatenate([values, values * 1e-3, [0.0, -0.0, -20.0, 1.703125, math.inf, -math.inf, math.nan]])
    for v in (0.1, 1.7, 3.14159, 1e-6, 1e4):
        xs = [lib.tensor(values.tolist(), dtype=getattr(lib, dtype)) for lib in (torch, ember)]
        for want, got in zip(_sixteen_bit_ops(xs[0], v), _sixteen_bit_ops(xs[1], v)):
            np.testing.assert_allclose(got.float().tolist(), want.float().tolist(), rtol=rtol, atol=1e-45)
    x = ember.tensor([-1.0], dtype=ember.float16)  # (softshrink refuses 70000.0 for float16)
    assert ember.nn.functional.elu(x, 70000.0).item() == -44256.0  # (was -inf)
    assert ember.nn.functional.celu(x, 70000.0).item() == torch.nn.functional.celu(torch.tensor([-1.0]).half(), 70000.0).item()


def test_a_sixteen_bit_thresholds_gradient_compares_at_float32():
    grads = []
    for lib in (torch, ember):
        x = lib.tensor([1.703125, 1.0, 2.0], dtype=lib.bfloat16, requires_grad=True)
        lib.nn.functional.threshold(x, 1.7, 0.0).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[1] == grads[0] == [1.0, 0.0, 1.0]


RESHAPES = [lambda t: t.zeros(0).unflatten(0, (0, -1)), lambda t: t.zeros(0, 3).unflatten(1, (-1, 0)),
            lambda t: t.zeros(5).unflatten(0, (2, -1)), lambda t: t.zeros(6).unflatten(0, (0, -1)),
            lambda t: t.zeros(0, 3).reshape(-1, 0), lambda t: t.zeros(0).view(2, -1, 0),
            lambda t: t.zeros(6).reshape(0, -1), lambda t: t.zeros(0).unflatten(0, (2, -1))]


def _reshaped(fn, lib):
    try:
        return tuple(fn(lib).shape)
    except RuntimeError as error:
        return str(error).split("\nException raised from")[0]  # (torch's C++ frames after)


@pytest.mark.parametrize("fn", RESHAPES)
def test_a_minus_one_beside_a_zero_in_an_empty_tensors_shape_is_ambiguous(fn):
    """``unflatten(0, (0, -1))`` of an empty tensor was a (0, 0) tensor, ``reshape(-1, 0)``'s
    message "shape '[-1, 0]' is invalid for input of size 0": torch's RuntimeErrors."""
    assert _reshaped(fn, ember) == _reshaped(fn, torch)


def _sliced(x, lr, k):
    return x[:, :k] * int(lr * 2) + k


def _truncated(x, lr):
    return x * int(lr * 3)


@pytest.mark.parametrize("fn, extra", [(_sliced, lambda i: (1 + i % 3,)), (_truncated, lambda i: ())])
def test_the_number_in_int_of_a_float_is_no_argument_position_at_new_sizes(fn, extra):
    """``int(lr * 3)`` recorded again at new sizes took its 3 for an argument's position:
    IndexError, or ``k`` (the third argument) traced as a float: TypeError at ``x[:, :k]``."""
    calls = [((2, 3), 0.5), ((3, 3), 1.5), ((4, 5), -0.7), ((1, 3), 2.0), ((2, 4), 3.25), ((5, 3), 1.0), ((2, 6), 0.25)]
    results = []
    for lib, compiled in ((torch, fn), (ember, ember.compile(fn))):
        results.append([compiled(lib.linspace(-3, 3, n * c).reshape(n, c), lr, *extra(i)).tolist()
                        for i, ((n, c), lr) in enumerate(calls)])
    np.testing.assert_allclose(np.concatenate([np.ravel(r) for r in results[1]]),
                               np.concatenate([np.ravel(r) for r in results[0]]), rtol=1e-6)


def _softplus(x, threshold):
    return _module(x).nn.functional.softplus(x * 1.0, 1.0, threshold) * 2


def test_softplus_below_a_raised_threshold_overflows_as_torchs():
    """``softplus(89.0, threshold=100.0)`` is torch's ``log1p(exp(89))``: inf in float32 (ember's
    eager, its C kernel and its traced-float graph computed a stable ``logaddexp``: 89)."""
    values = [-100.0, -20.0, 0.5, 30.0, 88.0, 89.0, 95.0, 200.0] * 4
    want = [_softplus(torch.tensor(values), t).tolist() for t in (100.0, 150.0, 120.0, 100.0)]
    for compiled in (_softplus, ember.compile(_softplus)):  # (eager; the graph taking t as an input)
        for t, w in zip((100.0, 150.0, 120.0, 100.0), want):
            np.testing.assert_allclose(compiled(ember.tensor(values), t).tolist(), w, rtol=3e-7, atol=1e-43)  # (exp(-100): a denormal)
    fused = ember.compile(lambda x: _softplus(x, 100.0))  # (the C kernel)
    for _ in range(3):
        np.testing.assert_allclose(fused(ember.tensor(values)).tolist(), want[0], rtol=3e-7, atol=1e-43)  # (exp(-100): a denormal)
