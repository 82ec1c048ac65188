"""Dynamic shapes: size symbols in captured graphs, ember.compile(dynamic=...), mark_dynamic, and
@dynamic_spec. Compiled results are compared with eager ember (the same kernels: bit-equal for the
graphs that run as generated Python); counts of compiled graphs with closed forms."""
import functools

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo import mark_dynamic, mark_static
from ember._dynamo.utils import counters
from ember.compiler.size_fits import fit, fit_ratio
from ember.compiler.symbolic import evaluate, evaluator, symbol
from ember.fx.experimental.dynamic_spec import (STATIC, DictSpec, IntVar, ParamsSpec, SeqSpec, ShapesSpec, ShapeVar,
                                                TensorSpec, dynamic_spec)


pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _graphs():
    return counters["stats"]["unique_graphs"]


def _rand(*shape, seed=0, grad=False):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.tensor(data, requires_grad=grad)


# ---- expressions -------------------------------------------------------------------------------
def test_expressions_print_evaluate_and_fit():
    s0, s1 = symbol("s0"), symbol("s1")
    assert [str(e) for e in (2 * s0 + 1, s0 * s1, (s0 + 1) * s1, s0 - 1, s0 // 2, s0 % 2 == 0)] == \
        ["2*s0 + 1", "s0*s1", "(s0 + 1)*s1", "s0 - 1", "s0 // 2", "s0 % 2 == 0"]
    assert evaluate((2 * s0 + 1, [s0 * s1], slice(0, s1, None)), {"s0": 3, "s1": 5}) == (7, [15], slice(0, 5, None))
    points = [{"s0": a, "s1": b} for a, b in [(3, 4), (4, 4), (5, 4), (3, 5), (3, 6), (4, 5)]]
    for closed in (lambda a, b: 7, lambda a, b: 2 * a + 1, lambda a, b: a * b, lambda a, b: 3 * a * b - b + 2):
        expr = fit([closed(p["s0"], p["s1"]) for p in points], points)
        assert all(evaluate(expr, {"s0": a, "s1": b}) == closed(a, b) for a in range(9) for b in range(9))
    # no integer polynomial of degree <= 1 per symbol: reported, never approximated
    assert fit([p["s0"] ** 2 for p in points], points) is None
    assert fit([min(p["s0"], 4) for p in points], points) is None
    line = [{"s0": n} for n in (4, 6, 8, 2, 16)]
    assert str(fit([3 * n // 2 for n in (4, 6, 8, 2, 16)], line)) == "3*s0 // 2"
    assert str(fit([(n - 2) // 2 + 1 for n in (4, 5, 6, 2, 16)], [{"s0": n} for n in (4, 5, 6, 2, 16)])) == "s0 // 2"
    # the driver's compiled evaluator of sizes is evaluate()'s
    shapes = (2 * s0 + 1, [s0 * s1 // 3, (s0 + 2) % 4 - 1], 7)
    assert all(evaluator(shapes)({"s0": a, "s1": b}) == evaluate(shapes, {"s0": a, "s1": b}) for a in range(9) for b in range(9))
    # floats: ratios of such polynomials (batch norm's count / (count - 1)), bit-exact
    ratio = fit_ratio([64 * n / (64 * n - 1) for n in (4, 6, 8, 2, 16)], line)
    assert str(ratio) == "64*s0 / (64*s0 - 1)"
    assert all(evaluate(ratio, {"s0": n}) == 64 * n / (64 * n - 1) for n in range(1, 300))
    assert fit_ratio([n ** -0.5 for n in (4, 6, 8, 2, 16)], line) is None


# ---- ember.compile(dynamic=...) -------------------------------------------------------------------
class _Sequence(nn.Module):
    """A causal self-attention model over (B, T, C): learned positions sliced to T, a reshape to
    B*T, a position index (arange(T)) returned too."""

    def __init__(self, block_size=10, channels=8):
        super().__init__()
        self.pos = nn.Parameter(ember.randn(block_size, channels) * 0.1)
        self.ln = nn.LayerNorm(channels)
        self.qkv = nn.Linear(channels, 3 * channels)
        self.head = nn.Linear(channels, 3)

    def forward(self, x):
        B, T, C = x.shape
        h = self.ln(x + self.pos[:T])
        q, k, v = self.qkv(h).view(B, T, 3, 2, C // 2).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        return self.head(y + x).reshape(B * T, 3), ember.arange(T) * 2


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "eager"])
def test_sequence_lengths_with_dynamic_true_compile_at_most_twice(backend):
    ember.manual_seed(0)
    model = _Sequence()
    compiled = ember.compile(model, dynamic=True, backend=backend)
    for T in range(1, 11):
        x = _rand(3, T, 8, seed=T, grad=True)
        got, positions = compiled(x)
        got.square().sum().backward()
        got_grad, x.grad = x.grad.numpy().copy(), None
        ref, ref_positions = model(x)
        ref.square().sum().backward()
        # the C backend runs layer norm and attention as its own kernels (sums in another order)
        check = np.testing.assert_array_equal if backend != "inductor" else \
            functools.partial(np.testing.assert_allclose, rtol=1e-5, atol=1e-6)
        check(got.detach().numpy(), ref.detach().numpy(), err_msg=f"T={T}")
        check(got_grad, x.grad.numpy(), err_msg=f"T={T}")
        assert positions.tolist() == ref_positions.tolist() == list(range(0, 2 * T, 2))
    assert _graphs() == 2  # T = 1 is specialised (as torch's 0/1 rule), then one graph for T >= 2
    code = compiled._compiled_call._entries[-1].cap.graph.code
    assert "# sizes: s0, s1" in code and "shape=(s0*s1, 3)" in code


def test_automatic_dynamic_training_step_equals_eager(capfd, monkeypatch):
    """dynamic=None: the first graph is static; the first batch of another size compiles one
    graph with the batch size a symbol, which every later size replays. Adam's state, dropout's
    random stream, batch norm's running statistics and the parameters match eager after every
    step (the probes leave no trace)."""
    monkeypatch.setenv("EMBER_LOGS", "recompiles,dynamic")
    sizes = [6, 6, 9, 4, 13, 2, 7]
    results = []
    for compiled in (False, True):
        ember.manual_seed(0)
        # no bias before batch norm: its gradient is 0 up to rounding, which Adam scales to full
        # steps, so the C backend's sum order (not NumPy's) would decide those parameters
        model = nn.Sequential(nn.Linear(5, 16, bias=False), nn.BatchNorm1d(16), nn.Tanh(), nn.Dropout(0.3),
                              nn.Linear(16, 4))
        opt = ember.optim.Adam(model.parameters(), lr=0.01)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        run = ember.compile(step) if compiled else step
        rng = np.random.default_rng(1)
        losses = [run(_rand(b, 5, seed=b), ember.tensor(rng.integers(0, 4, b))).item() for b in sizes]
        results.append((losses, [t.detach().numpy().copy() for t in (*model.parameters(), *model.buffers())]))
    (eager_losses, eager_params), (losses, params) = results
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for a, b in zip(params, eager_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    # the first call makes Adam's state (a break, no graph), the second compiles a static graph
    # (batch 6), the third (batch 9) the dynamic graph that serves every later size
    assert _graphs() == 2
    err = capfd.readouterr().err
    assert "guard failed: input 0 (shape" in err and "s0 = x.size(0) in [2, inf]" in err  # open, as torch's


def test_dynamic_false_compiles_a_graph_per_shape_and_unfittable_sizes_specialise(capfd, monkeypatch):
    f = ember.compile(lambda x: x * 2, dynamic=False)
    for n in (2, 3, 4):
        f(ember.ones(n))
    assert _graphs() == 3
    ember.compiler.reset()
    monkeypatch.setenv("EMBER_LOGS", "dynamic")
    g = ember.compile(lambda x: x[: min(x.shape[0], 4)] + 1, dynamic=True)  # min(): no polynomial
    for n in (3, 5, 6, 3):
        np.testing.assert_array_equal(g(ember.arange(n)).numpy(), np.arange(min(n, 4)) + 1)
    assert _graphs() == 3 and "specialising s0 (x.size(0))" in capfd.readouterr().err


def test_mark_dynamic_range_and_mark_static(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "recompiles")
    f = ember.compile(lambda x: x.sum(0) * x.shape[0])
    x = ember.ones(4, 3)
    mark_dynamic(x, 0, min=2, max=8)
    for n in (4, 2, 8, 5):
        assert f(x if n == 4 else ember.ones(n, 3)).tolist() == [float(n * n)] * 3
    assert _graphs() == 1
    f(ember.ones(9, 3))  # outside the marked range: a guard, then a graph of its own
    assert _graphs() == 2 and "s0 = 9 is outside the graph's range [2, 8]" in capfd.readouterr().err
    ember.compiler.reset()
    h = ember.compile(lambda x: x + 1, dynamic=True)
    y = ember.ones(3, 4)
    mark_static(y, 1)
    h(y), h(ember.ones(5, 4)), h(ember.ones(3, 5))
    assert _graphs() == 2
    with pytest.raises(IndexError):
        mark_dynamic(y, 2)


# ---- @dynamic_spec -------------------------------------------------------------------------------
B = ShapeVar("B", max=64)


class _Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 12), nn.LayerNorm(12), nn.GELU(), nn.Linear(12, 3))

    @dynamic_spec({"x": TensorSpec([B, STATIC])})
    def forward(self, x):
        return self.net(x).softmax(-1)


def test_shapevar_batch_1_to_64_compiles_once_and_enforces_its_range():
    ember.manual_seed(0)
    model = _Classifier()
    compiled = ember.compile(model)
    with ember.no_grad():
        for b in range(1, 65):
            x = _rand(b, 6, seed=b)
            np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-6, atol=1e-7)
    assert _graphs() == 1
    with pytest.raises(RuntimeError, match=r"x.size\(0\) = 65 is outside the range \[0, 64\] of ShapeVar B"):
        compiled(ember.ones(65, 6))
    with pytest.raises(RuntimeError, match=r"4x7 and 6x12"):
        compiled(ember.ones(4, 7))  # a static dim that changed: a recompile, eager's error
    assert _graphs() == 1


def test_assumptions_and_derived_sizes_are_checked_at_each_call():
    N = ShapeVar("N", min=2, max=32)
    spec = ShapesSpec(ParamsSpec({"x": TensorSpec([N, STATIC]), "y": TensorSpec([N * 2])}), assumptions=[N % 2 == 0])

    def f(x, y):
        return x.sum(1) + y.view(-1, 2).sum(1)
    compiled = ember.compile(f, shapes_spec=spec)
    for n in (4, 8, 6):
        x, y = _rand(n, 3, seed=n), _rand(2 * n, seed=n + 1)
        np.testing.assert_allclose(compiled(x, y).numpy(), f(x, y).numpy(), rtol=1e-6)
    assert _graphs() == 1
    with pytest.raises(RuntimeError, match=r"assumption N % 2 == 0 .*\(N = 5\)"):
        compiled(ember.ones(5, 3), ember.ones(10))
    with pytest.raises(RuntimeError, match=r"y.size\(0\) = 9, but the spec declares it 2\*N = 8"):
        compiled(ember.ones(4, 3), ember.ones(9))
    with pytest.raises(RuntimeError, match=r"declares 1"):
        compiled(ember.ones(4, 3), ember.ones(4, 2))


def test_spec_errors_are_torchs():
    spec = {"x": TensorSpec([ShapeVar("B"), STATIC])}

    @dynamic_spec(spec)
    def f(x):
        return x + 1
    with pytest.raises(ValueError, match=r"Both `@dynamic_spec\(...\)` is attached .* Provide only one."):
        ember.compile(f, shapes_spec=spec)
    with pytest.raises(ValueError, match="Stacking multiple @dynamic_spec"):
        dynamic_spec(spec)(f)
    with pytest.raises(ValueError, match=r"parameter 'x', which .*g does not have \(its parameters: y\)"):
        def g(y):
            return y
        ember.compile(g, shapes_spec=spec)
    with pytest.raises(ValueError, match="min >= 0"):
        ShapeVar("B", min=-1)
    with pytest.raises(TypeError, match="TensorSpec dim 1"):
        TensorSpec([B, "x"])
    with pytest.raises(TypeError, match="assumptions"):
        ShapesSpec(spec, assumptions=[True])
    assert repr(ShapesSpec(spec)) == "shapes_spec:\n  params:\n    x:\n      Tensor:\n        0: ShapeVar(B, min=0)\n" \
        "        1: None"


def test_spec_in_containers_and_varargs():
    L = ShapeVar("L", max=16)

    @dynamic_spec({"batch": DictSpec({"a": TensorSpec([L])}), "*args": [SeqSpec([TensorSpec([L])])]})
    def f(batch, *rest):
        return batch["a"] * 2 + rest[0][0]
    compiled = ember.compile(f)
    for n in (3, 7, 12):
        a, b = _rand(n, seed=n), _rand(n, seed=n + 1)
        np.testing.assert_allclose(compiled({"a": a}, [b]).numpy(), (a * 2 + b).numpy(), rtol=1e-6)
    assert _graphs() == 1
    with pytest.raises(RuntimeError, match=r"rest\[0\]\[0\].size\(0\) = 5, but batch\['a'\].size\(0\) = 4"):
        compiled({"a": ember.ones(4)}, [ember.ones(5)])


def test_equal_sizes_share_a_symbol_and_the_relation_is_guarded(capfd, monkeypatch):
    """Dimensions of equal size share one symbol (torch's duck sizing); a call where they differ
    (broadcasting a size-1 operand) fails that guard and compiles its own graph."""
    monkeypatch.setenv("EMBER_LOGS", "recompiles")
    f = ember.compile(lambda x, y: x * y + 1, dynamic=True)
    for n in (4, 6, 3):
        np.testing.assert_array_equal(f(ember.arange(n), ember.arange(n)).numpy(), np.arange(n) ** 2 + 1)
    assert _graphs() == 1
    np.testing.assert_array_equal(f(ember.arange(5), ember.ones(1, dtype=ember.int64)).numpy(), np.arange(5) + 1)
    assert _graphs() == 2 and "input 1 (shape, dtype, requires_grad): expected ((s0,)" in capfd.readouterr().err


def test_a_transposed_input_stays_dynamic():
    f = ember.compile(lambda x: x.contiguous().view(-1, 2).sum(1), dynamic=True)
    for n in (4, 6, 10):
        x = ember.arange(3 * n, dtype=ember.float32).view(n, 3).t()  # (3, n), not contiguous
        np.testing.assert_array_equal(f(x).numpy(), x.contiguous().view(-1, 2).sum(1).numpy())
    assert _graphs() == 1


def test_a_graph_for_the_exact_sizes_is_preferred_to_the_dynamic_one():
    """A loop whose last batch is short: the full batches keep their static graph (C), the
    dynamic graph serves the other sizes."""
    f = ember.compile(lambda x: x * 3)
    f(ember.ones(8)), f(ember.ones(5))
    static, dynamic = f._entries
    assert static.ranges is None and dynamic.ranges == {"s0": (2, None)}  # open, as torch's
    calls = []
    for entry in (static, dynamic):
        entry.run = (lambda run, name: lambda *a: calls.append(name) or run(*a))(entry.run, entry)
    f(ember.ones(8)), f(ember.ones(6))
    assert calls == [static, dynamic] and _graphs() == 2


def test_intvar_scalar_argument_is_one_graph_for_its_values():
    K = IntVar("K", min=1, max=40)

    @dynamic_spec({"x": TensorSpec([STATIC]), "k": K})
    def tile(x, k):
        return x.repeat(k) * k
    compiled = ember.compile(tile)
    for k in (3, 7, 40, 12, 2):
        np.testing.assert_array_equal(compiled(ember.arange(3), k).numpy(), np.tile(np.arange(3), k) * k)
    assert _graphs() == 1
    # k = 1 records a shorter graph (repeat(1) records no op), so the first call there, which
    # checks the recording against the fitted graph, gives k = 1 a graph of its own
    np.testing.assert_array_equal(compiled(ember.arange(3), 1).numpy(), np.arange(3))
    assert _graphs() == 2
    with pytest.raises(RuntimeError, match=r"k = 41 is outside the range \[1, 40\] of IntVar K"):
        compiled(ember.arange(3), 41)


def test_control_flow_nodes_specialise_the_sizes_and_stay_correct(capfd, monkeypatch):
    """A graph holding a cond: its subgraphs are not fitted yet, so the sizes specialise (said
    in the log) and every size still gives eager's result."""
    monkeypatch.setenv("EMBER_LOGS", "dynamic")

    def f(x):
        return ember.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, (x,))
    g = ember.compile(f)
    for n in (3, 5, 7, 5):
        x = _rand(n, 2, seed=n)
        np.testing.assert_array_equal(g(x).numpy(), f(x).numpy())
    assert _graphs() == 3 and "specialising s0 (x.size(0)): cond (Cond)['true_graph']" in capfd.readouterr().err


def test_a_size_branch_beyond_the_probed_sizes_recompiles_rather_than_answering_wrong():
    # probes at 4..6, 2 and 2*4+8 = 16 all take the else branch; 40 takes the other one
    def f(x):
        return x * 2 if x.shape[0] > 33 else x * 3

    g = ember.compile(f)
    for n in (3, 4, 40, 5, 70):
        x = ember.arange(float(n))
        np.testing.assert_array_equal(g(x).numpy(), f(x).numpy(), err_msg=f"size {n}")


@pytest.mark.parametrize("flips", [lambda n: n % 7 == 0, lambda n: n in (7, 11, 13), lambda n: 9 < n < 12])
def test_a_size_branch_true_only_between_probed_sizes_recompiles_rather_than_answering_wrong(flips):
    ember.compiler.reset()
    f = ember.compile(lambda x: x * 2 if flips(x.shape[0]) else x * 3)
    for n in (3, 4, 7, 14, 10, 11, 5, 7, 13, 21):
        x = ember.arange(float(n))
        assert ember.equal(f(x), x * 2 if flips(n) else x * 3), n
    graphs = counters["stats"]["unique_graphs"]
    for n in (7, 10, 11, 13, 14, 21):  # every size seen once runs its graph without another check
        f(ember.arange(float(n)))
    assert counters["stats"]["unique_graphs"] == graphs


class _Cache:
    def __init__(self, keys):
        self.keys, self.scale, self.extra = keys, 2.0, {"bias": ember.zeros(keys.shape[0])}


def test_object_spec_makes_the_tensors_an_object_holds_symbolic_inputs():
    from ember.fx.experimental.dynamic_spec import ObjectSpec
    T, B = ShapeVar("T", max=8), ShapeVar("B", max=16)

    @dynamic_spec(ShapesSpec({"x": TensorSpec([B, STATIC]),
                              "cache": ObjectSpec({"keys": TensorSpec([T, STATIC]),
                                                   "extra": DictSpec({"bias": TensorSpec([T])})})},
                             assumptions=[T <= B]))
    def attend(x, cache):
        return (x @ cache.keys.T + cache.extra["bias"]).softmax(-1) * cache.scale

    f = ember.compile(attend)
    cache = _Cache(_rand(3, 4))
    for rows, t in ((4, 3), (5, 3), (9, 6), (9, 8), (16, 2)):
        x = _rand(rows, 4, seed=rows)
        if t != cache.keys.shape[0]:  # rebound between calls, or a new object: the same graph
            cache = _Cache(_rand(t, 4, seed=t)) if rows % 2 else cache
            cache.keys = _rand(t, 4, seed=t)
        cache.extra["bias"] = _rand(t, seed=rows)
        np.testing.assert_allclose(f(x, cache).numpy(), attend(x, cache).numpy(), rtol=1e-6)
    assert _graphs() == 1
    graph = f._entries[0].cap.graph
    assert graph.symbols == ("B", "T") and "cache_keys" in graph.code
    cache.scale = 3.0  # a Python value the graph baked in: guarded
    np.testing.assert_allclose(f(x, cache).numpy(), attend(x, cache).numpy(), rtol=1e-6)
    assert _graphs() == 2
    with pytest.raises(RuntimeError, match=r"cache.keys.size\(0\) = 9 is outside the range \[0, 8\] of ShapeVar T"):
        f(_rand(9, 4), _Cache(_rand(9, 4)))
    with pytest.raises(RuntimeError, match="assumption T <= B"):
        f(_rand(2, 4), _Cache(_rand(3, 4)))
    with pytest.raises(ValueError, match="names attribute 'keys'"):
        f(_rand(4, 4), object())


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "eager"])
def test_a_zero_size_next_to_a_symbol_runs_as_eager(backend):
    """Size 0 stays static (0/1 specialisation), the other dimensions symbols: a buffer of
    shape (0, s0) has 0 bytes at every size, and its arrays still take each call's shape."""
    def pick(x, w):
        rows = x[ember.arange(x.shape[0])] * 2
        return rows, (rows @ w).relu().sum(0), x.new_zeros(x.shape[0], 2).sum()

    compiled = ember.compile(pick, dynamic=True, backend=backend)
    for rows, width in [(3, 4), (5, 6), (0, 4), (0, 7), (1, 5), (0, 3), (4, 2)]:
        x, w = _rand(rows, width, seed=rows), _rand(width, 3, seed=width)
        for got, want in zip(compiled(x, w), pick(x, w)):
            assert got.shape == want.shape, (rows, width)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
