"""The backward of ``split``, ``chunk``, ``unbind`` and their kin joins the views' gradients in
one ``cat`` (``stack`` for unbind), zeros for views without one, as torch's SplitBackward0 /
UnbindBackward0: compared with torch (values, the gradient's node, gradients of gradients) on
non-contiguous inputs, dim=-1, empty pieces and sizes that do not divide the length; and one
join per backward, however many views (it was a sum of one input-sized tensor per view)."""
import numpy as np
import pytest
import torch

import ember
from ember._ops import core

CALLS = {
    "split_ragged": lambda x: x.split(4),  # 6 = 4 + 2
    "split_last_dim": lambda x: x.split(2, -1),
    "split_empty_pieces": lambda x: x.split([0, 3, 0, 3]),
    "split_with_sizes": lambda x: x.split_with_sizes([1, 2, 2], dim=1),
    "chunk": lambda x: x.chunk(4),  # 6 rows in 3 chunks of 2
    "unbind": lambda x: x.unbind(0),
    "unbind_last_dim": lambda x: x.unbind(-1),
    "unsafe_split": lambda x: x.unsafe_split(4, 1),
    "unsafe_chunk": lambda x: x.unsafe_chunk(2),
}
DATA = (np.arange(30.0).reshape(5, 6).T - 11) / 9  # (6, 5)


def _gradients(lib, name, transposed):
    """(gradient, its node's name, gradient of a weighted sum of it) of a loss of some views
    (the middle ones unused) with respect to the split input."""
    leaf = lib.tensor(DATA.T.copy() if transposed else DATA, dtype=lib.float64, requires_grad=True)
    x = leaf.t() if transposed else leaf * 1  # a non-contiguous input, or a contiguous one
    views = CALLS[name](x)
    loss = (views[0] ** 3).sum() + (views[-1].sin() * views[-1]).sum()
    (g,) = lib.autograd.grad(loss, x, create_graph=True)
    weights = lib.tensor(np.linspace(-1, 2, DATA.size).reshape(DATA.shape), dtype=lib.float64)
    (gg,) = lib.autograd.grad((g * weights).sum(), leaf)
    return g.detach().numpy(), type(g.grad_fn).__name__, gg.numpy()


@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
@pytest.mark.parametrize("name", CALLS)
def test_gradient_node_and_second_derivative_match_torch(name, transposed):
    got, want = _gradients(ember, name, transposed), _gradients(torch, name, transposed)
    assert got[1] == want[1]  # CatBackward0 / StackBackward0
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12, atol=1e-12)


def test_every_view_without_a_gradient_but_one():
    for lib in (torch, ember):
        x = lib.ones(4, 3, requires_grad=True)
        x.unbind(1)[2].sum().backward()
        assert x.grad.numpy().tolist() == [[0.0, 0.0, 1.0]] * 4


class _Ops(core.Observer):
    """The names of the ops dispatched while it observes."""

    def __init__(self):
        self.names = []

    def op_exit(self, op, inputs, attrs, output):
        self.names.append(op.name)


@pytest.mark.parametrize("call", [lambda x: x.split(1), lambda x: x.unbind()], ids=["split", "unbind"])
def test_many_views_backward_is_one_cat(call):
    x = ember.randn(512, 3, requires_grad=True)
    views = call(x)
    loss = sum(v.sum() for v in views[::2])  # every other view: the rest get zeros
    ops = _Ops()
    core.OBSERVERS.append(ops)
    try:
        loss.backward()
    finally:
        core.OBSERVERS.remove(ops)
    assert ops.names.count("Cat") == 1 and "IndexBackward" not in ops.names and "Add" not in ops.names
    expected = np.zeros((512, 3), np.float32)
    expected[::2] = 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)
