"""``F.linear`` on a matrix shows torch's graph (issue 8): ``AddmmBackward0`` (``MmBackward0``
without a bias) linked to the bias, the input and a ``TBackward0`` node on the weight, in torch's
order, as PyTorch's blitz tutorial prints it; and that graph computes torch's gradients, first
and second order, with hooks."""
import itertools

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def tree(node):
    """The type names of ``node`` and everything behind it, depth first, in edge order."""
    if node is None:
        return None
    return [type(node).__name__] + [tree(n) for n, _ in node.next_functions]


@pytest.mark.parametrize("bias, weight_grad, input_grad",
                         [c for c in itertools.product([True, False], repeat=3) if any(c)])
def test_a_matrix_inputs_graph_is_torchs(bias, weight_grad, input_grad):
    trees = []
    for L in (ember, torch):
        layer = L.nn.Linear(3, 2, bias=bias)
        layer.weight.requires_grad_(weight_grad)
        x = L.ones(4, 3, requires_grad=input_grad).relu() if input_grad else L.ones(4, 3)
        trees.append(tree(L.nn.functional.mse_loss(layer(x), L.zeros(4, 2)).grad_fn))
    assert trees[0] == trees[1]


def test_the_blitz_tutorials_walk_prints_torchs_nodes():
    # print(loss.grad_fn); .next_functions[0][0] (the last Linear); and the node behind it
    names = []
    for L in (ember, torch):
        L.manual_seed(0)
        net = L.nn.Sequential(L.nn.Linear(6, 4), L.nn.ReLU(), L.nn.Linear(4, 2))
        loss = L.nn.MSELoss()(net(L.ones(1, 6)), L.zeros(1, 2))
        last = loss.grad_fn.next_functions[0][0]
        names.append([type(n).__name__ for n in (loss.grad_fn, last, last.next_functions[0][0],
                                         last.next_functions[1][0], last.next_functions[2][0])])
        assert last.next_functions[0][0].variable is net[2].bias
        assert last.next_functions[2][0].next_functions[0][0].variable is net[2].weight
    assert names[0] == names[1] == ["MseLossBackward0", "AddmmBackward0", "AccumulateGrad", "ReluBackward0",
                                    "TBackward0"]


@pytest.mark.parametrize("bias, weight_grad, input_grad",
                         [c for c in itertools.product([True, False], repeat=3) if any(c[1:])])
def test_gradients_first_and_second_order_and_hooks_are_torchs(bias, weight_grad, input_grad):
    def run(L):
        L.manual_seed(0)
        layer = L.nn.Linear(3, 2, bias=bias).double()
        layer.weight.requires_grad_(weight_grad)
        x = L.randn(4, 3, dtype=L.float64, requires_grad=input_grad)
        seen = []
        if weight_grad:
            layer.weight.register_hook(lambda g: seen.append(g.sum().item()))
        loss = (layer(x) ** 3).sum()
        wanted = [t for t in (x, layer.weight, layer.bias) if t is not None and t.requires_grad]
        first = L.autograd.grad(loss, wanted, create_graph=True)
        second = L.autograd.grad(sum((g ** 2).sum() for g in first), wanted, retain_graph=True)
        loss.backward()
        return [g.detach().numpy() for g in first + second] + [t.grad.numpy() for t in wanted] + [seen]
    for e, t in zip(run(ember), run(torch), strict=True):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def test_parameter_gradient_hooks_fire_in_torchs_order():
    """A parameter's gradient is ready as soon as its layer's backward ran (torch's engine runs
    AccumulateGrad nodes first): DDP's buckets start their all_reduce from these hooks, so a
    bias left for the end of backward would start every bucket after all the compute."""
    orders = []
    for L in (ember, torch):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(8, 16), L.nn.ReLU(), L.nn.Linear(16, 16), L.nn.ReLU(),
                            L.nn.Linear(16, 4))
        order = []
        for name, p in m.named_parameters():
            p.register_hook(lambda g, name=name: order.append(name))
        x = L.ones(2, 8, requires_grad=True)
        x.register_hook(lambda g: order.append("input"))
        m(x).sum().backward()
        orders.append(order)
    assert orders[0] == orders[1]
