"""A step split at ``.item()`` whose later piece backpropagates into an earlier piece's tensor (ITEMSPLIT30).

pytorch/examples' DCGAN loop reads ``D_x = output.mean().item()`` after the discriminator's
backward and ``D_G_z1`` after the fake batch's; its generator step then runs ``errG.backward()``
through ``fake``, made by the piece before that read. ember ran that piece and the generator's
piece eagerly: the first returned ``fake`` requiring grad after a backward in it ("a tensor
requiring grad whose graph it retained"), the second's backward reached an input's history. Now
the first records a backward for ``fake`` (a replay's ``fake`` has a compiled backward into the
generator), and the generator's ``errG.backward()`` runs as an eager statement between pieces
(torch's dynamo breaks at every ``backward()``), through the pieces' compiled backwards.

torch 2.13 (a ``CompileCounter`` backend) counts 9 graphs for such a DCGAN step at its first call,
15 from its second on (a graph between each two breaks, its optimizer steps apart); ember 4 (its
pieces keep their backwards), every piece compiled; before, 2 (the last two pieces eager).

Also autograd's gradient of one view of ``unbind`` (or ``split``, ``chunk``: views sharing one
node) that is not the first: ``autograd.grad``, ``retain_grad`` and ``backward(inputs=)`` took
the first view's (or raised "appears to not have been used"): a compiled piece's input is such
a view of the earlier piece's node.
"""
import numpy as np
import pytest

