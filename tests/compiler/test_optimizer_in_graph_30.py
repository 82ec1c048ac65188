"""An optimizer's step inside a compiled function, then a forward through its parameters (FIX30).

A GAN step's piece ``optD.step(); output = netD(fake)`` whose inputs include losses a backward
already freed (``errD = errD_real + errD_fake``) records no backward (its history reaches freed
nodes): its replays ran the graph through the dispatcher, which wrote the step's new values into
the parameters only after the graph, the forward reading those values (no history) instead of
the parameters. ``errG.backward()`` then left netD's ``.grad`` without its part (``fake``
requiring grad), or raised "element 0 of tensors does not require grad" (``fake`` detached),
from the third call on (aot_eager, inductor). The replay now writes such a value into its
parameter as it is computed, and the ops after read the parameter, as eagerly; the ``eager``
backend, which ran such a function eagerly, replays its graph too. Two writes into a parameter
(two steps, a forward between) still run eagerly where the graph is replayed on tensors (the
first step's value is no write the graph keeps), as does a callable backend's graph with one.
"""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _steps(lib, backend, optimizer, freed=True, detach=False, step_after=False, calls=3):
    """Per call, netD's and netG's ``.grad``, then netD's parameters, the output and the loss
    (or the exception's class where the call or the backward raises)."""
    lib.manual_seed(0)
    nn = lib.nn
    netG = nn.Linear(3, 4)
    netD = nn.Sequential(nn.Linear(4, 5), nn.LeakyReLU(0.2), nn.Linear(5, 1), nn.Sigmoid())
    criterion = nn.BCELoss()
    optD = (lib.optim.Adam(netD.parameters(), lr=0.01) if optimizer == "adam"
            else lib.optim.SGD(netD.parameters(), lr=0.1, momentum=0.9 if optimizer == "sgdm" else 0))

    def step(a, b, fake, label):
        errD = a + b
        if not step_after:
            optD.step()
        netG.zero_grad()
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        if step_after:
            optD.step()
        return errD, output, errG

    f = step if backend is None else lib.compile(step, backend=backend)
    found = _Found()
    for i in range(calls):
        netD.zero_grad()
        x = lib.ones(2, 4) * (i + 1) / 5
        if freed:
            a = netD(x).sum()
            a.backward()
            b = netD(x * 2).mean()
            b.backward()
        else:
            a, b = lib.tensor(1.0), lib.tensor(2.0)
            for p in netD.parameters():
                p.grad = lib.full_like(p, 0.1 * (i + 1))
        fake = netG(lib.ones(2, 3) * i)
        if detach:
            fake = fake.detach()
        try:
            _, output, errG = f(a, b, fake, lib.ones(2))
            errG.backward()
        except RuntimeError as e:
            found.append(type(e).__name__)
            continue
        params = [*netD.parameters(), *netG.parameters()]
        found.append([None if p.grad is None else p.grad.numpy().copy() for p in params]
                     + [p.detach().numpy().copy() for p in netD.parameters()]
                     + [output.detach().numpy().copy(), errG.detach().numpy().copy()])
    found.eager = backend is not None and [e.uncut for e in f._entries]
    return found


class _Found(list):
    """Per call what :func:`_steps` found; ``eager``: per compiled entry, whether it runs eagerly."""


def _check(got, want):
    for call, (g, w) in enumerate(zip(got, want)):
        assert type(g) is type(w), (call, g if isinstance(g, str) else w)
        if isinstance(w, str):
            assert g == w, call
            continue
        for k, (x, y) in enumerate(zip(g, w)):
            assert (x is None) == (y is None), (call, k)
            if y is not None:
                np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, err_msg=f"call {call}, value {k}")


@pytest.mark.parametrize("optimizer", ["adam", "sgd", "sgdm"])
@pytest.mark.parametrize("detach", [False, True], ids=["fake_live", "fake_detached"])
def test_step_then_forward_with_freed_inputs(optimizer, detach):
    got = _steps(ember, "aot_eager", optimizer, detach=detach)
    _check(got, _steps(torch, None, optimizer, detach=detach))
    assert got.eager and not any(got.eager)  # (replayed, not run eagerly)


@pytest.mark.parametrize("freed", [False, True], ids=["leaf_inputs", "freed_inputs"])
def test_inductor_eager_and_callable_backends(freed):
    want = _steps(torch, None, "adam", freed=freed)
    for backend, eager in (("inductor", False), ("eager", False), (lambda gm, example_inputs: gm.forward, True)):
        ember.compiler.reset()
        got = _steps(ember, backend, "adam", freed=freed)
        _check(got, want)
        assert got.eager and set(got.eager) == {eager}, backend


