"""ember.func vs torch.func 2.13: functional_call, grad/grad_and_value (pytrees, argnums,
has_aux), vjp, jacrev/jacfwd/hessian, vmap (in_dims/out_dims, randomness) and the
per-sample-gradient recipe of PyTorch's tutorial (vmap over grad over functional_call)."""
import importlib

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def same(e, t, rtol=1e-6):
    if isinstance(t, dict):
        assert set(e) == set(t)
        for k in t:
            same(e[k], t[k], rtol)
    elif isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t), (e, t)
        for a, b in zip(e, t):
            same(a, b, rtol)
    elif isinstance(t, torch.Tensor):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype), (e, t)
        assert e.requires_grad == t.requires_grad, (e.requires_grad, t.requires_grad)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=1e-6)
    else:
        assert e == t


def both(run):
    out = []
    for L in (torch, ember):
        L.manual_seed(0)
        out.append(run(L, importlib.import_module(L.__name__ + ".func")))
    return out


def test_per_sample_gradients_as_the_tutorial_computes_them():
    def run(L, F):
        model = L.nn.Sequential(L.nn.Linear(3, 8), L.nn.Tanh(), L.nn.Linear(8, 2))
        model.register_buffer("scale", L.tensor(2.0))
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def loss(params, buffers, x, y):
            out = F.functional_call(model, (params, buffers), (x.unsqueeze(0),))
            return L.nn.functional.cross_entropy(out * buffers["scale"], y.unsqueeze(0))
        x, y = L.randn(6, 3), L.tensor([0, 1, 1, 0, 1, 0])
        per_sample = F.vmap(F.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)
        whole = L.autograd.grad(L.stack([loss(params, buffers, a, b) for a, b in zip(x, y)]).sum() * 0 +
                                L.nn.functional.cross_entropy(model(x) * 2, y, reduction="sum"),
                                list(model.parameters()))
        return per_sample, list(whole), [per_sample[k].sum(0) for k in params]
    t, e = both(run)
    same(e, t, rtol=1e-5)
    for summed, full in zip(e[2], e[1]):  # the per-sample gradients add up to the batch's
        np.testing.assert_allclose(summed.numpy(), full.numpy(), rtol=1e-5, atol=1e-6)


def test_functional_call_swaps_and_restores():
    def run(L, F):
        lin = L.nn.Linear(2, 2)
        tied = L.nn.Sequential(lin, lin)
        x = L.ones(1, 2)
        out = [F.functional_call(lin, {"weight": L.ones(2, 2)}, x),
               F.functional_call(tied, {"0.weight": L.eye(2), "0.bias": L.zeros(2)}, (x,)),
               F.functional_call(tied, {"0.weight": L.eye(2), "0.bias": L.zeros(2)}, (x,), tie_weights=False)]
        return out
    t, e = both(run)
    same(e, t)
    lin = ember.nn.Linear(2, 2)
    weight = lin.weight
    ember.func.functional_call(ember.nn.Sequential(lin, lin), {"0.weight": ember.eye(2)}, (ember.ones(1, 2),))
    assert lin.weight is weight  # restored (torch 2.13 leaves a tied module holding the swapped tensor)


@pytest.mark.parametrize("build", [
    lambda L, F: F.grad(lambda x: (x.sin() * x).sum())(L.tensor([0.5, 1.5])),
    lambda L, F: F.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(L.tensor([0.5, 1.5]), L.tensor([2.0, 3.0])),
    lambda L, F: F.grad(lambda p: (p["a"] * p["b"][0]).sum())({"a": L.tensor([1.0, 2.0]), "b": [L.tensor(3.0)]}),
    lambda L, F: F.grad(lambda x: ((x ** 2).sum(), x.mean()), has_aux=True)(L.tensor([1.0, 2.0])),
    lambda L, F: F.grad_and_value(lambda x: (x ** 3).sum())(L.tensor([1.0, 2.0])),
    lambda L, F: F.grad(F.grad(lambda x: x.sin().sum() * 1))(L.tensor(0.7)),
    lambda L, F: F.grad(lambda x: (x ** 2).sum())(L.tensor([1.0, 2.0], requires_grad=True)),
    lambda L, F: F.jacrev(lambda x: x.sin() * x.sum())(L.tensor([0.5, 1.5, 2.0])),
    lambda L, F: F.jacrev(lambda a, b: (a * b, a.sum()), argnums=(0, 1))(L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])),
    lambda L, F: F.jacfwd(lambda x: x.exp()[:2])(L.tensor([0.5, 1.5, 2.0])),
    lambda L, F: F.hessian(lambda x: (x.sin() * x ** 2).sum())(L.tensor([0.5, 1.5])),
    lambda L, F: F.vjp(lambda x, y: x * y, L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0]))[1](L.tensor([1.0, -1.0])),
    lambda L, F: F.vmap(lambda x, y: x @ y)(L.ones(3, 2, 4), L.ones(3, 4)),
    lambda L, F: F.vmap(lambda x, y: x * y, in_dims=(1, None))(L.arange(6.0).reshape(2, 3), L.tensor(2.0)),
    lambda L, F: F.vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(L.arange(6.0).reshape(2, 3)),
    lambda L, F: F.vmap(F.vmap(lambda x: x.max()))(L.arange(24.0).reshape(2, 3, 4)),
    lambda L, F: F.vmap(lambda x: x + L.rand(()), randomness="same")(L.zeros(3)),
    lambda L, F: F.vmap(lambda x: x + L.rand(()), randomness="different")(L.zeros(3)),
    lambda L, F: F.vmap(lambda d: d["a"] + d["b"])({"a": L.ones(2, 3), "b": L.arange(6.0).reshape(2, 3)}),
    lambda L, F: L.vmap(lambda x: x.norm())(L.ones(4, 3)),
])
def test_transforms_equal_torchs(build):
    t, e = both(build)
    same(e, t)


@pytest.mark.parametrize("build", [
    lambda L, F: F.grad(lambda x: x * 2)(L.ones(2)),
    lambda L, F: F.vmap(lambda x: x + L.rand(1))(L.ones(2, 3)),
    lambda L, F: F.vmap(lambda x, y: x + y)(L.ones(2, 3), L.ones(3, 3)),
    lambda L, F: F.vmap(lambda x: x, randomness="sometimes")(L.ones(2)),
    lambda L, F: F.functional_call(L.nn.Linear(2, 2), {"weight": L.ones(2, 2)}, (L.ones(1, 2),), strict=True),
    lambda L, F: F.functional_call(L.nn.Linear(2, 2), ({"weight": L.ones(2, 2)}, {"weight": L.ones(2, 2)}),
                                   (L.ones(1, 2),)),
])
def test_errors_are_torchs(build):
    with pytest.raises(Exception) as t:
        build(torch, torch.func)
    with pytest.raises(Exception) as e:
        build(ember, ember.func)
    assert type(e.value) is type(t.value)
    assert str(e.value) == str(t.value)