import ember
from ember._dynamo.utils import counters

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _gan(lib, compiled, backend, steps=4):
    """A tiny GAN step as DCGAN's (BCELoss, Adam(betas=(0.5, 0.999)), BatchNorm in both nets,
    ``.item()`` reads between the backwards); returns (per step the losses and reads, the
    parameters and their ``.grad`` after the last step, the compiled step)."""
    lib.manual_seed(0)
    nn = lib.nn
    netG = nn.Sequential(nn.Linear(3, 6, bias=False), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 4), nn.Tanh())
    netD = nn.Sequential(nn.Linear(4, 5, bias=False), nn.BatchNorm1d(5), nn.LeakyReLU(0.2), nn.Linear(5, 1),
                         nn.Sigmoid())
    criterion = nn.BCELoss()
    optD = lib.optim.Adam(netD.parameters(), lr=0.01, betas=(0.5, 0.999))
    optG = lib.optim.Adam(netG.parameters(), lr=0.01, betas=(0.5, 0.999))

    def step(real, noise):
        netD.zero_grad()
        label = lib.full((real.size(0),), 1.0, dtype=real.dtype)
        output = netD(real).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        fake = netG(noise)
        label.fill_(0.0)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optD.step()
        netG.zero_grad()
        label.fill_(1.0)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optG.step()
        return errD.item(), errG.item(), D_x, D_G_z1, D_G_z2

    f = ember.compile(step, backend=backend) if compiled else step
    reals, noises = lib.rand(2, 5, 4) * 2 - 1, lib.randn(2, 5, 3)
    log = [f(reals[i % 2], noises[i % 2]) for i in range(steps)]
    params = [p.detach().numpy().copy() for p in [*netG.parameters(), *netD.parameters()]]
    grads = [p.grad.numpy().copy() for p in [*netG.parameters(), *netD.parameters()]]
    return log, params, grads, f


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "eager"])
def test_gan_step_with_item_reads_compiles_its_pieces_with_torchs_numbers(backend):
    counters.clear()
    log, params, grads, f = _gan(ember, True, backend)
    want_log, want_params, want_grads, _ = _gan(torch, False, None)
    np.testing.assert_allclose(log, want_log, rtol=1e-4, atol=1e-6)
    for got, want in zip(params + grads, want_params + want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert [p.eager for p in f._split.pieces] == [False] * 4  # (before: the last two pieces eager)
    if backend != "eager":  # (whose pieces writing a parameter or running a backward replay eagerly)
        assert counters["stats"]["unique_graphs"] == 4 and sum(counters["recompiles"].values()) == 0


def test_generator_backward_is_an_eager_statement_between_pieces():
    """The split: ``errG.backward()`` (line 19 of the step) runs eagerly with the ``D_G_z2`` read."""
    _, _, _, f = _gan(ember, True, "aot_eager", steps=2)
    kinds = [(kind, s[0].lineno - f._plan[1].func.__code__.co_firstlineno) for kind, s, _, _ in f._plan[1].segments]
    assert kinds == [("piece", 1), ("eager", 6), ("piece", 7), ("eager", 12), ("piece", 13), ("eager", 19),
                     ("piece", 21), ("eager", 22)]


def _returns_fake(lib, compiled, backend="aot_eager"):
    """A whole function running the discriminator's backward on ``fake.detach()`` and returning
    ``fake``, whose backward the caller runs (no graph break in it)."""
    lib.manual_seed(1)
    G, D = lib.nn.Linear(3, 4), lib.nn.Linear(4, 1)

    def f(x):
        fake = G(x).tanh()
        loss = D(fake.detach()).sigmoid().sum()
        loss.backward()
        return fake, loss

    g = ember.compile(f, backend=backend) if compiled else f
    out = []
    for i in range(3):
        fake, loss = g(lib.full((2, 3), 0.5 * i - 0.3))
        (fake * fake).sum().backward()
        out.append((fake.requires_grad, loss.item(), G.weight.grad.numpy().copy(), D.weight.grad.numpy().copy()))
        G.zero_grad(), D.zero_grad()
    return out


@pytest.mark.parametrize("backend", ["aot_eager", "eager"])
def test_a_function_that_ran_a_backward_returns_a_retained_tensor_with_a_compiled_backward(backend):
    counters.clear()
    got, want = _returns_fake(ember, True, backend), _returns_fake(torch, False)
    for (g_req, g_loss, g_gw, g_dw), (w_req, w_loss, w_gw, w_dw) in zip(got, want):
        assert g_req and w_req
        np.testing.assert_allclose(g_loss, w_loss, rtol=1e-6)
        np.testing.assert_allclose(g_gw, w_gw, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g_dw, w_dw, rtol=1e-5, atol=1e-7)
    assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"]  # (before: a break, eager)


@pytest.mark.parametrize("how", ["unbind", "split", "chunk"])
def test_gradient_of_a_view_that_is_not_its_nodes_first_output(how):
    def run(lib):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        views = {"unbind": lambda t: t.unbind(0), "split": lambda t: t.split(1), "chunk": lambda t: t.chunk(2)}[how]
        a, b = views(x * 1)
        g1 = lib.autograd.grad((b * 2).sum(), b)[0]
        g2 = lib.autograd.grad((a * 3).sum() + (b * b).sum(), [b, a])
        a, b = views(x * 1)
        a.retain_grad(), b.retain_grad()
        ((a * 3).sum() + (b * 2).sum()).backward()
        retained = a.grad, b.grad
        a, b = views(x * 1)
        ((a * 3).sum() + (b * 5).sum()).backward(inputs=[b])
        only = b.grad
        a, b = views(x * 1)
        a.retain_grad(), b.retain_grad()
        ((a * 3).sum() + (b * 2).sum()).backward(inputs=[b, a])
        return [t.tolist() for t in (g1, *g2, *retained, only, a.grad, b.grad)]
    assert run(ember) == run(torch)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_a_forward_after_an_optimizer_step_in_the_call_gives_the_parameters_gradients(backend):
    """``opt.step()`` then ``lin(x).sum()`` returned: the eager backend's replay (through the
    dispatcher) read the step's new values, not the parameter: the loss required no grad
    (``backward()`` raised from the second call); in a GAN's generator piece, the discriminator's
    ``.grad`` lacked the generator loss's part. Such a graph replays eagerly on that backend."""
    def run(lib, compiled):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 1)
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)

        def f(x):
            opt.step()
            return lin(x).sum()
        g = ember.compile(f, backend=backend) if compiled else f
        lin(lib.ones(2, 3)).sum().backward()
        out = []
        for i in range(4):
            loss = g(lib.ones(2, 3) * i)
            opt.zero_grad()
            loss.backward()
            out.append([loss.item(), *lin.weight.grad.tolist()[0], *lin.bias.grad.tolist()])
        return out
    np.testing.assert_allclose(run(ember, True), run(torch, False), rtol=1e-6)