def _two_steps(lib, backend, calls=3):
    """A step, a forward reading the parameters (its backward saves none of them), another step
    and a forward; the inputs' history freed. Per call the ``.grad`` and the loss."""
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 1))
    opt = lib.optim.SGD(net.parameters(), lr=0.1)

    def step(a, x):
        opt.step()
        first = sum((p * 3).sum() for p in net.parameters())
        opt.step()
        return a * 2, first + net(x * 2).sum()

    f = step if backend is None else lib.compile(step, backend=backend)
    found = []
    for i in range(calls):
        net.zero_grad()
        x = lib.ones(3, 4) * (i + 1) / 5
        a = net(x).sum()
        a.backward()
        _, loss = f(a, x)
        loss.backward()
        found.append([p.grad.numpy().copy() for p in net.parameters()] + [loss.detach().numpy().copy()])
    return found


@pytest.mark.parametrize("backend", ["aot_eager", "eager"])
def test_two_steps_with_a_forward_between(backend):
    _check(_two_steps(ember, backend), _two_steps(torch, None))


def test_step_after_forward_raises_at_backward():
    # the step writes a weight the forward saved: torch's RuntimeError at errG.backward()
    want = _steps(torch, None, "sgd", step_after=True)
    assert want == ["RuntimeError"] * 3
    _check(_steps(ember, "aot_eager", "sgd", step_after=True), want)


def _no_grad_write(lib, backend, into, calls=3):
    """``with no_grad(): t.mul_(0.5)`` into the weight (a leaf) or the input (``into``), which
    the op reads, then a forward; a loss whose history a backward freed is returned too. Per
    call the weight's and the input leaf's ``.grad``."""
    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 2)

    def f(x, a):
        with lib.no_grad():
            (lin.weight if into == "weight" else x).mul_(0.5)
        return a * 2, (lin(x) * x[:, :2]).sum()

    g = f if backend is None else lib.compile(f, backend=backend)
    found = []
    for i in range(calls):
        lin.zero_grad()
        leaf = lib.ones(4, 3, requires_grad=True)
        w = lib.ones(2, requires_grad=True)
        a = (w * 3).sum()
        a.backward()
        g(leaf * (i + 1), a)[1].backward()
        found.append([lin.weight.grad.numpy().copy(), leaf.grad.numpy().copy()])
    return found


@pytest.mark.parametrize("into", ["weight", "input"])
@pytest.mark.parametrize("backend", ["aot_eager", "eager"])
def test_no_grad_write_read_by_the_same_op(backend, into):
    _check(_no_grad_write(ember, backend, into), _no_grad_write(torch, None, into))


def _copies(lib, backend, variant, calls=3):
    """``w.copy_(new)`` under no_grad, ``new`` computed from the weight, then a forward: ``two``
    copies ``new`` into both layers' weights (one value in the graph for both), ``value_read``
    reads ``new`` after, ``old_read`` the weight before the copy (after ``new``). Per call the
    weights' ``.grad``."""
    lib.manual_seed(0)
    l1, l2 = lib.nn.Linear(3, 3), lib.nn.Linear(3, 3)

    def f(x, a):
        with lib.no_grad():
            new = l1.weight * 0.5
        extra = (l1.weight * 3).sum() if variant == "old_read" else 0
        with lib.no_grad():
            l1.weight.copy_(new)
            if variant == "two":
                l2.weight.copy_(new)
        if variant == "value_read":
            extra = (new * 2).sum()
        return a * 2, l2(l1(x)).sum() + extra

    g = f if backend is None else lib.compile(f, backend=backend)
    found = []
    for i in range(calls):
        l1.zero_grad()
        l2.zero_grad()
        w = lib.ones(2, requires_grad=True)
        a = (w * 3).sum()
        a.backward()
        g(lib.ones(2, 3) * i, a)[1].backward()
        found.append([l1.weight.grad.numpy().copy(), l2.weight.grad.numpy().copy()])
    return found


@pytest.mark.parametrize("variant", ["two", "value_read", "old_read"])
@pytest.mark.parametrize("backend", ["aot_eager", "eager"])
def test_copy_into_a_weight(backend, variant):
    _check(_copies(ember, backend, variant), _copies(torch, None, variant))
