"""Int arguments of a compiled function become symbols, as torch's automatic dynamic makes them
(compiler/traced_ints.py, dynamic.py): counts of graphs against torch's CompileCounter, results
and dtypes against eager's and torch's, and what stays specialised (Python reading the int)."""
import warnings

import numpy as np
import pytest
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters
from ember.compiler.backends import toolchain
from ember.compiler.capture import Tracer

KS = list(range(20))  # the counter loop


def _counter(t, k):
    return t.x * k + (t.x + k) + t.full((3,), k) + t.x.sum() * k + t.x * (k * 2 + 1)


class _Namespace:
    def __init__(self, lib, x):
        self.x, self.full = x, lib.full


def _step(x, k, lib):
    return _counter(_Namespace(lib, x), k)


@pytest.fixture(scope="module")
def torch_counts():
    counts = {}
    x = torch.randn(3)
    for dynamic in (None, True, False):
        torch._dynamo.reset()
        cnt = CompileCounter()
        step = torch.compile(lambda x, k: _step(x, k, torch), backend=cnt, dynamic=dynamic)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in KS:
                step(x, k)
        counts[dynamic] = cnt.frame_count
    torch._dynamo.reset()
    return counts


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_counter_loop_graphs_as_torch(dynamic, torch_counts, monkeypatch):
    ember.compiler.reset()
    counters.clear()
    x = ember.randn(3)
    recordings = []
    init = Tracer.__init__
    monkeypatch.setattr(Tracer, "__init__", lambda self, *a: recordings.append(1) or init(self, *a))
    # (dynamic=False: 8 graphs, counted without building 8 C libraries)
    step = ember.compile(lambda x, k: _step(x, k, ember), dynamic=dynamic,
                         backend="aot_eager" if dynamic is False else "inductor")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in KS:
            got = step(x, k)
            want = _step(x, k, ember)
            assert got.dtype == want.dtype and ember.allclose(got, want), k
    assert counters["stats"]["unique_graphs"] == torch_counts[dynamic]
    limit = [w for w in caught if "recompile_limit" in str(w.message)]
    assert bool(limit) == (dynamic is False), [str(w.message) for w in caught]
    if dynamic is not False:
        # recorded: the calls that compiled (and the probes of the symbol); none after it
        before = len(recordings)
        for k in (0, -7, 3, 10**6, -(2**40), 55):
            got = step(x, k)
            want = _step(x, k, ember)
            assert ember.allclose(got, want, rtol=1e-6), k
        assert len(recordings) == before
        assert counters["stats"]["unique_graphs"] == torch_counts[dynamic]


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "bool", "float64"])
def test_tensor_times_int_keeps_eager_and_torch_dtype(dtype):
    ember.compiler.reset()
    counters.clear()
    f = lambda x, k: x * k + k  # noqa: E731
    compiled = ember.compile(f)
    data = np.array([0, 1, 1], dtype=dtype)
    for k in (0, 1, 2, 5, -3, 300):
        got, want = compiled(ember.tensor(data), k), f(ember.tensor(data), k)
        expected = f(torch.tensor(data), k)
        assert str(got.dtype) == str(want.dtype) == str(expected.dtype)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert counters["stats"]["unique_graphs"] == 2


def _view(x, k):
    return x.view(k, -1) * k


def _loop(x, k):
    for i in range(k):
        x = x + i
    return x * k


@pytest.mark.parametrize("f, x, ks, graphs", [(_view, ember.ones(12), [1, 2, 3, 4, 6, 2], 2),
                                              (_loop, ember.ones(3), [0, 1, 2, 3, 1], 4)])
def test_python_reading_the_int_specialises_it(f, x, ks, graphs):
    """``range(k)``: one graph per value, each eager's result (``if k > 3``: a graph per side since
    session 25, ``test_int_symbols_25.py``); ``view(k, -1)``: ``12 // i0`` since session 30, two
    graphs as torch's (``test_duck_30.py``)."""
    ember.compiler.reset()
    counters.clear()
    compiled = ember.compile(f, backend="aot_eager")  # (a graph per value: no C library each)
    for k in ks:
        got, want = compiled(x, k), f(x, k)
        assert got.dtype == want.dtype and ember.equal(got, want), k
    assert counters["stats"]["unique_graphs"] == graphs


