"""nn.utils batch-norm fusion, skip_init, conv weight memory formats, stateless,
parametrize.transfer_parametrizations_and_params, and the legacy names nn.Container,
nn.NLLLoss2d and nn.CrossMapLRN2d, against torch 2.13."""
import re
import warnings

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close


def _mirror(t_module, e_module):
    """``e_module`` with ``t_module``'s parameters and buffers (random running statistics)."""
    g = torch.Generator().manual_seed(1)
    for name, b in t_module.named_buffers():
        if b.dtype.is_floating_point:
            b.copy_(torch.rand(b.shape, generator=g) + 0.5 if "var" in name else torch.randn(b.shape, generator=g))
    e_module.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_module.state_dict().items()})
    return e_module.eval(), t_module.eval()


def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category, str(w.message), w.filename) for w in caught]


CONVS = [("Conv1d", "BatchNorm1d", (4, 6, 3), {}, (2, 4, 9)),
         ("Conv2d", "BatchNorm2d", (4, 6, 3), dict(bias=False, groups=2), (2, 4, 7, 5)),
         ("Conv3d", "BatchNorm3d", (2, 3, 2), dict(padding=1), (1, 2, 4, 3, 4)),
         ("ConvTranspose2d", "BatchNorm2d", (4, 6, 3), dict(stride=2), (2, 4, 4, 3))]


@pytest.mark.parametrize("conv,bn,args,kwargs,shape", CONVS, ids=[c[0] for c in CONVS])
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_conv_bn_eval_matches_torch(conv, bn, args, kwargs, shape, affine):
    torch.manual_seed(0)
    t_conv, t_bn = getattr(torch.nn, conv)(*args, **kwargs), getattr(torch.nn, bn)(args[1], affine=affine)
    e_conv, _ = _mirror(t_conv, getattr(ember.nn, conv)(*args, **kwargs))
    e_bn, _ = _mirror(t_bn, getattr(ember.nn, bn)(args[1], affine=affine))
    transpose = conv.startswith("ConvTranspose")
    e_fused = ember.nn.utils.fuse_conv_bn_eval(e_conv, e_bn, transpose=transpose)
    t_fused = torch.nn.utils.fuse_conv_bn_eval(t_conv, t_bn, transpose=transpose)
    assert type(e_fused) is type(e_conv) and e_fused.weight is not e_conv.weight
    assert_close(e_conv.weight, t_conv.weight.detach())  # the original is left as it was
    assert isinstance(e_fused.weight, ember.nn.Parameter) and e_fused.weight.requires_grad
    assert_close(e_fused.weight, t_fused.weight.detach(), rtol=1e-5, atol=1e-6)
    assert_close(e_fused.bias, t_fused.bias.detach(), rtol=1e-5, atol=1e-6)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    assert_close(e_fused(ember.tensor(x)), e_bn(e_conv(ember.tensor(x))), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("num_features", [5, 1])
def test_fuse_linear_bn_eval_matches_torch(num_features):
    torch.manual_seed(0)
    t_lin, t_bn = torch.nn.Linear(3, 5), torch.nn.BatchNorm1d(num_features)
    e_lin, _ = _mirror(t_lin, ember.nn.Linear(3, 5))
    e_bn, _ = _mirror(t_bn, ember.nn.BatchNorm1d(num_features))
    e_fused, t_fused = ember.nn.utils.fuse_linear_bn_eval(e_lin, e_bn), torch.nn.utils.fuse_linear_bn_eval(t_lin, t_bn)
    assert_close(e_fused.weight, t_fused.weight.detach(), rtol=1e-5, atol=1e-6)
    assert_close(e_fused.bias, t_fused.bias.detach(), rtol=1e-5, atol=1e-6)
    w, b = ember.nn.utils.fuse_linear_bn_weights(e_lin.weight, None, e_bn.running_mean, e_bn.running_var,
                                                 e_bn.eps, e_bn.weight, e_bn.bias)
    tw, tb = torch.nn.utils.fuse_linear_bn_weights(t_lin.weight, None, t_bn.running_mean, t_bn.running_var,
                                                   t_bn.eps, t_bn.weight, t_bn.bias)
    assert_close(w, tw.detach(), rtol=1e-5, atol=1e-6)
    assert_close(b, tb.detach(), rtol=1e-5, atol=1e-6)
    assert (w.requires_grad, b.requires_grad) == (tw.requires_grad, tb.requires_grad) == (True, False)


def _fusion_errors(L):
    lin, bn, conv = L.nn.Linear(3, 5).eval(), L.nn.BatchNorm1d(4).eval(), L.nn.Conv1d(2, 4, 1).eval()
    calls = [lambda: L.nn.utils.fuse_linear_bn_eval(lin, bn),
             lambda: L.nn.utils.fuse_conv_bn_eval(conv.train(), bn),
             lambda: L.nn.utils.fuse_conv_bn_eval(conv.eval(), L.nn.BatchNorm1d(4, track_running_stats=False).eval())]
    messages = []
    for call in calls:
        with pytest.raises(AssertionError) as err:
            call()
        messages.append(str(err.value))
    return messages


def test_fusion_errors_as_torch():
    assert _fusion_errors(ember) == _fusion_errors(torch)


def test_skip_init_builds_without_initialising():
    layer = ember.nn.utils.skip_init(ember.nn.Linear, 3, 4, bias=False)
    assert tuple(layer.weight.shape) == (4, 3) and layer.bias is None and layer.weight.device.type == "cpu"
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="^Module must support a 'device' arg to skip initialization$"):
            L.nn.utils.skip_init(L.nn.ReLU)
        with pytest.raises(RuntimeError, match="^Expected a Module; got <class 'int'>$"):
            L.nn.utils.skip_init(int)


