"""3-D convolution and pooling against torch 2.13: F.conv3d/conv_transpose3d, max/avg/adaptive/
lp pooling and max_unpool3d (values, indices, gradients, second order for a few; float32 and
float64; strided, grouped, dilated, padded, 'same', unbatched, empty batch, non-contiguous
inputs), the 3-D layers (state_dict, repr, output_size), grad_fn names, and torch's errors,
class and message."""
import numpy as np
import pytest
import torch

import ember
from harness import Case, D, R, S, T, check, params
from torchcompare import assert_close, assert_same_error


@pytest.fixture(autouse=True, scope="module")
def torch_on_one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def F(L):
    return L.nn.functional


def call(name, **kw):
    return lambda L, *a: getattr(F(L), name)(*a, **kw)


CASES = [
    Case("conv3d-grouped-strided-dilated", call("conv3d", stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1),
                                                groups=2), R(2, 4, 6, 5, 4), R(6, 2, 2, 3, 2), R(6), grad2=True),
    Case("conv3d-same", call("conv3d", padding="same", dilation=(1, 2, 1)), R(2, 3, 5, 5, 4), R(4, 3, 2, 3, 2), R(4)),
    Case("conv3d-valid-depthwise", call("conv3d", padding="valid", groups=3), R(1, 3, 4, 5, 4), R(6, 1, 3, 1, 2)),
    Case("conv3d-unbatched-transposed-input", call("conv3d", stride=2), T(R(3, 5, 6, 7)), R(4, 3, 3, 2, 2)),
    Case("conv3d-strided-view", call("conv3d", padding=1), S(R(2, 2, 3, 4, 4)), R(3, 2, 1, 3, 3), R(3)),
    Case("conv3d-batch0", call("conv3d"), R(0, 3, 5, 6, 7), R(4, 3, 3, 2, 2), R(4)),
    Case("conv_transpose3d-all", call("conv_transpose3d", stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2),
                                      dilation=(1, 2, 1), groups=2), R(2, 4, 3, 4, 3), R(4, 3, 3, 2, 2), R(6), grad2=True),
    Case("conv_transpose3d-unbatched", call("conv_transpose3d", stride=2, padding=1), T(R(4, 3, 3, 4)),
         R(4, 2, 3, 3, 3), R(2)),
    Case("conv_transpose3d-batch0", call("conv_transpose3d", stride=2), R(0, 4, 3, 4, 3), R(4, 3, 3, 2, 2), R(3)),
    Case("max_pool3d-all", call("max_pool3d", kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=1, dilation=(2, 1, 1),
                                ceil_mode=True, return_indices=True), D(2, 3, 5, 6, 7), grad2=True),
    Case("max_pool3d-overlapping-unbatched", call("max_pool3d", kernel_size=3, stride=1), T(D(3, 4, 5, 6))),
    Case("max_pool3d-batch0", call("max_pool3d", kernel_size=2), R(0, 3, 4, 4, 4)),
    Case("max_pool3d_with_indices", call("max_pool3d_with_indices", kernel_size=2), D(1, 2, 4, 4, 5)),
    Case("avg_pool3d-all", call("avg_pool3d", kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=1, ceil_mode=True,
                                count_include_pad=False), R(2, 3, 5, 6, 7), grad2=True),
    Case("avg_pool3d-divisor", call("avg_pool3d", kernel_size=3, stride=2, padding=1, divisor_override=5),
         S(R(2, 3, 5, 6, 7))),
    Case("avg_pool3d-unbatched", call("avg_pool3d", kernel_size=2), T(R(3, 4, 5, 6))),
    Case("adaptive_avg_pool3d", call("adaptive_avg_pool3d", output_size=(3, None, 4)), R(2, 3, 5, 6, 7), grad2=True),
    Case("adaptive_avg_pool3d-unbatched", call("adaptive_avg_pool3d", output_size=(2, 4, 5)), T(R(3, 5, 6, 7))),
    Case("adaptive_avg_pool3d-batch0", call("adaptive_avg_pool3d", output_size=2), R(0, 3, 5, 6, 7)),
    Case("adaptive_max_pool3d", call("adaptive_max_pool3d", output_size=(3, 2, 4), return_indices=True),
         D(2, 3, 5, 6, 7), grad2=True),
    Case("adaptive_max_pool3d-unbatched", call("adaptive_max_pool3d", output_size=2), T(D(3, 4, 5, 6))),
    Case("lp_pool3d", call("lp_pool3d", norm_type=2, kernel_size=(2, 3, 2), stride=(1, 2, 1)), R(2, 3, 5, 6, 7)),
]


