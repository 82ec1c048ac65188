"""Tensor methods and torch functions added in session 17 (issue 8), compared with torch 2.13."""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_same_error

RNG = np.random.default_rng(17)


def _pair(shape, dtype="float64", low=-2, high=2):
    a = RNG.uniform(low, high, shape).astype(dtype)
    return ember.tensor(a), torch.tensor(a)


def _same(e, t):
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m, x: x.unique_consecutive(return_counts=True)[1],
    lambda m, x: x.abs().igamma(x.abs() + 1), lambda m, x: x.abs().igammac(x.abs() + 1),
    lambda m, x: x.abs().clone().igamma_(x.abs() + 0.5), lambda m, x: x.abs().clone().igammac_(x.abs() + 0.5),
    lambda m, x: (x.abs() + 2).mvlgamma(2), lambda m, x: (x.abs() + 2).clone().mvlgamma_(3),
    lambda m, x: x.prelu(m.tensor([0.25], dtype=m.float64)), lambda m, x: x.hardshrink(0.7),
    lambda m, x: x.t().narrow_copy(0, 1, 2), lambda m, x: m.narrow_copy(x, 0, 0, 1),
    lambda m, x: x.clone().float_power_(2), lambda m, x: (x > 0).nonzero_static(size=9),
    lambda m, x: m.nonzero_static(x > 0, size=2, fill_value=7), lambda m, x: m.nonzero_static(x[0, 0] > -9, size=2),
    lambda m, x: x.unsafe_split_with_sizes([1, 2], 1)[1], lambda m, x: x.clone().as_strided_((2, 2), (1, 2)),
    lambda m, x: m.vander(x[0]), lambda m, x: m.vander(x[1], N=5, increasing=True),
    lambda m, x: m.vander((x[0] * 3).long(), 2), lambda m, x: m.vander(x[0] > 0, N=0),
    lambda m, x: m.histogramdd(x.t().contiguous(), bins=[2, 3]).hist,
    lambda m, x: m.histogramdd(x.t().contiguous(), bins=2, range=[-3., 3., -1., 1.], density=True).bin_edges[1],
    lambda m, x: m.histogramdd(x.t().contiguous(), bins=[m.tensor([-3., 0., 3.], dtype=m.float64)] * 2,
                               weight=x[0].abs()).hist,
    lambda m, x: m.view_copy(x.t(), m.int64), lambda m, x: m.permute_copy(x, (1, 0)),
    lambda m, x: m.transpose_copy(x, 0, 1), lambda m, x: m.t_copy(x), lambda m, x: m.expand_copy(x[:1], (3, 2, 3)),
    lambda m, x: m.diagonal_copy(x, 1), lambda m, x: m.select_copy(x, 1, -1), lambda m, x: m.slice_copy(x, 1, 0, 3, 2),
    lambda m, x: m.squeeze_copy(x[:1]), lambda m, x: m.unsqueeze_copy(x, -1), lambda m, x: m.unbind_copy(x, 1)[2],
    lambda m, x: m.split_copy(x, 2, 1)[1], lambda m, x: m.split_with_sizes_copy(x, [2, 1], 1)[0],
    lambda m, x: m.unfold_copy(x, 1, 2, 1), lambda m, x: m.alias_copy(x.t()), lambda m, x: m.detach_copy(x),
    lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2), 1), lambda m, x: m.view_as_real_copy(m.view_as_complex_copy(
        x[:, :2].contiguous())),
    # empty tensors
    lambda m, x: m.narrow_copy(x[:0], 1, 1, 2), lambda m, x: m.nonzero_static(x[:0], size=2),
    lambda m, x: m.vander(x[0, :0]), lambda m, x: m.t_copy(x[:0]), lambda m, x: m.split_copy(x[:, :0], 1)[1],
    lambda m, x: m.histogramdd(x[:0, :2], bins=2, range=[0., 1., 0., 1.]).hist,
    lambda m, x: m.histogramdd(x.t().contiguous(), bins=[1, 2], weight=x[0].abs()).hist,
])
def test_values_match_torch(call):
    e, t = _pair((2, 3))
    re, rt = call(ember, e), call(torch, t)
    _same(re, rt)
    assert re.is_contiguous() or not callable(getattr(rt, "is_contiguous", None)) or not rt.is_contiguous()


