"""Normalisation (batch, instance, group, layer, RMS, local response) against torch: values,
first and second-order gradients, running statistics over several training steps then eval
(momentum, momentum=None, track_running_stats=False), state_dict round trips, layer reprs
and the errors torch raises."""
import warnings

import numpy as np
import pytest
import torch

import ember
from harness import Case, I, R, check, params
from torchcompare import assert_close, to_ember, to_torch


def F(L):
    return L.nn.functional


def bn_train(L, x, w=None, b=None):
    channels = x.shape[1]
    return F(L).batch_norm(x, x.new_zeros(channels), x.new_ones(channels), w, b, training=True,
                           momentum=0.3)


def bn_eval(L, x, w, b, mean, var):
    return F(L).batch_norm(x, mean.detach(), var.detach().abs() + 0.5, w, b, training=False, eps=1e-3)


FUNCTIONAL = [
    Case("batch_norm-2d", bn_train, R(6, 3), R(3), R(3), grad2=True),
    Case("batch_norm-3d", bn_train, R(4, 3, 5), R(3), R(3), grad2=True),
    Case("batch_norm-4d", bn_train, R(4, 3, 5, 2), R(3), R(3), grad2=True),
    Case("batch_norm-no-affine", bn_train, R(4, 3, 5, 2), grad2=True),
    Case("batch_norm-weight-only", lambda L, x, w: bn_train(L, x, w), R(4, 3, 3), R(3)),
    Case("batch_norm-no-running", lambda L, x, w, b: F(L).batch_norm(x, None, None, w, b, True, 0.1, 1e-3),
         R(5, 2, 3), R(2), R(2), grad2=True),
    Case("batch_norm-eval", bn_eval, R(4, 3, 5), R(3), R(3), R(3), R(3), grad2=True),
    Case("batch_norm-eval-no-affine", lambda L, x: F(L).batch_norm(x, x.new_zeros(3) + 0.2, x.new_ones(3) * 2),
         R(4, 3, 2, 2)),
    Case("batch_norm-constant-channel", lambda L, x, w, b: bn_train(L, x * 0 + 1, w, b), R(4, 3, 2), R(3), R(3)),
    Case("batch_norm-one-value", bn_train, R(1, 3)),
    Case("batch_norm-running-size", lambda L, x: F(L).batch_norm(x, x.new_zeros(4), x.new_ones(4), training=True),
         R(2, 3)),
    Case("batch_norm-weight-size", lambda L, x, w: F(L).batch_norm(x, None, None, w, training=True), R(2, 3), R(4)),
    Case("batch_norm-eval-no-running", lambda L, x: F(L).batch_norm(x, None, None), R(2, 3)),
    Case("batch_norm-int", lambda L, x: F(L).batch_norm(x, None, None, training=True), I(2, 3), dtypes=(None,)),
    Case("layer_norm", lambda L, x, w, b: F(L).layer_norm(x, (5,), w, b), R(4, 3, 5), R(5), R(5), grad2=True),
    Case("layer_norm-2-dims", lambda L, x, w, b: F(L).layer_norm(x, [3, 5], w, b, 1e-3), R(4, 3, 5), R(3, 5),
         R(3, 5), grad2=True),
    Case("layer_norm-no-affine", lambda L, x: F(L).layer_norm(x, (4,)), R(2, 3, 4), grad2=True),
    Case("layer_norm-weight-only", lambda L, x, w: F(L).layer_norm(x, (4,), w), R(3, 4), R(4), grad2=True),
    Case("layer_norm-1d", lambda L, x: F(L).layer_norm(x, (6,)), R(6)),
    Case("layer_norm-shape-mismatch", lambda L, x: F(L).layer_norm(x, (4,)), R(2, 3)),
    Case("layer_norm-weight-mismatch", lambda L, x, w: F(L).layer_norm(x, (3,), w), R(2, 3), R(4)),
    Case("layer_norm-int", lambda L, x: F(L).layer_norm(x, (3,)), I(2, 3), dtypes=(None,)),
    Case("group_norm", lambda L, x, w, b: F(L).group_norm(x, 2, w, b), R(3, 6, 5), R(6), R(6), grad2=True),
    Case("group_norm-4d", lambda L, x, w, b: F(L).group_norm(x, 3, w, b, 1e-3), R(2, 6, 3, 2), R(6), R(6),
         grad2=True),
    Case("group_norm-one-group", lambda L, x: F(L).group_norm(x, 1), R(2, 4, 3), grad2=True),
    Case("group_norm-per-channel", lambda L, x, w: F(L).group_norm(x, 4, w), R(2, 4, 3), R(4)),
    Case("group_norm-2d", lambda L, x: F(L).group_norm(x, 2), R(3, 4)),
    Case("group_norm-indivisible", lambda L, x: F(L).group_norm(x, 4), R(2, 6, 3)),
    Case("group_norm-weight-mismatch", lambda L, x, w: F(L).group_norm(x, 3, w), R(2, 6, 3), R(5)),
    Case("group_norm-1d-input", lambda L, x: F(L).group_norm(x, 3), R(6)),
    Case("instance_norm", lambda L, x, w, b: F(L).instance_norm(x, weight=w, bias=b), R(3, 2, 5), R(2), R(2),
         grad2=True),
    Case("instance_norm-4d", lambda L, x: F(L).instance_norm(x, eps=1e-3), R(2, 3, 4, 3), grad2=True),
    Case("instance_norm-running", lambda L, x: F(L).instance_norm(x, x.new_zeros(3), x.new_ones(3), momentum=0.5),
         R(2, 3, 4)),
    Case("instance_norm-fixed-stats", lambda L, x, w, b, m, v:
         F(L).instance_norm(x, m.detach(), v.detach().abs() + 0.5, w, b, use_input_stats=False),
         R(2, 3, 4), R(3), R(3), R(3), R(3)),
    Case("instance_norm-one-element", lambda L, x: F(L).instance_norm(x), R(2, 3, 1)),
    Case("instance_norm-weight-size", lambda L, x, w: F(L).instance_norm(x, weight=w), R(2, 3, 4), R(4)),
    Case("instance_norm-no-stats", lambda L, x: F(L).instance_norm(x, use_input_stats=False), R(2, 3, 4)),
    Case("rms_norm", lambda L, x, w: F(L).rms_norm(x, (5,), w), R(4, 3, 5), R(5), grad2=True),
    Case("rms_norm-eps", lambda L, x, w: F(L).rms_norm(x, [3, 5], w, 1e-2), R(4, 3, 5), R(3, 5), grad2=True),
    Case("rms_norm-no-weight", lambda L, x: F(L).rms_norm(x, (4,)), R(2, 4), grad2=True),
    Case("rms_norm-mismatch", lambda L, x: F(L).rms_norm(x, (4,)), R(2, 3)),
    Case("local_response_norm", lambda L, x: F(L).local_response_norm(x, 3), R(2, 5, 4), grad2=True),
    Case("local_response_norm-4d", lambda L, x: F(L).local_response_norm(x, 2, 1e-2, 0.5, 2.0), R(2, 5, 3, 2),
         grad2=True),
    Case("local_response_norm-5d", lambda L, x: F(L).local_response_norm(x, 4), R(1, 6, 2, 2, 2)),
    Case("local_response_norm-2d", lambda L, x: F(L).local_response_norm(x, 2), R(3, 4)),
]


