"""Python numbers torch 2.13 takes as a symbol after one recompile (2 graphs) where ember made a
graph per value: ``int(lr)`` (Python's ``int`` copies what ``__int__`` returns into a plain int;
the user's call of ``int`` is rewritten for the recording, compiler/float_constants.py). Graph
counts are compared with torch's CompileCounter call by call, values with torch's (by repr:
-0.0 told from 0.0) over values far from the first, negatives, ties and huge ones."""
import math

import pytest
import torch

from graph_counts import compiled_afresh, graph_counts, run

import ember

LRS = [(v,) for v in (0.5, 1.5, 2.7, 10.25, -3.7, 1e10, -0.0, -1e15)]
ERRORS = [(v,) for v in (1e30, math.nan, math.inf)]


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


@pytest.mark.parametrize("fn", [_int_of_arithmetic, _int_branch, _int_in_a_callee])
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
    _, got = graph_counts(_int_branch, ember, LRS[:3] + ERRORS + LRS[3:5])
    assert [r[0] for r in got[3:6]] == ["OverflowError", "ValueError", "OverflowError"]
    assert got[3] == ("OverflowError", "int too big to convert")
    assert repr(got[:3] + got[6:]) == repr([run(_int_branch, torch, v) for v in LRS[:5]])


def ember_or_torch(x):
    """The module ``x`` comes from."""
    return torch if isinstance(x, torch.Tensor) else ember


def _bounds(x, v):
    F = ember_or_torch(x).nn.functional
    return ember_or_torch(x).cat([F.hardtanh(x - 3, -abs(v) - 1, abs(v) + 1), F.softshrink(x - 3, abs(v)),
                                  F.hardshrink(x - 3, v), F.celu(x - 3, v), F.softplus(x * 7 - 20, v, 20.0)])


def _refused(x, v):  # (v > 2.0: hardtanh's ValueError, v < 0, nan, 1e300: softshrink's RuntimeError)
    F = ember_or_torch(x).nn.functional
    return ember_or_torch(x).cat([F.hardtanh(x - 3, v, 2.0), F.softshrink(x - 2.5, v)])


# (a bound of inf: tests/compiler/test_ints_31.py)
ATTRIBUTES = [(v,) for v in (0.5, 1.5, 2.7, 10.25, 0.125, -0.0, 1e-40, 1e300, -2.5, math.nan)]


@pytest.mark.parametrize("fn", [_bounds, _refused])
def test_op_attributes_are_symbols(fn):
    """``hardtanh``'s bounds, ``softshrink``'s and ``hardshrink``'s ``lambd``, ``celu``'s ``alpha``
    (and its ``1 / alpha``, Python's at each call), ``softplus``'s ``beta`` and ``threshold``: graph
    inputs (a graph per value before), torch's counts; values as torch's eager, -0.0 and nan
    included (``celu``, ``softplus`` within an ulp: the C code's ``expm1`` is not torch's), and its errors (``hardtanh(x, 1e300)``, ``softshrink(x, -2.5)``,
    ``celu(x, 0.0)``), where torch 2.13's compiled function wraps them in its own classes."""
    want_counts, _ = graph_counts(fn, torch, ATTRIBUTES)
    got_counts, got = graph_counts(fn, ember, ATTRIBUTES)
    assert got_counts == want_counts and max(got_counts) <= 3
    for args, value in zip(ATTRIBUTES, got):
        want = run(fn, torch, args)
        if type(want) is tuple or type(value) is tuple:
            assert value == want, args
        else:
            value, want = torch.tensor(value), torch.tensor(want)
            assert torch.allclose(value, want, rtol=3e-7, atol=0, equal_nan=True), args
            assert value.signbit().logical_and(~value.isnan()).tolist() == want.signbit().logical_and(
                ~want.isnan()).tolist(), args


def _pieces(x, v):  # (apart: celu's alpha * (1 / alpha), 1.0 mostly, equal to softplus's mask value)
    F = ember_or_torch(x).nn.functional
    return ember_or_torch(x).cat([F.hardtanh(x - 3, -abs(v) - 1, abs(v) + 1), F.softshrink(x - 3, abs(v)),
                                  F.hardshrink(x - 3, v), F.softplus(x * 7, v, 20.0)])


@pytest.mark.parametrize("fn", [_pieces, lambda x, v: ember.nn.functional.celu(x, v)], ids=["pieces", "celu"])
def test_op_attribute_gradients(fn):
    """Their backward takes the float too (the masks of ``hardtanh`` and the shrinks, ``celu``'s
    slope, softplus's): the gradients of eager's, 2 graphs over 5 values. (A constant of the graph
    equal to ``celu``'s ``alpha * (1 / alpha)`` (1.0 mostly) makes its gradient a graph per value.)"""
    compiled, count = compiled_afresh(fn, ember)
    for v in (0.5, 1.5, -2.0, 7.0, 1.0):
        grads = []
        for f in (compiled, fn):
            x = ember.tensor([-3.0, -1.5, -0.5, 0.0, 0.25, 2.0, 3.0, 4.5, math.nan], requires_grad=True)
            (f(x, v) ** 2).sum().backward()
            grads.append(torch.tensor(x.grad.tolist()))
        assert torch.allclose(*grads, rtol=1e-6, atol=0, equal_nan=True), (v, grads)
    assert count() == 2


def _narrow(x, v):
    t = ember_or_torch(x)
    return t.cat([((x * 0.37).half() + v).float(), (v - (x * 0.37).bfloat16()).float(),
                  t.full((2,), v, dtype=t.float16).float(), x.bfloat16().new_full((2,), v).float()])


# (nan: torch 2.13 recompiles for it; 1e300: ember's guard tells a float beyond float32's range apart)
NARROW = [(v,) for v in (0.5, 2.7, 1e-3, 3e5, 65519.0, 65520.0, -0.0, 1e-8, 3.4e38)]


def test_float16_and_bfloat16_sums_and_fills_are_symbols():
    """``x_half + lr``, ``lr - x_bf16`` (eager rounds the number to the op's dtype first, then
    adds at float32: the graph's cast node), float16/bfloat16 fills (their range check, 65504
    for float16, guarded by its comparisons): 2 graphs as torch; values as torch's (65519
    rounds to 65504, 65520 is inf; bfloat16 3.4e38 is inf in the sum, refused in the fill)."""
    want_counts, want = graph_counts(_narrow, torch, NARROW)
    got_counts, got = graph_counts(_narrow, ember, NARROW)
    assert got_counts == want_counts == [1] + [2] * (len(NARROW) - 1)
    assert repr(got) == repr([run(_narrow, torch, v) for v in NARROW])


def _tensors(x, k):
    t = ember_or_torch(x)
    return x + t.tensor(0.5 * k) * t.tensor(k / 4)


def test_a_tensor_of_a_float_of_an_int_counter_is_a_symbol():
    """``tensor(0.5 * k)`` (NumPy's ``float()`` of the traced float in the factory is no use,
    the tensor a node): 2 graphs as torch, values as torch's. (torch 2.13 makes a graph per
    value of ``as_tensor(k * 0.25, dtype=float64)``; ember 2.)"""
    calls = [(k,) for k in (1, 2, 3, 7, 100, -40, 0, 10**6, 3)]
    want_counts, want = graph_counts(_tensors, torch, calls)
    got_counts, got = graph_counts(_tensors, ember, calls)
    assert got_counts == want_counts == [1] + [2] * (len(calls) - 1)
    assert repr(got) == repr(want)
