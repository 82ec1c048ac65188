"""Session 20 (PAR20): autograd rows of issue 8's "Still open" closed, torch 2.13 the oracle.

* under ``create_graph`` reflect/replicate ``pad`` gradients require grad, with a zero second
  derivative and torch's node names; ``hardsigmoid`` and ``multi_margin_loss`` second
  derivatives raise torch's "derivative for aten::... is not implemented";
* ``detach_copy`` of a tensor requiring grad requires grad, and its backward raises.
"""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close


def _leaf(L, shape, seed=0):
    return L.tensor(np.random.default_rng(seed).standard_normal(shape)).requires_grad_()


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape, pad", [((2, 5), (2, 1)), ((1, 2, 5), (2, 1)), ((1, 2, 4, 5), (1, 1, 2, 1)),
                                        ((1, 1, 3, 4, 5), (1, 1, 1, 0, 1, 1))])
def test_pad_gradient_under_create_graph_requires_grad(mode, shape, pad):
    """The first gradient of ``pad(x).sum()`` (an upstream gradient that requires no grad)
    requires grad, as torch's ``ReflectionPadNDBackward`` depends on ``x``; the second
    derivative is zeros; the nodes carry torch's names; the values are torch's."""
    results = []
    for L in (torch, ember):
        x = _leaf(L, shape)
        y = L.nn.functional.pad(x, pad, mode=mode)
        (g,) = L.autograd.grad((y * y).sum() + y.sum(), x, create_graph=True)
        (h,) = L.autograd.grad(y.sum(), x, create_graph=True)
        (hh,) = L.autograd.grad(h.sum(), x)
        (gg,) = L.autograd.grad(g.sum(), x)
        results.append((y.grad_fn.name(), h.grad_fn.name(), h.requires_grad, g, hh, gg))
    (t_names, t_node, t_req, tg, thh, tgg), (e_names, e_node, e_req, eg, ehh, egg) = results
    assert (e_names, e_node, e_req) == (t_names, t_node, t_req) == (t_names, t_node, True)
    assert_close(eg, tg, rtol=1e-12, atol=1e-12)
    assert_close(ehh, thh, rtol=0, atol=0)
    assert_close(egg, tgg, rtol=1e-12, atol=1e-12)


def test_circular_pad_gradient_under_create_graph_does_not_depend_on_the_input():
    """torch's circular pad is a composite of slices: its gradient of ``y.sum()`` needs no graph."""
    for L in (torch, ember):
        x = _leaf(L, (1, 2, 4, 5))
        (h,) = L.autograd.grad(L.nn.functional.pad(x, (1, 1, 2, 1), mode="circular").sum(), x, create_graph=True)
        assert not h.requires_grad


_SECOND_ORDER_REFUSED = {
    "hardsigmoid": (lambda L, x: L.nn.functional.hardsigmoid(x).sum(), "hardsigmoid_backward"),
    "multi_margin_loss": (lambda L, x: L.nn.functional.multi_margin_loss(x, L.tensor([0, 2, 3])),
                          "multi_margin_loss_backward"),
    "multi_margin_loss_p2": (lambda L, x: L.nn.functional.multi_margin_loss(
        x, L.tensor([1, 1, 0]), p=2, margin=0.5, weight=L.tensor([0.5, 1.0, 2.0, 1.5], dtype=L.float64)),
        "multi_margin_loss_backward"),
}


@pytest.mark.parametrize("name", sorted(_SECOND_ORDER_REFUSED))
def test_second_derivative_raises_where_torch_has_none(name):
    """The first gradient under ``create_graph`` has torch's values and requires grad, on a node
    torch calls ``torch::autograd::NotImplemented``; differentiating it raises torch's error
    (ember gave zeros)."""
    loss, aten = _SECOND_ORDER_REFUSED[name]
    firsts = []
    for L in (torch, ember):
        x = _leaf(L, (3, 4))
        (g,) = L.autograd.grad(loss(L, x), x, create_graph=True)
        firsts.append(g)
        assert g.requires_grad and g.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match=f"^derivative for aten::{aten} is not implemented$"):
            L.autograd.grad(g.sum(), x)
    assert_close(firsts[1], firsts[0], rtol=1e-12, atol=1e-12)
    # without create_graph nothing changes: the gradient needs no graph
    x = _leaf(ember, (3, 4))
    (g,) = ember.autograd.grad(loss(ember, x), x)
    assert not g.requires_grad