@pytest.mark.parametrize("call", [
    lambda m, x: m.t_copy(x), lambda m, x: m.expand_copy(x, (2, 2, 3)), lambda m, x: m.narrow_copy(x, 1, 1, 2),
    lambda m, x: m.split_copy(x, 2, 1)[0], lambda m, x: m.unbind_copy(x)[1], lambda m, x: m.slice_copy(x, 1, 1),
    lambda m, x: m.diagonal_copy(x), lambda m, x: m.as_strided_copy(x, (3,), (2,)),
])
def test_gradients_and_nodes_match_torch(call):
    e, t = _pair((2, 3))
    e.requires_grad_(), t.requires_grad_()
    re, rt = call(ember, e), call(torch, t)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    w = RNG.standard_normal(tuple(rt.shape))
    (re * ember.tensor(w)).sum().backward()
    (rt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("increasing", [False, True])
def test_vander_gradient_is_the_derivative_of_the_powers(increasing):
    # torch 2.13's vander cannot be differentiated (its backward reports an in-place change);
    # ember's is, and matches d/dx sum_j w_j x**k_j = sum_j w_j k_j x**(k_j - 1), in float64
    x = RNG.uniform(-2, 2, 5)
    w = RNG.standard_normal((5, 4))
    e = ember.tensor(x, requires_grad=True)
    (ember.vander(e, 4, increasing=increasing) * ember.tensor(w)).sum().backward()
    k = np.arange(4) if increasing else np.arange(3, -1, -1)
    expected = (w * k * x[:, None] ** np.maximum(k - 1, 0)).sum(1)
    np.testing.assert_allclose(e.grad.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_out_and_multi_output_out():
    e, t = _pair((2, 3))
    oe, ot = ember.empty(0, dtype=ember.float64), torch.empty(0, dtype=torch.float64)
    assert ember.t_copy(e, out=oe) is oe and torch.t_copy(t, out=ot) is ot
    _same(oe, ot)
    oes, ots = [ember.empty(1, 3, dtype=ember.float64) for _ in range(2)], [torch.empty(1, 3, dtype=torch.float64)
                                                                             for _ in range(2)]
    assert ember.split_copy(e, 1, out=oes) is None and torch.split_copy(t, 1, out=ots) is None
    for a, b in zip(oes, ots):
        _same(a, b)


@pytest.mark.parametrize("call", [
    lambda m, x: x.float().float_power_(2), lambda m, x: x.clone().float_power_(2j),
    lambda m, x: x.long().float_power_(m.tensor(2.)), lambda m, x: m.nonzero_static(x, size=-1),
    lambda m, x: m.vander(x), lambda m, x: m.vander(x[0], N=-1),
    lambda m, x: x.clone().map2_(x.long(), x, lambda a, b, c: a),
    lambda m, x: x.clone().requires_grad_().map2_(x, x, lambda a, b, c: a),
    lambda m, x: x.dim_order(ambiguity_check="ILLEGAL"), lambda m, x: x[:1].dim_order(ambiguity_check=True),
    lambda m, x: m.symeig(x), lambda m, x: m.eig(x), lambda m, x: m.lstsq(x, x), lambda m, x: m.solve(x, x),
    lambda m, x: m.matrix_rank(x), lambda m, x: x.symeig(), lambda m, x: x.eig(True), lambda m, x: x.lstsq(x),
    lambda m, x: x.solve(x), lambda m, x: m.ones(2, requires_grad=True).__dlpack__(),
    lambda m, x: m.solve(x), lambda m, x: m.lstsq(x), lambda m, x: m.solve(), lambda m, x: m.symeig(),
    lambda m, x: m.matrix_rank(x, 1e-3, True, 1), lambda m, x: x.solve(), lambda m, x: x.lstsq(),
    lambda m, x: x.eig(True, True), lambda m, x: m.eig(x, e=None, w=None),
    lambda m, x: m.split_copy(x, [1, 2], 1), lambda m, x: m.split_copy(x, (1, 1)), lambda m, x: m.split_copy(x, 1.0),
    lambda m, x: m.view_as_complex_copy(m.ones(2, 2, requires_grad=True)),
    lambda m, x: m.histogramdd(x.long(), bins=2), lambda m, x: m.histogramdd(x.half(), bins=2),
    lambda m, x: m.histogramdd(x[0], bins=2), lambda m, x: m.arange(3).igamma_(m.ones(3)),
    lambda m, x: m.split_copy(x, 1, out=[m.empty(1, 3)]), lambda m, x: m.unbind_copy(x, out=[m.empty(3)] * 3),
    lambda m, x: m.split_with_sizes_copy(x, [1, 2], 1, out=[m.empty(1)]), lambda m, x: m.slice_copy(x, 1, 0, 3, 0),
    lambda m, x: m.ones(3).dim_order(ambiguity_check=[1]),
])
def test_errors_match_torch(call):
    e, t = _pair((2, 3))
    assert_same_error(lambda: call(ember, e), lambda: call(torch, t))


def test_map2_dim_order_and_predicates():
    e, t = _pair((2, 3))
    fn = lambda a, b, c: a * b - c  # noqa: E731
    _same(e.clone().map2_(e[0], e.t().contiguous().t(), fn), t.clone().map2_(t[0], t.t().contiguous().t(), fn))
    for shape, perm in (((2, 3, 4, 5), (0, 2, 1, 3)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((3, 4), (1, 0))):
        ee, tt = ember.zeros(shape).permute(perm), torch.zeros(shape).permute(perm)
        assert ee.dim_order() == tt.dim_order() and ee.dim_order(ambiguity_check=True) == tt.dim_order(
            ambiguity_check=True)
    fmt = [ember.contiguous_format, ember.channels_last]
    assert ember.zeros(1, 2, 3, 4).dim_order(ambiguity_check=fmt) == torch.zeros(1, 2, 3, 4).dim_order(
        ambiguity_check=[torch.contiguous_format, torch.channels_last])
    for name in ("is_nested", "is_mkldnn", "is_mps", "is_xla", "is_vulkan", "is_ipu", "is_maia", "is_mtia"):
        assert getattr(e, name) is getattr(t, name) is False
    for name in ("is_pinned", "is_distributed", "is_inference", "get_device"):
        assert getattr(e, name)() == getattr(t, name)()
    assert ember.get_device(e) == torch.get_device(t) == -1 and ember.is_inference(e) is False
    assert e.const_data_ptr() == e.data_ptr() and e.output_nr == t.output_nr == 0
    r, rt = e.requires_grad_().sort(1), t.requires_grad_().sort(1)
    assert r.values.output_nr == rt.values.output_nr == 0
    assert e.new_empty_strided((2, 2), (1, 2), dtype=ember.int32).stride() == (1, 2)
    assert e.new_empty_strided((2,), (1,)).dtype is ember.float64
    assert ember.is_storage(e.untyped_storage()) and not ember.is_storage(e)


def test_dlpack_round_trips_share_memory():
    a = np.arange(4.)
    e = ember.from_dlpack(a)
    e[0] = 9.
    assert a[0] == 9.
    back = np.from_dlpack(e)
    back[1] = 7.
    assert e[1].item() == 7.
    t = torch.from_dlpack(e)
    t[2] = 5.
    assert e[2].item() == 5.
    from_torch = ember.from_dlpack(torch.arange(3, dtype=torch.int32))
    assert from_torch.dtype is ember.int32 and from_torch.tolist() == [0, 1, 2]
    capsule = ember.utils.dlpack.to_dlpack(e)
    again = ember.utils.dlpack.from_dlpack(capsule)
    again[3] = 1.
    assert a[3] == 1. and ember.to_dlpack is ember.utils.dlpack.to_dlpack