@pytest.mark.parametrize("case,dtype", params(CASES))
def test_matches_torch(case, dtype):
    check(case, dtype)


def test_avg_pool3d_int64_truncates_as_torch():
    x = np.random.default_rng(0).integers(-50, 50, (2, 3, 4, 5, 6))
    e = F(ember).avg_pool3d(ember.tensor(x), 3, stride=2, padding=1)
    t = F(torch).avg_pool3d(torch.tensor(x), 3, stride=2, padding=1)
    assert e.dtype == ember.int64 and np.array_equal(e.numpy(), t.numpy())


def test_max_unpool3d_inverts_max_pool3d():
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 6, 6))
    (ey, ei), (ty, ti) = (F(L).max_pool3d(L.tensor(x), 2, return_indices=True) for L in (ember, torch))
    assert np.array_equal(ei.numpy(), ti.numpy())
    for size in (None, (5, 7, 7), (2, 3, 5, 7, 7)):
        assert_close(F(ember).max_unpool3d(ey, ei, 2, output_size=size), F(torch).max_unpool3d(ty, ti, 2, output_size=size))
    assert_close(ember.nn.MaxUnpool3d(2)(ey[0], ei[0]), torch.nn.MaxUnpool3d(2)(ty[0], ti[0]))


def test_grad_fn_names():
    names = []
    for L in (ember, torch):
        a = L.zeros(2, 3, 4, 5, 6, requires_grad=True)
        f = F(L)
        outs = [f.max_pool3d(a, 2), f.avg_pool3d(a, 2), f.adaptive_avg_pool3d(a, 2), f.adaptive_avg_pool3d(a, 1),
                f.adaptive_max_pool3d(a, 2), f.conv3d(a, L.zeros(2, 3, 1, 1, 1)),
                f.conv_transpose3d(a, L.zeros(3, 2, 1, 1, 1)), f.max_pool3d(a[0], 2), f.lp_pool3d(a, 2, 2)]
        names.append([type(y.grad_fn).__name__ for y in outs])
    assert names[0] == names[1]


def _x(L, *shape, dtype=None):
    return L.zeros(*shape, dtype=dtype)


