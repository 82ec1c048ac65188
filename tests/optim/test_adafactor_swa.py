"""Adafactor and optim.swa_utils (AveragedModel, the averaging functions, SWALR, update_bn)
against torch 2.13: values after several steps from the same weights, state_dict layout, errors."""
import numpy as np
import pytest

import ember
from ember.optim import swa_utils
from torchcompare import assert_close

torch = pytest.importorskip("torch")
from torch.optim import swa_utils as t_swa  # noqa: E402

SHAPES = [(5,), (3, 4), (2, 3, 4), ()]
ADAFACTOR = [dict(), dict(lr=0.05, weight_decay=0.1), dict(beta2_decay=-0.5, eps=(1e-6, 1e-2), d=2.0),
             dict(lr=0.3, maximize=True)]


def pair(shape, dtype, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("kwargs", ADAFACTOR, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()) or "default")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adafactor_matches_torch_over_steps(kwargs, dtype):
    pairs = [pair(s, dtype, i) for i, s in enumerate(SHAPES)]
    e_opt = ember.optim.Adafactor([e for e, _ in pairs], **kwargs)
    t_opt = torch.optim.Adafactor([t for _, t in pairs], **kwargs)
    rng = np.random.default_rng(7)
    rtol, atol = (1e-10, 1e-12) if dtype == np.float64 else (1e-4, 1e-5)
    for step in range(8):
        for i, (e, t) in enumerate(pairs):
            g = rng.standard_normal(e.shape).astype(dtype) * (i + 1)
            e.grad, t.grad = (None, None) if i == 0 and step == 2 else (ember.tensor(g), torch.tensor(g))
        e_opt.step(), t_opt.step()
        for e, t in pairs:
            assert_close(e, t.detach(), rtol=rtol, atol=atol)
    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    assert e_sd["param_groups"] == t_sd["param_groups"]
    for key, t_state in t_sd["state"].items():
        assert list(e_sd["state"][key]) == list(t_state)
        for k, v in t_state.items():
            assert tuple(e_sd["state"][key][k].shape) == tuple(v.shape)
            assert_close(e_sd["state"][key][k], v, rtol=rtol, atol=atol)


@pytest.mark.parametrize("kwargs", [dict(lr=-1.0), dict(beta2_decay=0.1), dict(eps=(-1.0, 1e-3)),
                                    dict(eps=(None, -1.0)), dict(d=0.5), dict(weight_decay=-0.1)])
def test_adafactor_rejects_what_torch_rejects(kwargs):
    with pytest.raises(ValueError) as t_err:
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError, match="^" + __import__("re").escape(str(t_err.value)) + "$"):
        ember.optim.Adafactor([ember.zeros(2, requires_grad=True)], **kwargs)


def test_adafactor_rejects_complex_parameters():
    p = ember.zeros(2, dtype=ember.complex64, requires_grad=True)
    p.grad = ember.ones(2, dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        ember.optim.Adafactor([p]).step()


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 3)])
def test_adafactor_empty_parameter_raises_torchs_zero_division(shape):
    messages = []
    for m in (torch, ember):
        p = m.nn.Parameter(m.zeros(shape))
        p.grad = m.zeros(shape)
        with pytest.raises(ZeroDivisionError) as err:
            m.optim.Adafactor([p]).step()
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def _models(use_bn=True):
    torch.manual_seed(0)
    t_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    e_model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Linear(4, 2))
    e_model.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_model.state_dict().items()})
    return e_model, t_model


def _train_step(L, model, x, opt):
    opt.zero_grad()
    model(x).square().mean().backward()
    opt.step()


AVERAGING = [dict(), dict(use_buffers=True), dict(avg_fn="ema_avg"), dict(multi_avg_fn="ema_multi"),
             dict(multi_avg_fn="swa_multi"),
             dict(avg_fn="swa_avg", use_buffers=True), dict(multi_avg_fn="ema_multi", use_buffers=True)]


def _resolve(module, kwargs):
    made = {"ema_avg": lambda: module.get_ema_avg_fn(0.9), "ema_multi": lambda: module.get_ema_multi_avg_fn(0.8),
            "swa_multi": module.get_swa_multi_avg_fn, "swa_avg": module.get_swa_avg_fn}
    return {k: made[v]() if isinstance(v, str) else v for k, v in kwargs.items()}


