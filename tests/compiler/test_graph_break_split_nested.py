"""Graph breaks inside loops, branches and callees (compiler/split.py): a ``for``/``while``/
``if``/``with`` whose body breaks is opened (its header eager, its body split the same way), a
user function that breaks inside an eager statement is compiled and split on its own. Each
program runs compiled and eagerly over several calls: results, gradients and training state
must agree, and conftest's ``dispatched`` observer proves that the pieces replay."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.compiler.eval_frame import counters

pytestmark = pytest.mark.usefixtures("fresh_cache")

LOG = []
RNG = np.random.default_rng(0)
BACKEND = "aot_eager"  # the graph interpreted on arrays (no C compiler run): fast


def _data(*shape, grad=False):
    return ember.tensor(RNG.standard_normal(shape).astype(np.float32), requires_grad=grad)


def _close(got, want, tol=2e-6):
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)


def _agree(got, want, w, tol=1e-5):
    """Equal results and equal gradients of their sums with respect to ``w``."""
    _close(got, want, tol)
    grads = [ember.autograd.grad(t.sum(), w)[0] for t in (got, want)]
    _close(*grads, 10 * tol)


def _replays(dispatched, fn, w, make_x, calls, *extra):
    """``(compiled fn, [ops each compiled call dispatched])``: ``fn(x, w, *extra)`` (``fn(x,
    *extra)`` where ``w`` is None: the gradients then ``x``'s) run compiled and eagerly for
    ``calls`` calls (``x = make_x(call)``), with equal results and gradients."""
    f, seen = ember.compile(fn, backend=BACKEND), []
    for call in range(calls):
        x = make_x(call)
        with dispatched() as ops:
            got = f(x, w, *extra) if w is not None else f(x, *extra)
        _agree(got, fn(x, w, *extra) if w is not None else fn(x, *extra), x if w is None else w)
        seen.append(ops.names)
    return f, seen


def _epoch(dispatched, compiled, backend=BACKEND):
    """A compiled ``train_epoch`` whose loop body logs ``loss.item()`` and prints every 2nd step."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    losses = []

    def train_epoch(batches):
        total = 0.0
        for step, (x, y) in enumerate(batches):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if step % 2 == 0:
                print(f"step {step} loss {loss.item():.4f}")
            total += loss.item()
        return total / len(batches)
    run = ember.compile(train_epoch, backend=backend) if compiled else train_epoch
    rng = np.random.default_rng(1)
    counts, means = [], []
    for _ in range(4):
        batches = [(ember.tensor(rng.standard_normal((6, 4)).astype(np.float32)), ember.tensor(rng.integers(0, 3, 6)))
                   for _ in range(3)]
        with dispatched() as ops:
            means.append(run(batches))
        counts.append(len(ops.names))
    state = [v for s in opt.state.values() for v in s.values() if isinstance(v, ember.Tensor)]
    return losses, means, list(model.parameters()), state, counts, run


def test_a_training_loop_that_logs_in_its_body_replays_the_step(dispatched, capsys):
    want_losses, want_means, want_params, want_state, eager_counts, _ = _epoch(dispatched, False)
    want_out = capsys.readouterr().out
    losses, means, params, state, counts, run = _epoch(dispatched, True)
    assert capsys.readouterr().out == want_out
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    np.testing.assert_allclose(means, want_means, rtol=1e-5)
    for got, want in zip(params + state, want_params + want_state, strict=True):
        _close(got, want, 1e-5)
    for got, want in zip(params, want_params):
        _close(got.grad, want.grad, 1e-5)
    assert counts[-1] == 0 and eager_counts[-1] > 60, (counts, eager_counts)  # every step replayed
    step, mean = run._split.pieces  # the loop body's, and the last line's (Python numbers: run eagerly)
    assert len(step.compiled._entries) == 1 and not step.eager and mean.eager


def _loops(x, w, n):
    acc = x
    for i in range(n):
        acc = (acc @ w).tanh()
        if acc.sum().item() > 2.5:  # data-dependent break
            break
        if i == 1:
            continue
        for j in range(2):  # a nested loop whose body breaks too
            acc = acc * 1.1 + j
            LOG.append(acc.max().item())
        acc = acc - 0.5
    k = 0
    while acc.abs().sum().item() > 1.0 and k < 6:
        acc = acc * 0.5
        k += 1
        if k == 5:
            return acc * 100  # a return inside the loop body: that statement runs eagerly
    with ember.no_grad():
        scale = acc.detach().mean() * 0 + 2
        LOG.append(scale.item())
    return acc * scale


def test_break_continue_return_and_nested_loops_keep_eagers_meaning(dispatched):
    w = _data(3, 3, grad=True)
    f, _ = _replays(dispatched, _loops, w, lambda call: _data(2, 3) * (4.0 if call % 3 == 2 else 0.3), 8, 4)
    plan = f._plan[1].describe()
    assert f"for [lines {_line(_loops, 2)}-{_line(_loops, 11)}]" in plan and "while" in plan and "with" in plan, plan
    x = _data(2, 3) * 0.3
    f(x, w, 4)
    with dispatched() as ops:
        f(x, w, 4)
    assert "Matmul" not in ops.names and "Tanh" not in ops.names, ops.names


def _carried(x, w, n):
    h, out = x, x * 0
    for _ in range(n):
        LOG.append(h.sum().item())  # reads the h the previous turn's piece bound
        out = out + h
        h = (h @ w).tanh()  # read after the loop by nobody: a result for the next turn only
    return out


def test_a_name_the_next_turn_reads_is_a_result_of_the_piece():
    f = ember.compile(_carried, backend=BACKEND)
    w = _data(3, 3)
    for _ in range(3):
        x = _data(2, 3)
        _close(f(x, w, 3), _carried(x, w, 3), 1e-5)
    assert f._split is not None


def _line(fn, k):
    return fn.__code__.co_firstlineno + k


def _step(x, w, step):
    h = (x @ w).relu()
    loss = (h * h).mean()
    if step % 3 == 0:
        print(f"loss {loss.item():.5f}")
    return loss * 2


def test_a_logging_if_keeps_the_step_captured_and_the_counter_out_of_the_pieces(dispatched, capsys):
    f = ember.compile(_step, backend=BACKEND)
    w = _data(3, 4, grad=True)
    for step in range(7):
        x = _data(5, 3)
        with dispatched() as ops:
            got = f(x, w, step)
        out = capsys.readouterr().out
        want = _step(x, w, step)
        assert out == capsys.readouterr().out
        _close(got, want)
        if step > 2:
            assert ops.names == [], ops.names  # the print reads the piece's loss: no op dispatched
    # the step counter is read by the eager if only: the pieces never recompile for it
    assert [len(p.compiled._entries) for p in f._split.pieces] == [1, 1]


def _mean_centred(x):
    c = x - x.mean(0)
    LOG.append(c.abs().max().item())  # the break inside the callee
    return c / (c.std(0) + 1)


def _uses_callee(x, w):
    a = (x @ w).tanh()
    b = _mean_centred(a) * 3 + _mean_centred(a[:2])[0]  # called twice, different shapes
    return (b + 1).sum(1)


def test_a_break_inside_a_callee_compiles_the_callee_split(dispatched, capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "graph")
    f, seen = _replays(dispatched, _uses_callee, _data(3, 4, grad=True), lambda call: _data(4, 3), 5)
    for names in seen[3:]:  # the callee's own break (Abs, Max) twice; the caller's statement's slices, * and +
        assert names.count("Abs") == 2 and "Std" not in names and "Matmul" not in names, names
    assert "eager [line %d] (compiles _mean_centred)" % _line(_uses_callee, 2) in capfd.readouterr().err
    (swap,) = f._split.callees
    (callee,) = swap.made.values()
    assert callee._split is not None and [len(p.compiled._entries) for p in callee._split.pieces] == [2, 2]


def _train_through_callee(dispatched, compiled):
    """A compiled step whose loss a logging user function makes: the callee's forward captured,
    ``loss.backward()`` (into the callee's autograd history) eager, the optimizer step captured."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []

    def logged_loss(x, y):
        out = F.cross_entropy(model(x), y)
        losses.append(out.item())
        return out

    def step(x, y):
        opt.zero_grad()
        logged_loss(x, y).backward()  # eager: the callee's break (the callee compiled) and the backward
        opt.step()
    run = ember.compile(step, backend=BACKEND) if compiled else step
    rng = np.random.default_rng(2)
    for _ in range(5):
        x, y = ember.tensor(rng.standard_normal((6, 4)).astype(np.float32)), ember.tensor(rng.integers(0, 3, 6))
        with dispatched() as ops:
            run(x, y)
    return losses, list(model.parameters()), ops.names


def test_a_training_step_whose_loss_a_logging_callee_makes(dispatched):
    want_losses, want_params, eager_ops = _train_through_callee(dispatched, False)
    losses, params, ops = _train_through_callee(dispatched, True)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for got, want in zip(params, want_params, strict=True):
        _close(got, want, 1e-5)
        _close(got.grad, want.grad, 1e-5)
    # replayed: the callee's pieces (forward, and its compiled backward) and the SGD step; eager:
    # the backward's accumulation into the 4 .grads (Clone)
    assert ops == ["Clone"] * 4 and "SgdUpdate" in eager_ops, ops


def _backward_of_argument(loss):
    loss.backward()


def test_backward_into_an_inputs_history_runs_eagerly():
    """A compiled function calling ``backward()`` on an input made outside it: the autograd
    nodes it reaches saved values no placeholder holds, so its recording breaks (eager)."""
    f = ember.compile(_backward_of_argument, backend=BACKEND)
    w = _data(3, grad=True)
    for _ in range(3):
        x = _data(3)
        w.grad = None
        f((w * x).tanh().sum())
        _close(w.grad, (1 - (w * x).tanh() ** 2) * x, 1e-5)
    assert "history of an input tensor" in next(iter(counters["graph_break"]))


def _closure_callee():
    scale = ember.tensor(2.0)

    def inner(x):
        y = x * scale
        LOG.append(y.sum().item())
        return y.exp()

    def outer(x):
        h = x + 1
        z = inner(h)
        return z - h
    return outer


def _refused_callee(x):
    y = x * 2
    LOG.append(y.sum().item())
    z = y + 0
    del y  # its own split is refused: it runs eagerly, through its compiled form
    return z


def _calls_refused(x):
    return _refused_callee(x + 1) * 2


def _not_user(x):
    return ember.compiler.disable(_refused_callee)(x)


@pytest.mark.parametrize("make", [_closure_callee, lambda: _calls_refused, lambda: _not_user])
def test_callees_closures_and_refused_callees_stay_correct(make):
    """A callee from a closure cell; a callee whose own split is refused (``del``: it runs
    eagerly, through its compiled form); a callee through ``compiler.disable`` (not the user's)."""
    f, g = make(), ember.compile(make(), backend=BACKEND)
    for _ in range(4):
        x = _data(3)
        _close(g(x), f(x), 1e-5)


class _Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        y = x * self.k
        LOG.append(y.sum().item())
        return y.tanh()


_SCALERS = [_Scaler(2.0), _Scaler(-1.0)]


def _calls_methods(x):
    h = x + 1
    z = _SCALERS[0].apply(h) + _SCALERS[1].apply(h[:1])  # two objects, two shapes
    return z * 2


def test_a_method_that_breaks_is_compiled_per_object(dispatched):
    f, seen = _replays(dispatched, _calls_methods, None, lambda call: _data(3, 2, grad=True), 5)
    assert [k.k for k in f._split.callees[0].made.keys()] == [2.0, -1.0]
    assert all("Tanh" not in names for names in seen[3:]), seen


def _rebound(x):
    return _target(x) * 2


def _target(x):
    LOG.append(x.sum().item())
    return x + 1


def test_a_callee_rebound_between_calls_is_called_as_it_is_now(monkeypatch):
    g = ember.compile(_rebound, backend=BACKEND)
    x = _data(3)
    for _ in range(3):
        _close(g(x), _rebound(x))
    monkeypatch.setitem(globals(), "_target", lambda x: x - 7)
    _close(g(x), (x - 7) * 2)


def _maybe_unbound(x, n):
    for i in range(n):
        if i:
            h = x * i  # bound on the second turn only
        LOG.append(x.sum().item())
        x = x + h if i else x
    return x


def _escape_in_piece(x, n):
    for k in range(n):
        y = x * 2
        LOG.append(y.sum().item())
        for j in range(5):
            if j == 2:
                break  # the inner loop's own: this loop is part of a piece
            y = y + j
        x = y * 0.5
        for j in range(2):
            pass
        else:
            if k == 1:
                break  # in a loop's else: the outer loop's, so this statement runs eagerly
    return x


def test_names_unbound_on_some_turns_refuse_and_inner_breaks_stay_in_pieces(monkeypatch, capfd):
    monkeypatch.setenv("EMBER_LOGS", "graph")
    f = ember.compile(_maybe_unbound, backend=BACKEND)
    for _ in range(3):
        x = _data(3)
        _close(f(x, 3), _maybe_unbound(x, 3))
    assert f._split is None and "'h' may be unbound" in capfd.readouterr().err
    g = ember.compile(_escape_in_piece, backend=BACKEND)
    for n in (3, 3, 1, 3):
        x = _data(2)
        _close(g(x, n), _escape_in_piece(x, n))
    a, b, c, d, e, f = (_line(_escape_in_piece, k) for k in (1, 2, 3, 4, 8, 13))
    want = f"for [lines {a}-{f}] (pieces [line {b}], eager [line {c}], pieces [lines {d}-{e}], " \
           f"eager [lines {e + 1}-{f}])"
    assert g._plan[1].describe() == f"{want}, eager [line {f + 1}]"


def _doubling(x, n):
    for _ in range(n):
        x = x * 2
        LOG.append(x.sum().item())
    return x + 1


def test_fullgraph_and_explain_name_the_line_in_the_loop():
    with pytest.raises(ember._dynamo.exc.Unsupported, match=r"\.item\(\)") as error:
        ember.compile(_step, fullgraph=True)(_data(2, 3), _data(3, 4), 0)
    assert f"test_graph_break_split_nested.py:{_line(_step, 4)}: print(" in str(error.value)
    out = ember._dynamo.explain(_loops)(_data(2, 3) * 0.3, _data(3, 3), 2)
    assert out.graph_break_count == len(out.break_reasons) and out.graph_break_count >= 4
    assert f"for [lines {_line(_loops, 2)}-{_line(_loops, 11)}] (pieces [line {_line(_loops, 3)}]" in out.split
    out = ember._dynamo.explain(_doubling)(_data(3), 3)  # torch's unrolled loop: a graph between breaks
    assert (out.graph_count, out.graph_break_count) == (4, 3)
    a, b, c, d = (_line(_doubling, k) for k in (1, 2, 3, 4))
    assert out.split == f"for [lines {a}-{c}] (pieces [line {b}], eager [line {c}]), pieces [line {d}]"
    assert counters["graph_break"] == {}
