"""``F.linear`` shows torch's graph (issue 8): it dispatches as torch decomposes it, so on a
matrix ``AddmmBackward0`` (``MmBackward0`` without a bias) links to the bias, the input and a
``TBackward0`` node on the weight, as PyTorch's blitz tutorial prints it, and other ranks show
torch's views, products and adds around it; and that graph computes torch's gradients, first
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


# (input shape, weight shape, bias shape or None): every branch of torch's linear (addmm on a
# matrix; view, addmm, view on a contiguous input with a vector bias; matmul plus the bias
# otherwise: unsqueeze/mm/squeeze for a vector, view/mm/_unsafe_view for a stack of rows,
# mv/dot for a vector weight)
SHAPES = [((3,), (2, 3), (2,)), ((3,), (2, 3), None), ((3,), (2, 3), ()), ((3,), (2, 3), (1,)),
          ((4, 3), (2, 3), (2,)), ((4, 3), (2, 3), None), ((4, 3), (2, 3), (4, 2)), ((4, 3), (2, 3), ()),
          ((5, 4, 3), (2, 3), (2,)), ((5, 4, 3), (2, 3), None), ((5, 4, 3), (2, 3), ()),
          ((5, 4, 3), (2, 3), (4, 2)), ((5, 4, 3), (2, 3), (1, 2)), ((6, 5, 4, 3), (2, 3), (2,)),
          ((6, 5, 4, 3), (2, 3), None), ((2, 0, 3), (2, 3), (2,)), ((0, 3), (2, 3), (2,)),
          ((3,), (3,), None), ((4, 3), (3,), None), ((5, 4, 3), (3,), None), ((5, 4, 3), (3,), ())]


def _operands(L, x_shape, w_shape, b_shape, strided, wanted):
    g = L.Generator().manual_seed(0)
    make = lambda shape: L.randn(shape, generator=g, dtype=L.float64)  # noqa: E731
    x = make(x_shape[::-1]).permute(*reversed(range(len(x_shape)))) if strided else make(x_shape)
    w, b = make(w_shape), None if b_shape is None else make(b_shape)
    leaves = [t for t, want in zip((x, w, b), wanted) if t is not None and want]
    for t in leaves:
        t.requires_grad_()
    return x, w, b, leaves


def _cases():
    for shapes in SHAPES:
        for strided in (False, True):
            if not strided or len(shapes[0]) >= 2:
                yield pytest.param(*shapes, strided, id=f"{shapes}{'-strided' if strided else ''}")


@pytest.mark.parametrize("x_shape, w_shape, b_shape, strided", list(_cases()))
def test_every_inputs_graph_and_gradients_are_torchs(x_shape, w_shape, b_shape, strided):
    """The nodes behind F.linear (names and next_functions, depth first) and the gradients of
    the input, weight and bias equal torch's, for every rank and kind of bias, a strided input,
    and each operand alone not requiring grad."""
    for wanted in ((True, True, True), (False, True, True), (True, False, False)):
        trees, grads = [], []
        for L in (ember, torch):
            x, w, b, leaves = _operands(L, x_shape, w_shape, b_shape, strided, wanted)
            y = L.nn.functional.linear(x, w, b)
            trees.append(tree(y.grad_fn))
            (y * y).sum().backward()
            grads.append([t.grad.numpy() for t in leaves] + [y.detach().numpy()])
        # torch's reshape of a strided stack of rows copies through a CloneBackward0 node that
        # ember's reshape (one node) does not show: docs/pytorch-parity.md, "Still open"
        if not (strided and len(x_shape) > 2 and trees[1][0] != "ViewBackward0"):
            assert trees[0] == trees[1]
        for e, t in zip(*grads, strict=True):
            assert e.shape == t.shape
            np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x_shape, w_shape, b_shape, strided", list(_cases()))
def test_unrecorded_values_are_torchs(x_shape, w_shape, b_shape, strided):
    """Without a graph (no_grad, or nothing requires grad) a stack of rows is one product."""
    values = []
    for L in (ember, torch):
        x, w, b, _ = _operands(L, x_shape, w_shape, b_shape, strided, (False, False, False))
        with L.no_grad():
            values.append(L.nn.functional.linear(x, w, b).numpy())
    assert values[0].shape == values[1].shape
    np.testing.assert_allclose(values[0], values[1], rtol=1e-12, atol=1e-12)


def test_errors_are_torchs():
    for args in (((4, 3), (2, 3), (3,)), ((5, 4, 3), (2, 3), (3,)), ((3,), (2, 3), (3,)),
                 ((5, 4, 3), (2, 3), (4, 3)), ((4, 3), (2, 3), (4, 1, 2)), ((), (2, 3), None),
                 ((4, 3), (3,), ())):
        messages = []
        for L in (ember, torch):
            x, w, b = (None if s is None else L.ones(s) for s in args)
            with pytest.raises(RuntimeError) as info:
                L.nn.functional.linear(x, w, b)
            messages.append(str(info.value))
        assert messages[0] == messages[1], args


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