def test_generated_python_takes_the_symbol(monkeypatch):
    monkeypatch.setattr(toolchain, "find_compiler", lambda: None)
    ember.compiler.reset()
    counters.clear()
    f = lambda x, k: (x * (k * 2 + 1)).sum() * k - ember.full((2,), k)  # noqa: E731
    compiled = ember.compile(f)
    x = ember.randn(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no C compiler: generated Python
        for k in (2, 3, -4, 0, 1000):
            assert ember.allclose(compiled(x, k=k), f(x, k=k)), k
    assert counters["stats"]["unique_graphs"] == 2


def test_int_operand_of_a_small_int_tensor_wraps_as_eager():
    """``uint8 * -3`` and ``int8 + 300`` wrap modulo 2**8 (torch's cast of the scalar); the
    generated code raised NumPy's OverflowError, in a static graph too."""
    ember.compiler.reset()
    f = lambda x: x * -3 + 300  # noqa: E731
    compiled = ember.compile(f)
    for dtype in ("uint8", "int8"):
        data = np.array([0, 1, 7], dtype=dtype)
        for _ in range(2):  # the first call records (eagerly), the second runs the graph
            got = compiled(ember.tensor(data))
        np.testing.assert_array_equal(got.numpy(), f(torch.tensor(data)).numpy())


def test_int_as_an_index_or_bound_is_checked_at_each_new_value(monkeypatch):
    """``x[k]``, ``x.narrow(0, k, 2)``: a symbol, but not only a number, so a new value is
    recorded first (as a new size is): out of range it raises eager's error, not a read past the end."""
    ember.compiler.reset()
    f = lambda x, k: x.narrow(0, k, 2) * 2 + x[k]  # noqa: E731
    compiled = ember.compile(f)
    x = ember.randn(8)
    for k in (0, 1, 2, 3, 6, -2):
        assert ember.equal(compiled(x, k), f(x, k)), k
    recordings = []
    init = Tracer.__init__
    monkeypatch.setattr(Tracer, "__init__", lambda self, *a: recordings.append(1) or init(self, *a))
    for k in (7, 100):
        with pytest.raises((RuntimeError, IndexError)) as eager:
            f(x, k)
        with pytest.raises(type(eager.value), match=str(eager.value).split(" (")[0][:20]):
            compiled(x, k)
    assert recordings == [1, 1]


def test_int_operand_of_integer_arithmetic_keeps_eager_errors():
    """``x_int // k`` refuses ``k = 0`` eagerly (torch's RuntimeError): an operand of integer
    arithmetic is checked at each new value, so the graph never answers it."""
    ember.compiler.reset()
    f = lambda x, k: x // k + x * k  # noqa: E731
    compiled = ember.compile(f)
    x = ember.tensor([3, -7, 8, 0])
    for k in (1, 2, 3, 5, -4):
        assert ember.equal(compiled(x, k), f(x, k)), k
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(x, 0)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        compiled(x, 0)


def _leaked(x, k):
    s = 0.5 * k  # computed by the float: the traced int cannot see this read
    if s > 50:
        return x - s
    return x + s


def test_a_value_python_computed_unseen_keeps_the_check():
    """``0.5 * k`` reaches the op as a float, not as the traced int: the branch on it flips at
    k = 101, far from the probed values, so a new value is recorded first (not the graph's answer)."""
    ember.compiler.reset()
    compiled = ember.compile(_leaked)
    x = ember.zeros(2)
    for k in (0, 1, 2, 3, 101, 150):
        assert ember.equal(compiled(x, k), _leaked(x, k)), k


def test_training_step_with_an_int_needs_no_recording_per_value(monkeypatch):
    """The backward of ``out * t`` multiplies by ``t`` saved as a plain int: still the traced
    value, so a training step's new ``t`` runs the graph unrecorded, and trains as eager."""
    ember.compiler.reset()
    ember.manual_seed(0)
    models = [ember.nn.Linear(4, 3) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    opts = [ember.optim.SGD(m.parameters(), lr=0.01) for m in models]

    def step(model, opt, x, t):
        opt.zero_grad()
        loss = (model(x) * t + t).pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    compiled = ember.compile(step)
    recordings = []
    init = Tracer.__init__
    monkeypatch.setattr(Tracer, "__init__", lambda self, *a: recordings.append(1) or init(self, *a))
    x = ember.randn(5, 4)
    for t in range(8):
        if t == 3:
            before = len(recordings)
        got, want = compiled(models[0], opts[0], x, t), step(models[1], opts[1], x, t)
        assert ember.allclose(got, want, rtol=1e-5), t
    assert len(recordings) == before
    assert ember.allclose(models[0].weight, models[1].weight, rtol=1e-5, atol=1e-6)
