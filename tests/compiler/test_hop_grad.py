"""Backward through cond, switch, scan, map and associative_scan inside compiled functions: the
recorded backward holds control-flow nodes too (cond/switch: the same operator over the branches'
vector-Jacobian products; scan: a scan for the carries, then a reverse scan; map: a map of the
body's product; associative_scan: its algorithm's ops and their derivatives), so a training step
with a data-dependent branch is one graph (fullgraph=True). Gradients are compared with torch
2.13's torch.cond, for switch (2.14 only) with torch autograd through the picked branch, for
scan with float64 finite differences, for map and associative_scan with torch autograd through
the plain-Python loop they stand for."""
import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember._dynamo.utils import counters
from ember._higher_order_ops import associative_scan, map as hop_map, scan, switch
from ember.compiler import eval_frame


@pytest.fixture
def graphs(monkeypatch):
    """The graphs compiled, in order."""
    ember.compiler.reset()
    made, compile_graph = [], eval_frame.compile_graph

    def spy(graph, options=None):
        made.append(graph)
        return compile_graph(graph, options)
    monkeypatch.setattr(eval_frame, "compile_graph", spy)
    yield made
    ember.compiler.reset()


def _targets(graph):
    return [getattr(n.target, "name", None) for n in graph.nodes if n.op == "call_op"]


def _branches(lib, lin):
    """Two branches over (x, w) reading the module ``lin`` from outside (lifted parameters)."""
    return (lambda x, w: (lin(x) * w).tanh(), lambda x, w: (x * w.exp()).sin())


def _pair():
    ember.manual_seed(0)
    lin, w = nn.Linear(4, 4), nn.Parameter(ember.randn(4))
    tlin = torch.nn.Linear(4, 4)
    with torch.no_grad():
        tlin.weight.copy_(torch.tensor(lin.weight.detach().numpy()))
        tlin.bias.copy_(torch.tensor(lin.bias.detach().numpy()))
    return (lin, w), (tlin, torch.nn.Parameter(torch.tensor(w.detach().numpy())))


def _grads(params):
    return [np.zeros(tuple(p.shape)) if p.grad is None else p.grad.numpy().copy() for p in params]


class _Branchy(nn.Module):
    def __init__(self, lin, w):
        super().__init__()
        self.lin, self.w = lin, w

    def forward(self, x):
        return (ember.cond(x.sum() > 0, *_branches(ember, self.lin), (x, self.w)) ** 2).sum()


@pytest.mark.parametrize("whole_step", [False, True])
def test_cond_gradients_in_a_compiled_function_equal_torch_cond(graphs, whole_step):
    (lin, w), (tlin, tw) = _pair()
    model = _Branchy(lin, w)
    params, tparams = [*lin.parameters(), w], [*tlin.parameters(), tw]

    def step(x):
        value = model(x)
        value.backward()
        return value.detach()
    compiled = ember.compile(step if whole_step else model, fullgraph=True)
    rng = np.random.default_rng(0)
    for i in range(4):  # both branches, alternately
        data = rng.standard_normal((3, 4)).astype(np.float32) + (0.8 if i % 2 else -0.8)
        for p in params + tparams:
            p.grad = None
        got = compiled(ember.tensor(data))
        if not whole_step:
            got.backward()
        x = torch.tensor(data)
        want = (torch.cond(x.sum() > 0, *_branches(torch, tlin), (x, tw)) ** 2).sum()
        want.backward()  # torch's cond gives zeros to the parameters the taken branch does not read
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5)
        for g, t in zip(_grads(params), _grads(tparams)):
            np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)
    # one graph: in a whole step the forward's Cond and the backward's; else a forward and a
    # backward graph, each with its Cond
    assert counters["stats"]["unique_graphs"] == 1
    assert [_targets(g).count("Cond") for g in graphs] == ([2] if whole_step else [1, 1])
    text = str(graphs[-1])
    assert "Cos(" in text and "Tanh(" in text  # both branches' backward, as subgraphs


