"""Compiled functions with graph breaks that cost more than eager (SPLITPERF31, reinforce of
``real_programs_31.py``).

``finish_episode`` reads the log-probabilities ``select_action`` saved (new tensors each episode:
identity guards fail, a recapture each call) and its ``backward()`` runs into their history,
breaking at every autograd node; its ``del`` refuses the split, so each recording ran eagerly
anyway, 8 recordings at 30-1000 ms until the recompile limit. Now a second recording breaking
where the first did, unsplittable too, makes it run eagerly from then on. ``select_action``'s
``m.sample()`` is a piece between eager statements, taking the ``Categorical`` made anew each
call: each call rebound its graph (world, guards, rebinding: ~1 ms against ~0.1 ms of ops); a
small piece rebinding three calls running now runs eagerly. Values are torch eager's.
"""
import numpy as np
import pytest

import ember
from ember._dynamo.utils import counters

torch = pytest.importorskip("torch")


def _finish(lib, compile):
    """A ``finish_episode``: a loss over tensors saved by eager code (new each call), ``backward``
    into their history, ``del`` of the list (no split)."""
    w = lib.nn.Parameter(lib.tensor([0.5, -1.0, 2.0]))
    saved = []

    @compile
    def finish():
        loss = lib.cat(saved).sum()
        loss.backward()
        del saved[:]
        return loss.detach()

    def episode(k):
        for j in range(k):
            saved.append((w * (j + 1.0)).tanh().sum().reshape(1))
        return finish().item(), w.grad.numpy().copy()
    return episode


def test_unsplittable_function_breaking_alike_twice_runs_eagerly():
    ember.compiler.reset()
    counters.clear()
    ours, theirs = _finish(ember, ember.compile), _finish(torch, lambda fn: fn)
    for k in (2, 3, 2, 4, 3, 5):
        (a, ga), (b, gb) = ours(k), theirs(k)
        np.testing.assert_allclose(a, b, rtol=1e-5)
        np.testing.assert_allclose(ga, gb, rtol=1e-5)
    # two recordings (the second breaking where the first did), then eagerly: not 6
    assert sum(counters["graph_break"].values()) == 2
    assert not counters["recompiles"] or sum(counters["recompiles"].values()) == 1


def _select(lib, compile):
    """A ``select_action``: a ``Categorical`` made by an eager statement (its validation breaks),
    a small piece over it, ``.item()``."""
    net = lib.nn.Linear(4, 3)

    @compile
    def select(state):
        m = lib.distributions.Categorical(lib.softmax(net(state), dim=1))
        h = (m.probs * m.probs.log()).sum() * 2.0
        return h.item()
    return net, select


def test_small_piece_rebinding_each_call_runs_eagerly():
    ember.compiler.reset()
    (net, ours), (tnet, theirs) = _select(ember, ember.compile), _select(torch, lambda fn: fn)
    with torch.no_grad():
        for p, q in zip(tnet.parameters(), net.parameters()):
            p.copy_(torch.from_numpy(q.detach().numpy()))
    rng = np.random.default_rng(0)
    for _ in range(6):
        x = rng.standard_normal((1, 4)).astype(np.float32)
        np.testing.assert_allclose(ours(ember.from_numpy(x)), theirs(torch.from_numpy(x)), rtol=1e-5)
    pieces = ours._split.pieces
    assert any(p.eager and p.rebinds >= 3 for p in pieces)
