"""torch.autograd.functional (jacobian, hessian, vjp, jvp, vhp, hvp) vs torch 2.13: values and
structures for single tensors and tuples, create_graph, strict mode, the errors."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def same(e, t, rtol=1e-10):
    if isinstance(t, (tuple, list)):
        assert type(e) is tuple and len(e) == len(t), (e, t)
        for a, b in zip(e, t):
            same(a, b, rtol)
    else:
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype), (e, t)
        assert e.requires_grad == t.requires_grad, (e, t)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=1e-12)


def data(L):
    rng = np.random.default_rng(0)
    return (L.tensor(rng.standard_normal((2, 3))), L.tensor(rng.standard_normal(3)))


def f_single(x):
    return (x.sin() * x).sum(0)


def f_pair(x, y):
    return (x * y).tanh(), (x.exp() @ y).sum() + y.pow(3).sum()


def f_scalar(x, y):
    return (x.sin() @ y).pow(2).sum() + (y ** 3).sum()


CASES = {
    "jacobian single": lambda L, F, x, y: F.jacobian(f_single, x),
    "jacobian tuple": lambda L, F, x, y: F.jacobian(f_pair, (x, y)),
    "jacobian graph": lambda L, F, x, y: F.jacobian(f_single, x, create_graph=True),
    "jacobian independent": lambda L, F, x, y: F.jacobian(lambda a, b: a * 2, (x, y)),
    "hessian single": lambda L, F, x, y: F.hessian(lambda a: (a.sin() * a).sum(), x),
    "hessian tuple": lambda L, F, x, y: F.hessian(f_scalar, (x, y)),
    "vjp": lambda L, F, x, y: F.vjp(f_pair, (x, y), (L.ones(2, 3), L.tensor(2.0, dtype=L.float64))),
    "vjp scalar": lambda L, F, x, y: F.vjp(lambda a: (a ** 2).sum(), y),
    "jvp": lambda L, F, x, y: F.jvp(f_pair, (x, y), (L.ones(2, 3), L.full((3,), 0.5))),
    "jvp graph": lambda L, F, x, y: F.jvp(f_single, x, L.ones(2, 3), create_graph=True),
    "vhp": lambda L, F, x, y: F.vhp(f_scalar, (x, y), (L.ones(2, 3), L.ones(3))),
    "hvp": lambda L, F, x, y: F.hvp(lambda a: (a.sin() * a).sum(), x, L.ones(2, 3)),
}


@pytest.mark.parametrize("name", CASES)
def test_values_and_structures_equal_torchs(name):
    t = CASES[name](torch, torch.autograd.functional, *data(torch))
    e = CASES[name](ember, ember.autograd.functional, *data(ember))
    same(e, t)


def test_create_graph_results_differentiate_further():
    def run(L):
        x = data(L)[1].requires_grad_()
        jac = L.autograd.functional.jacobian(lambda a: a.pow(3), x, create_graph=True)
        (g,) = L.autograd.grad(jac.sum(), x)
        return g
    same(run(ember), run(torch))


@pytest.mark.parametrize("build", [
    lambda L, F: F.jacobian(lambda a, b: a * 2, (L.ones(2), L.ones(2)), strict=True),
    lambda L, F: F.vjp(lambda a: a * 2, L.ones(2)),
    lambda L, F: F.jvp(lambda a: a * 2, L.ones(2)),
    lambda L, F: F.hessian(lambda a: a * 2, L.ones(2)),
    lambda L, F: F.jacobian(lambda a: a, [L.ones(2)]),
    lambda L, F: F.jacobian(lambda a: a, L.ones(2), strategy="forward-mode"),
])
def test_errors_are_torchs(build):
    with pytest.raises(Exception) as t:
        build(torch, torch.autograd.functional)
    with pytest.raises(Exception) as e:
        build(ember, ember.autograd.functional)
    assert type(e.value) is type(t.value)
    assert str(e.value) == str(t.value)
