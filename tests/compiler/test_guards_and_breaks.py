"""Guards and recompiles, graph breaks, explain, and the API's names and errors (torch's)."""
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo import exc
from ember._dynamo.utils import counters


pytestmark = pytest.mark.usefixtures("fresh_compiler")


@pytest.fixture(autouse=True)
def _default_stance():
    yield
    ember.compiler.set_stance("default")


def _graphs():
    return counters["stats"]["unique_graphs"]


class _OwnLinear(nn.Linear):
    """A Linear with a forward of its own (user code: compiled by ``.compile()``)."""

    def forward(self, x):
        return super().forward(x)


# ---- guards and recompiles -------------------------------------------------------------------
def test_each_guard_recompiles_once_and_names_itself(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "recompiles")
    model = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5))
    compiled = ember.compile(model)
    x = ember.randn(2, 4)
    changes = [
        (lambda: compiled(x), None),
        (lambda: compiled(x), None),  # same world: replayed
        (lambda: compiled(ember.randn(5, 4)), "input 0 (shape"),
        (lambda: compiled(x.double()), "parameters"),  # float64 input: the Linear refuses it
        (lambda: compiled(x.requires_grad_()), "input 0 (shape, dtype, requires_grad)"),
        (lambda: model.eval() and compiled(x), "training"),
        (lambda: ember.no_grad()(compiled)(x), "grad_mode"),
    ]
    expected_graphs = 0
    for i, (call, reason) in enumerate(changes):
        if reason == "parameters":
            with pytest.raises(RuntimeError):
                call()
            continue
        call()
        expected_graphs += reason is not None or i == 0
        assert _graphs() == expected_graphs, i
        err = capfd.readouterr().err
        assert (reason is None) == (err == ""), (i, err)
        if reason:
            assert reason in err and "guard failed" in err
    # replacing a parameter object is a failed identity guard
    model[0].weight = nn.Parameter(ember.randn(3, 4))
    with ember.no_grad():
        got = compiled(x)
    assert "parameter identity" in capfd.readouterr().err
    np.testing.assert_array_equal(got.numpy(), model(x).detach().numpy())


def _twin_step():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return model, opt, step


def _copy(linear):
    twin = nn.Linear(linear.in_features, linear.out_features)
    twin.load_state_dict(linear.state_dict())
    return twin


def test_whole_step_follows_each_change_between_calls():
    """A compiled training step beside the same step run eagerly on a twin: after every change
    between calls (the replay of the last call's graph must not hide one), losses and
    parameters agree; switching back to an earlier world reuses its graph."""
    (m1, o1, eager), (m2, o2, step) = _twin_step(), _twin_step()
    compiled = ember.compile(step)
    x, y = ember.randn(6, 4), ember.randint(0, 3, (6,))
    ember.manual_seed(1)
    swap = nn.Linear(8, 3)
    changes = [None, None, None,
               lambda m, o: m[0].weight.requires_grad_(False),
               lambda m, o: m[0].weight.requires_grad_(True),  # back: the earlier graph
               lambda m, o: m.eval(), lambda m, o: m.train(),
               lambda m, o: o.param_groups[0].update(lr=0.05),
               lambda m, o: m.__setitem__(2, _copy(swap).requires_grad_(False)),  # not in opt
               lambda m, o: m[2].weight.requires_grad_(True)]
    sizes = []
    for change in changes:
        if change is not None:
            change(m1, o1), change(m2, o2)
        np.testing.assert_allclose(float(compiled(x, y)), float(eager(x, y)), rtol=1e-5)
        for a, b in zip(m1.parameters(), m2.parameters()):
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6)
        sizes.append(len(compiled._entries))
    # one graph more per change, none for switching back to an earlier world nor for a new lr
    # (an input of the graph: tests/compiler/test_hyperparameters.py)
    assert sizes[3:] == [sizes[2] + k for k in (1, 1, 2, 2, 2, 3, 4)], sizes


def test_tensors_of_the_closure_are_guarded():
    """A rebound closure variable or a tensor whose ``.data`` changed shape recompiles (was: the
    graph kept reading the tensor it was captured with)."""
    w = ember.ones(3)

    def scale(x):
        return x * w
    compiled, x = ember.compile(scale), ember.ones(3)
    for _ in range(3):
        assert compiled(x).tolist() == [1.0] * 3
    w = ember.full((3,), 2.0)
    assert compiled(x).tolist() == [2.0] * 3
    w.data = ember.full((1,), 5.0)
    assert compiled(x).tolist() == [5.0] * 3


