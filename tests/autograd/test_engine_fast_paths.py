"""The backward engine's shortcuts agree with torch and step aside when something else can see
a gradient: a leaf's first gradient becomes its ``.grad`` without a copy (torch's
AccumulateGrad steals it) only when nothing else refers to it or to its memory; a hook that
keeps it, a second leaf given the same tensor, a custom Function's kept tensor, a user's
gradient and ``create_graph`` all get a ``.grad`` of its own."""
import numpy as np
import pytest

import ember
from ember.autograd import engine

torch = pytest.importorskip("torch")


def _first_grad_ptrs(lib):
    x = lib.randn(3, 4, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.data_ptr()))  # looks, keeps nothing
    (x * 2).sum().backward()
    return x.grad.data_ptr() == seen[0]


def test_an_unshared_first_gradient_becomes_grad_as_torch():
    assert engine._STEAL, "this Python counts references differently: every first gradient is copied"
    assert _first_grad_ptrs(torch) is True
    assert _first_grad_ptrs(ember) is True


def test_where_reference_counts_differ_every_first_gradient_is_copied(monkeypatch):
    monkeypatch.setattr(engine, "_STEAL", False)
    assert _first_grad_ptrs(ember) is False


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_a_gradient_kept_by_a_hook_is_copied(lib):
    x = lib.randn(3, 4, requires_grad=True)
    kept = []
    x.register_hook(kept.append)
    (x * 2).sum().backward()
    x.grad.add_(1)
    assert kept[0].data_ptr() != x.grad.data_ptr()
    np.testing.assert_array_equal(np.asarray(kept[0].tolist()), np.full((3, 4), 2.0))


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_one_gradient_reaching_two_leaves_gives_two_grads(lib):
    a = lib.randn(5, requires_grad=True)
    b = lib.randn(5, requires_grad=True)
    (a + b).mul(3).sum().backward()
    a.grad.add_(1)
    assert a.grad.tolist() == [4.0] * 5 and b.grad.tolist() == [3.0] * 5


def test_a_gradient_a_function_keeps_is_copied():
    kept = []

    class Keep(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            out = g * 2
            kept.append(out)  # still referred to after the backward
            return out

    x = ember.randn(4, requires_grad=True)
    Keep.apply(x).sum().backward()
    x.grad.add_(1)
    assert kept[0].tolist() == [2.0] * 4 and x.grad.tolist() == [3.0] * 4


def test_a_view_of_a_live_array_is_copied():
    buffer = ember.zeros(2, 4)

    class Slice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            buffer[0] = g
            return buffer[0]  # a view of a tensor someone else holds

    x = ember.randn(4, requires_grad=True)
    Slice.apply(x).sum().backward()
    x.grad.add_(1)
    assert buffer[0].tolist() == [1.0] * 4 and x.grad.tolist() == [2.0] * 4


def test_the_users_gradient_of_a_leaf_is_copied():
    x = ember.randn(3, requires_grad=True)
    g = ember.ones(3)
    x.backward(g)
    x.grad.add_(1)
    assert g.tolist() == [1.0] * 3


def test_create_graph_keeps_the_gradient_in_the_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    x.grad.sum().backward()  # d/dx sum(3x^2) = 6x, added to 3x^2
    assert x.grad.tolist() == [3.0 + 6.0, 12.0 + 12.0]


def test_retain_graph_accumulates_into_the_kept_gradient():
    x = ember.randn(3, 4, requires_grad=True)
    y = (x * 2).sum()
    y.backward(retain_graph=True)
    first = x.grad
    y.backward()
    assert x.grad is first and x.grad.tolist() == [[4.0] * 4] * 3


def test_a_weights_gradient_keeps_torchs_layout():
    w = ember.randn(4, 3).t().requires_grad_()  # a transposed leaf: a transposed gradient
    tw = torch.tensor(w.detach().numpy()).t().contiguous().t().requires_grad_()
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    (ember.tensor(x) @ w).sum().backward()
    (torch.tensor(x) @ tw).sum().backward()
    assert w.grad.stride() == tw.grad.stride()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("number", [2, 2.5, -0.0, 1000, True])
def test_a_float_tensor_and_a_python_number_compute_in_torchs_dtype(dtype, number):
    # apply's shortcut for (float tensor, real Python number): the arrays _cast_inputs would give
    values = [[1.5, -2.0, 0.0], [3.0, 1e-3, -7.25]]
    t, e = torch.tensor(values, dtype=getattr(torch, dtype)), ember.tensor(values, dtype=getattr(ember, dtype))
    for op in ("mul", "add", "div", "pow") + (() if number is True else ("sub",)):  # torch refuses x - True
        want, got = getattr(t, op)(number), getattr(e, op)(number)
        assert str(got.dtype) == str(want.dtype), op
        np.testing.assert_allclose(got.to(ember.complex128 if got.dtype.is_complex else ember.float64).numpy(),
                                   want.to(torch.complex128 if want.dtype.is_complex else torch.float64).numpy(),
                                   rtol=1e-2 if dtype in ("float16", "bfloat16") else 1e-6)
