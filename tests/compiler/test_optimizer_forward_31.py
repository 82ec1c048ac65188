"""An optimizer's step, then a forward through the stepped parameters, compiled (OPTFWD31).

A GAN step's piece ``errD = errD_real + errD_fake; optD.step(); output = netD(fake)``, its
inputs' history freed by the discriminator's backward, recorded no backward (its history
reached the freed nodes): its replays ran through the dispatcher, at about ember eager's speed
(FIX30 made them right). The history before the graph's inputs is autograd's, so the joint
graph is recorded now and its compiled forward and backward replay (``errD.backward()`` still
raises at the freed node, as torch's). RMSprop and Adagrad updated the arrays outside ember's
ops (a graph break: no compiled entry); they have update ops now, as SGD and Adam. Plain SGD
recompiled at the second call: ``netG.zero_grad()`` read which of netG's parameters had a
``.grad``; it sets them without reading now, and the guard keeps the parameters whose ``.grad``
the call read. ``create_graph=True`` through such a joint
graph replays its forward from the stepped parameters (it raised "reads its old value").
"""
import numpy as np
import pytest

import ember
from ember._dynamo.utils import counters

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")

OPTIMIZERS = {
    "adam": lambda lib, ps: lib.optim.Adam(ps, lr=0.01),
    "adamw": lambda lib, ps: lib.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
    "amsgrad": lambda lib, ps: lib.optim.Adam(ps, lr=0.01, amsgrad=True),
    "sgd": lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
    "sgd_decay": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, weight_decay=0.1),
    "nesterov": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "rmsprop": lambda lib, ps: lib.optim.RMSprop(ps, lr=0.01, weight_decay=0.1, momentum=0.5, centered=True),
    "adagrad": lambda lib, ps: lib.optim.Adagrad(ps, lr=0.1, lr_decay=0.01, weight_decay=0.1),
}


def _gan(lib, backend, optimizer, freed=True, detach=False, create_graph=False, calls=4):
    """A GAN step's piece compiled, the losses it is given backpropagated (``freed``) or leaves;
    per call netD's and netG's ``.grad``, netD's parameters and the generator's loss (plus a
    penalty on netD's gradients with ``create_graph``); then the compiled function."""
    lib.manual_seed(0)
    nn = lib.nn
    netG = nn.Linear(3, 4)
    netD = nn.Sequential(nn.Linear(4, 5), nn.LeakyReLU(0.2), nn.Linear(5, 1), nn.Sigmoid())
    optD, criterion = OPTIMIZERS[optimizer](lib, netD.parameters()), nn.BCELoss()

    def step(real_loss, fake_loss, fake, label):
        errD = real_loss + fake_loss
        optD.step()
        netG.zero_grad()
        output = netD(fake).view(-1)
        return errD, criterion(output, label)

    f = step if backend is None else lib.compile(step, backend=backend)
    found = []
    for i in range(calls):
        netD.zero_grad()
        x = lib.ones(2, 4) * (i + 1) / 5
        if freed:
            a = netD(x).sum()
            a.backward()
            b = netD(x * 2).mean()
            b.backward()
        else:
            a, b = lib.tensor(1.0, requires_grad=True), lib.tensor(2.0)
            for p in netD.parameters():
                p.grad = lib.full_like(p, 0.1 * (i + 1))
        fake = netG(lib.ones(2, 3) * (i + 1))
        fake = fake.detach() if detach else fake
        _, errG = f(a, b, fake, lib.ones(2))
        if create_graph:  # a gradient penalty on the discriminator's gradients
            grads = lib.autograd.grad(errG, list(netD.parameters()), create_graph=True)
            errG = errG + sum((g ** 2).sum() for g in grads)
        errG.backward()
        params = [*netD.parameters(), *netG.parameters()]
        found.append([None if p.grad is None else p.grad.numpy().copy() for p in params]
                     + [p.detach().numpy().copy() for p in netD.parameters()] + [errG.detach().numpy().copy()])
    return found, f


def _check(got, want):
    for call, (g, w) in enumerate(zip(got, want)):
        for k, (x, y) in enumerate(zip(g, w)):
            assert (x is None) == (y is None), (call, k)
            if y is not None:
                np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, err_msg=f"call {call}, value {k}")


def _compiled(f):
    """Whether every entry of ``f`` replays a joint graph (compiled forward and backward)."""
    return [getattr(e, "joint", None) is not None for e in f._entries]


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_step_then_forward_with_freed_inputs_replays_its_compiled_joint_graph(optimizer):
    got, f = _gan(ember, "aot_eager", optimizer)
    _check(got, _gan(torch, None, optimizer)[0])
    assert _compiled(f) == [True]  # (one graph: plain SGD recompiled at the second call; replayed by dispatch)


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_fake_detached(optimizer):
    got, f = _gan(ember, "aot_eager", optimizer, detach=True)
    _check(got, _gan(torch, None, optimizer, detach=True)[0])
    assert _compiled(f) == [True]


def test_inductor():
    got, f = _gan(ember, "inductor", "sgd", calls=3)
    _check(got, _gan(torch, None, "sgd", calls=3)[0])
    assert _compiled(f) == [True]


@pytest.mark.parametrize("freed", [True, False], ids=["freed_inputs", "leaf_inputs"])
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_create_graph_through_the_step_and_forward(optimizer, freed):
    # (raised "reads its old value" from the first replay with leaf inputs; with freed ones, a
    # zero gradient for the unused errD reached its freed node)
    got, f = _gan(ember, "aot_eager", optimizer, freed=freed, create_graph=True)
    _check(got, _gan(torch, None, optimizer, freed=freed, create_graph=True)[0])
    assert _compiled(f) == [True]


def test_the_discriminators_loss_still_raises_at_backward():
    def run(lib, backend):
        lib.manual_seed(0)
        net = lib.nn.Linear(3, 1)
        opt = lib.optim.SGD(net.parameters(), lr=0.1)

        def step(loss, x):
            opt.step()
            return loss * 2, net(x).sum()
        f = step if backend is None else lib.compile(step, backend=backend)
        raised = []
        for _ in range(3):
            loss = net(lib.ones(2, 3)).sum()
            loss.backward()
            errD, out = f(loss, lib.ones(2, 3))
            out.backward()
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                errD.backward()
            raised.append(net.weight.grad.numpy().copy())
        return raised, f
    got, f = run(ember, "aot_eager")
    np.testing.assert_allclose(got, run(torch, None)[0], rtol=1e-6)
    assert _compiled(f) == [True]


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])  # (inductor: their update ops in C)
@pytest.mark.parametrize("name", ["RMSprop", "Adagrad"])
def test_rmsprop_and_adagrad_training_steps_compile_once_with_a_scheduler(name, backend):
    kwargs = {"RMSprop": dict(lr=0.01, momentum=0.5, weight_decay=0.01, maximize=True),
              "Adagrad": dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)}[name]

    def train(lib, compiled):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
        opt = getattr(lib.optim, name)(model.parameters(), **kwargs)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        def step(x):
            model(x).square().mean().backward()
            opt.step()
            opt.zero_grad()
        run = lib.compile(step, backend=backend) if compiled else step
        for i in range(5):
            run(lib.ones(4, 5) * (i + 1) / 5)
            sched.step()
        return [p.detach().numpy() for p in model.parameters()]
    counters.clear()
    got = train(ember, True)
    assert counters["stats"]["unique_graphs"] == 1 and not counters["recompiles"] and not counters["graph_break"]
    for x, y in zip(got, train(torch, False)):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
