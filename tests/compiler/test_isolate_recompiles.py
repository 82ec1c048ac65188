"""``compile(isolate_recompiles=False)``, torch's default: the calls compiling one function (or
one module) alike share its graphs and recompile limit; other settings, other closures and
``isolate_recompiles=True`` keep their own (ember.compiler.shared_cache)."""
import functools
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.utils import counters


pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _graphs():
    return counters["stats"]["unique_graphs"]


def _f(x):
    return (x.sin() * 2 + 1).sum(0)


def _close(got, want):
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)


def _scenarios(lib, counts, reset):
    """unique_graphs after each sharing scenario, run with ``lib`` (ember or torch, backend "eager")."""
    x = lib.randn(3, 4)
    result = {}
    for isolate in (False, True):
        reset()
        a = lib.compile(_f, backend="eager", isolate_recompiles=isolate)
        b = lib.compile(_f, backend="eager", isolate_recompiles=isolate)
        a(x), b(x)
        result[f"twice, isolate={isolate}"] = counts()
        reset()
        for _ in range(5):
            lib.compile(_f, backend="eager", isolate_recompiles=isolate)(x)
        result[f"in a loop of 5, isolate={isolate}"] = counts()
    for name, other in (("backend", dict(backend="aot_eager")), ("dynamic", dict(backend="eager", dynamic=False))):
        reset()
        lib.compile(_f, backend="eager")(x), lib.compile(_f, **other)(x)
        result[f"another {name}"] = counts()
    reset()  # the recompile limit (8) counted over the calls of a loop: 8 graphs for 11 sizes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(1, 12):
            lib.compile(_f, backend="eager", dynamic=False)(lib.randn(n, 2))
    result["limit over a loop"] = counts()
    return result


def test_graphs_shared_as_torchs():
    """unique_graphs per scenario as torch.compile(backend="eager") counts them: one graph for
    the same function compiled twice or in a loop (two and five with isolate_recompiles=True),
    two for other backends or ``dynamic``, eight for eleven sizes compiled in a loop (the
    limit shared)."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.utils import counters as torch_counters
    ours = _scenarios(ember, _graphs, ember.compiler.reset)

    def torch_reset():
        torch._dynamo.reset()
        torch_counters.clear()
    theirs = _scenarios(torch, lambda: torch_counters["stats"]["unique_graphs"], torch_reset)
    assert ours == theirs
    assert ours["twice, isolate=False"] == 1 and ours["in a loop of 5, isolate=True"] == 5


def test_limit_shared_warns_once_and_stays_correct():
    xs = [ember.randn(n, 2) for n in range(1, 12)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [ember.compile(_f, backend="aot_eager", dynamic=False)(x) for x in xs]
    assert [str(w.message).count("hit config.recompile_limit (8)") for w in caught] == [1]
    assert _graphs() == 8 and counters["recompiles"]["_f"] == 7
    for g, x in zip(got, xs):
        _close(g, _f(x))


def test_other_settings_and_isolate_never_share():
    """mode/options, recompile_limit and isolate_recompiles=True each keep their own graphs;
    ``fullgraph=True`` shares the default's (as torch's)."""
    x = ember.randn(3, 4)
    variants = [dict(), dict(fullgraph=True), dict(mode="max-autotune-no-cudagraphs"), dict(recompile_limit=2),
                dict(isolate_recompiles=True), dict()]
    for kw in variants:
        _close(ember.compile(_f, backend="eager", **kw)(x), _f(x))
    assert _graphs() == 4  # fullgraph=True and the last share the first's


def test_closures_of_one_code_do_not_share_graphs():
    """Two closures of one code with other cells (a Python number, a tensor) give their own
    results; the same closure compiled twice shares its graph."""
    def make(k, w):
        def g(x):
            return x * k + w
        return g
    x = ember.randn(3)
    g1, g2 = make(2.0, ember.ones(3)), make(3.0, ember.randn(3))
    for g in (g1, g2, g1, g2):
        _close(ember.compile(g)(x), g(x))
    assert _graphs() == 2


class _Act(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.act(self.fc(x))

    def act(self, y):
        return y.relu()


class _Tanh(_Act):  # the same forward code, another method it calls
    def act(self, y):
        return y.tanh()


def test_modules_share_per_instance_and_stay_correct_with_gradients():
    """One module compiled twice (ember.compile, or the second call reusing the first's graph)
    shares; two instances of one class share one graph, run on each one's parameters (torch: 2
    graphs, the subclass with the same forward code but another ``act`` has its own): outputs
    and parameter gradients equal eager's."""
    x = ember.randn(5, 4)
    mods = [_Act(), _Act(), _Tanh()]
    for m in mods + mods:
        compiled = ember.compile(m)
        out = compiled(x)
        out.sum().backward()
        got = [p.grad.clone() for p in m.parameters()]
        m.zero_grad()
        want = m(x)
        want.sum().backward()
        _close(out, want)
        for g, p in zip(got, m.parameters()):
            _close(g, p.grad)
        m.zero_grad()
    assert _graphs() == 2


def test_reset_clears_the_shared_entries_and_they_stay_shared():
    x = ember.randn(3, 4)
    a, b = ember.compile(_f), ember.compile(_f)
    a(x)
    ember.compiler.reset()
    b(x), a(x)
    assert _graphs() == 1
    assert a._cache is b._cache and len(a._entries) == 1


class _Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k

    def shift(self, x):
        return x + self.k


def test_other_callables_share_only_with_themselves():
    """Built-in functions (ember.sin, ember.cos: no weak reference, their own graphs),
    partials, callable objects and bound methods of two objects give their own results; one
    object's method compiled twice shares its graph."""
    x = ember.randn(3)
    a, b = _Scale(2.0), _Scale(5.0)
    cases = [(ember.sin, x.sin()), (ember.cos, x.cos()), (functools.partial(ember.mul, other=2.0), x * 2),
             (functools.partial(ember.mul, other=3.0), x * 3), (a, x * 2), (b, x * 5),
             (a.shift, x + 2), (a.shift, x + 2), (b.shift, x + 5)]
    for fn, want in cases:
        _close(ember.compile(fn, backend="eager")(x), want)
    assert _graphs() == 8
