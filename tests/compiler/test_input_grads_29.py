"""A backward inside a compiled function into the ``.grad`` of an input (FGSM adversarial examples,
saliency maps, input-gradient penalties): captured in the graph, the input's gradient an extra output
that a replay sets where the input has no ``.grad`` and adds in place where it has one, as eager's
AccumulateGrad (compiler/input_grads.py). Compared call by call with torch 2.13 and its graph counts
(``CompileCounter``), with every backend; before, ember ran these calls eagerly (0 graphs)."""
import functools
import warnings

import numpy as np
import pytest
import torch
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters
from graph_counts import counting_backend


def _close(got, want):
    """Nested lists of numbers (or None) equal to float32 rounding."""
    assert type(got) is type(want) or isinstance(got, float) and isinstance(want, float), (got, want)
    if isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    elif want is not None and not isinstance(want, (str, bool)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        assert got == want


def _compiler(lib, backend):
    """``(compile, count)``: a compile function for ``lib`` and its graph count so far (torch's frames)."""
    if lib is torch:
        torch._dynamo.reset()
        counter = CompileCounter()
        return functools.partial(torch.compile, backend=counter), lambda: counter.frame_count
    ember.compiler.reset()
    if backend == "callable":
        counts = [0, 0]
        return functools.partial(ember.compile, backend=counting_backend(counts)), lambda: counts[0]
    return functools.partial(ember.compile, backend=backend), lambda: counters["stats"]["unique_graphs"]


def _step(lib, backend=None):
    """The training step of the issue: its input requires grad; the third call's input comes with a ``.grad``."""
    compile_, count = _compiler(lib, backend)
    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 2)

    def step(x):
        out = lin(x)
        loss = (out * out).sum()
        loss.backward()
        return out, loss

    run, got = compile_(step), []
    for i in range(4):
        x = (lib.arange(12.0).reshape(4, 3) / (i + 1)).requires_grad_()
        held = x.grad = lib.full((4, 3), 0.5) if i == 2 else None
        out, loss = run(x)
        got.append([out.tolist(), loss.item(), x.grad.tolist(), x.grad is held if i == 2 else None,
                    lin.weight.grad.tolist(), lin.bias.grad.tolist(), x.grad.requires_grad])
        lin.zero_grad()
    return got, count()


@functools.lru_cache(maxsize=None)
def _torch_step():
    return _step(torch)


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "eager", "callable"])
def test_a_backward_into_an_input_is_one_graph_as_torch(backend):
    (got, graphs), (want, frames) = _step(ember, backend), _torch_step()
    _close(got, want)  # (the third call's x.grad: the one it came with, added into in place)
    assert graphs == frames == 1


def test_explain_reports_no_break():
    lin = ember.nn.Linear(3, 2)

    def step(x):
        loss = lin(x).square().sum()
        loss.backward()
        return loss

    report = ember._dynamo.explain(step)(ember.ones(4, 3, requires_grad=True))
    assert (report.graph_count, report.graph_break_count, report.break_reasons) == (1, 0, [])


def _patterns(lib, backend=None):
    """FGSM (``x.grad.sign()`` read in the function and after it), two inputs requiring grad (one
    with a ``.grad`` already), a non-leaf input, an input whose ``.grad`` the function assigns."""
    compile_, count = _compiler(lib, backend)
    F, got, counts = lib.nn.functional, [], []
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 3))

    def fgsm(x, y):
        x.requires_grad_()
        loss = F.nll_loss(F.log_softmax(model(x), dim=1), y)
        loss.backward()
        return x + 0.1 * x.grad.sign(), loss

    def two(x, w):
        loss = (model(x) * w.sum()).pow(2).mean()
        loss.backward()
        return loss

    def assign(x):
        x.grad = None
        loss = model(x).square().sum()
        loss.backward()
        return loss

    run = compile_(fgsm)
    for i in range(3):
        x, y = lib.arange(8.0).reshape(2, 4) / (i + 1), lib.tensor([0, 2])
        x.grad = lib.ones(2, 4) if i == 1 else None
        adv, loss = run(x, y)
        got.append([adv.tolist(), loss.item(), x.grad.tolist(), x.grad.sign().tolist(), model[0].weight.grad.tolist()])
        model.zero_grad()
    counts.append(count())
    run = compile_(two)
    for i in range(3):
        x, w = (lib.arange(8.0).reshape(2, 4) / (i + 1)).requires_grad_(), lib.ones(3, requires_grad=True)
        if i == 2:
            x.grad, w.grad = lib.full((2, 4), 2.0), lib.ones(3)
        got.append([run(x, w).item(), x.grad.tolist(), w.grad.tolist(), model[2].bias.grad.tolist()])
        model.zero_grad()
    counts.append(count() - sum(counts))
    run = compile_(assign)
    for i in range(3):
        x = lib.arange(8.0).reshape(2, 4).requires_grad_()
        x.grad = held = lib.ones(2, 4) if i else None
        got.append([run(x).item(), x.grad.tolist(), x.grad is held])
    for i in range(2):  # (a backward into the history of a tensor made before the call: eagerly in ember)
        leaf = lib.arange(8.0).reshape(2, 4).requires_grad_()
        x = leaf * 2
        loss = compile_(lambda x: model(x).sum().backward())(x)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grad = x.grad
        got.append([loss, grad, leaf.grad.tolist(), [str(w.message)[:60] for w in caught]])
    return got, counts


def test_fgsm_two_inputs_assigned_and_non_leaf_grads_as_torch():
    (got, counts), (want, frames) = _patterns(ember, "inductor"), _patterns(torch)
    _close(got, want)
    # fgsm: torch breaks at backward (2 frames); ember 1 graph, and 1 more where x came with a .grad
    # (the function reads it); two inputs: 1 graph as torch
    assert counts == frames == [2, 1]


def _hooked(lib):
    """An input with a gradient hook on the second call only (registered before the call), then one
    registering its hook inside the call."""
    lib.manual_seed(0)
    lin, got = lib.nn.Linear(3, 2), []

    def step(x, hook_inside):
        if hook_inside:
            x.register_hook(lambda g: g * 2)
        loss = lin(x).square().sum()
        loss.backward()
        return loss

    run = lib.compile(step, backend="eager")
    for i in range(4):
        x = lib.ones(2, 3, requires_grad=True)
        if i == 1:
            x.register_hook(lambda g: g * 3)
        got.append([run(x, i == 3).item(), x.grad.tolist(), lin.weight.grad.tolist()])
        lin.zero_grad()
    return got


def test_an_input_with_a_gradient_hook_as_torch():
    _close(_hooked(ember), _hooked(torch))  # (the hook's tripling was a replay's silently dropped)
