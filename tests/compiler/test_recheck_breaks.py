"""Programs that changed state the compiled function reads after a warm loop (2+ replays, the
flat recheck in place) and must still equal the eager program: each found by trying to make the
guards (fast path and full path) miss a change."""
import copy
import functools
import types

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

pytestmark = pytest.mark.usefixtures("fresh_compiler")

X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


def _equal_after(make, change, warm=4, after=3):
    """Runs ``make()``'s ``(step, state)`` eagerly and compiled (default backend), ``change(state)``
    after ``warm`` calls, and checks every call's result and the parameters agree."""
    runs = []
    for compiled in (False, True):
        step, state = make()
        step = ember.compile(step) if compiled else step
        out = [step() for _ in range(warm)]
        change(state)
        out += [step() for _ in range(after)]
        params = [p.detach().numpy().copy() for p in state.get("model", nn.Module()).parameters()]
        runs.append(([o.detach().numpy() for o in out], params))
    (want, want_p), (got, got_p) = runs
    for i, (w, g) in enumerate(zip(want + want_p, got + got_p)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"result/parameter {i}")


def _train():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = ember.tensor(X), ember.tensor([0, 2, 1, 1, 0])

    def step():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step, {"model": model}


def test_a_gradient_hook_registered_on_a_parameter_after_warm_up():
    """A hook on a weight's gradient (``p.register_hook``) changes what the step's backward
    gives: the graph captured without it must not replay (it did, updating the weight)."""
    _equal_after(_train, lambda s: s["model"][0].weight.register_hook(lambda g: g * 0))


def test_a_gradient_hook_removed_after_warm_up():
    def make():
        step, state = _train()
        state["handle"] = state["model"][2].bias.register_hook(lambda g: g * 3)
        return step, state
    _equal_after(make, lambda s: s["handle"].remove())


class _Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.cfg = types.SimpleNamespace(scale=2.0)

    def forward(self, x):
        return self.lin(x) * self.cfg.scale


def test_a_value_in_a_plain_object_a_module_holds():
    def make():
        ember.manual_seed(0)
        model, x = _Scaled(), ember.tensor(X)
        return (lambda: model(x)), {"model": model}
    _equal_after(make, lambda s: setattr(s["model"].cfg, "scale", 3.0))


def test_a_tensor_rebound_in_a_plain_object_a_module_holds():
    def make():
        ember.manual_seed(0)
        model, x = _Scaled(), ember.tensor(X)
        model.cfg.shift = ember.ones(3)
        return (lambda: model(x) + model.cfg.shift), {"model": model}
    _equal_after(make, lambda s: setattr(s["model"].cfg, "shift", ember.full((3,), 4.0)))


def test_a_tensor_rebound_in_a_long_closure_list():
    def make():
        ws, x = [ember.full((4,), float(i)) for i in range(40)], ember.tensor(X)
        return (lambda: x * ws[1]), {"ws": ws}
    _equal_after(make, lambda s: s["ws"].__setitem__(1, ember.full((4,), 7.0)))


def test_a_value_changed_in_a_long_config_dict():
    def make():
        cfg, x = {f"k{i}": float(i) for i in range(40)}, ember.tensor(X)
        return (lambda: x * cfg["k2"]), {"cfg": cfg}
    _equal_after(make, lambda s: s["cfg"].__setitem__("k2", 5.0))


def test_a_tensor_rebound_in_a_list_nested_in_a_closure_dict():
    def make():
        box, x = {"ws": [[ember.ones(4)], [ember.full((4,), 2.0)]]}, ember.tensor(X)
        return (lambda: x * box["ws"][1][0]), {"box": box}
    _equal_after(make, lambda s: s["box"]["ws"][1].__setitem__(0, ember.full((4,), 7.0)))


def test_a_container_too_large_to_guard_runs_eagerly_and_says_why():
    """A list past guards._LARGE items is not compared on every call: reading it is a graph
    break (eager results, the reason named; fullgraph=True raises it)."""
    def make():
        ws, x = [float(i) for i in range(5000)], ember.tensor(X)
        return (lambda: x * ws[3]), {"ws": ws}
    _equal_after(make, lambda s: s["ws"].__setitem__(3, 7.0))
    ws, x = [1.0] * 5000, ember.tensor(X)
    explanation = ember._dynamo.explain(lambda: x * ws[0])()
    assert explanation.graph_break_count == 1
    assert "list of 5000 items" in explanation.break_reasons[0].reason
    with pytest.raises(ember._dynamo.exc.Unsupported, match="too large to guard"):
        ember.compile(lambda: x * ws[0], fullgraph=True)()


