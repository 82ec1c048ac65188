"""nn.utils.parametrize and nn.utils.parametrizations (spectral_norm, orthogonal, weight_norm)
against torch 2.13: state_dict keys, values after loading the same state, forward outputs and
gradients of the underlying ``original`` tensors."""
import numpy as np
import pytest
import torch

import ember
from ember.nn.utils import parametrizations as P
from ember.nn.utils import parametrize


def _pair(make, register, seed=0, **kwargs):
    """The same module in both libraries (same weights), parametrized by ``register``, with
    ember's state (buffers, originals) loaded from torch's."""
    torch.manual_seed(seed)
    t = make(torch)
    e = make(ember)
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    getattr(torch.nn.utils.parametrizations, register)(t, **kwargs)
    getattr(P, register)(e, **kwargs)
    assert list(e.state_dict()) == list(t.state_dict())
    e.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    return e, t


def _check_step(e, t, x, rtol=1e-5, atol=1e-6):
    """Forward on x, backward of a weighted sum: outputs and every parameter gradient agree."""
    ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
    np.testing.assert_allclose(ye._data, yt.detach().numpy(), rtol=rtol, atol=atol)
    w = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(np.float32)
    (ye * ember.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    te = dict(t.named_parameters())
    for name, p in e.named_parameters():
        np.testing.assert_allclose(p.grad._data, te[name].grad.numpy(), rtol=rtol * 10, atol=atol * 10)


def _x(*shape):
    return np.random.default_rng(2).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("make,x,dim", [
    (lambda lib: lib.nn.Linear(5, 3), _x(4, 5), None),
    (lambda lib: lib.nn.Conv2d(2, 4, 3), _x(1, 2, 6, 6), None),
    (lambda lib: lib.nn.ConvTranspose2d(2, 4, 3), _x(1, 2, 5, 5), None),
    (lambda lib: lib.nn.Linear(5, 3), _x(4, 5), 1)])
def test_spectral_norm_matches_torch(make, x, dim):
    e, t = _pair(make, "spectral_norm", dim=dim)
    for _ in range(2):  # training forwards update u and v in both
        _check_step(e, t, x)
    np.testing.assert_allclose(e.parametrizations.weight[0]._u._data,
                               t.parametrizations.weight[0]._u.numpy(), rtol=1e-5, atol=1e-6)
    e.eval()
    t.eval()
    np.testing.assert_allclose(e(ember.tensor(x))._data, t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_spectral_norm_normalises_the_largest_singular_value():
    m = P.spectral_norm(ember.nn.Linear(6, 4), n_power_iterations=30)
    m(ember.ones(1, 6))
    assert abs(float(ember.linalg.matrix_norm(m.weight.detach(), 2)) - 1) < 1e-4


@pytest.mark.parametrize("shape,orthogonal_map", [((4, 4), None), ((5, 3), None), ((3, 5), None),
                                                  ((4, 4), "cayley"), ((5, 3), "matrix_exp"),
                                                  ((4, 4), "householder")])
def test_orthogonal_matches_torch(shape, orthogonal_map):
    def make(lib):
        return lib.nn.Linear(shape[1], shape[0], bias=False)
    e, t = _pair(make, "orthogonal", orthogonal_map=orthogonal_map)
    w = e.weight
    small = min(shape)
    gram = w @ w.mT if shape[0] < shape[1] else w.mT @ w
    np.testing.assert_allclose(gram._data, np.eye(small), atol=1e-5)
    np.testing.assert_allclose(w._data, t.weight.detach().numpy(), atol=1e-5)
    _check_step(e, t, _x(2, shape[1]), atol=1e-5)


def test_orthogonal_without_trivialization_and_assignment():
    torch.manual_seed(0)
    t = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(3, 5, bias=False),
                                                   use_trivialization=False)
    e = ember.nn.Linear(3, 5, bias=False)
    e.weight.data = ember.tensor(t.parametrizations.weight.original.detach().numpy().copy())
    P.orthogonal(e, use_trivialization=False)
    # the same stored Householder vectors give the same orthogonal weight
    stored = t.parametrizations.weight.original.detach().numpy().copy()
    e.parametrizations.weight.original.data = ember.tensor(stored)
    np.testing.assert_allclose(e.weight._data, t.weight.detach().numpy(), atol=1e-5)
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((5, 3)))[0].astype(np.float32)
    e.weight = ember.tensor(q)
    t.weight = torch.tensor(q)
    np.testing.assert_allclose(e.weight._data, t.weight.detach().numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="has to be one of"):
        P.orthogonal(ember.nn.Linear(3, 3), orthogonal_map="qr")


def test_weight_norm_matches_torch():
    e, t = _pair(lambda lib: lib.nn.Linear(5, 3), "weight_norm")
    _check_step(e, t, _x(4, 5))


class _Symmetric(ember.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):
        return A.triu()


def test_register_parametrization_remove_and_cached():
    m = ember.nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", _Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and parametrize.is_parametrized(m, "weight")
    assert parametrize.type_before_parametrizations(m) is ember.nn.Linear
    np.testing.assert_allclose(m.weight._data, m.weight._data.T)
    a = ember.tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3))
    m.weight = a + a.T
    np.testing.assert_allclose(m.weight._data, (a + a.T)._data)
    with parametrize.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    m(ember.ones(1, 3)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is ember.nn.Linear and list(m.state_dict()) == ["bias", "weight"]  # as torch
    np.testing.assert_allclose(m.weight._data, (a + a.T)._data)
    with pytest.raises(ValueError):
        parametrize.remove_parametrizations(m, "weight")


def test_docstring_example_runs():
    import doctest
    result = doctest.testmod(parametrize)
    assert result.attempted > 0 and result.failed == 0
