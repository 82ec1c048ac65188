"""Loose ends of session 26: the flat recheck of a call covers plain Python arguments (a float
filled in from a default, an int, a bool, a string, None), each compared by its guard's key, and
a call's binding to its signature is kept per number of positional values."""
import math
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import engine
from ember.compiler import eval_frame
from ember.compiler.guards import World, snapshot

pytestmark = pytest.mark.usefixtures("fresh_compiler")


@pytest.fixture
def worlds(monkeypatch):
    """Counts the Worlds the compiled calls build (the full path, not the recheck)."""
    made = []
    monkeypatch.setattr(eval_frame, "World", lambda *a, **k: made.append(1) or World(*a, **k))
    return made


def _filled(x, a=0.5, mode="add", extra=None):
    """A result whose dtype, sign and value tell each argument's type and value apart."""
    y = x * 2 if mode == "add" else x * -2
    return y, ember.full((2,), a), x if extra is None else x + extra


def _same(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        g, w = g.numpy(), w.numpy()
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def test_plain_arguments_are_rechecked_by_their_guard_keys(worlds, monkeypatch):
    """Each call agrees with eager, the recheck holds only where the full path's facts are the
    last call's (2 and 2.0 and True, 0.0 and -0.0, nan and nan, "add" and "sub"), and a call
    repeated thrice builds no World the third time."""
    monkeypatch.setattr(ember._dynamo.config, "recompile_limit", 64)
    x = ember.arange(3.0)
    cf = ember.compile(_filled, backend="eager")
    calls = [(), (0.5,), (0.7,), (2,), (2.0,), (True,), (1,), (0.0,), (-0.0,), (math.nan,), (0.7, "sub"),
             (0.7, "add"), (0.7, "add", None), (0.7, "add", 1.5), ()]
    for call in calls:
        args = (x, *call)
        for _ in range(3):
            before, recheck, bound = len(worlds), cf._recheck, cf._binder.bound(args, {})[0]
            if recheck is not None and recheck.holds(bound):
                assert snapshot(World(cf._fn, bound, {}, cf._world), bound, {}) == cf._last[0], call
            _same(cf(*args), _filled(*args))
        assert len(worlds) == before, call  # (a graph's first replay makes the recheck, the next uses it)


def test_a_float_default_filled_in_takes_the_recheck(worlds):
    def f(x, y, alpha=0.5):
        return x * y + alpha
    x, y = ember.randn(4), ember.randn(4)
    cf = ember.compile(f, backend="eager")
    for _ in range(3):
        cf(x, y)
    before = len(worlds)
    for _ in range(10):
        np.testing.assert_array_equal(cf(x, y).numpy(), f(x, y).numpy())
    assert len(worlds) == before


def test_rebound_defaults_are_bound_afresh():
    """``f.__defaults__`` and ``f.__kwdefaults__`` rebound after the binding was kept: the new
    defaults are the call's."""
    def f(x, alpha=0.5, *, beta=1.5):
        return x * alpha + beta
    x = ember.ones(2)
    cf = ember.compile(f, backend="eager")
    for _ in range(3):
        assert cf(x).tolist() == [2.0, 2.0]
    f.__defaults__ = (2.0,)
    assert cf(x).tolist() == [3.5, 3.5]
    f.__kwdefaults__ = {"beta": -1.0}
    assert cf(x).tolist() == [1.0, 1.0]
    assert cf(x, 1.0, beta=0.0).tolist() == [1.0, 1.0]
    assert cf(x).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError):
        cf()


def test_keyword_calls_kept_in_form_take_each_call_s_values():
    """The form of ``f(x, y=y)``, ``f(x, y, alpha=a)``, ``f(x=x, y=y, beta=b)`` is kept per keyword
    names; the values are each call's, and a tensor passed is not kept alive by it."""
    def f(x, y, alpha=0.5, *, beta=1.0, mode=None):
        out = x * alpha + y * beta
        return -out if mode == "neg" else out
    x, y, z = ember.ones(2), ember.full((2,), 2.0), ember.full((2,), 3.0)
    cf = ember.compile(f, backend="eager")
    calls = [((x,), {"y": y}), ((x,), {"y": z}), ((x, y), {"alpha": 2.0}), ((x, y), {"alpha": 3.0}),
             ((), {"x": x, "y": y, "beta": 2.0}), ((), {"x": z, "y": y, "beta": 4.0}), ((x, y), {"mode": "neg"}),
             ((x, y), {"mode": None}), ((x, y, 1.5), {"beta": 0.5}), ((x, y, 1.5), {"beta": 0.25})]
    for args, kwargs in calls * 2:
        assert cf(*args, **kwargs).tolist() == f(*args, **kwargs).tolist(), (args, kwargs)
    w = ember.full((2,), 5.0)
    ref = weakref.ref(w)
    assert cf(x, y=w).tolist() == [5.5, 5.5]
    del w
    assert ref() is None or not any(v is ref() for plan in cf._binder.shapes.values() for part in plan
                                    for _, _, v in part)


def _pointwise(lib, x, y):
    return lib.relu(x * y + 1) - lib.sigmoid(y)


def test_explain_counts_the_forward_ops_as_torch_counts_its_calls():
    """``explain``'s graphs are the forward ones (a recording for inputs that require grad holds
    the backward too: its ops are not counted), so where ember's ops are torch's calls, the counts
    are torch's."""
    torch = pytest.importorskip("torch")
    x, y = np.ones((2, 3), np.float32), np.full((2, 3), 0.5, np.float32)
    want = torch._dynamo.explain(lambda a, b: _pointwise(torch, a, b))(
        torch.tensor(x, requires_grad=True), torch.tensor(y))
    got = ember._dynamo.explain(lambda a, b: _pointwise(ember, a, b))(
        ember.tensor(x, requires_grad=True), ember.tensor(y))
    assert (got.op_count, got.graph_count, got.graph_break_count) == \
        (want.op_count, want.graph_count, want.graph_break_count) == (5, 1, 0)
    assert [op.name for op in got.ops_per_graph[0]] == ["Mul", "Add", "Relu", "Sigmoid", "Sub"]
    assert "grad_output" not in got.graphs[0].code


def _first_grad_kept(hold=False):
    x = ember.randn(3, 4, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g if hold else g.data_ptr()))
    (x * 2).sum().backward()
    x.grad.add_(1)
    return x.grad.data_ptr() == (seen[0].data_ptr() if hold else seen[0])


def test_a_first_gradient_is_kept_after_torch_compile_raised():
    """torch's dynamo leaves its frame evaluator (PEP 523) installed once a compile raised
    (``fullgraph=True`` at a graph break): a local passed to a function is then counted once
    more by getrefcount. The engine probes the count per walk, so a gradient only it holds
    still becomes ``.grad`` without a copy, and one a hook keeps is still copied."""
    torch = pytest.importorskip("torch")
    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch.compile(lambda x: torch._dynamo.graph_break() or x, fullgraph=True, backend="eager")(torch.ones(2))
    assert engine._probe() in (3, 4)
    assert _first_grad_kept() is True
    assert _first_grad_kept(hold=True) is False