@pytest.mark.parametrize("kwargs", AVERAGING, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()) or "swa")
def test_averaged_model_matches_torch(kwargs):
    e_model, t_model = _models()
    e_avg = swa_utils.AveragedModel(e_model, **_resolve(swa_utils, kwargs))
    t_avg = t_swa.AveragedModel(t_model, **_resolve(t_swa, kwargs))
    e_opt, t_opt = ember.optim.SGD(e_model.parameters(), lr=0.1), torch.optim.SGD(t_model.parameters(), lr=0.1)
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = rng.standard_normal((6, 3)).astype(np.float32)
        _train_step(ember, e_model, ember.tensor(x), e_opt), _train_step(torch, t_model, torch.tensor(x), t_opt)
        e_avg.update_parameters(e_model), t_avg.update_parameters(t_model)
    e_sd, t_sd = e_avg.state_dict(), t_avg.state_dict()
    assert list(e_sd) == list(t_sd)
    for k, v in t_sd.items():
        assert str(e_sd[k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1], k
        assert_close(e_sd[k], v, rtol=1e-5, atol=1e-6)
    assert int(e_avg.n_averaged) == 4 and e_avg.module is not e_model
    x = rng.standard_normal((2, 3)).astype(np.float32)
    e_avg.eval(), t_avg.eval()
    assert_close(e_avg(ember.tensor(x)), t_avg(torch.tensor(x)).detach(), rtol=1e-5, atol=1e-6)


def test_swa_multi_avg_fn_on_integer_buffers_raises_as_torch():
    """torch's integer branch divides with addcdiv, which rejects integers (num_batches_tracked)."""
    for L, sw in ((ember, swa_utils), (torch, t_swa)):
        model = L.nn.BatchNorm1d(2)
        averaged = sw.AveragedModel(model, multi_avg_fn=sw.get_swa_multi_avg_fn(), use_buffers=True)
        averaged.update_parameters(model)
        with pytest.raises(RuntimeError, match="^Integer division with addcdiv is no longer supported"):
            averaged.update_parameters(model)


def test_averaging_function_errors():
    for fn in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\] range."):
            getattr(swa_utils, fn)(1.5)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        swa_utils.AveragedModel(ember.nn.Linear(1, 1), avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=3, anneal_strategy="linear"),
                                    dict(swa_lr=0.01, anneal_epochs=0)])
def test_swalr_matches_torch(kwargs):
    lrs = []
    for L, sw in ((ember, swa_utils), (torch, t_swa)):
        opt = L.optim.SGD([{"params": [L.zeros(1, requires_grad=True)]},
                           {"params": [L.zeros(1, requires_grad=True)], "lr": 0.3}], lr=1.0)
        sched = sw.SWALR(opt, **kwargs)
        seen = []
        for _ in range(14):
            opt.step(), sched.step()
            seen.append(sched.get_last_lr())
        state = sched.state_dict()
        seen.append(sorted(state))
        sched.load_state_dict(state)
        seen.append(sched.anneal_func(0.5))
        lrs.append(seen)
    assert lrs[0][-2] == lrs[1][-2]
    np.testing.assert_allclose(np.array(lrs[0][:-2]), np.array(lrs[1][:-2]), rtol=1e-12)
    assert lrs[0][-1] == lrs[1][-1]


@pytest.mark.parametrize("kwargs,message", [
    (dict(swa_lr=0.1, anneal_strategy="exp"), "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (dict(swa_lr=0.1, anneal_epochs=-1), "anneal_epochs must be equal or greater than 0, got -1"),
    (dict(swa_lr=0.1, anneal_epochs=2.0), "anneal_epochs must be equal or greater than 0, got 2.0"),
    (dict(swa_lr=[0.1, 0.2]), "swa_lr must have the same length as optimizer.param_groups. swa_lr has 2 values, "
                              "param_groups has 1.")])
def test_swalr_errors_as_torch(kwargs, message):
    for L, sw in ((ember, swa_utils), (torch, t_swa)):
        with pytest.raises(ValueError, match="^" + __import__("re").escape(message) + "$"):
            sw.SWALR(L.optim.SGD([L.zeros(1, requires_grad=True)], lr=1.0), **kwargs)


def test_update_bn_recomputes_running_statistics_as_torch():
    e_model, t_model = _models()
    e_model.eval(), t_model.eval()
    rng = np.random.default_rng(5)
    batches = [rng.standard_normal((n, 3)).astype(np.float32) * 3 + 1 for n in (4, 7, 5)]
    swa_utils.update_bn([(ember.tensor(b), 0) for b in batches], e_model)
    t_swa.update_bn([(torch.tensor(b), 0) for b in batches], t_model)
    assert not e_model.training and e_model[1].momentum == 0.1
    for k, v in t_model.state_dict().items():
        assert_close(e_model.state_dict()[k], v, rtol=1e-5, atol=1e-6)
    swa_utils.update_bn([ember.ones(2, 3)], ember.nn.Linear(3, 1))  # no batch norm: nothing to do