@pytest.mark.parametrize("case,dtype", params(FUNCTIONAL))
def test_functional(case, dtype):
    check(case, dtype)


def test_batch_norm_updates_running_statistics_in_place():
    x = np.random.default_rng(0).standard_normal((8, 3, 4)).astype(np.float32)
    stats = {}
    for L in (torch, ember):
        mean, var = L.zeros(3), L.ones(3)
        F(L).batch_norm(L.tensor(x), mean, var, training=True, momentum=0.25)
        stats[L.__name__] = (mean, var)
    for e, t in zip(stats["ember"], stats["torch"]):
        assert_close(e, t)
    # The running variance moved towards the unbiased batch variance.
    expected = 0.75 + 0.25 * x.transpose(1, 0, 2).reshape(3, -1).var(1, ddof=1)
    np.testing.assert_allclose(stats["ember"][1].numpy(), expected, rtol=1e-5)


def _train_and_eval(L, module, batches):
    """Per training step: output, input gradient and parameter gradients; then the eval
    output and the buffers."""
    outputs = []
    module.train()
    for i, x in enumerate(batches):
        xt = L.tensor(x, requires_grad=True)
        y = module(xt)
        weight = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(x.dtype))
        (y * weight).sum().backward()
        outputs += [y, xt.grad] + [p.grad for p in module.parameters()]
        module.zero_grad()
    module.eval()
    outputs.append(module(L.tensor(batches[0] * 2 + 1)))
    outputs += [b for b in module.buffers()]
    return outputs