_ALIASED = ember.tensor([0, 1, 2])


def test_one_array_in_two_places_is_guarded():
    """One tensor passed as two arguments (or a global passed in) on the first call: a call
    with other tensors there recompiles (the first graph read one placeholder for both)."""
    x = ember.arange(15.).reshape(5, 3)
    a, b = ember.tensor([0, 1, 2]), ember.tensor([4, 4, 4])
    p, q = ember.ones(3), ember.full((3,), 2.)
    cases = [(lambda x, i, j: x[i] * 10 + x[j], [(x, a, a), (x, a, b), (x, b, a), (x, b, b)]),
             (lambda u, v: u * 10 + v, [(p, p), (p, q), (q, p)]),
             (lambda x, j: x[_ALIASED] * 10 + x[j], [(x, _ALIASED), (x, b), (x, _ALIASED)])]
    for fn, calls in cases:
        compiled = ember.compile(fn)
        for args in calls:
            np.testing.assert_array_equal(compiled(*args).numpy(), fn(*args).numpy())
    layer = nn.Linear(3, 3, bias=False)  # a parameter passed in as an argument, then another tensor
    step = ember.compile(lambda w: layer(w) * 10 + w)
    with ember.no_grad():
        for w in (layer.weight, ember.ones(3, 3), layer.weight):
            np.testing.assert_allclose(step(w).numpy(), (layer(w) * 10 + w).numpy(), rtol=1e-6)


def test_recompile_limit_then_eager_with_one_warning():
    @ember.compile(recompile_limit=2, dynamic=False)  # a graph per shape
    def double(x):
        return x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 6):
            assert double(ember.ones(n)).tolist() == [2.0] * n
    assert _graphs() == 2 and len(double._entries) == 2
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "recompile_limit (2)" in messages[0] and "input 0" in messages[0]
    assert caught[0].filename == __file__  # the caller's line, not ember's


def test_recompile_limit_with_fullgraph_raises_fail_on_recompile_limit_hit():
    """torch 2.13: with fullgraph=True the limit is a hard failure (FailOnRecompileLimitHit, an
    Exception, not a RuntimeError), never a silent eager run; found by checking torch.compile."""
    double = ember.compile(lambda x: x * 2, recompile_limit=2, dynamic=False, fullgraph=True)
    double(ember.ones(1)), double(ember.ones(2))
    with pytest.raises(exc.FailOnRecompileLimitHit, match=r"recompile_limit \(2\).*input 0.*fullgraph=True"):
        double(ember.ones(3))
    assert not issubclass(exc.FailOnRecompileLimitHit, RuntimeError)


def test_ember_logs_take_torch_logs_plus_prefix(capfd, monkeypatch):
    """TORCH_LOGS=+dynamo spelling: a leading "+" (more verbose in torch) still names the log."""
    monkeypatch.setenv("EMBER_LOGS", "+graph, +guards")
    f = ember.compile(lambda x: x * 3, backend="eager")
    f(ember.ones(2))
    err = capfd.readouterr().err
    assert "captured graph of" in err and "guards of" in err


def test_only_real_recompiles_are_counted_and_logged_after_the_limit(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "recompiles")
    f = ember.compile(lambda x: x * 3, recompile_limit=3, dynamic=False, name="triple")
    with pytest.warns(UserWarning, match="triple hit config.recompile_limit"):
        for n in range(1, 9):  # 3 graphs (2 recompiles), then 5 calls past the limit
            assert f(ember.ones(n)).tolist() == [3.0] * n
    f(ember.ones(2))  # an entry of its own still replays
    assert counters["recompiles"] == {"triple": 2} and _graphs() == 3
    assert capfd.readouterr().err.count("recompiling triple") == 2


def test_compile_keywords_are_torchs():
    import inspect
    torch = pytest.importorskip("torch")
    ours, theirs = (inspect.signature(c).parameters for c in (ember.compile, torch.compile))
    assert [(p.name, p.kind, p.default) for p in ours.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]
    with pytest.raises(ValueError, match="`dynamic` and `shapes_spec` cannot both be set"):
        ember.compile(lambda x: x, dynamic=True, shapes_spec={})
    # isolate_recompiles=True is what every ember.compile call does: its own entries and limit
    f = lambda x: x + 1  # noqa: E731
    a, b = ember.compile(f, isolate_recompiles=True), ember.compile(f, recompile_limit=1)
    with pytest.warns(UserWarning, match=r"recompile_limit \(1\)"):
        for n in (1, 2):
            assert a(ember.ones(n)).tolist() == b(ember.ones(n)).tolist() == [2.0] * n
    assert len(a._entries) == 2 and len(b._entries) == 1
    m = _OwnLinear(2, 2)  # (nn.Linear's own forward stays eager under .compile(), as torch's)
    m.compile(name="lin", isolate_recompiles=True, shapes_spec=None)
    x = ember.ones(3, 2)
    np.testing.assert_allclose(m(x).detach().numpy(), (x @ m.weight.T + m.bias).detach().numpy(), rtol=1e-6)
    assert m.forward._label == "lin"


