"""Graph breaks split a compiled function at statement granularity (compiler/split.py): the
statements that broke run eagerly, the runs between them are captured pieces that replay.
Each program is run compiled and eagerly (and in torch where it applies) over several calls;
results, gradients and training state must agree, and an op-counting observer (conftest's
``dispatched``) proves that the pieces replay (only the eager statements' ops are dispatched)."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.compiler.eval_frame import counters

pytestmark = pytest.mark.usefixtures("fresh_cache")

LOG = []
SCALE = 2.0
RNG = np.random.default_rng(0)
BACKEND = "aot_eager"  # the graph interpreted on arrays (no C compiler run): fast; the training step uses C


def _data(*shape, grad=False):
    return ember.tensor(RNG.standard_normal(shape).astype(np.float32), requires_grad=grad)


def _close(got, want, tol=2e-6):
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


def _mid(x, w):
    h = (x @ w).tanh()
    LOG.append(h.abs().max().item())  # a graph break in the middle
    y = (h * 3).sigmoid().sum(1)
    return y


def test_item_in_the_middle_replays_the_pieces_around_it(dispatched):
    f = ember.compile(_mid, backend=BACKEND)
    w = _data(3, 5, grad=True)
    for call in range(4):
        x = _data(4, 3)
        with dispatched() as ops:
            got = f(x, w)
        want = _mid(x, w)
        _close(got, want)
        assert LOG[-1] == pytest.approx(LOG[-2], rel=1e-5)
        (g,) = ember.autograd.grad(got.sum(), w)
        (e,) = ember.autograd.grad(want.sum(), w)
        _close(g, e, 1e-5)
        if call >= 2:  # recorded at the first call, pieces captured at the second, replayed since
            assert ops.names == ["Abs", "Max"], ops.names
    assert counters["stats"]["unique_graphs"] == 2 and len(counters["graph_break"]) == 1
    assert f._split is not None and all(len(p.compiled._entries) == 1 for p in f._split.pieces)


def _branchy(x, w):
    h = x @ w
    if h.sum() > 0:  # data-dependent control flow: both branches taken in turn
        h = h.relu()
    else:
        h = -h * 0.5
    return (h * 2).sum(), h


def test_data_dependent_if_takes_either_branch_on_alternate_calls(dispatched):
    import torch
    f = ember.compile(_branchy, backend=BACKEND)
    wt = _data(3, 4).numpy()
    w = ember.tensor(wt, requires_grad=True)
    tw = torch.tensor(wt, requires_grad=True)
    for call in range(6):
        x = _data(2, 3).abs() * (1 if call % 2 else -1)
        with dispatched() as ops:
            loss, h = f(x, w)
        tloss, th = _branchy(torch.tensor(x.numpy()), tw)
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
        np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-5, atol=1e-6)
        loss.backward()
        tloss.backward()
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
        if call >= 2:  # the eager if: Sum, Gt and its branch; the pieces replay
            assert "Matmul" not in ops.names and ops.names[:2] == ["Sum", "Gt"], ops.names


def _returns_in_if(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def test_a_return_inside_the_statement_that_broke_runs_as_written():
    f = ember.compile(_returns_in_if, backend=BACKEND)
    for call in range(4):
        x = _data(3) * (1 if call % 2 else -1) + (3 if call % 2 else -3)
        _close(f(x), _returns_in_if(x))
    assert f._split is not None


def _train(dispatched, compiled, backend="inductor", log="list"):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    losses = []

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if log == "list":
            losses.append(loss.item())
        else:
            print(f"loss {loss.item():.4f}")
        return loss
    run = ember.compile(step, backend=backend) if compiled else step
    rng = np.random.default_rng(1)
    counts = []
    for _ in range(5):
        x = ember.tensor(rng.standard_normal((6, 4)).astype(np.float32))
        y = ember.tensor(rng.integers(0, 3, 6))
        with dispatched() as ops:
            run(x, y)
        counts.append(len(ops.names))
    state = [v for s in opt.state.values() for v in s.values()]
    return losses, list(model.parameters()), state, counts


@pytest.mark.parametrize("log", ["list", "print"])
def test_a_training_step_that_logs_its_loss_replays_the_step(log, capsys, dispatched):
    want_losses, want_params, want_state, eager_counts = _train(dispatched, False, log=log)
    want_out = capsys.readouterr().out
    losses, params, state, counts = _train(dispatched, True, log=log)
    assert capsys.readouterr().out == want_out
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for got, want in zip(params + state, want_params + want_state):
        _close(got if isinstance(got, ember.Tensor) else ember.tensor(got),
               want if isinstance(want, ember.Tensor) else ember.tensor(want), 1e-5)
    for got, want in zip(params, want_params):
        _close(got.grad, want.grad, 1e-5)
    assert counts[-1] == 0 and eager_counts[-1] > 20, (counts, eager_counts)  # the whole step replayed


class _Logging(nn.Module):
    def forward(self, x):
        LOG.append(x.mean().item())  # a break inside a submodule's forward
        return x.relu()


class _Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.inner, self.fc2 = nn.Linear(3, 6), _Logging(), nn.Linear(6, 2)

    def forward(self, x):
        h = self.fc1(x)
        h = self.inner(h)  # this statement runs eagerly, calling inner compiled
        return self.fc2(h).tanh()


def test_a_break_inside_a_submodule_compiles_the_submodule_split(dispatched):
    """``h = self.inner(h)`` runs eagerly, calling ``inner`` compiled on its own (split at its
    ``.item()``: its pieces replay one call after the outer function's)."""
    ember.manual_seed(0)
    model = _Outer()
    compiled = ember.compile(model, backend=BACKEND)
    for call in range(5):
        x = _data(5, 3)
        with dispatched() as ops:
            got = compiled(x)
        want = model(x)
        _close(got, want)
        got.sum().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        want.sum().backward()
        for g, p in zip(grads, model.parameters()):
            _close(g, p.grad, 1e-5)
        model.zero_grad()
        if call >= 3:  # inner's logging line (its mean) only
            assert set(ops.names) <= {"Mean", "Sum", "Div"}, ops.names
    (swap,) = compiled._compiled_call._split.callees
    (inner,) = swap.made.values()
    assert [k is model.inner for k in swap.made.keys()] == [True] and inner._split is not None


def _make_closure():
    bias = ember.ones(3)

    def set_bias(value):
        nonlocal bias
        bias = value

    def f(x):
        h = x * SCALE + bias
        LOG.append(h.sum().item())
        return h * SCALE - bias
    return f, set_bias


def test_a_closure_variable_and_a_global_rebound_between_calls_are_seen():
    global SCALE
    f, set_bias = _make_closure()
    g = ember.compile(f, backend=BACKEND)
    x = _data(3)
    try:
        for call in range(6):
            if call == 3:
                set_bias(ember.full((3,), -4.0))
            if call == 4:
                SCALE = 5.0
            _close(g(x), f(x))
    finally:
        SCALE = 2.0
    assert g._split is not None


def _view_then_write(x):
    v = x.view(-1)
    LOG.append(v.sum().item())
    v.add_(1)  # writes x through the view the first piece returned
    return x * 2


def _aliased_results(x):
    h = x * 2
    g = h  # one tensor under two names: a replay would return two
    LOG.append(h.sum().item())
    g.add_(1)
    return h


def _augmented(x, w):
    h = x @ w
    LOG.append(h.sum().item())
    h += 1  # reads the previous piece's h
    return h * 2


def _int_from_item(x, n):
    acc = x
    for _ in range(n):
        acc = acc * 1.5
    k = int(acc.sum().item() > 0)  # a Python int the next piece guards on
    out = acc * k
    if k:
        out = out + 1
    return out


def _dict_between(x):
    stats = {}
    h = x.relu()
    stats["m"] = h.mean().item()
    return h, stats


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return _leaves(list(value.values()))
    return [value]


@pytest.mark.parametrize("fn, args, backend", [
    (_aliased_results, lambda: (_data(3),), "inductor"), (_view_then_write, lambda: (_data(2, 2),), "inductor"),
    (_augmented, lambda: (_data(2, 2), _data(2, 2)), BACKEND), (_int_from_item, lambda: (_data(3), 2), BACKEND),
    (_dict_between, lambda: (_data(3),), BACKEND),
])
def test_names_crossing_pieces_keep_eagers_meaning(fn, args, backend):
    """In-place writes through a name two results share or a view a piece returned (in C, whose
    results are new arrays: the interpreter's NumPy views would hide an alias lost), ``+=`` on a
    piece's result, an int a piece guards on, a dict made in a piece (that piece then runs eagerly)."""
    compiled = ember.compile(fn, backend=backend)
    for call in range(5):
        a = args()
        b = [t.clone() if isinstance(t, ember.Tensor) else t for t in a]
        got, want = compiled(*a), fn(*b)
        for g, w in zip(_leaves((got, a)), _leaves((want, b)), strict=True):
            if isinstance(g, ember.Tensor):
                _close(g, w)
            else:
                assert g == pytest.approx(w, rel=1e-6)
    assert compiled._split is not None


def _nonlocal_user():
    count = 0

    def f(x):
        nonlocal count
        count += 1
        y = x * count
        LOG.append(y.sum().item())
        return y + 1
    return f


_G = [0]


def _uses_global(x):
    global _G
    y = x * 2
    LOG.append(y.sum().item())
    _G = [3]
    return y * _G[0]


def _uses_del(x):
    y = x * 2
    LOG.append(y.sum().item())
    z = y + 1
    del y
    return z


def _early_return(x, early=False):
    y = x * 2
    if early:
        return y
    LOG.append(y.sum().item())
    return y + 1


def _walrus_in_comprehension(x):
    parts = [(t := x * k) for k in range(2)]
    LOG.append(t.sum().item())
    return parts[0] + parts[1]


def _walrus_crossing(x):
    if (s := x.sum()) > 0:
        LOG.append(1)
    return x * s


class _Super(nn.Linear):
    def forward(self, x):
        h = super().forward(x)
        LOG.append(h.sum().item())
        return h * 2


@pytest.mark.parametrize("make, reason", [
    (_nonlocal_user, "nonlocal"), (lambda: _uses_global, "global"), (lambda: _uses_del, "del"),
    (lambda: _early_return, "a return at line"), (lambda: _walrus_in_comprehension, "walrus"),
    (lambda: _Super(2, 2), "super"), (lambda: _walrus_crossing, "'s' may be unbound"),
])
def test_refused_splits_run_the_whole_function_eagerly_and_correctly(make, reason, capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "graph")
    ember.manual_seed(0)
    eager, compiled = make(), None
    ember.manual_seed(0)
    compiled = ember.compile(make(), backend=BACKEND)
    for _ in range(3):
        x = _data(2, 2)
        _close(compiled(x), eager(x))
    assert reason in capfd.readouterr().err
    assert counters["stats"]["unique_graphs"] == 0


def test_source_edited_since_import_is_not_split(tmp_path, monkeypatch, capfd):
    """The source read must be the code that runs: an edited file (same lines) is refused."""
    import importlib
    import sys
    text = "LOG = []\n\ndef f(x):\n    y = x * 2\n    LOG.append(y.sum().item())\n    return y + 1\n"
    (tmp_path / "split_edited.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("split_edited")
    try:
        (tmp_path / "split_edited.py").write_text(text.replace("x * 2", "x * 3"))
        monkeypatch.setenv("EMBER_LOGS", "graph")
        f = ember.compile(module.f, backend=BACKEND)
        for _ in range(3):
            assert f(ember.ones(2)).tolist() == [3.0, 3.0]
        assert f._split is None and "does not compile to its code" in capfd.readouterr().err
    finally:
        sys.modules.pop("split_edited", None)


def test_logs_explain_and_fullgraph(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "graph")
    f = ember.compile(_mid, backend=BACKEND)
    f(_data(2, 3), _data(3, 5))
    line = _mid.__code__.co_firstlineno
    plan = f"pieces [line {line + 1}], eager [line {line + 2}], pieces [line {line + 3}], eager [line {line + 4}]"
    assert f"split _mid at line {line + 2}: {plan}" in capfd.readouterr().err
    out = ember._dynamo.explain(_mid)(_data(2, 3), _data(3, 5))
    assert (out.graph_count, out.graph_break_count) == (2, 1) and ".item()" in out.break_reasons[0].reason
    assert out.split == plan and f"Split (ember): {plan}" in str(out)
    with pytest.raises(ember._dynamo.exc.Unsupported, match=r"\.item\(\)"):
        ember.compile(_mid, fullgraph=True)(_data(2, 3), _data(3, 5))