@pytest.mark.parametrize("name, kwargs, shape", [
    ("BatchNorm1d", {}, (6, 3)),
    ("BatchNorm1d", {"momentum": None}, (4, 3, 5)),
    ("BatchNorm1d", {"affine": False, "eps": 1e-3}, (4, 3, 5)),
    ("BatchNorm2d", {}, (4, 3, 5, 2)),
    ("BatchNorm2d", {"momentum": None, "bias": False}, (4, 3, 3, 3)),
    ("BatchNorm2d", {"track_running_stats": False}, (4, 3, 3, 3)),
    ("BatchNorm2d", {"track_running_stats": False, "momentum": None, "affine": False}, (4, 3, 3, 3)),
    ("InstanceNorm1d", {}, (4, 3, 5)),
    ("InstanceNorm1d", {"affine": True, "track_running_stats": True}, (4, 3, 5)),
    ("InstanceNorm2d", {"affine": True}, (2, 3, 4, 3)),
    ("InstanceNorm2d", {"track_running_stats": True, "momentum": 0.5}, (3, 4, 3)),
])
def test_running_statistics_over_training_then_eval(name, kwargs, shape):
    rng = np.random.default_rng(3)
    batches = [(rng.standard_normal(shape) * (1 + i) + i).astype(np.float32) for i in range(4)]
    e_mod, t_mod = getattr(ember.nn, name)(3, **kwargs), getattr(torch.nn, name)(3, **kwargs)
    assert repr(e_mod) == repr(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    e_out, t_out = _train_and_eval(ember, e_mod, batches), _train_and_eval(torch, t_mod, batches)
    assert len(e_out) == len(t_out)
    for i, (e, t) in enumerate(zip(e_out, t_out)):
        if t is None:
            assert e is None
        elif t.dtype == torch.int64:
            assert e.item() == t.item(), i
        else:
            assert_close(e, t, rtol=2e-5, atol=2e-5)


def test_batch_norm_momentum_none_is_cumulative_average():
    m = ember.nn.BatchNorm1d(2, momentum=None)
    means = []
    for i in range(3):
        x = ember.tensor(np.array([[i, 2 * i], [i + 2.0, 2 * i + 2]], np.float32))
        m(x)
        means.append([i + 1.0, 2 * i + 1])
    np.testing.assert_allclose(m.running_mean.numpy(), np.mean(means, 0), rtol=1e-6)
    assert m.num_batches_tracked.item() == 3


def test_state_dict_round_trip_from_torch():
    rng = np.random.default_rng(4)
    t_mod = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.GroupNorm(1, 3), torch.nn.LayerNorm(4),
                                torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True))
    for _ in range(3):
        t_mod(torch.tensor(rng.standard_normal((4, 3, 4, 4)).astype(np.float32)))
    with torch.no_grad():
        for p in t_mod.parameters():
            p.add_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    e_mod = ember.nn.Sequential(ember.nn.BatchNorm2d(3), ember.nn.GroupNorm(1, 3), ember.nn.LayerNorm(4),
                                ember.nn.InstanceNorm2d(3, affine=True, track_running_stats=True))
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert e_mod[0].num_batches_tracked.item() == 3 and e_mod[0].num_batches_tracked.dtype is ember.int64
    t_mod.eval()
    e_mod.eval()
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    assert_close(e_mod(ember.tensor(x)), t_mod(torch.tensor(x)), rtol=1e-5, atol=1e-5)
    # And back: torch loads what ember saves.
    t_back = torch.nn.BatchNorm2d(3)
    t_back.load_state_dict({k: to_torch(v) for k, v in e_mod[0].state_dict().items()})
    assert_close(e_mod[0].running_var, t_back.running_var)