def test_config_recompile_limit_is_the_default(monkeypatch):
    monkeypatch.setattr(ember._dynamo.config, "recompile_limit", 1)
    f = ember.compile(lambda x: x + 1)
    with pytest.warns(UserWarning, match="recompile_limit"):
        f(ember.ones(1)), f(ember.ones(2))
    assert _graphs() == 1


def test_stances():
    f = ember.compile(lambda x: x - 1)
    f(ember.ones(2))
    ember.compiler.set_stance("fail_on_recompile")
    with pytest.raises(RuntimeError, match="fail_on_recompile"):
        f(ember.ones(3))
    ember.compiler.set_stance("force_eager")
    assert f(ember.ones(4)).tolist() == [0.0] * 4 and _graphs() == 1
    with pytest.raises(RuntimeError, match="should be one of"):
        ember.compiler.set_stance("fast")


# ---- graph breaks ----------------------------------------------------------------------------
def _branchy(x):
    y = x * 2
    if y.sum() > 0:  # data-dependent Python control flow
        return y + 1
    return y - 1


def test_data_dependent_control_flow_gives_eager_results():
    f = ember.compile(_branchy)
    rng = np.random.default_rng(0)
    for _ in range(6):
        x = ember.tensor(rng.standard_normal(5).astype(np.float32))
        np.testing.assert_array_equal(f(x).numpy(), _branchy(x).numpy())
    # split at the break (test_graph_break_split.py): `y = x * 2` and `return y - 1` are captured
    assert counters["graph_break"] and f._split is not None and _graphs() == 2


@pytest.mark.parametrize("body, reason", [
    (lambda x: x * x.sum().item(), ".item()"),
    (lambda x: x + len(x.tolist()), ".tolist()"),
    (lambda x: x + float(x.numpy().sum()), ".numpy()"),
    (lambda x: (print(x), x + 1)[1], "printing"),
    (lambda x: x + ember.randperm(3), "random numbers"),
    (lambda x: ember.compiler.disable(lambda y: y * 3)(x) + 1, "ember.compiler.disable"),
])
def test_breaks_run_correctly_and_fullgraph_names_reason_and_line(body, reason, capsys):
    x = ember.arange(3.0)
    ember.manual_seed(1)
    want = body(x)
    ember.manual_seed(1)
    assert ember.compile(body)(x).tolist() == want.tolist()
    ember.compiler.reset()  # (else fullgraph=True finds the first's entries and raises nothing: torch's too)
    with pytest.raises(exc.Unsupported, match=reason) as info:
        ember.compile(body, fullgraph=True)(x)
    assert "test_guards_and_breaks.py" in str(info.value)  # the user's line, not ember's


def test_explain_reports_graphs_breaks_and_reasons():
    out = ember._dynamo.explain(_branchy)(ember.ones(4))
    assert (out.graph_count, out.graph_break_count) == (2, 1)
    assert "bool(tensor)" in out.break_reasons[0].reason
    assert "if y.sum() > 0" in out.break_reasons[0].user_stack[0].line  # (a FrameSummary, as torch's)
    assert [[op.name for op in ops] for ops in out.ops_per_graph] == [["Mul", "Sum", "Gt"], ["Add"]]
    assert "Graph Count: 2" in str(out) and "Graph Break Count: 1" in str(out)


def test_logs_print_graph_and_guards(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "graph,guards")
    ember.compile(lambda x: (x + 1).relu())(ember.ones(2))
    err = capfd.readouterr().err
    assert "def forward(x):\n    add = Add(x, 1)  # torch.float32[2]\n    relu = Relu(add)" in err
    assert "return [relu]" in err and "input 0 (shape, dtype, requires_grad) == ((2,)" in err


