"""A graph break inside a ``try`` statement (compiler/split.py): the ``try`` is opened, its body,
handlers, ``else`` and ``finally`` split into pieces; a piece that raises hands back what it
bound before the raise (``Piece.bound``: its frame, from the traceback), and a replay that
raises (an index out of range) runs the piece's Python instead. And a callee that breaks,
reached through a local variable or a plain function through an attribute, or two in one
statement, is compiled and split on its own. Results, exceptions, ``finally`` runs and logs are compared with eager ember
and with torch (whose dynamo runs a frame whose ``try`` body breaks eagerly whole)."""
import traceback
import types

import numpy as np
import pytest

import ember
from ember.compiler.eval_frame import counters

pytestmark = pytest.mark.usefixtures("fresh_cache")

BACKEND = "aot_eager"
LOG = []
lib = ember  # torch while the oracle runs


def _caught(x):
    y = x * 2
    try:
        y = y + 1
        LOG.append(y.sum().item())
        y = y * 3
        w = y.reshape(2, -1)  # an odd length raises, after y was rebound
        y = w.sum(0) * 100
    except RuntimeError as e:
        LOG.append(type(e).__name__)
        y = y - 1
    else:
        y = y + 7
    finally:
        y = y * 0.5
        LOG.append("finally")
    return y + 2


def _looped(x):
    total = x * 0
    for i in range(4):
        try:
            y = x * (i + 1)
            LOG.append(y.sum().item())
            if i == 1:
                continue
            if i == 3:
                break
            total = total + y
        finally:
            total = total + 1
            LOG.append(i)
    return total


def _returned(x):
    y = x + 1
    try:
        LOG.append(y.sum().item())
        y = y * 2
        if y.shape[0] == 3:
            return y - 5
        y = y + 1
    finally:
        LOG.append("finally")
    return y


def _nested(x):
    y = x * 2
    try:
        with lib.no_grad():
            y = y + 1
            LOG.append(y.sum().item())
            y = y * 3
        y = sum(t * 2 for t in (y, x))
        y = y.reshape(2, -1).sum(0)
    except RuntimeError:
        y = y * 10
    return y


def _indexed(x, idx):
    y = x * 2
    try:
        LOG.append(y.sum().item())
        y = y + 1
        z = y[idx]  # a replay raises IndexError for an index out of range
        y = z * 100
    except IndexError as e:
        LOG.append(type(e).__name__)
        y = y - 1
    return y


def _unbound(x):
    try:
        y = x * 2
        LOG.append(y.sum().item())
        z = y.reshape(2, -1)
    except RuntimeError:
        z = y + 1  # y may be unbound here (had x * 2 raised): this handler runs as written
    return z * 2


def _run(fn, make, calls, monkeypatch):
    """Each call's (result or exception class, LOG) of eager torch, eager ember and compiled ember."""
    torch = pytest.importorskip("torch")
    compiled = ember.compile(fn, backend=BACKEND)
    got = {"torch": [], "eager": [], "compiled": []}
    for args in calls:
        for key, f, module in (("torch", fn, torch), ("eager", fn, ember), ("compiled", compiled, ember)):
            LOG.clear()
            with monkeypatch.context() as m:
                m.setitem(globals(), "lib", module)
                try:
                    out = np.asarray(f(*make(module, *args)).tolist())
                except Exception as error:
                    out = type(error).__name__
            got[key].append((out, [round(v, 4) if isinstance(v, float) else v for v in LOG]))
    for key in ("eager", "compiled"):
        for (want, log), (out, theirs) in zip(got["torch"], got[key]):
            assert log == theirs, (key, log, theirs)
            if isinstance(want, str):
                assert out == want, (key, out)
            else:
                np.testing.assert_allclose(out, want, rtol=1e-6)
    return compiled


def _vector(module, n):
    return (module.arange(n, dtype=module.float32),)


@pytest.mark.parametrize("fn, sizes, plan", [
    (_caught, [4, 4, 3, 4, 3, 4], "pieces [line 25], try [lines 26-39] (pieces [line 27], eager [line 28], pieces "
                                  "[lines 29-31] | except: pieces [lines 33-34] | else: pieces [line 36] | finally: "
                                  "pieces [lines 38-39]), pieces [line 40]"),
    (_looped, [2, 2, 2], "pieces [line 44], for [lines 45-56] (try [lines 46-56] (pieces [line 47], eager "
                         "[lines 48-52], pieces [line 53] | finally: pieces [lines 55-56])), eager [line 57]"),
    (_returned, [4, 4, 3, 3, 4], "pieces [line 61], try [lines 62-69] (eager [line 63], pieces [line 64], eager "
                                 "[lines 65-66], pieces [line 67] | finally: pieces [line 69]), eager [line 70]"),
    (_nested, [4, 4, 3, 3, 4], "try [lines 75-83] (with [lines 76-79] (pieces [line 77], eager [line 78], "
                               "pieces [line 79]), pieces [lines 80-81] | except: pieces [line 83])"),
    (_unbound, [4, 3, 4, 3], "try [lines 101-106] (pieces [line 102], eager [line 103], pieces [line 104] "
                             "| except: eager [line 106]), pieces [line 107]"),
])
def test_a_try_that_breaks_is_split_and_keeps_eagers_meaning(fn, sizes, plan, monkeypatch):
    compiled = _run(fn, _vector, [(n,) for n in sizes], monkeypatch)
    assert plan in compiled._plan[1].describe()  # (a continue, break or return inside runs eagerly)
    assert counters["stats"]["unique_graphs"] >= 3


