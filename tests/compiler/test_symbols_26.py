"""Int and float arguments Python inspects (compiler/traced_ints.py, dynamic_ints.py,
traced_floats.py): the comparisons torch 2.13 guards by their outcome (``k == 3``, ``if k:``,
``k % 2 == 0``, ``2 * k + 1 > n``, ``if lr > 0.5``) and a ``**kwargs`` function's keyword
order. Graphs are counted against torch's CompileCounter, call by call; values against eager."""
import math
import warnings

import pytest
import torch
import torch._dynamo

import ember
from test_int_symbols_25 import _compiled_and_counted


def _equal(x, k):
    if k == 3:
        return x - k
    return x * k


def _truth(x, k):
    if k:
        return x * k
    return x - 1


def _even(x, k):
    if k % 2 == 0:
        return x * k
    return x - k


def _derived(x, k):
    n = 7
    if 2 * k + 1 > n:
        return x * k
    return x - k


def _named(x, k):
    j = k * 2
    if j > 7 and k != 5:
        return x * k
    return x - k


def _half(x, k):
    return ((k * 0.5) * x).add(x / (k / 4 + 1))


def _threshold(x, lr):
    if lr > 0.5:
        return x * lr
    return x - lr


def _scaled_threshold(x, lr):
    if 1 - lr / 4 <= 0.875:  # (lr >= 0.5)
        return x * lr
    return x - lr


def _float_truth(x, lr):
    if lr:
        return x * lr
    return x + 1


def _powers(x, lr):
    return x * (lr ** 0.5) + round(lr * 3, 2) + 2 ** lr


def _maths(x, lr):
    if math.log2(lr) > 0:
        return x * math.sqrt(lr)
    return x - math.tanh(lr * 2)


KS = [0, 1, 2, 3, 4, 5, 6, 9, -4, 100, 3, 7]
LRS = [0.05, 0.15, 0.25, 0.55, 0.65, 2.5, 0.0, -1.5, 0.45, 0.5]


def _compiling_calls(f, values, x_values):
    """For torch and ember: the values at which ``f`` compiled a graph (each result checked
    against eager's), and ember's compiled function."""
    got = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # (the recompile limit's warning)
        for lib in (torch, ember):
            compiled, count = _compiled_and_counted(lib, f)
            x, at = lib.tensor(x_values), []
            for v in values:
                before = count()
                assert compiled(x, v).tolist() == f(x, v).tolist(), v
                if count() > before:
                    at.append(v)
            got[lib.__name__] = at
    return got, compiled


@pytest.mark.parametrize("f", [_equal, _truth, _even, _derived, _named, _half])
def test_int_comparisons_guard_their_outcome(f, monkeypatch):
    """``k == 3``, ``if k:``, ``k % 2 == 0``, ``2 * k + 1 > 7``, ``j = k * 2; j > 7 and k != 5``:
    torch's graphs at the same calls (2 or 3; ember specialised the int before: a graph per
    value, 8 and the recompile-limit warning over k = 0..19); ``k * 0.5``, ``k / 4 + 1`` as
    operands (floats Python computes from the int at each call) torch's 2. A value whose outcomes a graph holds
    for runs it unrecorded."""
    got, compiled = _compiling_calls(f, KS, [1.0, -2.0])
    assert got["ember"] == got["torch"], got
    recordings = []
    init = ember.compiler.capture.Tracer.__init__
    monkeypatch.setattr(ember.compiler.capture.Tracer, "__init__",
                        lambda self, *a: recordings.append(1) or init(self, *a))
    x = ember.tensor([1.0, -2.0])
    for k in (8, 10, 1001, -40):  # (outcomes already compiled)
        assert compiled(x, k).tolist() == f(x, k).tolist(), k
    assert not recordings


