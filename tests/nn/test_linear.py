"""Linear, Bilinear, Identity, Flatten, Unflatten and Dropout layers compared with torch."""
import math

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close


@pytest.fixture(autouse=True)
def seeded():
    ember.manual_seed(0)
    torch.manual_seed(0)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def pair(t_module, e_module):
    """Copies torch's weights into the ember module (through numpy) and returns both."""
    e_module.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_module.state_dict().items()})
    return e_module, t_module


def check_forward_backward(e_mod, t_mod, *arrays, rtol=1e-5, atol=1e-5):
    e_in = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    eo, to = e_mod(*e_in), t_mod(*t_in)
    assert_close(eo, to, rtol=rtol, atol=atol)
    g = rand(*to.shape, seed=7, dtype=arrays[0].dtype)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    for a, b in zip(e_in, t_in):
        assert_close(a.grad, b.grad, rtol=rtol, atol=atol)
    for (name, ep), (_, tp) in zip(e_mod.named_parameters(), t_mod.named_parameters()):
        assert_close(ep.grad, tp.grad, rtol=rtol, atol=atol)


@pytest.mark.parametrize("shape", [(5, 3), (3,), (2, 4, 3), (0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(shape, bias):
    e, t = pair(torch.nn.Linear(3, 4, bias=bias), ember.nn.Linear(3, 4, bias=bias))
    check_forward_backward(e, t, rand(*shape))


def test_linear_float64_and_non_contiguous_input():
    t = torch.nn.Linear(3, 2).double()
    e, t = pair(t, ember.nn.Linear(3, 2, dtype=ember.float64))
    assert e.weight.dtype == ember.float64
    x = rand(3, 6, dtype=np.float64)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = e(ex.t()), t(tx.t())
    assert_close(eo, to, rtol=1e-10, atol=1e-12)
    eo.sum().backward()
    to.sum().backward()
    assert_close(ex.grad, tx.grad, rtol=1e-10, atol=1e-12)


def test_linear_shape_error_and_repr():
    e, t = ember.nn.Linear(3, 4), torch.nn.Linear(3, 4)
    with pytest.raises(RuntimeError) as e_err:
        e(ember.zeros(2, 5))
    with pytest.raises(RuntimeError) as t_err:
        t(torch.zeros(2, 5))
    assert str(e_err.value) == str(t_err.value)
    assert repr(e) == repr(t) == "Linear(in_features=3, out_features=4, bias=True)"
    assert repr(ember.nn.Linear(1, 2, bias=False)) == "Linear(in_features=1, out_features=2, bias=False)"
    assert e.bias.shape == (4,) and e.weight.shape == (4, 3)
    assert ember.nn.Linear(2, 2, bias=False).bias is None


def test_linear_default_init_distribution():
    e = ember.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = e.weight.detach().numpy(), e.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(-k, k) has standard deviation k / sqrt(3)
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert abs(w.mean()) < 0.02 * bound
    assert np.abs(b).max() > 0.9 * bound
    t = torch.nn.Linear(400, 300)
    assert abs(w.std() - t.weight.detach().numpy().std()) < 0.02 * bound


@pytest.mark.parametrize("shapes", [((4, 3), (4, 5)), ((3,), (5,)), ((2, 3, 3), (2, 3, 5))])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(shapes, bias):
    e, t = pair(torch.nn.Bilinear(3, 5, 2, bias=bias), ember.nn.Bilinear(3, 5, 2, bias=bias))
    check_forward_backward(e, t, rand(*shapes[0]), rand(*shapes[1], seed=1), rtol=1e-4)
    assert repr(e) == repr(t)


def test_bilinear_default_init_bound():
    e = ember.nn.Bilinear(50, 4, 30)
    bound = 1 / math.sqrt(50)
    w = e.weight.detach().numpy()
    assert w.shape == (30, 50, 4) and np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(e.bias.detach().numpy()).max() <= bound


def test_identity_returns_input():
    x = ember.randn(2, 3)
    m = ember.nn.Identity(54, unused="x")
    assert m(x) is x and repr(m) == repr(torch.nn.Identity()) == "Identity()"
    assert list(m.parameters()) == []


@pytest.mark.parametrize("args", [(), (0,), (1, 2), (-3, -2), (2, -1)])
def test_flatten_matches_torch(args):
    e, t = ember.nn.Flatten(*args), torch.nn.Flatten(*args)
    x = rand(2, 3, 4, 5)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    assert_close(e(ex), t(tx))
    e(ex).sum().backward()
    assert ex.grad.shape == (2, 3, 4, 5)
    assert repr(e) == repr(t)


@pytest.mark.parametrize("dim,sizes", [(1, (2, 6)), (-1, [5, 1]), (1, (-1, 3))])
def test_unflatten_matches_torch(dim, sizes):
    e, t = ember.nn.Unflatten(dim, sizes), torch.nn.Unflatten(dim, sizes)
    x = rand(4, 12, 5) if dim == 1 else rand(4, 5)
    assert_close(e(ember.tensor(x)), t(torch.tensor(x)))
    assert repr(e) == repr(t)


@pytest.mark.parametrize("args", [(1, 3), (1, (2, 2.0)), (0, "ab")])
def test_unflatten_argument_errors(args):
    with pytest.raises(TypeError) as e_err:
        ember.nn.Unflatten(*args)
    with pytest.raises(TypeError) as t_err:
        torch.nn.Unflatten(*args)
    assert str(e_err.value) == str(t_err.value)


def test_dropout_train_eval_and_scaling():
    m = ember.nn.Dropout(0.25)
    assert repr(m) == repr(torch.nn.Dropout(0.25)) == "Dropout(p=0.25, inplace=False)"
    x = ember.ones(200, 100, requires_grad=True)
    y = m(x)
    kept = y.detach().numpy() != 0
    assert abs(kept.mean() - 0.75) < 0.02
    assert np.allclose(y.detach().numpy()[kept], 1 / 0.75)
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), kept / 0.75)
    m.eval()
    assert m(x) is x or np.array_equal(m(x).detach().numpy(), x.detach().numpy())
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        ember.nn.Dropout(1.5)
    assert float(ember.nn.Dropout(1.0)(ember.ones(10)).abs().sum()) == 0.0


def test_dropout_inplace_and_channel_variants():
    x = ember.ones(4, 6)
    out = ember.nn.Dropout(0.5, inplace=True)(x)
    assert out is x or np.shares_memory(out.numpy(), x.numpy())
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}
    y = ember.nn.Dropout2d(0.5)(ember.ones(8, 16, 3, 3)).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # whole channels kept or dropped
    for cls, shape in [(ember.nn.Dropout1d, (2, 3, 4)), (ember.nn.Dropout3d, (2, 3, 2, 2, 2)),
                       (ember.nn.AlphaDropout, (5, 5)), (ember.nn.FeatureAlphaDropout, (2, 3, 4))]:
        m = cls(0.3)
        assert m(ember.ones(*shape)).shape == shape
        assert repr(m) == repr(getattr(torch.nn, cls.__name__)(0.3))
        m.eval()
        assert np.array_equal(m(ember.ones(*shape)).numpy(), np.ones(shape))