def test_a_replay_that_raises_hands_the_handler_what_eager_bound(monkeypatch):
    def make(module, idx):
        return module.arange(4, dtype=module.float32), module.tensor(idx)
    compiled = _run(_indexed, make, [([0, 1],), ([0, 1],), ([0, 1],), ([0, 9],), ([0, 1],), ([0, 9],)], monkeypatch)
    plan = compiled._plan[1].describe()
    assert plan.endswith("pieces [lines 91-93] | except: pieces [lines 95-96]), eager [line 97]"), plan


def _uncaught(x):
    y = x * 2
    try:
        LOG.append(y.sum().item())
        y = y.reshape(2, -1)
    finally:
        LOG.append("finally")
    return y


def test_an_exception_leaving_the_function_names_the_users_line_and_runs_finally_once():
    compiled = ember.compile(_uncaught, backend=BACKEND)
    for n in (4, 4, 3, 4, 3):
        LOG.clear()
        try:
            out = compiled(ember.arange(n, dtype=ember.float32))
        except RuntimeError as error:
            assert n == 3 and "invalid for input of size 3" in str(error)
            frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == __file__]
            assert frames[-1].lineno == _uncaught.__code__.co_firstlineno + 4  # y = y.reshape(2, -1)
        else:
            assert n == 4 and out.shape == (2, 2)
        assert LOG == [float(n * (n - 1)), "finally"]
    assert "try [lines" in compiled._plan[1].describe()


def _logged(x):
    LOG.append(x.sum().item())
    return x * 3


class Holder:
    """A method reached through a local variable, a plain function through two attributes."""

    def __init__(self):
        self.cfg = types.SimpleNamespace(fn=_logged)

    def helper(self, x):
        LOG.append(x.mean().item())
        return x - 1


utils = types.SimpleNamespace(log=_logged)


def _through(x, holder):
    fn = holder.helper
    y = fn(x + 1) * 2
    y = utils.log(y) + 1
    y = holder.cfg.fn(y) / 2
    return y * 5


def test_callees_through_a_local_or_an_attribute_are_compiled_split(monkeypatch):
    torch = pytest.importorskip("torch")
    holder = Holder()
    compiled = _run(_through, lambda module, n: (module.arange(n, dtype=module.float32), holder),
                    [(3,), (3,), (3,), (4,)], monkeypatch)
    last = _through.__code__.co_firstlineno + 5
    assert compiled._plan[1].describe().endswith(f"(compiles Holder.helper, _logged), pieces [line {last}]")
    # per size: the last piece, helper's and _logged's returns (one graph for its two calls); and
    # once, ``fn = holder.helper``'s piece (it returns a method: Python from then on)
    assert counters["stats"]["unique_graphs"] == 3 * 2 + 1
    holder.helper = lambda x: x + 100  # a local now holding another function: called as it is
    LOG.clear()
    want, log = _through(ember.ones(3), holder).tolist(), list(LOG)
    LOG.clear()
    assert compiled(ember.ones(3), holder).tolist() == want == [4597.5] * 3 and LOG == log == [612.0, 1839.0]
    # torch's dynamo counts a callee's break twice, at the call in the caller's frame and in the
    # callee's own frame (compiled on its own), with a graph each: ember's explain counts once
    theirs = torch._dynamo.explain(_through)(torch.ones(3), Holder())
    ours = ember._dynamo.explain(_through)(ember.ones(3), Holder())
    assert (ours.graph_count, ours.graph_break_count) == (4, 3)
    assert (theirs.graph_count, theirs.graph_break_count, len(theirs.break_reasons)) == (10, 9, 2 * 3)


def test_torchs_dynamo_runs_a_frame_whose_try_body_breaks_eagerly(monkeypatch):
    torch = pytest.importorskip("torch")
    with monkeypatch.context() as m:
        m.setitem(globals(), "lib", torch)
        theirs = torch._dynamo.explain(_caught)(torch.arange(4.0))
    ours = ember._dynamo.explain(_caught)(ember.arange(4.0))
    assert theirs.graph_count == 0  # (it cannot resume inside a try block: the frame is skipped)
    assert (ours.graph_count, ours.graph_break_count) == (2, 1) and "try [lines" in ours.split


def _twice(x, holder):
    y = x + 1
    y = holder.helper(utils.log(y)) * 2  # two callees that break in one statement
    return y - 1


def test_two_callees_breaking_in_one_statement_are_both_compiled_split(monkeypatch):
    holder = Holder()
    compiled = _run(_twice, lambda module, n: (module.arange(n, dtype=module.float32), holder),
                    [(3,), (3,), (3,)], monkeypatch)
    assert "eager [line" in compiled._plan[1].describe() and "(compiles Holder.helper, _logged)" in \
        compiled._plan[1].describe()
    assert counters["stats"]["unique_graphs"] == 4  # the two pieces, and a return in each callee
