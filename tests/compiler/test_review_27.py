"""Session 27's review: compiled training steps that read an optimizer's hyperparameters.

A graph reads ``lr`` (and ``momentum``, ``weight_decay``, ...) of an optimizer's groups as
inputs of its update ops at each call, and guarded only whether each is zero: a scheduler
never recompiles. A step whose own code read ``opt.param_groups[0]["lr"]`` and computed with it
(``loss * (1 + lr)``, ``x * lr``, ``f"{lr}"``) had that value baked into its graph, unguarded:
the replays used the recording's ``lr`` while the scheduler moved on (losses and weights wrong
from the 3rd call of a ``CosineAnnealingLR`` loop). torch guards the value it reads (a graph
per value, then eager at its recompile limit). Such a read from the user's code now keeps that
optimizer's hyperparameters guarded by value (``group_writes.watched_groups``).

Side effects a replay skipped: ``x.requires_grad_()`` on an input (replays left it False: a
gradient penalty step, WGAN-GP's, raised "element 0 of tensors does not require grad" from the
3rd call), and ``set_grad_enabled(False)`` called as a function and left so (replays put grad
mode back on). Both are graph breaks now (``side_effects.python_state``). A step that ran
``autograd.grad(z, x, retain_graph=True)`` and returned ``z``: replays returned ``z`` requiring no
grad (``z.backward()`` raised); a break now (``aot.retained_history``). A loaded LSTM or GRU
trace runs at other sequence lengths (since RNN27 a padded sequence's steps are no attribute).
"""
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _losses(lib, compiled, use):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.5)
    sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, 5)

    def step(x):
        opt.zero_grad()
        lr = opt.param_groups[0]["lr"]
        loss = ((w * x).sum() - 1) ** 2
        if use == "branch":
            loss = loss * 2 if lr > 0.05 else loss
        else:
            loss = loss * (1 + lr) if use == "arithmetic" else loss + x.sum() * lr
        loss.backward()
        opt.step()
        return loss

    f = ember.compile(step) if compiled else step
    out = []
    for i in range(6):
        out.append(f(lib.tensor([0.5, 0.25 * i])).item())
        sched.step()
    return out + w.tolist()


@pytest.mark.parametrize("use", ["arithmetic", "operand", "branch"])
def test_lr_read_by_the_step_follows_the_scheduler(use):
    expected = _losses(torch, False, use)
    assert _losses(ember, False, use) == pytest.approx(expected, rel=1e-6)
    assert _losses(ember, True, use) == pytest.approx(expected, rel=1e-6)


def _gradient_penalty_step(lib):
    lin = lib.nn.Linear(2, 1)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor([[0.5, -1.0]]))
        lin.bias.fill_(0.1)

    def step(x):  # WGAN-GP's penalty: the input made to require grad inside the step
        x.requires_grad_(True)
        out = lin(x).tanh().sum()
        g, = lib.autograd.grad(out, x, create_graph=True)
        return out + (g.norm(2, dim=1) - 1).pow(2).mean()
    return lin, step


def test_requires_grad_of_an_input_set_inside_holds_on_every_call():
    """``x.requires_grad_()`` on an input: replays left it False (no gradient, and autograd.grad
    of the result raised "element 0 of tensors does not require grad" from the 3rd call)."""
    got, want = [], []
    for lib, out in ((ember, got), (torch, want)):
        lin, step = _gradient_penalty_step(lib)
        f = ember.compile(step) if lib is ember else step
        for i in range(5):
            lin.zero_grad()
            x = lib.tensor([[0.3, 0.2 * i], [1.0, -0.5]])
            loss = f(x)
            loss.backward()
            assert x.requires_grad
            out += [loss.item()] + lin.weight.grad.flatten().tolist() + lin.bias.grad.tolist()
    assert got == pytest.approx(want, rel=1e-5)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_a_result_of_a_step_that_ran_autograd_grad_keeps_its_history(lib):
    """``autograd.grad(z, x, retain_graph=True)`` inside, ``z`` returned: replays returned ``z``
    requiring no grad (``z.backward()`` raised)."""
    f = ember.compile(_retained) if lib is ember else torch.compile(_retained, backend="eager")
    for i in range(5):
        x = lib.full((2,), float(i) + 1, requires_grad=True)
        g, z = f(x)
        assert z.requires_grad and not g.requires_grad
        z.backward()
        assert g.tolist() == x.grad.tolist() == [3.0 * (i + 1) ** 2] * 2


def _retained(x):
    z = (x ** 3).sum()
    g, = (torch if isinstance(x, torch.Tensor) else ember).autograd.grad(z, x, retain_graph=True)
    return g, z


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_grad_mode_a_call_leaves_off_stays_off_on_every_call(lib):
    """``set_grad_enabled(False)`` called as a function and left so: replays put grad mode back
    on (and the next step recorded no backward as the user expects none)."""
    def f(x):
        y = x * 2
        lib.set_grad_enabled(False)
        return y + 1

    g = ember.compile(f) if lib is ember else torch.compile(f, backend="eager")
    try:
        for _ in range(5):
            out = g(lib.ones(2, requires_grad=True))
            assert not lib.is_grad_enabled() and not out.requires_grad and out.tolist() == [3.0, 3.0]
            lib.set_grad_enabled(True)
    finally:
        lib.set_grad_enabled(True)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_a_saved_rnn_trace_runs_at_other_sequence_lengths(tmp_path, kind):
    """torch's loaded trace of an LSTM or GRU runs at any sequence length (aten::lstm); so does
    ember's (jit.save's Dim.AUTO sizes: the padded sequence's steps are read from its size)."""
    ember.manual_seed(0)
    rnn = getattr(ember.nn, kind)(3, 4, batch_first=True)
    traced = ember.jit.trace(rnn, ember.randn(2, 5, 3))
    ember.jit.save(traced, str(tmp_path / "rnn.pt"))
    loaded = ember.jit.load(str(tmp_path / "rnn.pt"))
    for steps in (7, 1, 5):
        x = ember.randn(2, steps, 3)
        assert (loaded(x)[0] - rnn(x)[0]).abs().max().item() < 1e-6


@pytest.mark.parametrize("write", ["result", "view"])
def test_an_in_place_write_into_a_result_its_backward_reads_raises_as_eager(write):
    """``y = x.exp()`` returned (its backward reads ``y``), then ``y.mul_(2)`` or a write into a
    view of it before ``backward()``: eager and torch raise; replays gave gradients of the
    written values (wrong numbers, silently)."""
    def f(x):
        y = x.exp()
        return y, y[1]

    g = ember.compile(f)
    for lib, fn in ((ember, f), (ember, g), (ember, g), (ember, g), (torch, f)):
        x = lib.linspace(0, 1, 4).reshape(2, 2).requires_grad_()
        y, row = fn(x)
        y.mul_(2) if write == "result" else row.zero_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