def test_state_dict_without_counter_loads():
    m = ember.nn.BatchNorm1d(2)
    state = {k: v for k, v in m.state_dict().items() if k != "num_batches_tracked"}
    assert m.load_state_dict(state).missing_keys == []


@pytest.mark.parametrize("name, args, kwargs, shape", [
    ("LayerNorm", (4,), {}, (2, 3, 4)),
    ("LayerNorm", ([3, 4],), {"eps": 1e-3, "bias": False}, (2, 3, 4)),
    ("LayerNorm", (4,), {"elementwise_affine": False}, (2, 3, 4)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3)),
    ("GroupNorm", (4, 4), {"affine": False, "eps": 1e-2}, (2, 4, 3, 2)),
    ("RMSNorm", (4,), {}, (2, 3, 4)),
    ("RMSNorm", ([3, 4],), {"eps": 1e-3, "elementwise_affine": False}, (2, 3, 4)),
    ("LocalResponseNorm", (3,), {"alpha": 1e-2, "k": 2.0}, (2, 4, 3)),
])
def test_layers_match_torch(name, args, kwargs, shape):
    e_mod, t_mod = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e_mod) == repr(t_mod)
    rng = np.random.default_rng(5)
    with torch.no_grad():
        for p in t_mod.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    x = rng.standard_normal(shape).astype(np.float32)
    e_out, t_out = _train_and_eval(ember, e_mod, [x]), _train_and_eval(torch, t_mod, [x])
    for e, t in zip(e_out, t_out):
        assert_close(e, t, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("make, shape, error", [
    (lambda L: L.nn.BatchNorm1d(3), (2, 3, 4, 5), ValueError),
    (lambda L: L.nn.BatchNorm2d(3), (2, 3, 4), ValueError),
    (lambda L: L.nn.BatchNorm2d(3), (2, 4, 4, 4), RuntimeError),
    (lambda L: L.nn.InstanceNorm1d(3, affine=True), (2, 4, 4), ValueError),
    (lambda L: L.nn.InstanceNorm2d(3), (2, 3, 4), None),
    (lambda L: L.nn.InstanceNorm1d(3), (2, 3, 4, 4), ValueError),
])
def test_layer_input_errors(make, shape, error):
    x = np.zeros(shape, np.float32)
    for L in (torch, ember):
        if error is None:
            assert tuple(make(L)(L.tensor(x)).shape) == shape
        else:
            with pytest.raises(error):
                make(L)(L.tensor(x))


def test_group_norm_layer_rejects_indivisible_channels():
    for L in (torch, ember):
        with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by num_groups \(4\)"):
            L.nn.GroupNorm(4, 6)


def test_instance_norm_warns_on_channel_mismatch_without_affine():
    with pytest.warns(UserWarning, match="does not match num_features"):
        ember.nn.InstanceNorm1d(3)(ember.randn(2, 4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.nn.InstanceNorm1d(4)(ember.randn(2, 4, 5))


def test_error_messages_name_sizes():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, got input size"):
        ember.nn.functional.batch_norm(ember.randn(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                                           r"but got input of size\[2, 3\]"):
        ember.nn.functional.layer_norm(ember.randn(2, 3), (4,))
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        ember.nn.functional.batch_norm(ember.randn(2, 3), ember.zeros(4), ember.ones(4), training=True)


@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("axes", [(1,), (0, 2), (1, 2)])
def test_norm_stats_is_a_two_result_op_with_per_output_gradients(axes, centered):
    """NormStats' (mean, var) against torch's var_mean (the mean square when not centered), and
    their gradients and second derivatives through the engine, each result alone and both."""
    from ember._ops.core import apply
    from ember._ops.norm import NormStats
    x = torch.randn(3, 4, 5, dtype=torch.float64)[:, ::2].requires_grad_()  # non-contiguous
    ours = to_ember(x, requires_grad=True)
    mean, var = apply(NormStats, ours, axes=axes, centered=centered)
    if centered:
        t_var, t_mean = torch.var_mean(x, axes, correction=0, keepdim=True)
    else:
        t_var, t_mean = (x * x).mean(axes, keepdim=True), torch.zeros_like(x.sum(axes, keepdim=True))
    assert mean.grad_fn is var.grad_fn and mean.grad_fn.name() == "NormStatsBackward0"
    for which in ((0,), (1,), (0, 1)) if centered else ((1,), (0, 1)):  # (a mean of 0 is constant)
        weights = [torch.randn(t_mean.shape, dtype=torch.float64) for _ in range(2)]
        t_loss = sum((w * v).sum() for i, (w, v) in enumerate(zip(weights, (t_mean, t_var))) if i in which)
        e_loss = sum((to_ember(w) * v).sum() for i, (w, v) in enumerate(zip(weights, (mean, var))) if i in which)
        assert_close(e_loss, t_loss.detach(), rtol=1e-12, atol=1e-12)
        t_grad, = torch.autograd.grad(t_loss, x, create_graph=True)
        e_grad, = ember.autograd.grad(e_loss, ours, create_graph=True)
        assert_close(e_grad, t_grad, rtol=1e-12, atol=1e-12)
        if 1 in which:  # the variance's derivative depends on x: a second derivative exists
            t_gg, = torch.autograd.grad((t_grad ** 2).sum(), x)
            e_gg, = ember.autograd.grad((e_grad ** 2).sum(), ours)
            assert_close(e_gg, t_gg, rtol=1e-12, atol=1e-12)


def test_layer_norm_third_derivative_matches_finite_differences():
    """Normalize -> NormalizeBackward -> its ember-op derivative: a third derivative, checked
    against float64 central differences of the second (torch 2.13's own is wrong here)."""
    rng = np.random.default_rng(0)
    x0, w = rng.standard_normal((3, 5)), ember.tensor(rng.standard_normal(5))

    def second(x):
        y = F(ember).layer_norm(x, (5,), w, None)
        g1, = ember.autograd.grad((y ** 3).sum(), x, create_graph=True)
        g2, = ember.autograd.grad((g1 ** 2).sum(), x, create_graph=True)
        return (g2 ** 2).sum()
    x = ember.tensor(x0, requires_grad=True)
    third, = ember.autograd.grad(second(x), x)
    numeric, h = np.zeros_like(x0), 1e-6
    for i in np.ndindex(x0.shape):
        step = np.zeros_like(x0)
        step[i] = h
        plus, minus = (float(second(ember.tensor(x0 + s, requires_grad=True))) for s in (step, -step))
        numeric[i] = (plus - minus) / (2 * h)
    np.testing.assert_allclose(third.numpy(), numeric, rtol=1e-6, atol=1e-6 * np.abs(numeric).max())
