"""``requires_grad_()`` inside a compiled step, and gradient penalties (WGAN-GP: a gradient
with ``create_graph=True``, then ``loss.backward()``). ember ran them eagerly (the flag set on an
input was a side effect; a leaf made in the call could not be returned by a replay). torch 2.13
compiles them with graph breaks around ``requires_grad_()`` on a tensor the graph made, around
``autograd.grad`` and at ``backward`` (its CompileCounter: 4 frames for the step with ``x_hat``,
3 for the one on an input, 1 for a plain one); ember now does the same, its counts equal those."""

import pytest
import torch

import ember
from ember._dynamo.utils import counters


def _penalty_made(module, D, opt, real, fake, alpha):
    x_hat = alpha * real + (1 - alpha) * fake
    x_hat.requires_grad_(True)
    out = D(x_hat)
    g = module.autograd.grad(out.sum(), x_hat, create_graph=True)[0]
    gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss = D(fake).mean() - D(real).mean() + 10 * gp
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def _penalty_attribute(module, D, opt, real, fake, alpha):
    x_hat = alpha * real + (1 - alpha) * fake
    x_hat.requires_grad = True
    out = D(x_hat)  # (on its own line: ember splits at statements, torch at bytecodes)
    g = module.autograd.grad(out.sum(), x_hat, create_graph=True)[0]
    loss = D(fake).mean() - D(real).mean() + 10 * ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def _penalty_input(module, D, opt, real, fake, alpha):
    real.requires_grad_()
    out = D(real)
    g = module.autograd.grad(out.sum(), real, create_graph=True)[0]
    loss = D(fake).mean() - out.mean() + 10 * (g.pow(2).sum(1) - 1).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def _gan(module, body, compiled, calls=5):
    """``body`` as the critic's step over ``calls`` batches: (losses, parameters, the real
    batches' requires_grad after each call, graphs after each call)."""
    module.manual_seed(0)
    D = module.nn.Sequential(module.nn.Linear(3, 8), module.nn.Tanh(), module.nn.Linear(8, 1))
    opt = module.optim.SGD(D.parameters(), lr=0.05)

    def step(real, fake, alpha):
        return body(module, D, opt, real, fake, alpha)

    if compiled:
        ember.compiler.reset()
        step = ember.compile(step)
    losses, flags, counts = [], [], []
    for i in range(calls):
        real = module.linspace(-1, 1, 12).reshape(4, 3) * (1 + 0.1 * i)
        fake = module.linspace(1, -0.5, 12).reshape(4, 3)
        losses.append(float(step(real, fake, module.linspace(0.1, 0.9, 4).reshape(4, 1)).detach()))
        flags.append(real.requires_grad)
        counts.append(counters["stats"]["unique_graphs"] if compiled else None)
    return losses, [v for p in D.parameters() for v in p.detach().flatten().tolist()], flags, counts


@pytest.mark.parametrize("body, graphs", [(_penalty_made, 4), (_penalty_attribute, 4), (_penalty_input, 3)])
def test_gradient_penalty_step_compiles_its_pieces(body, graphs):
    """Losses and parameters over 5 steps equal eager torch's; the input made to require grad
    requires it after each call (a replay sets it before its graph); the graphs are torch
    2.13's count (they were 0 and 2: the step ran eagerly around the penalty)."""
    want = _gan(torch, body, False)
    got = _gan(ember, body, True)
    assert got[0] == pytest.approx(want[0], rel=1e-5, abs=1e-6)
    assert got[1] == pytest.approx(want[1], rel=1e-5, abs=1e-6)
    assert got[2] == want[2]
    assert got[3][-1] == graphs


def _scaled(x, w):
    x.requires_grad_()
    return (x * w).sin().sum()


def _read_first(x, w):
    y = x * w
    x.requires_grad_()
    return (x * y).sum()


@pytest.mark.parametrize("fn, graphs", [(_scaled, 1), (_read_first, 2)])
def test_requires_grad_on_an_input_is_replayed(fn, graphs):
    """``x.requires_grad_()`` before the call reads ``x``: one graph, the flag set on each call's
    new input and its gradient (the caller's backward) equal to eager torch's. After a read of ``x``
    (``y = x * w`` holds no history in eager): a graph break there, ``x.grad`` still eager's.
    torch 2.13's counts: 1 and 2 (its break: "Unsupported Tensor.requires_grad_() call")."""
    ember.compiler.reset()
    compiled = ember.compile(fn)
    for k in range(4):
        values = [0.5 * k, -1.0, 2.0]
        x, w = ember.tensor(values), ember.tensor([1.5, -0.5, 0.25])
        xt = torch.tensor(values)
        compiled(x, w).backward()
        fn(xt, torch.tensor([1.5, -0.5, 0.25])).backward()
        assert x.requires_grad and x.is_leaf
        assert x.grad.tolist() == pytest.approx(xt.grad.tolist(), rel=1e-6)
    assert counters["stats"]["unique_graphs"] == graphs