ERRORS = {
    "conv3d-channels": lambda L: F(L).conv3d(_x(L, 2, 4, 5, 6, 7), _x(L, 6, 2, 2, 3, 3)),
    "conv3d-rank": lambda L: F(L).conv3d(_x(L, 4, 5, 6), _x(L, 6, 2, 2, 3, 3)),
    "conv3d-stride-length": lambda L: F(L).conv3d(_x(L, 2, 4, 5, 6, 7), _x(L, 6, 2, 2, 3, 3), groups=2, stride=(1, 2)),
    "conv3d-kernel-too-large": lambda L: F(L).conv3d(_x(L, 2, 4, 5, 6, 7), _x(L, 6, 2, 9, 3, 3), groups=2),
    "conv3d-same-strided": lambda L: F(L).conv3d(_x(L, 2, 4, 5, 6, 7), _x(L, 6, 4, 1, 1, 1), padding="same", stride=2),
    "conv_transpose3d-output-padding": lambda L: F(L).conv_transpose3d(_x(L, 2, 4, 5, 6, 7), _x(L, 4, 3, 2, 2, 2),
                                                                       stride=2, output_padding=2),
    "conv_transpose3d-too-small": lambda L: F(L).conv_transpose3d(_x(L, 1, 4, 1, 1, 1), _x(L, 4, 3, 1, 1, 1),
                                                                  padding=1),
    "conv_transpose3d-channels": lambda L: F(L).conv_transpose3d(_x(L, 2, 4, 5, 6), _x(L, 4, 6, 1, 1, 1)),
    "max_pool3d-kernel-length": lambda L: F(L).max_pool3d(_x(L, 2, 4, 5, 6, 7), (2, 2)),
    "max_pool3d-stride-length": lambda L: F(L).max_pool3d(_x(L, 2, 4, 5, 6, 7), 2, stride=(1, 2)),
    "max_pool3d-dilation-length": lambda L: F(L).max_pool3d(_x(L, 2, 4, 5, 6, 7), 2, dilation=(1, 2)),
    "max_pool3d-pad": lambda L: F(L).max_pool3d(_x(L, 2, 4, 5, 6, 7), 2, padding=2),
    "max_pool3d-too-small": lambda L: F(L).max_pool3d(_x(L, 2, 4, 5, 6, 7), (7, 1, 1)),
    "max_pool3d-rank": lambda L: F(L).max_pool3d(_x(L, 3, 4, 5), 2),
    "max_pool3d-empty": lambda L: F(L).max_pool3d(_x(L, 4, 0, 5, 6), 2),
    "max_pool3d-stride-negative": lambda L: F(L).max_pool3d(_x(L, 2, 4, 5, 6, 7), 2, stride=-1),
    "max_pool3d-dilation-zero": lambda L: F(L).max_pool3d(_x(L, 2, 4, 5, 6, 7), 2, dilation=0),
    "max_pool3d-bool": lambda L: F(L).max_pool3d(_x(L, 2, 4, 5, 6, 7, dtype=L.bool), 2),
    "avg_pool3d-kernel-length": lambda L: F(L).avg_pool3d(_x(L, 2, 4, 5, 6, 7), (2, 2)),
    "avg_pool3d-stride-length": lambda L: F(L).avg_pool3d(_x(L, 2, 4, 5, 6, 7), 2, stride=(1, 2)),
    "avg_pool3d-smaller-than-kernel": lambda L: F(L).avg_pool3d(_x(L, 0, 4, 5, 6, 7), (6, 1, 1)),
    "avg_pool3d-empty": lambda L: F(L).avg_pool3d(_x(L, 4, 0, 5, 6), 2),
    "avg_pool3d-int32": lambda L: F(L).avg_pool3d(_x(L, 2, 4, 5, 6, 7, dtype=L.int32), 2),
    "avg_pool3d-divisor": lambda L: F(L).avg_pool3d(_x(L, 2, 4, 5, 6, 7), 2, divisor_override=0),
    "adaptive_avg_pool3d-size-length": lambda L: F(L).adaptive_avg_pool3d(_x(L, 2, 4, 5, 6, 7), (2, 3)),
    "adaptive_avg_pool3d-rank": lambda L: F(L).adaptive_avg_pool3d(_x(L, 5, 6), 2),
    "adaptive_avg_pool3d-negative": lambda L: F(L).adaptive_avg_pool3d(_x(L, 2, 4, 5, 6, 7), (1, 2, -3)),
    "adaptive_avg_pool3d-int": lambda L: F(L).adaptive_avg_pool3d(_x(L, 2, 4, 5, 6, 7, dtype=L.int64), 2),
    "adaptive_avg_pool3d-empty": lambda L: F(L).adaptive_avg_pool3d(_x(L, 2, 3, 0, 4, 4), 2),
    "adaptive_max_pool3d-size-length": lambda L: F(L).adaptive_max_pool3d(_x(L, 2, 4, 5, 6, 7), (2, 3)),
    "adaptive_max_pool3d-rank": lambda L: F(L).adaptive_max_pool3d(_x(L, 2, 3, 4, 5, 6, 7), 2),
    "adaptive_max_pool3d-negative": lambda L: F(L).adaptive_max_pool3d(_x(L, 2, 4, 5, 6, 7), (1, 2, -3)),
    "adaptive_max_pool3d-int": lambda L: F(L).adaptive_max_pool3d(_x(L, 2, 4, 5, 6, 7, dtype=L.int32), 2),
    "adaptive_max_pool3d-empty": lambda L: F(L).adaptive_max_pool3d(_x(L, 4, 0, 5, 6), 2),
    "lp_pool3d-kernel-length": lambda L: F(L).lp_pool3d(_x(L, 2, 4, 5, 6, 7), 2, (2, 1)),
    "max_unpool3d-rank": lambda L: F(L).max_unpool3d(_x(L, 2, 2, 2), _x(L, 2, 2, 2, dtype=L.int64), 2),
    "max_unpool3d-indices-dtype": lambda L: F(L).max_unpool3d(_x(L, 1, 2, 2, 2, 2), _x(L, 1, 2, 2, 2, 2, dtype=L.int32), 2),
    "max_unpool3d-indices-shape": lambda L: F(L).max_unpool3d(_x(L, 1, 2, 2, 2, 2), _x(L, 1, 2, 2, 2, 1, dtype=L.int64), 2),
    "max_unpool3d-output-size": lambda L: F(L).max_unpool3d(_x(L, 1, 2, 2, 2, 2), _x(L, 1, 2, 2, 2, 2, dtype=L.int64), 2,
                                                             output_size=(9, 4, 4)),
    "max_unpool3d-index-range": lambda L: F(L).max_unpool3d(_x(L, 1, 2, 2, 2, 2), L.full((1, 2, 2, 2, 2), 64), 2),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_matches_torch(name):
    assert_same_error(lambda: ERRORS[name](ember), lambda: ERRORS[name](torch))


# ---- layers ------------------------------------------------------------------------------------
MODULES = {
    "Conv3d": (lambda L: L.nn.Conv3d(4, 6, (3, 2, 3), stride=(2, 1, 1), padding=1, groups=2), (2, 4, 5, 4, 6), {}),
    "Conv3d-reflect-same": (lambda L: L.nn.Conv3d(3, 2, (2, 3, 2), padding="same", padding_mode="reflect"),
                            (2, 3, 4, 5, 4), {}),
    "Conv3d-circular-unbatched": (lambda L: L.nn.Conv3d(3, 2, 3, padding=1, padding_mode="circular", bias=False),
                                  (3, 4, 5, 4), {}),
    "ConvTranspose3d": (lambda L: L.nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=(1, 0, 1),
                                                       groups=2, dilation=(1, 1, 2)), (2, 4, 3, 4, 3), {}),
    "ConvTranspose3d-output_size": (lambda L: L.nn.ConvTranspose3d(3, 2, 3, stride=2), (2, 3, 3, 4, 3),
                                    dict(output_size=[8, 10, 8])),
    "MaxPool3d": (lambda L: L.nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=1, ceil_mode=True), (2, 3, 5, 6, 7), {}),
    "AvgPool3d": (lambda L: L.nn.AvgPool3d((1, 2, 3), stride=1, padding=(0, 1, 1), divisor_override=3),
                  (2, 3, 4, 5, 6), {}),
    "AdaptiveAvgPool3d": (lambda L: L.nn.AdaptiveAvgPool3d((1, None, 2)), (2, 3, 4, 5, 6), {}),
    "AdaptiveMaxPool3d": (lambda L: L.nn.AdaptiveMaxPool3d(2), (2, 3, 4, 5, 6), {}),
    "LPPool3d": (lambda L: L.nn.LPPool3d(2, 3, stride=(1, 2, 1)), (2, 3, 4, 5, 6), {}),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_module_matches_torch(name):
    make, shape, forward_kw = MODULES[name]
    torch.manual_seed(0)
    t_mod = make(torch).double()
    e_mod = make(ember).double()
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in t_mod.state_dict().items()})
    assert repr(e_mod) == repr(t_mod)
    e_bases, t_bases = ([c.__name__ for c in type(m).__mro__] for m in (e_mod, t_mod))
    assert set(t_bases) <= set(e_bases)  # torch's bases, and no other public class (AvgPool2d)
    assert [b for b in e_bases if hasattr(torch.nn, b)] == [b for b in t_bases if hasattr(torch.nn, b)]
    x = np.random.default_rng(1).standard_normal(shape)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = e_mod(ex, **forward_kw), t_mod(tx, **forward_kw)
    assert_close(eo, to, rtol=1e-10, atol=1e-12)
    g = np.random.default_rng(2).standard_normal(tuple(to.shape))
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    assert_close(ex.grad, tx.grad, rtol=1e-10, atol=1e-12)
    for (_, ep), (_, tp) in zip(e_mod.named_parameters(), t_mod.named_parameters()):
        assert_close(ep.grad, tp.grad, rtol=1e-10, atol=1e-12)