class _Step:
    """A callable object holding its model and a scale (compiled as ``ember.compile(_Step())``)."""

    def __init__(self):
        ember.manual_seed(0)
        self.model, self.scale, self.x = nn.Sequential(nn.Linear(4, 3)), 2.0, ember.tensor(X)

    def __call__(self):
        return self.model(self.x) * self.scale


def test_a_callable_objects_scalar_attribute():
    def make():
        s = _Step()
        return s, {"step": s}
    _equal_after(make, lambda s: setattr(s["step"], "scale", 3.0))


def test_a_parameter_replaced_in_a_callable_objects_model():
    def make():
        s = _Step()
        return s, {"step": s, "model": s.model}
    _equal_after(make, lambda s: setattr(s["model"][0], "weight", nn.Parameter(ember.ones(3, 4))))


def _scaled(model, scale, x):
    return model(x) * scale[0]


def test_a_functools_partial_over_a_model():
    def make():
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3))
        return functools.partial(_scaled, model, [2.0], ember.tensor(X)), {"model": model}
    _equal_after(make, lambda s: setattr(s["model"][0], "weight", nn.Parameter(ember.ones(3, 4))))


def test_a_tensor_rebound_in_a_closure_dict():
    """``state["x"] = other`` (a small dict read from the closure): the graph read the old tensor
    as a fixed source; the guards compared the dict's members by identity but no fact held them."""
    def make():
        model = _train()[1]["model"]
        box = {"x": ember.tensor(X), "y": ember.tensor([0, 2, 1, 1, 0])}

        def step():
            return F.cross_entropy(model(box["x"]), box["y"])
        return step, {"box": box, "model": model}
    _equal_after(make, lambda s: s["box"].__setitem__("x", ember.tensor(X * 2)))


def test_a_leaf_in_a_closure_dict_accumulates_its_gradient():
    """A leaf that requires grad held in a closure dict gets its ``.grad`` on every call, as a
    parameter does (the replay left it at the first call's)."""
    def make():
        ember.manual_seed(0)
        ws, x = {"w": ember.randn(4, 3, requires_grad=True)}, ember.tensor(X)

        def step():
            (x @ ws["w"]).pow(2).mean().backward()
            return ws["w"].grad.clone()
        return step, {}
    _equal_after(make, lambda s: None)


def _write_then_read(a, b):
    a.mul_(2)
    return b + 1


@pytest.mark.parametrize("overlap", ["same slice twice", "overlapping slices"])
def test_inputs_that_are_views_of_one_memory_after_warm_calls_on_separate_ones(overlap):
    compiled = ember.compile(_write_then_read)
    for _ in range(3):
        compiled(ember.arange(3.0), ember.arange(1.0, 4.0))
    got, want = (ember.arange(8.0) for _ in range(2))
    cut = (slice(0, 3), slice(0, 3)) if overlap == "same slice twice" else (slice(0, 3), slice(1, 4))
    np.testing.assert_array_equal(compiled(got[cut[0]], got[cut[1]]).numpy(),
                                  _write_then_read(want[cut[0]], want[cut[1]]).numpy())


def test_an_input_written_in_place_and_an_unfolded_view_of_its_memory():
    """``unfold`` views its base through NumPy's as_strided (a DummyArray in between): the same memory."""
    compiled = ember.compile(_write_then_read)
    for _ in range(3):
        compiled(ember.arange(3.0), ember.ones(6, 3))
    got, want = (ember.arange(8.0) for _ in range(2))
    np.testing.assert_array_equal(compiled(got[0:3], got.unfold(0, 3, 1)).numpy(),
                                  _write_then_read(want[0:3], want.unfold(0, 3, 1)).numpy())


def test_overlapping_inputs_only_read_keep_their_graph():
    """Views of one memory that the graph only reads replay as well as separate ones."""
    compiled = ember.compile(lambda a, b: a * 2 + b)
    for _ in range(3):
        compiled(ember.arange(3.0), ember.arange(1.0, 4.0))
    x = ember.arange(8.0)
    np.testing.assert_array_equal(compiled(x[0:3], x[1:4]).numpy(), (x[0:3] * 2 + x[1:4]).numpy())
    assert len(compiled._entries) == 2 and type(compiled._entries[1]).__name__ == "_Entry"


FACTOR = {"forward": 2.0, "hook": 1.0}


class _Global(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x) * FACTOR["forward"]


def _before_and_after(step, key, value):
    out = [step() for _ in range(3)]
    FACTOR[key], old = value, FACTOR[key]
    try:
        return [o.detach().numpy() for o in out + [step(), step()]]
    finally:
        FACTOR[key] = old