def test_switch_gradients_in_a_compiled_step_equal_torch_on_the_picked_branch(graphs):
    (lin, w), (tlin, tw) = _pair()
    params, tparams = [*lin.parameters(), w], [*tlin.parameters(), tw]

    def branches(lib, lin):
        return [*_branches(lib, lin), lambda x, w: x * w + lin(x).sum(0)]

    model = _Branchy(lin, w)

    def step(i, x):
        value = switch(i, branches(ember, model.lin), (x, model.w)).pow(2).sum()
        value.backward()
        return value.detach()
    compiled = ember.compile(step, fullgraph=True)
    data = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    for i in (0, 2, 1, 7, -3):  # clamped to the first or the last branch
        for p in params + tparams:
            p.grad = None
        got = compiled(ember.tensor(i), ember.tensor(data))
        want = branches(torch, tlin)[min(max(i, 0), 2)](torch.tensor(data), tw).pow(2).sum()
        want.backward()
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5)
        for g, t in zip(_grads(params), _grads(tparams)):
            np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)
    assert counters["stats"]["unique_graphs"] == 1 and _targets(graphs[0]).count("Switch") == 2


class _Recurrent(nn.Module):
    """A scan over time (dim 1) whose combine function reads a parameter from outside."""

    def __init__(self):
        super().__init__()
        self.cell, self.w = nn.Linear(3 + 4, 4).double(), nn.Parameter(ember.randn(4, dtype=ember.float64))

    def forward(self, h0, xs, reverse=False):
        def combine(h, x):
            h = self.cell(ember.cat([h, x], -1)).tanh() * self.w
            return h, (h * 2).sum(-1)
        h, ys = scan(combine, h0, xs, dim=1, reverse=reverse)
        return (h ** 2).sum() + (ys ** 3).sum()


def _finite_differences(f, tensors, eps=1e-6):
    """Central differences of the float64 scalar ``f()`` with respect to each tensor's elements."""
    out = []
    for t in tensors:
        data, g = t.data.numpy(), np.zeros(tuple(t.shape))
        for k in np.ndindex(g.shape):
            keep = data[k]
            data[k] = keep + eps
            up = f().item()
            data[k] = keep - eps
            g[k] = (up - f().item()) / (2 * eps)
            data[k] = keep
        out.append(g)
    return out


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_gradients_in_a_compiled_forward_equal_finite_differences(graphs, reverse):
    ember.manual_seed(0)
    model = _Recurrent()
    rng = np.random.default_rng(2)
    h0 = ember.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    xs = ember.tensor(rng.standard_normal((2, 5, 3)), requires_grad=True)
    compiled = ember.compile(model, fullgraph=True)
    tensors = [h0, xs, *model.parameters()]
    for _ in range(2):  # the recording call, then the compiled graphs
        for t in tensors:
            t.grad = None
        compiled(h0, xs, reverse).backward()
    with ember.no_grad():
        want = _finite_differences(lambda: model(h0, xs, reverse), tensors)
    for t, w in zip(tensors, want):
        np.testing.assert_allclose(t.grad.numpy(), w, rtol=1e-6, atol=1e-7)
    # the forward's Scan; the backward's: the carries before each step, then the reverse scan
    assert counters["stats"]["unique_graphs"] == 1
    assert [_targets(g).count("Scan") for g in graphs] == [1, 2]


def _step_grads(tensors, runs):
    """The gradients of ``tensors`` after each run of ``step`` (its own backward)."""
    out = []
    for run in runs:
        for t in tensors:
            t.grad = None
        run()
        out.append([t.grad.numpy().copy() for t in tensors])
    return out


