"""The pre-0.4 ``Variable`` wrapper as torch 2.13 keeps it (old programs' first lines:
``v = Variable(x, requires_grad=True)``, ``isinstance(h, Variable)``)."""
import warnings

import numpy as np
import pytest
import torch

import ember


def states(lib, make):
    """What ``make(Variable, data)`` returns and does to ``data``: flags, aliasing, values."""
    from_module = __import__(lib.__name__ + ".autograd.variable", fromlist=["Variable"]).Variable
    assert from_module is lib.autograd.Variable
    data = lib.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3)).t()  # a strided view
    v = make(lib.autograd.Variable, data)
    before = (data.requires_grad, v is data, v.requires_grad, v.is_leaf, v.grad_fn is None, type(v).__name__)
    with lib.no_grad():
        data.mul_(2)  # v shares data's storage and version counter
    return before + (v.tolist(), v.shape, v.stride(), v._version == data._version)


@pytest.mark.parametrize("make", [
    lambda V, x: V(x, requires_grad=True),
    lambda V, x: V(x),
    lambda V, x: V(x.requires_grad_()),                     # a leaf that requires grad: detached
    lambda V, x: V(x.requires_grad_() * 1, requires_grad=True),  # a non-leaf: a new leaf
    lambda V, x: V(data=x, requires_grad=False),
])
def test_variable_is_a_detached_alias_of_its_data(make):
    assert states(ember, make) == states(torch, make)


def test_variable_gradient_reaches_the_new_leaf_only():
    grads = []
    for lib in (torch, ember):
        x = lib.tensor([1.0, -2.0, 3.0])
        v = lib.autograd.Variable(x, requires_grad=True)
        (v * v).mean().backward()
        grads.append((v.grad.tolist(), x.grad, x.requires_grad))
    assert grads[0] == grads[1] and grads[1][0] == pytest.approx([2 / 3, -4 / 3, 2.0])


def test_isinstance_variable_is_true_for_every_tensor():
    for lib in (torch, ember):
        V = lib.autograd.Variable
        assert isinstance(lib.ones(2, dtype=lib.int64), V) and isinstance(lib.nn.Parameter(lib.ones(1)), V)
        assert not isinstance(3.0, V) and not isinstance(np.ones(2), V)
        assert type(V(lib.nn.Parameter(lib.ones(1)))) is lib.Tensor  # a Parameter's alias is a plain tensor


def test_variable_without_data_volatile_and_errors():
    for lib in (torch, ember):
        V = lib.autograd.Variable
        empty = V()
        assert empty.shape == (0,) and empty.dtype == lib.float32 and not empty.requires_grad
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert not V(lib.ones(2), volatile=True).requires_grad
        assert [str(w.message) for w in caught] == [
            "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."]
        with pytest.raises(TypeError, match="^Variable data has to be a tensor, but got list$"):
            V([1.0, 2.0])
        with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
            V(lib.tensor([1, 2]), requires_grad=True)