def test_an_int_equal_to_a_constant_is_not_static_for_good():
    """``k == 3`` first True after a static graph (k = 0, 3, 4, ...): torch's graph at 3 holds 3
    alone and the next value is a symbol again, 3 graphs; ember kept the int static after 3 (8
    and the warning)."""
    got, _ = _compiling_calls(_equal, [0, 3, 4, 5, 6, 7, 8, 9, 10, 11], [1.0, -2.0])
    assert got["ember"] == got["torch"] == [0, 3, 4], got


@pytest.mark.parametrize("f", [_threshold, _scaled_threshold, _float_truth])
def test_float_comparisons_guard_their_outcome(f):
    """``if lr > 0.5``, ``if 1 - lr / 4 <= 0.875``, ``if lr:``: torch's graphs at the same calls
    (ember guarded the float's value: a graph per value up to the recompile limit); then eager's
    values at nan, +-0.0, +-inf, 5e-324 and the comparisons' edges, signs of zeros included."""
    got, compiled = _compiling_calls(f, LRS, [-1.0, 0.0, 2.0])
    assert got["ember"] == got["torch"], got
    x = ember.tensor([-1.0, 0.0, 2.0])
    for lr in (math.nan, 0.0, -0.0, math.inf, -math.inf, 5e-324, 0.5, 0.5000000000000001, 1.0):
        for a, b in zip(compiled(x, lr).tolist(), f(x, lr).tolist()):
            assert a == b and math.copysign(1, a) == math.copysign(1, b) or a != a and b != b, lr


@pytest.mark.parametrize("f", [_powers, _maths])
def test_floats_python_computes_per_call(f):
    """``lr ** 0.5``, ``round(lr * 3, 2)``, ``2 ** lr``, ``math.sqrt(lr)``, ``if math.log2(lr) >
    0``: torch traces them, 2 or 3 graphs (ember guarded the value: a graph per value). The
    graph takes what Python computes at each call, so its errors and complex results are
    eager's: ``0.0 ** -1`` raises ZeroDivisionError, ``(-1.0) ** 0.5`` is complex,
    ``math.log2(0.0)`` raises ValueError (each a graph of its own or the error)."""
    got, compiled = _compiling_calls(f, [v for v in LRS if v > 0], [-1.0, 0.0, 2.0])
    assert got["ember"] == got["torch"], got
    x = ember.tensor([-1.0, 0.0, 2.0])
    for lr in (math.nan, math.inf, 1e-300, 0.3, 7.0, 0.0, -0.0, -1.0):
        try:
            want = f(x, lr).tolist()
        except ValueError:
            with pytest.raises(ValueError):
                compiled(x, lr)
            continue
        for a, b in zip(compiled(x, lr).tolist(), want):
            assert a == b and (type(a) is complex or math.copysign(1, a) == math.copysign(1, b)) \
                or a != a and b != b, lr

    def inverse(x, lr):
        return x * lr ** -1
    compiled = ember.compile(inverse, backend="aot_eager")
    for lr in (0.5, 0.25, 4.0):
        assert compiled(x, lr).tolist() == inverse(x, lr).tolist()
    with pytest.raises(ZeroDivisionError):
        compiled(x, 0.0)


def _by_name(x, **kw):
    return x * kw["a"] + kw.get("b", 0) + ("c" in kw)


def _in_order(x, **kw):
    out = x
    for name, value in kw.items():
        out = out * value + len(name)
    return out


@pytest.mark.parametrize("f, graphs", [(_by_name, 1), (_in_order, 2)])
def test_keyword_order_of_kwargs(f, graphs):
    """``f(x, a=1, b=2)`` then ``f(x, b=2, a=1)``: torch guards the order only where the function
    reads it (iterating the dict: 2 frames), 1 where it reads keys by name (ember: 2 and 2)."""
    for lib in (torch, ember):
        compiled, count = _compiled_and_counted(lib, f)
        x = lib.ones(2)
        for kw in ({"a": 3, "b": 2}, {"b": 2, "a": 3}, {"a": 3, "b": 2}):
            assert compiled(x, **kw).tolist() == f(x, **kw).tolist()
        assert count() == graphs, lib.__name__
