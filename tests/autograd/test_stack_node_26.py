"""``stack``'s node is torch's StackBackward0, whose next functions are the operands' own nodes
(it was a cat of unsqueezed operands: a CatBackward0 renamed, over UnsqueezeBackward0 nodes),
and ``t()``, ``T``, ``mT``, ``H``, ``mH``, ``adjoint``, ``transpose`` and ``permute`` give torch's
node names. Compared with torch: the graph's names, where the next functions point, values,
gradients and gradients of gradients, for stacks along dims 0, -1 and a middle one, of
non-contiguous operands, of operands some of which need no gradient, of empty ones. And
``unbind``'s views and a sum's backward dispatch nothing per view."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember._ops import core
from ember._ops import shape as shape_ops

A = (np.arange(12.0).reshape(3, 4) - 5) / 7
B = np.cos(np.arange(12.0)).reshape(4, 3).T.copy()


def _operands(lib, case):
    """(leaves, the operands stacked): leaves of A and B, and operands made of them."""
    a = lib.tensor(A, dtype=lib.float64, requires_grad=True)
    b = lib.tensor(B.T.copy(), dtype=lib.float64, requires_grad=True)
    if case == "non_contiguous":  # a transposed and a strided view
        return (a, b), [b.t(), lib.cat([a, a.flip(1)], 1)[:, ::2], a.flip(0)]
    if case == "mixed_requires_grad":  # a constant in the middle, the leaf itself first
        return (a, b), [a, lib.tensor(A * 2), b.t().exp()]
    return (a, b), [a * 2, b.t()]


def _signature(node, depth=3):
    """The node's name and, ``depth`` levels down, its next functions' (None where there is none)."""
    if node is None:
        return None
    if depth == 0:
        return type(node).__name__
    return type(node).__name__, tuple((_signature(f, depth - 1), nr) for f, nr in node.next_functions)


def _run(lib, case, dim):
    leaves, operands = _operands(lib, case)
    s = lib.stack(operands, dim)
    assert all(s.grad_fn.next_functions[i][0] is x.grad_fn for i, x in enumerate(operands) if x.requires_grad
               and x.grad_fn is not None)  # the operand's own node, not an unsqueeze of it
    weights = lib.tensor(np.linspace(-1, 1, s.numel()).reshape(tuple(s.shape)), dtype=lib.float64)
    grads = lib.autograd.grad((s ** 3 * weights).sum(), leaves, create_graph=True)
    seconds = lib.autograd.grad(sum((g * g.detach().cos()).sum() for g in grads), leaves)
    return (s.detach().numpy(), _signature(s.grad_fn), [g.detach().numpy() for g in grads],
            [type(g.grad_fn).__name__ for g in grads], [g.numpy() for g in seconds])


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("case", ["contiguous", "non_contiguous", "mixed_requires_grad"])
def test_stack_graph_gradients_and_second_derivatives_match_torch(case, dim):
    got, want = _run(ember, case, dim), _run(torch, case, dim)
    assert got[1] == want[1]
    assert got[1][0] == "StackBackward0"
    assert got[3] == want[3]
    for g, w in zip(got[:1] + tuple(got[2]) + tuple(got[4]), want[:1] + tuple(want[2]) + tuple(want[4])):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_empty_promoted_and_zero_dim_operands_as_torch():
    for shape, dim in [((0, 3), 1), ((2, 0), -1), ((), 0)]:
        outs = []
        for lib in (torch, ember):
            x = lib.ones(shape, dtype=lib.float32, requires_grad=True)
            y = lib.ones(shape, dtype=lib.float64, requires_grad=True)
            s = lib.stack([x, y], dim)
            s.sum().backward()
            outs.append((tuple(s.shape), str(s.dtype), type(s.grad_fn).__name__, str(x.grad.dtype),
                         x.grad.numpy().tolist(), y.grad.numpy().tolist()))
        assert outs[0] == outs[1]


def test_stack_errors_and_out_as_torch():
    for lib in (torch, ember):
        a = lib.ones(2, 3)
        with pytest.raises(IndexError):
            lib.stack([a, a], 3)
        with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
            lib.stack([a, lib.ones(3, 2)])
        with pytest.raises(TypeError, match="can't be cast to the desired output type Long"):
            lib.stack([a, a], out=lib.empty(2, 2, 3, dtype=lib.int64))
        out = lib.empty(2, 3, 2)
        assert lib.stack([a, a * 2], -1, out=out) is out
        assert out[:, :, 1].numpy().tolist() == [[2.0] * 3] * 2


TRANSPOSES = {
    "t": lambda x: x.t(), "torch_t": lambda x: (torch if isinstance(x, torch.Tensor) else ember).t(x), "T": lambda x: x.T,
    "mT": lambda x: x.mT, "H": lambda x: x.H, "mH": lambda x: x.mH, "adjoint": lambda x: x.adjoint(),
    "transpose": lambda x: x.transpose(0, 1), "swapaxes": lambda x: x.swapaxes(1, 0),
    "permute": lambda x: x.permute(1, 0),
}


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("name", TRANSPOSES)
def test_transpose_node_names_match_torch(name, dtype):
    names = []
    for lib in (torch, ember):
        x = lib.ones(3, 4, dtype=getattr(lib, dtype), requires_grad=True)
        y = TRANSPOSES[name](x)
        (g,) = lib.autograd.grad((y * y).abs().sum(), x, create_graph=True)  # transposed back
        names.append((_signature(y.grad_fn, 2), _signature(g.grad_fn, 0)))
    assert names[0] == names[1]


def test_t_of_a_vector_and_h_of_other_ranks_as_torch():
    for lib in (torch, ember):
        v = lib.ones(4, requires_grad=True)
        assert type(v.t().grad_fn).__name__ == "TBackward0"
        for shape in [(4,), (2, 3, 4)]:
            with pytest.raises(RuntimeError, match=r"tensor.H is only supported on matrices \(2-D tensors\). "
                                                   rf"Got {len(shape)}-D tensor."):
                lib.ones(shape).H
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            z = lib.tensor(2.0, requires_grad=True).H
        assert z.grad_fn is None and "Tensor.H is deprecated on 0-D tensors" in str(caught[0].message)


def _counting(monkeypatch, module, name):
    """Calls of ``module.name`` counted (the list returned) from now on."""
    calls, original = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(a[0]) or original(*a, **k))
    return calls


def test_unbind_views_and_a_sums_gradient_dispatch_nothing_per_view(monkeypatch):
    """``unbind`` while recording puts one node on the tape, none per view (each view's node was
    made, then replaced); a sum's backward views the gradient without dispatching (it reshaped and
    expanded it as ops); values, views and the one node as before."""
    x = ember.tensor(A, requires_grad=True)
    records, applies = _counting(monkeypatch, core, "record"), _counting(monkeypatch, shape_ops, "apply")
    views = x.unbind(1)
    assert records == [] and all(v._base is x and v.grad_fn is views[0].grad_fn for v in views)
    assert type(views[0].grad_fn).__name__ == "UnbindBackward0"
    loss = sum(v.sum() for v in views[::2]) + x.split([1, 2], 0)[1].sum()
    loss.backward()
    assert applies == []
    want = np.zeros_like(A)
    want[:, ::2] = 1
    want[1:] += 1
    np.testing.assert_array_equal(x.grad.numpy(), want)
