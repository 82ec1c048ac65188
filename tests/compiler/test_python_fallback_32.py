"""The Python backend runs the graph as captured: docs/compile.md's first step (Linear, GELU,
Linear, SGD) without a C compiler, with one that fails, and with ``async_compile`` before its C
is built. Before session 32 the C backend's GELU pass (``backends/gelu_gradient.py``) rewrote
the graph for every backend, and the generated Python called ``GeluBackward(1.0, x, None)``,
whose kernel takes arrays: AttributeError at the first replay, where a newcomer without gcc
(``CC=/nonexistent``) starts."""
import copy
import warnings

import numpy as np
import pytest

import ember
from ember.compiler import backends
from ember.compiler.backends import toolchain


def _step_of(model, opt):
    def step(x, y):
        loss = ember.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def _losses(compile_options, calls=4):
    """Losses and final parameters of ``calls`` compiled steps beside the same steps eagerly."""
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.GELU(), ember.nn.Linear(16, 4))
    twin = copy.deepcopy(model)
    compiled = ember.compile(_step_of(model, ember.optim.SGD(model.parameters(), lr=0.1)), **compile_options)
    eager = _step_of(twin, ember.optim.SGD(twin.parameters(), lr=0.1))
    x, y = ember.randn(32, 8), ember.randint(0, 4, (32,))
    got = [float(compiled(x, y)) for _ in range(calls)]
    want = [float(eager(x, y)) for _ in range(calls)]
    return got, want, [p.detach().numpy() for p in model.parameters()], [p.detach().numpy() for p in twin.parameters()]


@pytest.fixture
def fresh():
    ember.compiler.reset()
    yield
    ember.compiler.reset()


def _check(got, want, params, twin_params):
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got[-1] < got[0]
    for p, q in zip(params, twin_params):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)


def test_the_guide_s_first_step_without_a_compiler_runs_in_python_with_one_warning(fresh, monkeypatch):
    monkeypatch.setattr(toolchain, "find_compiler", lambda: None)
    monkeypatch.setattr(backends, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _check(*_losses({}))
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "no C compiler found" in messages[0], messages


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_a_failing_compiler_falls_back_to_the_captured_graph(fresh, broken_cc):
    with pytest.warns(RuntimeWarning, match="compiling the generated C failed"):
        _check(*_losses({}))


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_async_compile_runs_the_captured_graph_in_python_until_its_c_is_built(fresh, broken_cc):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "ember.compile: building the generated C in the background failed")
        _check(*_losses({"options": {"async_compile": True}}))