def test_layer_attributes_match_torch():
    for make in (lambda L: L.nn.Conv3d(2, 6, (3, 1, 2), stride=(2, 1, 1), dilation=2, groups=2),
                 lambda L: L.nn.ConvTranspose3d(2, 4, 3, stride=2, output_padding=1),
                 lambda L: L.nn.MaxUnpool3d(2, stride=(1, 2, 1))):
        e_mod, t_mod = make(ember), make(torch)
        for name in getattr(t_mod, "__constants__", []) + ["kernel_size", "stride", "padding"]:
            assert getattr(e_mod, name) == getattr(t_mod, name), name
        for name, tp in t_mod.named_parameters():
            assert tuple(getattr(e_mod, name).shape) == tuple(tp.shape)


def test_top_level_aliases():
    x, w = np.ones((1, 2, 3, 3, 3)), np.ones((2, 2, 2, 2, 2))
    for name in ("conv3d", "conv_transpose3d"):
        assert_close(getattr(ember, name)(ember.tensor(x), ember.tensor(w)), getattr(torch, name)(torch.tensor(x),
                                                                                                   torch.tensor(w)))
    assert_close(ember.max_pool3d(ember.tensor(x), 2), torch.max_pool3d(torch.tensor(x), 2))


def test_spectral_norm_of_conv_transpose3d_normalises_its_output_channels():
    """torch reads a transposed convolution's weight with dim 1 as the output dimension."""
    e_dims = ember.nn.utils.parametrizations.spectral_norm(ember.nn.ConvTranspose3d(2, 3, 2)).parametrizations.weight[0]
    t_dims = torch.nn.utils.parametrizations.spectral_norm(torch.nn.ConvTranspose3d(2, 3, 2)).parametrizations.weight[0]
    assert e_dims.dim == t_dims.dim == 1
    assert tuple(e_dims._u.shape) == tuple(t_dims._u.shape) == (3,)