def test_multi_margin_loss_refuses_a_weight_that_requires_grad():
    for L in (torch, ember):
        w = L.rand(4, requires_grad=True)
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
            L.nn.functional.multi_margin_loss(L.randn(3, 4), L.tensor([0, 1, 2]), weight=w)
        with L.no_grad():
            L.nn.functional.multi_margin_loss(L.randn(3, 4), L.tensor([0, 1, 2]), weight=w)


def test_detach_copy_of_a_tensor_requiring_grad():
    """torch's ``detach_copy`` has no derivative: its result requires grad (a NotImplemented
    node) and a backward through it raises; under no_grad, or of a detached tensor, it does not."""
    for L in (torch, ember):
        x = _leaf(L, (2, 3))
        y = L.detach_copy(x)
        assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "torch::autograd::NotImplemented"
        assert y.is_contiguous() and y.data_ptr() != x.data_ptr() and L.equal(y.detach(), x.detach())
        with pytest.raises(RuntimeError, match="^derivative for aten::detach_copy is not implemented$"):
            y.sum().backward()
        with L.no_grad():
            assert not L.detach_copy(x).requires_grad
        assert not L.detach_copy(x.detach()).requires_grad
        assert L.detach_copy(x * 2).requires_grad


def _checkpoint(L):
    return (torch.utils.checkpoint if L is torch else ember.utils.checkpoint).checkpoint


def test_checkpoint_results_made_from_factories_do_not_require_grad():
    """``use_reentrant=False``: which results require grad is torch's (a recording run's): those
    made from the inputs or a custom Function of them do, those from factories, ``detach()``,
    comparisons or ``argmax`` do not; gradients flow as torch's."""
    flags, grads = [], []
    for L in (torch, ember):
        class Double(L.autograd.Function):  # its result made outside the ops (from NumPy)
            @staticmethod
            def forward(ctx, a):
                return L.tensor(a.detach().numpy() * 2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x, w = _leaf(L, (3,)), _leaf(L, (3,), seed=1)

        def segment(x):
            return (L.ones(3) * 2, x * 2, x.detach() * 3, L.zeros(3) + w, x > 0, x.argmax(),
                    L.arange(3.0) + 1, x.new_ones(3) * 1, Double.apply(x) + L.ones(3))

        outs = _checkpoint(L)(segment, x, use_reentrant=False)
        flags.append([o.requires_grad for o in outs])
        sum(o.sum() for o in outs if o.requires_grad).backward()
        grads.append((x.grad, w.grad))
    assert flags[1] == flags[0] == [False, True, False, True, False, False, False, False, True]
    assert_close(grads[1][0], grads[0][0], rtol=0, atol=0)
    assert_close(grads[1][1], grads[0][1], rtol=0, atol=0)


def _changing(kind):
    """A segment whose second run differs from its first (a counter it reads)."""
    calls = [0]

    def segment(x):
        calls[0] += 1
        if kind == "shape":
            return x[:3 + calls[0]].sin() * 2
        if kind == "dtype":
            return (x * x[:1]).sum() if calls[0] == 1 else (x.double() * x[:1]).sum()
        return x.exp().sin() if calls[0] == 1 else x.sin()
    return segment


@pytest.mark.parametrize("kind", ["shape", "dtype", "count"])
def test_checkpoint_determinism_check(kind):
    """A recomputation whose saved tensors differ from the first run's raises torch's
    CheckpointError, naming the position and metadata (or the two counts); with
    ``determinism_check="none"`` the count change goes through."""
    messages = []
    for L in (torch, ember):
        x = _leaf(L, (8,)).detach().float().requires_grad_()
        y = _checkpoint(L)(_changing(kind), x, use_reentrant=False)
        error = (torch.utils.checkpoint if L is torch else ember.utils.checkpoint).CheckpointError
        with pytest.raises(error) as info:
            y.sum().backward()
        messages.append(str(info.value).split("\nTip:")[0].rstrip("\n"))
    assert messages[1] == messages[0]
    assert "position" in messages[0] or "Number of tensors saved during forward: 2" in messages[0]
    if kind == "count":
        x = _leaf(ember, (8,))
        _checkpoint(ember)(_changing(kind), x, use_reentrant=False, determinism_check="none").sum().backward()
        assert_close(x.grad, x.detach().cos(), rtol=1e-12, atol=0)