def test_convert_conv_weight_memory_format():
    for L in (ember, torch):
        model = L.nn.Sequential(L.nn.Conv2d(2, 3, 3), L.nn.Sequential(L.nn.ConvTranspose2d(3, 2, 2)), L.nn.Conv3d(2, 2, 2))
        weights = [m.weight for m in (model[0], model[1][0], model[2])]
        values = [w.detach().clone() for w in weights]
        assert L.nn.utils.convert_conv2d_weight_memory_format(model, L.channels_last) is model
        assert [model[0].weight is weights[0], model[1][0].weight is weights[1]] == [True, True]
        assert model[0].weight.is_contiguous(memory_format=L.channels_last) and not model[0].weight.is_contiguous()
        assert model[1][0].weight.is_contiguous(memory_format=L.channels_last) and model[2].weight.is_contiguous()
        L.nn.utils.convert_conv3d_weight_memory_format(model, L.channels_last_3d)
        assert model[2].weight.is_contiguous(memory_format=L.channels_last_3d) and not model[2].weight.is_contiguous()
        assert all(bool((w == v).all()) for w, v in zip(weights, values))


def test_stateless_functional_call_warns_as_torch():
    results = []
    for L in (ember, torch):
        layer = L.nn.Linear(2, 1)
        params = {"weight": L.ones(1, 2), "bias": L.zeros(1)}
        results.append(_warned(lambda: L.nn.utils.stateless.functional_call(layer, params, (L.ones(3, 2) * 2,))))
    assert results[0][1] == results[1][1] and results[0][1][0][0] is FutureWarning and results[0][1][0][2] == __file__
    assert_close(results[0][0], results[1][0].detach())


def _transfer(L):
    class Symmetric(L.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    L.manual_seed(0)
    source = L.nn.Linear(3, 3)
    L.nn.utils.parametrize.register_parametrization(source, "weight", Symmetric())
    target = L.nn.Linear(3, 3)
    assert L.nn.utils.parametrize.transfer_parametrizations_and_params(source, target) is target
    assert target.parametrizations.weight.original is source.parametrizations.weight.original
    assert target.parametrizations.weight[0] is source.parametrizations.weight[0]
    bare = L.nn.utils.parametrize.transfer_parametrizations_and_params(source, L.nn.Module(), "weight")
    unparametrized = L.nn.utils.parametrize.transfer_parametrizations_and_params(L.nn.Linear(1, 1), target)
    return list(target.state_dict()), list(bare.state_dict()), unparametrized is target, bare.weight


def test_transfer_parametrizations_and_params_as_torch():
    got, expected = _transfer(ember), _transfer(torch)
    assert got[:3] == expected[:3]
    assert_close(got[3], got[3].t())


def test_container_warns_and_registers_as_torch():
    (e, e_warn), (t, t_warn) = [_warned(lambda: L.nn.Container(a=L.nn.Linear(1, 2), b=L.nn.ReLU())) for L in (ember, torch)]
    assert e_warn == t_warn and len(e_warn) == 1 and e_warn[0][2] == __file__
    assert repr(e) == repr(t) and list(e.state_dict()) == list(t.state_dict())


def test_nll_loss_2d_warns_and_computes_nll_loss():
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4, 5))).transpose(0, 3, 1, 2).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 3, size=(2, 4, 5))
    got, expected = [_warned(lambda: L.nn.NLLLoss2d(weight=L.tensor([1.0, 2.0, 0.5]), ignore_index=1))
                     for L in (ember, torch)]
    assert got[1] == expected[1] and len(got[1]) == 1 and got[1][0][2] == __file__
    assert isinstance(got[0], ember.nn.NLLLoss) and repr(got[0]) == repr(expected[0])
    assert_close(got[0](ember.tensor(x), ember.tensor(y)), expected[0](torch.tensor(x), torch.tensor(y)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8, 13])
def test_cross_map_lrn2d_matches_torch(size):
    x = np.random.default_rng(size).standard_normal((2, 9, 3, 2)) * 2
    e_layer, t_layer = ember.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.8, k=2), torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.8, k=2)
    assert repr(e_layer) == repr(t_layer)
    assert_close(e_layer(ember.tensor(x)), t_layer(torch.tensor(x)), rtol=1e-12, atol=1e-14)
    # float32 against torch's float64 result: a few ulps of the power
    assert_close(e_layer(ember.tensor(x.astype(np.float32))), t_layer(torch.tensor(x)).float(), rtol=2e-6, atol=1e-6)


def test_cross_map_lrn2d_gradient_is_the_derivative_of_torchs_forward():
    """torch's hand-written backward is not the derivative of its own forward (its window is
    the centred one, and size 1 raises); ember's is, checked by central differences of torch's
    forward in float64."""
    x = np.random.default_rng(0).standard_normal((1, 6, 2, 1))
    g = np.random.default_rng(1).standard_normal(x.shape)
    layer = torch.nn.CrossMapLRN2d(3, alpha=0.5, beta=0.8, k=2)
    h, fd = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = h
        fd[i] = ((layer(torch.tensor(x + d)) - layer(torch.tensor(x - d))).numpy() * g).sum() / (2 * h)
    ex = ember.tensor(x, requires_grad=True)
    ember.nn.CrossMapLRN2d(3, alpha=0.5, beta=0.8, k=2)(ex).backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_cross_map_lrn2d_rejects_non_4d_input():
    for L in (ember, torch):
        with pytest.raises(ValueError, match=re.escape("CrossMapLRN2d: Expected input to be 4D, got 3D instead.")):
            L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4))