def test_a_global_read_in_a_compiled_modules_forward():
    ember.manual_seed(0)
    model, x = _Global(), ember.tensor(X)
    want = _before_and_after(lambda: model(x), "forward", 3.0)
    compiled = ember.compile(model)
    for g, w in zip(_before_and_after(lambda: compiled(x), "forward", 3.0), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_a_global_read_in_a_forward_hook():
    ember.manual_seed(0)
    model, x = nn.Sequential(nn.Linear(4, 3)), ember.tensor(X)
    model.register_forward_hook(lambda module, args, out: out * FACTOR["hook"])
    want = _before_and_after(lambda: model(x), "hook", 5.0)
    compiled = ember.compile(lambda: model(x))
    for g, w in zip(_before_and_after(compiled, "hook", 5.0), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_a_global_read_by_a_user_function_a_forward_calls():
    def scale():
        return FACTOR["forward"]

    class Calls(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)

        def forward(self, x):
            return self.lin(x) * scale()
    ember.manual_seed(0)
    model, x = Calls(), ember.tensor(X)
    want = _before_and_after(lambda: model(x), "forward", 3.0)
    compiled = ember.compile(lambda: model(x))
    for g, w in zip(_before_and_after(compiled, "forward", 3.0), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


class _ClassScaled(nn.Module):
    scale = 2.0  # a class attribute, read as self.scale

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x) * self.scale


def test_a_class_attribute_a_forward_reads():
    def make():
        ember.manual_seed(0)
        _ClassScaled.scale = 2.0
        model, x = _ClassScaled(), ember.tensor(X)
        return (lambda: model(x)), {"model": model}
    try:
        _equal_after(make, lambda s: setattr(_ClassScaled, "scale", 3.0))
    finally:
        _ClassScaled.scale = 2.0


class _Scaler:
    def __call__(self, t):
        return t * FACTOR["forward"]


def test_a_global_read_by_a_callable_object_in_the_closure():
    ember.manual_seed(0)
    model, x, scaler = nn.Linear(4, 3), ember.tensor(X), _Scaler()
    want = _before_and_after(lambda: scaler(model(x)), "forward", 3.0)
    compiled = ember.compile(lambda: scaler(model(x)))
    for g, w in zip(_before_and_after(compiled, "forward", 3.0), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("first", ["off", "bfloat16"])
def test_autocast_entered_or_changed_after_warm_calls(first):
    """The autocast dtype is a guard: a graph captured outside autocast (or under bfloat16)
    replayed under ``ember.autocast("cpu", dtype=float16)`` gave another dtype and value."""
    ember.manual_seed(0)
    model, x = nn.Linear(4, 3), ember.tensor(X)
    step = lambda: model(x).relu().sum()  # noqa: E731
    compiled = ember.compile(step)
    for _ in range(3):
        if first == "off":
            compiled()
        else:
            with ember.autocast("cpu", dtype=ember.bfloat16):
                compiled()
    with ember.autocast("cpu", dtype=ember.float16):
        got, want = [compiled() for _ in range(2)], step()
    for g in got:
        assert g.dtype == want.dtype
        np.testing.assert_array_equal(g.float().detach().numpy(), want.float().detach().numpy())
    assert compiled().dtype == step().dtype == ember.float32  # off again


class _Listed(nn.Module):
    def __init__(self, values):
        super().__init__()
        self.lin, self.values = nn.Linear(4, 3), values

    def forward(self, x):
        v = self.values[0]
        return self.lin(x) * (v[0] if isinstance(v, list) else min(v) if isinstance(v, set) else v)


@pytest.mark.parametrize("values, change", [([1.0], lambda v: v.__setitem__(0, 2.0)),
                                            ([[1.0]], lambda v: v[0].__setitem__(0, 2.0)),
                                            ([{1.0}], lambda v: (v[0].clear(), v[0].add(2.0))),
                                            ({0: 1.0}, lambda v: v.__setitem__(0, 2.0))],
                         ids=["list", "nested list", "set in a list", "dict"])
def test_a_value_changed_in_place_in_a_modules_list_or_dict(values, change):
    """``self.values[0] = 2.0`` on a module: the guards saw the list change but no fact held its
    values, so the graph with 1.0 baked in replayed."""
    def make():
        ember.manual_seed(0)
        model, x = _Listed(copy.deepcopy(values)), ember.tensor(X)
        return (lambda: model(x)), {"model": model}
    _equal_after(make, lambda s: change(s["model"].values))