def test_compiled_and_meta():
    """The compiler's convolution and max-pool C kernels take 2-D geometry only (average pooling's
    take 3-D too); other 3-D nodes run their Python kernels, and the shape rules give meta
    tensors torch's shapes."""
    net = ember.nn.Sequential(ember.nn.Conv3d(2, 3, 3, padding=1), ember.nn.MaxPool3d(2), ember.nn.AvgPool3d(2))
    x = ember.randn(2, 2, 4, 6, 4)
    assert_close(ember.compile(net)(x), net(x), rtol=1e-5, atol=1e-6)
    shapes = []
    for L in (ember, torch):
        with L.device("meta"):
            y = F(L).conv_transpose3d(L.empty(2, 4, 3, 4, 3), L.empty(4, 3, 3, 2, 2), stride=2, output_padding=(0, 1, 0))
            z = F(L).max_pool3d(L.empty(2, 3, 5, 6, 7), 2, ceil_mode=True)
        assert y.is_meta and z.is_meta
        shapes.append((tuple(y.shape), tuple(z.shape)))
    assert shapes[0] == shapes[1]


def test_interpolate_area_on_volumes_is_adaptive_avg_pool3d():
    """interpolate(mode='area') of a 5-D input is adaptive_avg_pool3d, as torch's: values,
    gradients and torch's node names (a 1x1x1 output is a mean)."""
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4, 5))
    for size in ((1, 1, 1), (2, 3, 4), (5, 2, 7)):
        outs = []
        for L in (ember, torch):
            a = L.tensor(x, requires_grad=True)
            y = F(L).interpolate(a, size=size, mode="area")
            (y * L.arange(float(y.numel()), dtype=L.float64).reshape(y.shape)).sum().backward()
            outs.append((y, a.grad, type(y.grad_fn).__name__))
        assert_close(outs[0][0], outs[1][0])
        assert_close(outs[0][1], outs[1][1])
        assert outs[0][2] == outs[1][2]