def test_backward_through_map_in_a_compiled_step_equals_torch(graphs):
    rng = np.random.default_rng(3)
    w, v, bias = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4,), (4,)))
    xs, b = rng.standard_normal((5, 2, 3)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    lin = nn.Linear(3, 4)
    lin.weight.data, lin.bias.data = ember.tensor(w.T.copy()), ember.tensor(bias)
    scale = ember.tensor(v, requires_grad=True)

    def step(xs, b):  # the map's body reads a module and a tensor from outside, and an argument
        loss = hop_map(lambda x, b: (lin(x) * scale + b).tanh().pow(2).sum(), xs, b).sum()
        loss.backward()
        return loss.detach()
    compiled = ember.compile(step, fullgraph=True)
    tensors = [lin.weight, lin.bias, scale]
    got = _step_grads(tensors, [lambda: compiled(ember.tensor(xs), ember.tensor(b))] * 2)
    tw, tbias, tv = (torch.tensor(a, requires_grad=True) for a in (w, bias, v))
    sum(((torch.tensor(x) @ tw + tbias) * tv + torch.tensor(b)).tanh().pow(2).sum() for x in xs).backward()
    for g in got:
        for a, e in zip(g, (tw.grad.T, tbias.grad, tv.grad)):
            np.testing.assert_allclose(a, e.numpy(), rtol=1e-5, atol=1e-6)
    assert counters["stats"]["unique_graphs"] == 1
    assert [_targets(g).count("Map") for g in graphs] == [2]  # the forward's map, the backward's


@pytest.mark.parametrize("n", [5, 8])
def test_backward_through_associative_scan_in_a_compiled_step_equals_torch(graphs, n):
    """A reverse linear recurrence h[i] = decay[i] * h[i+1] + x[i] * w[i] written as an
    associative scan of (decay, value) pairs; torch's reference is the sequential loop."""
    rng = np.random.default_rng(n)
    decay, x, w0 = (rng.uniform(0.1, 0.9, (n, 3)).astype(np.float32) for _ in range(3))
    w = ember.tensor(w0, requires_grad=True)

    def combine(a, b):
        return a[0] * b[0], b[0] * a[1] + b[1]

    def step(decay, x):
        h = associative_scan(combine, (decay, x * w), 0, reverse=True)[1]
        loss = (h ** 2).sum()
        loss.backward()
        return loss.detach()
    compiled = ember.compile(step, fullgraph=True)
    got = _step_grads([w], [lambda: compiled(ember.tensor(decay), ember.tensor(x))] * 2)
    tw = torch.tensor(w0, requires_grad=True)
    h, hs = torch.zeros(3), []
    for i in reversed(range(n)):
        h = torch.tensor(decay[i]) * h + torch.tensor(x[i]) * tw[i]
        hs.append(h)
    (torch.stack(hs) ** 2).sum().backward()
    for (g,) in got:
        np.testing.assert_allclose(g, tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert counters["stats"]["unique_graphs"] == 1
    assert _targets(graphs[0]).count("AssociativeScan") == 1


def test_associative_scan_backward_is_one_node_for_every_length(graphs):
    """The p-norm prefix (a**p + b**p)**(1/p) along dim 1, reversed, p a parameter combine_fn
    reads from outside: a dynamic training step is one graph for lengths 2..12 (the backward
    one AssociativeScanGrad node, not the algorithm unrolled per length); gradients equal
    torch's on the closed form (flip, cumsum of x**p, flip) ** (1/p)."""
    p0, w0 = 2.5, np.random.default_rng(0).uniform(0.5, 1.5, 3).astype(np.float32)
    p, w = nn.Parameter(ember.tensor(p0)), nn.Parameter(ember.tensor(w0))

    def step(x):
        ys = associative_scan(lambda a, b: (a ** p + b ** p) ** (1 / p), x * w, dim=1, reverse=True)
        loss = (ys ** 2).sum()
        loss.backward()
        return loss.detach()
    compiled = ember.compile(step, dynamic=True, fullgraph=True)
    for n in range(2, 13):
        x = np.random.default_rng(n).uniform(0.1, 1.0, (4, n, 3)).astype(np.float32)
        p.grad = w.grad = None
        loss = compiled(ember.tensor(x))
        tp, tw = torch.tensor(p0, requires_grad=True), torch.tensor(w0, requires_grad=True)
        ys = ((torch.tensor(x) * tw) ** tp).flip(1).cumsum(1).flip(1) ** (1 / tp)
        want = (ys ** 2).sum()
        want.backward()
        np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-5)
        np.testing.assert_allclose(p.grad.item(), tp.grad.item(), rtol=1e-4)
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-4)
    assert counters["stats"]["unique_graphs"] == 1
    assert _targets(graphs[0]).count("AssociativeScanGrad") == 1 and graphs[0].symbols