# ---- the API's names and errors --------------------------------------------------------------
def test_api_errors_are_torchs():
    f = lambda x: x  # noqa: E731
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        ember.compile(f, mode="max-autotune", options={"max_autotune": True})
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast, should be one of: default, lite, "
                                           "reduce-overhead, max-autotune-no-cudagraphs, max-autotune"):
        ember.compile(f, mode="fast")
    with pytest.raises(RuntimeError, match="Unexpected optimization option bogus, known options are"):
        ember.compile(f, options={"bogus": 1})
    with pytest.raises(exc.InvalidBackend, match="Invalid backend: 'nope'"):
        ember.compile(f, backend="nope")
    assert issubclass(exc.InvalidBackend, RuntimeError) and issubclass(exc.Unsupported, RuntimeError)
    assert ember.compile(f, disable=True) is f
    assert set(ember._dynamo.list_backends(exclude_tags=())) == {"inductor", "eager", "aot_eager"}


@pytest.mark.parametrize("mode", ["default", "lite", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
def test_decorator_forms_and_modes(mode):
    @ember.compile(mode=mode)
    def f(x):
        return x * 3

    @ember.compile
    def g(x):
        return x - 3
    assert f(ember.ones(2)).tolist() == [3.0, 3.0] and g(ember.ones(2)).tolist() == [-2.0, -2.0]
    assert f.__name__ == "f"


def test_module_compile_reset_and_optimized_module():
    model = nn.Linear(3, 2)
    compiled = ember.compile(model)
    assert isinstance(compiled, ember._dynamo.OptimizedModule) and compiled._orig_mod is model
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert compiled.in_features == 3 and compiled.weight is model.weight
    x = ember.randn(4, 3)
    with ember.no_grad():
        compiled(x)
        assert _graphs() == 1
        ember._dynamo.reset()
        assert _graphs() == 0
        compiled(x)
        assert _graphs() == 1
        model.compile(backend="eager")  # (nn.Linear's own forward: eager, as torch's dynamo skips torch.nn)
        # the code generator's direct small-GEMM kernel sums in another order than BLAS
        np.testing.assert_allclose(model(x).numpy(), compiled(x).numpy(), rtol=1e-6, atol=1e-7)
        assert _graphs() == 1
        own = _OwnLinear(3, 2)
        own.compile(backend="eager")
        own(x)
    assert _graphs() == 2


SCALE = ember.ones(3)


def test_rebinding_a_global_or_closure_tensor_reads_the_new_one():
    # was: the graph held the first tensor object and kept returning x * 1 after the rebinding;
    # a tensor of the same shape runs the same graph on it (torch: one graph, no recompile)
    global SCALE
    ember.compiler.reset()
    f = ember.compile(lambda x: x * SCALE)
    x = ember.tensor([1.0, 2.0, 3.0])
    assert f(x).tolist() == [1.0, 2.0, 3.0]
    SCALE = ember.full((3,), 2.0)
    assert f(x).tolist() == [2.0, 4.0, 6.0]
    SCALE.mul_(5)  # the same object written in place: the graph reads it, no recompile needed
    assert f(x).tolist() == [10.0, 20.0, 30.0]
    assert not counters["recompiles"] and counters["stats"]["unique_graphs"] == 1

    bias = ember.zeros(3)

    def g(x):
        return x + bias
    h = ember.compile(g)
    assert h(x).tolist() == [1.0, 2.0, 3.0]
    bias = ember.ones(3)  # noqa: F841  (read by g through its closure cell)
    assert h(x).tolist() == [2.0, 3.0, 4.0]


CALLS = []


class _Counter:
    def __init__(self):
        self.n = 0


def test_python_side_effects_run_on_every_call_never_skipped():
    # was: the list append and attribute update ran at the recording only, then were skipped
    ember.compiler.reset()
    CALLS.clear()
    counter = _Counter()

    def f(x):
        CALLS.append(x.shape[0])
        counter.n += 1
        return x * 2

    g = ember.compile(f)
    for n in (2, 2, 2, 3):
        assert g(ember.ones(n)).tolist() == [2.0] * n
    assert CALLS == [2, 2, 2, 3] and counter.n == 4
    assert any("Python side effect" in reason for reason in counters["graph_break"])
    with pytest.raises(exc.Unsupported, match=r"Python side effect: global 'CALLS' changed"):
        ember.compile(f, fullgraph=True)(ember.ones(2))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.seen = nn.Linear(2, 2), 0

        def forward(self, x):
            self.seen += 1
            return self.fc(x)
    net = Net()
    compiled = ember.compile(net)
    for _ in range(3):
        compiled(ember.ones(1, 2))
    assert net.seen == 3
    pure = ember.compile(lambda x: x.sin() * len(CALLS))  # reads only: still one graph
    ember.compiler.reset()
    for _ in range(3):
        pure(ember.ones(2))
    assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"]
