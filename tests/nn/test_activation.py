"""Activation modules of ember.nn against torch.nn: constructor defaults, repr, forward values
and gradients (in train and eval mode), in-place behaviour, PReLU's parameter and state_dict."""
import os
import sys
import warnings

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ops"))
from harness import TOL, compare  # noqa: E402


def assert_close(e, t, rtol=1e-5, atol=1e-6):
    compare(e, t, (rtol, atol))

# class name, constructor args, kwargs
MODULES = [
    ("ReLU", (), {}), ("ReLU", (True,), {}), ("ReLU6", (), {}), ("ReLU6", (), {"inplace": True}),
    ("LeakyReLU", (), {}), ("LeakyReLU", (0.2, True), {}), ("PReLU", (), {}), ("PReLU", (4, 0.1), {}),
    ("RReLU", (), {}), ("RReLU", (0.1, 0.2, True), {}), ("ELU", (), {}), ("ELU", (0.5, True), {}),
    ("SELU", (), {}), ("SELU", (True,), {}), ("CELU", (), {}), ("CELU", (2.0,), {}), ("GELU", (), {}),
    ("GELU", ("tanh",), {}), ("SiLU", (), {}), ("SiLU", (True,), {}), ("Mish", (), {}), ("Softplus", (), {}),
    ("Softplus", (2.0, 3.0), {}), ("Softsign", (), {}), ("Sigmoid", (), {}), ("Tanh", (), {}),
    ("Hardtanh", (), {}), ("Hardtanh", (-2, 2, True), {}), ("Hardswish", (), {}), ("Hardswish", (True,), {}),
    ("Hardsigmoid", (), {"inplace": True}), ("LogSigmoid", (), {}), ("Tanhshrink", (), {}),
    ("Softshrink", (), {}), ("Softshrink", (1.0,), {}), ("Hardshrink", (0.3,), {}),
    ("Threshold", (0.1, 20), {}), ("Threshold", (0.1, 20.0, True), {}), ("Softmax", (), {"dim": 1}),
    ("Softmax", (-1,), {}), ("LogSoftmax", (), {"dim": -1}), ("Softmin", (0,), {}), ("Softmax2d", (), {}),
    ("GLU", (), {}), ("GLU", (1,), {}),
]


def _ids():
    return [f"{name}{args}{kwargs or ''}" for name, args, kwargs in MODULES]


@pytest.mark.parametrize("name,args,kwargs", MODULES, ids=_ids())
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("train", [True, False])
def test_module_matches_torch(name, args, kwargs, dtype, train):
    e_mod = getattr(ember.nn, name)(*args, **kwargs)
    t_mod = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e_mod) == repr(t_mod)
    e_mod.train(train)
    t_mod.train(train)
    e_mod.to(getattr(ember, dtype))
    t_mod.to(getattr(torch, dtype))
    x = np.random.default_rng(len(name)).standard_normal((2, 4, 3, 2)).astype(dtype) * 2
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    # The in-place forms write into their input, which must not be a leaf that requires grad.
    e_out, t_out = e_mod(ex * 1), t_mod(tx * 1)
    if name == "RReLU" and train:  # random slopes: check the range instead of torch's stream
        ratio = (e_out / (ex * 1)).detach().numpy()
        neg = x < 0
        assert (ratio[~neg] == 1).all() and (ratio[neg] >= e_mod.lower - 1e-6).all() \
            and (ratio[neg] <= e_mod.upper + 1e-6).all()
        return
    tol = TOL[dtype]
    assert_close(e_out, t_out, *tol)
    g = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(dtype)
    e_out.backward(ember.tensor(g))
    t_out.backward(torch.tensor(g))
    assert_close(ex.grad, tx.grad, *tol)
    for (en, ep), (tn, tp) in zip(e_mod.named_parameters(), t_mod.named_parameters()):
        assert en == tn
        assert_close(ep.grad, tp.grad, *tol)


@pytest.mark.parametrize("name,args,kwargs", MODULES, ids=_ids())
def test_module_settings_match_torch(name, args, kwargs):
    e_mod = getattr(ember.nn, name)(*args, **kwargs)
    t_mod = getattr(torch.nn, name)(*args, **kwargs)
    public = {k: v for k, v in vars(t_mod).items() if not k.startswith("_")}
    for key, value in public.items():
        assert getattr(e_mod, key) == value, key
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())


def test_inplace_module_writes_into_input():
    for mod in (ember.nn.ReLU(True), ember.nn.Hardtanh(inplace=True), ember.nn.SiLU(True), ember.nn.ELU(inplace=True)):
        x = ember.tensor([-2.0, -0.5, 0.0, 0.5, 2.0])  # each module changes some of these
        before = x.numpy().copy()
        out = mod(x)
        assert out is x and not np.array_equal(x.numpy(), before)


def test_prelu_parameter():
    m = ember.nn.PReLU(3, init=0.1)
    assert isinstance(m.weight, ember.nn.Parameter) and tuple(m.weight.shape) == (3,)
    np.testing.assert_allclose(m.weight.detach().numpy(), [0.1] * 3, rtol=1e-6)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    t = torch.nn.PReLU(3, init=0.1)
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    m(ember.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    assert_close(m.weight.grad, t.weight.grad, rtol=1e-5)
    with pytest.raises(RuntimeError, match="Found parameter numbers = 3 and channel size = 4"):
        m(ember.zeros(2, 4))
    assert ember.nn.PReLU(dtype=ember.float64).weight.dtype is ember.float64


def test_softmax_without_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = ember.nn.Softmax()(ember.zeros(2, 3))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1 / 3), rtol=1e-6)


def test_softmax2d_rank_error_and_hardtanh_bounds():
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        ember.nn.Softmax2d()(ember.zeros(2, 3))
    with pytest.raises(AssertionError):
        ember.nn.Hardtanh(1.0, -1.0)


def test_activations_are_exported_like_torch():
    from ember.nn.modules import activation
    for name in activation.__all__:
        assert hasattr(torch.nn, name), name
        assert getattr(ember.nn, name) is getattr(activation, name)


def test_modules_work_inside_sequential():
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 3), torch.nn.LogSoftmax(1))
    e = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.GELU(), ember.nn.Linear(8, 3), ember.nn.LogSoftmax(1))
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(e(ember.tensor(x)), t(torch.tensor(x)), rtol=1e-5, atol=1e-6)
    assert repr(e) == repr(t)
