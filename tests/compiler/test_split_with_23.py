"""A ``with`` whose body breaks (compiler/split.py) is opened (its body split into pieces).
Around ``contextlib.suppress`` or a user's manager that may swallow an exception, a piece that
raised after binding a name lost that binding with its frame (a wrong result from the second
call on, session 23, which then ran such a ``with`` whole, eagerly); since session 24 the
piece hands back what it bound (``Piece.bound``). Results are compared with eager ember and
torch."""
import contextlib

import numpy as np
import pytest

import ember
from ember.compiler.eval_frame import counters

pytestmark = pytest.mark.usefixtures("fresh_cache")

BACKEND = "aot_eager"
LOG = []
lib = ember  # torch while the oracle runs


def _suppressed(x):
    y = x * 2
    with contextlib.suppress(IndexError):
        LOG.append(y.sum().item())
        y = y + 1
        y[10]  # raises IndexError after y was rebound: suppress keeps y + 1
        y = y * 100
    return y - 1


class Swallow:
    """A user's manager that swallows any exception."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


def _swallowed(x):
    y = x * 2
    with Swallow():
        LOG.append(y.sum().item())
        y = y + 1
        y = y.reshape(7, 7)  # raises RuntimeError after y was rebound
        y = y * 100
    return y - 1


def _no_grad(x):
    y = x * 2
    with lib.no_grad():
        y = y + 1
        LOG.append(y.sum().item())
        y = y * 3
    return y - 1


@pytest.mark.parametrize("fn, graphs", [(_suppressed, 2), (_swallowed, 2), (_no_grad, 4)])
def test_with_body_that_breaks_agrees_with_eager_and_torch(fn, graphs, monkeypatch):
    torch = pytest.importorskip("torch")
    data = np.arange(3, dtype=np.float32)
    with monkeypatch.context() as m:
        m.setitem(globals(), "lib", torch)
        want = fn(torch.tensor(data)).numpy()
    compiled = ember.compile(fn, backend=BACKEND)
    for _ in range(3):  # the recording, the pieces' recordings, their replays
        np.testing.assert_allclose(fn(ember.tensor(data)).numpy(), want)
        np.testing.assert_allclose(compiled(ember.tensor(data)).numpy(), want)
    described = compiled._plan[1].describe()
    assert "with [" in described, described
    assert counters["stats"]["unique_graphs"] == graphs  # (a piece that raises keeps no graph)


def test_no_grad_split_graph_count_matches_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    with monkeypatch.context() as m:
        m.setitem(globals(), "lib", torch)
        theirs = torch._dynamo.explain(_no_grad)(torch.ones(3))
    ours = ember._dynamo.explain(_no_grad)(ember.ones(3))
    assert ours.graph_count == theirs.graph_count == 2
