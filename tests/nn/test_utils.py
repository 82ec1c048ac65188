"""nn.utils compared with torch: gradient clipping and parameter/vector conversion."""
import math

import numpy as np
import pytest
import torch

import ember
from ember.nn import utils
from torchcompare import assert_close


def params_with_grads(scale=1.0, dtype=np.float32):
    """The same three parameters with gradients in ember and torch (one has no gradient)."""
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,), (2, 2, 2)]
    e, t = [], []
    for i, shape in enumerate(shapes):
        data, grad = rng.standard_normal(shape).astype(dtype), (scale * rng.standard_normal(shape)).astype(dtype)
        ep, tp = ember.nn.Parameter(ember.tensor(data)), torch.nn.Parameter(torch.tensor(data))
        if i != 1:
            ep.grad, tp.grad = ember.tensor(grad), torch.tensor(grad)
        e.append(ep)
        t.append(tp)
    return e, t


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    e, t = params_with_grads()
    e_total = utils.clip_grad_norm_(e, max_norm, norm_type)
    t_total = torch.nn.utils.clip_grad_norm_(t, max_norm, norm_type)
    assert_close(e_total, t_total, rtol=1e-5)
    for ep, tp in zip(e, t):
        assert (ep.grad is None) == (tp.grad is None)
        if ep.grad is not None:
            assert_close(ep.grad, tp.grad, rtol=1e-5)


def test_clip_grad_norm_generator_single_tensor_and_no_grads():
    e, t = params_with_grads(scale=10.0, dtype=np.float64)
    e_total = utils.clip_grad_norm_((p for p in e), 1.0)
    t_total = torch.nn.utils.clip_grad_norm_((p for p in t), 1.0)
    assert_close(e_total, t_total)
    assert_close(e[0].grad, t[0].grad)
    single = utils.clip_grad_norm_(e[2], max_norm=0.1)
    assert_close(single, torch.nn.utils.clip_grad_norm_(t[2], max_norm=0.1))
    assert_close(e[2].grad, t[2].grad)
    none = utils.clip_grad_norm_([ember.nn.Parameter(ember.ones(2))], 1.0)
    assert none.item() == 0.0 and none.ndim == 0


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_clip_grad_norm_nonfinite():
    e, t = params_with_grads()
    e[0].grad[0, 0] = float("inf")
    t[0].grad[0, 0] = float("inf")
    with pytest.raises(RuntimeError) as e_err:
        utils.clip_grad_norm_(e, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as t_err:
        torch.nn.utils.clip_grad_norm_(t, 1.0, error_if_nonfinite=True)
    assert str(e_err.value) == str(t_err.value)
    assert math.isinf(utils.clip_grad_norm_(e, 1.0).item())


def test_clip_grad_norm_on_model_after_backward():
    t_model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 2))
    e_model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Linear(8, 2))
    e_model.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_model.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((16, 4)).astype(np.float32)
    (e_model(ember.tensor(x)) ** 2).sum().backward()
    (t_model(torch.tensor(x)) ** 2).sum().backward()
    assert_close(utils.clip_grad_norm_(e_model.parameters(), 0.25),
                 torch.nn.utils.clip_grad_norm_(t_model.parameters(), 0.25), rtol=1e-5)
    for ep, tp in zip(e_model.parameters(), t_model.parameters()):
        assert_close(ep.grad, tp.grad, rtol=1e-5, atol=1e-6)


def test_clip_grad_value_matches_torch():
    e, t = params_with_grads()
    assert utils.clip_grad_value_(e, 0.3) is None
    torch.nn.utils.clip_grad_value_(t, 0.3)
    for ep, tp in zip(e, t):
        if ep.grad is not None:
            assert_close(ep.grad, tp.grad)
    assert np.abs(e[0].grad.numpy()).max() == pytest.approx(0.3)


def test_parameters_to_vector_and_back():
    e, t = params_with_grads()
    ev, tv = utils.parameters_to_vector(e), torch.nn.utils.parameters_to_vector(t)
    assert_close(ev, tv)
    ev.sum().backward()  # differentiable, as in torch
    assert np.all(e[1].grad.numpy() == 1)
    new = np.arange(ev.numel(), dtype=np.float32)
    utils.vector_to_parameters(ember.tensor(new), e)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), t)
    for ep, tp in zip(e, t):
        assert_close(ep.detach(), tp.detach())
        assert isinstance(ep, ember.nn.Parameter)
    with pytest.raises(TypeError) as e_err:
        utils.vector_to_parameters(new, e)
    with pytest.raises(TypeError) as t_err:
        torch.nn.utils.vector_to_parameters(new, t)
    assert str(e_err.value) == str(t_err.value)
