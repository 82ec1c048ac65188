"""Pooling (max, average, adaptive, unpooling, power-average) against torch: values, indices
and gradients over a grid of kernel x stride x padding x dilation x ceil_mode, odd sizes and
1-pixel outputs, torch's tie and NaN rules, the errors torch raises, and the layers."""
import itertools

import numpy as np
import pytest
import torch

import ember
from harness import Case, D, I, R, V, check, inf, nan, params
from torchcompare import assert_close


def F(L):
    return L.nn.functional


KERNELS, STRIDES, PADDINGS, DILATIONS = (1, 2, 3), (None, 1, 2), (0, 1), (1, 2)


def max_pool_grid():
    cases = []
    for k, s, p, d, c in itertools.product(KERNELS, STRIDES, PADDINGS, DILATIONS, (False, True)):
        kw = dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=c)
        tag = f"k{k}-s{s}-p{p}-d{d}-c{int(c)}"
        cases.append(Case(f"max2d-{tag}", lambda L, x, kw=kw: F(L).max_pool2d(x, **kw, return_indices=True),
                          D(2, 3, 7, 6)))
        cases.append(Case(f"max1d-{tag}", lambda L, x, kw=kw: F(L).max_pool1d(x, **kw, return_indices=True),
                          D(2, 3, 7)))
    return cases


def avg_pool_grid():
    cases = []
    for k, s, p, c, inc in itertools.product(KERNELS, STRIDES, PADDINGS, (False, True), (False, True)):
        kw = dict(kernel_size=k, stride=s, padding=p, ceil_mode=c, count_include_pad=inc)
        tag = f"k{k}-s{s}-p{p}-c{int(c)}-i{int(inc)}"
        cases.append(Case(f"avg2d-{tag}", lambda L, x, kw=kw: F(L).avg_pool2d(x, **kw), R(2, 3, 7, 6)))
        cases.append(Case(f"avg1d-{tag}", lambda L, x, kw=kw: F(L).avg_pool1d(x, **kw), R(2, 3, 7)))
    return cases


@pytest.mark.parametrize("case,dtype", params(max_pool_grid()))
def test_max_pool_grid(case, dtype):
    check(case, dtype)


@pytest.mark.parametrize("case,dtype", params(avg_pool_grid()))
def test_avg_pool_grid(case, dtype):
    check(case, dtype)


def mp2(**kw):
    return lambda L, x: F(L).max_pool2d(x, return_indices=True, **kw)


POOL_CASES = [
    # Rectangular kernels and strides, unbatched inputs, one-pixel outputs.
    Case("max2d-rect", mp2(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0), dilation=(2, 1)), D(2, 2, 5, 7)),
    Case("max2d-unbatched", mp2(kernel_size=2), D(3, 4, 5)),
    Case("max2d-one-pixel", mp2(kernel_size=3), D(2, 2, 3, 3)),
    Case("max2d-one-pixel-ceil", mp2(kernel_size=2, stride=2, ceil_mode=True), D(1, 2, 1, 1)),
    Case("max2d-ceil-last-window", mp2(kernel_size=3, stride=2, padding=1, ceil_mode=True), D(1, 1, 6, 5)),
    Case("max2d-empty-batch", mp2(kernel_size=2), R(0, 3, 4, 4)),
    Case("max2d-int", lambda L, x: F(L).max_pool2d(x, 2, 1), I(2, 2, 4, 4), dtypes=(None,)),
    Case("max2d-uint8", lambda L, x: F(L).max_pool2d(x, 2), I(1, 2, 4, 4, low=0, high=200, dtype="uint8"),
         dtypes=(None,)),
    # Ties: the gradient goes to the first maximum of the window (row-major).
    Case("max2d-ties", mp2(kernel_size=2, stride=1), V([[[[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]]]])),
    Case("max1d-ties-overlap", lambda L, x: F(L).max_pool1d(x, 3, 1, 1, return_indices=True),
         V([[[2.0, 2.0, 2.0, 1.0, 2.0]]])),
    # NaN beats any number; -inf inputs and windows starting in the padding keep their first real tap.
    Case("max2d-nan", mp2(kernel_size=2), V([[[[nan, 1.0, 2.0, 3.0], [0.0, nan, 4.0, 5.0]]]]), grad=False),
    Case("max2d-neg-inf", mp2(kernel_size=(1, 2), stride=1, padding=(0, 1)), V([[[-inf, -inf, -inf]]])),
    Case("max2d-inf", mp2(kernel_size=2), V([[[[inf, 1.0], [2.0, inf]]]])),
    Case("max1d-noindices", lambda L, x: F(L).max_pool1d(x, 2, 1, ceil_mode=True), D(3, 5)),
    Case("max1d-list-args", lambda L, x: F(L).max_pool1d(x, [3], [2], [1]), D(2, 3, 8)),
    Case("avg2d-divisor", lambda L, x: F(L).avg_pool2d(x, 3, 2, 1, divisor_override=2), R(2, 3, 7, 6)),
    Case("avg2d-rect", lambda L, x: F(L).avg_pool2d(x, (2, 3), (3, 1), (1, 1), ceil_mode=True,
                                                    count_include_pad=False), R(2, 2, 8, 7)),
    Case("avg2d-unbatched", lambda L, x: F(L).avg_pool2d(x, 2), R(3, 4, 5)),
    Case("avg2d-int", lambda L, x: F(L).avg_pool2d(x, 2, 1, 1, ceil_mode=True), I(2, 2, 4, 5), dtypes=(None,)),
    Case("avg1d-unbatched", lambda L, x: F(L).avg_pool1d(x, 3, 2, 1, True, False), R(3, 8)),
    Case("lp2d", lambda L, x: F(L).lp_pool2d(x, 2.0, 2), R(2, 3, 6, 5)),
    Case("lp1d-p3", lambda L, x: F(L).lp_pool1d(x.abs() + 0.1, 3.0, 3, 2, ceil_mode=True), R(2, 3, 8)),
]


def adaptive_cases():
    cases = []
    for out in (1, 2, 3, 5, 7, (None, 4), (2, None), (3, 1), (9, 8)):
        for name in ("avg", "max"):
            extra = (True,) if name == "max" else ()
            cases.append(Case(f"adaptive-{name}2d-{out}", lambda L, x, out=out, name=name, extra=extra:
                              getattr(F(L), f"adaptive_{name}_pool2d")(x, out, *extra), D(2, 3, 7, 6)))
    for out in (1, 3, 4, 7, 10):
        cases.append(Case(f"adaptive-avg1d-{out}", lambda L, x, out=out: F(L).adaptive_avg_pool1d(x, out),
                          R(2, 3, 7)))
        cases.append(Case(f"adaptive-max1d-{out}", lambda L, x, out=out: F(L).adaptive_max_pool1d(x, out, True),
                          D(2, 3, 7)))
    cases += [
        Case("adaptive-avg2d-unbatched", lambda L, x: F(L).adaptive_avg_pool2d(x, (2, 3)), R(3, 5, 7)),
        Case("adaptive-max2d-unbatched", lambda L, x: F(L).adaptive_max_pool2d(x, 2), D(3, 5, 7)),
        Case("adaptive-avg2d-zero-out", lambda L, x: F(L).adaptive_avg_pool2d(x, (0, 2)), R(2, 3, 4, 4), grad=False),
        Case("adaptive-max2d-ties", lambda L, x: F(L).adaptive_max_pool2d(x, 2, True),
             V([[[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]]])),
        Case("adaptive-max2d-nan", lambda L, x: F(L).adaptive_max_pool2d(x, 1, True),
             V([[[[0.0, nan], [nan, 1.0]]]]), grad=False),
    ]
    return cases


@pytest.mark.parametrize("case,dtype", params(POOL_CASES + adaptive_cases()))
def test_pool_cases(case, dtype):
    check(case, dtype)


def unpool(L, x, pool_kw, unpool_kw):
    values, indices = F(L).max_pool2d(x, return_indices=True, **pool_kw)
    return F(L).max_unpool2d(values, indices, **unpool_kw)


UNPOOL_CASES = [
    Case("unpool2d", lambda L, x: unpool(L, x, dict(kernel_size=2), dict(kernel_size=2)), D(2, 3, 6, 6)),
    Case("unpool2d-odd", lambda L, x: unpool(L, x, dict(kernel_size=2), dict(kernel_size=2, output_size=(7, 7))),
         D(2, 3, 7, 7)),
    Case("unpool2d-overlap", lambda L, x: unpool(L, x, dict(kernel_size=3, stride=1, padding=1),
                                                 dict(kernel_size=3, stride=1, padding=1)), D(1, 2, 4, 5)),
    Case("unpool2d-output-size-4", lambda L, x: unpool(L, x, dict(kernel_size=2),
                                                       dict(kernel_size=2, output_size=(1, 1, 7, 6))), D(1, 1, 7, 6)),
    Case("unpool1d", lambda L, x: F(L).max_unpool1d(*F(L).max_pool1d(x, 2, return_indices=True), 2),
         D(2, 3, 8)),
    Case("unpool2d-bad-output-size", lambda L, x: unpool(L, x, dict(kernel_size=2),
                                                         dict(kernel_size=2, output_size=(3, 3))), D(1, 1, 4, 4)),
    Case("unpool2d-output-size-length", lambda L, x: unpool(L, x, dict(kernel_size=2),
                                                            dict(kernel_size=2, output_size=(1, 4, 4))),
         D(1, 1, 4, 4)),
    Case("unpool2d-bad-index", lambda L, x, i: F(L).max_unpool2d(x, i, 2), R(1, 1, 2, 2),
         I(1, 1, 2, 2, low=16, high=20)),
    Case("unpool2d-negative-index", lambda L, x, i: F(L).max_unpool2d(x, i, 2), R(1, 1, 2, 2),
         I(1, 1, 2, 2, low=-3, high=-1)),
    Case("unpool2d-float-index", lambda L, x, i: F(L).max_unpool2d(x, i.float(), 2), R(1, 1, 2, 2),
         I(1, 1, 2, 2, low=0, high=4)),
    Case("unpool2d-shape-mismatch", lambda L, x, i: F(L).max_unpool2d(x, i, 2), R(1, 1, 2, 2),
         I(1, 1, 2, 3, low=0, high=4)),
    Case("unpool2d-rank", lambda L, x, i: F(L).max_unpool2d(x, i, 2), R(2, 2), I(2, 2, low=0, high=4)),
]


@pytest.mark.parametrize("case,dtype", params(UNPOOL_CASES))
def test_unpool(case, dtype):
    check(case, dtype)


# Every call torch rejects: ember must raise the same exception class (the harness checks).
ERROR_CASES = [
    Case("max2d-pad-too-big", mp2(kernel_size=3, padding=2), R(1, 1, 5, 5)),
    Case("max2d-window-too-big", mp2(kernel_size=6), R(1, 1, 5, 5)),
    Case("max2d-stride-zero", mp2(kernel_size=2, stride=0), R(1, 1, 5, 5)),
    Case("max2d-stride-negative", mp2(kernel_size=2, stride=-1), R(1, 1, 5, 5)),
    Case("max2d-kernel-zero", mp2(kernel_size=0, stride=1), R(1, 1, 5, 5)),
    Case("max2d-dilation-zero", mp2(kernel_size=2, dilation=0), R(1, 1, 5, 5)),
    Case("max2d-pad-negative", mp2(kernel_size=2, padding=-1), R(1, 1, 5, 5)),
    Case("max2d-kernel-3-ints", mp2(kernel_size=(2, 2, 2)), R(1, 1, 5, 5)),
    Case("max2d-rank-2", mp2(kernel_size=2), R(5, 5)),
    Case("max2d-rank-5", mp2(kernel_size=2), R(1, 1, 1, 5, 5)),
    Case("max2d-empty-plane", mp2(kernel_size=1), R(1, 3, 0, 5)),
    Case("max2d-bool", lambda L, x: F(L).max_pool2d(x > 0, 2), R(1, 1, 4, 4)),
    Case("max1d-window-too-big", lambda L, x: F(L).max_pool1d(x, 6), R(2, 3, 5)),
    Case("max1d-pad-too-big", lambda L, x: F(L).max_pool1d(x, 3, 1, 2), R(2, 3, 5)),
    Case("max1d-stride-zero", lambda L, x: F(L).max_pool1d(x, 2, 0), R(2, 3, 5)),
    Case("max1d-kernel-2-ints", lambda L, x: F(L).max_pool1d(x, (2, 2)), R(2, 3, 5)),
    Case("max1d-rank", lambda L, x: F(L).max_pool1d(x, 2), R(5)),
    Case("avg2d-window-too-big", lambda L, x: F(L).avg_pool2d(x, 6), R(1, 1, 5, 5)),
    Case("avg2d-pad-too-big", lambda L, x: F(L).avg_pool2d(x, 3, padding=2), R(1, 1, 5, 5)),
    Case("avg2d-stride-zero", lambda L, x: F(L).avg_pool2d(x, 2, 0), R(1, 1, 5, 5)),
    Case("avg2d-divisor-zero", lambda L, x: F(L).avg_pool2d(x, 2, divisor_override=0), R(1, 1, 5, 5)),
    Case("avg2d-rank-2", lambda L, x: F(L).avg_pool2d(x, 2), R(5, 5)),
    Case("avg1d-window-too-big", lambda L, x: F(L).avg_pool1d(x, 6), R(2, 3, 5)),
    Case("avg1d-rank", lambda L, x: F(L).avg_pool1d(x, 2), R(5)),
    Case("adaptive-avg2d-rank", lambda L, x: F(L).adaptive_avg_pool2d(x, 2), R(5, 5)),
    Case("adaptive-avg2d-negative", lambda L, x: F(L).adaptive_avg_pool2d(x, -1), R(1, 1, 5, 5)),
    Case("adaptive-avg2d-empty", lambda L, x: F(L).adaptive_avg_pool2d(x, 2), R(1, 1, 0, 5)),
    Case("adaptive-max2d-rank", lambda L, x: F(L).adaptive_max_pool2d(x, 2), R(5, 5)),
    Case("adaptive-max2d-3-sizes", lambda L, x: F(L).adaptive_max_pool2d(x, (2, 2, 2)), R(1, 1, 5, 5)),
    Case("adaptive-avg1d-2-sizes", lambda L, x: F(L).adaptive_avg_pool1d(x, (2, 2)), R(1, 2, 5)),
    Case("adaptive-avg2d-int", lambda L, x: F(L).adaptive_avg_pool2d(x, 2), I(1, 1, 4, 4), dtypes=(None,)),
    Case("adaptive-max2d-int", lambda L, x: F(L).adaptive_max_pool2d(x, 2), I(1, 1, 4, 4), dtypes=(None,)),
]


@pytest.mark.parametrize("case,dtype", params(ERROR_CASES))
def test_pool_errors(case, dtype):
    check(case, dtype)


@pytest.mark.parametrize("call, match", [
    (lambda L, x: F(L).max_pool2d(x, 3, padding=2), "pad should be at most half of effective kernel size"),
    (lambda L, x: F(L).max_pool2d(x, 6), r"Given input size: \(1x5x5\)\. Calculated output size: "
                                         r"\(1x0x0\)\. Output size is too small"),
    (lambda L, x: F(L).avg_pool2d(x, 2, -1), "stride should be greater than zero"),
    (lambda L, x: F(L).max_pool2d(x, 2, 0), "stride should not be zero"),
])
def test_pool_error_messages(call, match):
    x = np.zeros((1, 1, 5, 5), np.float32)
    with pytest.raises(RuntimeError, match=match):
        call(torch, torch.tensor(x))
    with pytest.raises(RuntimeError, match=match):
        call(ember, ember.tensor(x))


@pytest.mark.parametrize("name, call", [
    ("max_pool2d", lambda L, x: F(L).max_pool2d(x, 3, 2, 1, ceil_mode=True)),
    ("max_pool2d-overlap", lambda L, x: F(L).max_pool2d(x, 2, 1)),
    ("avg_pool2d", lambda L, x: F(L).avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    ("adaptive_max_pool2d", lambda L, x: F(L).adaptive_max_pool2d(x, (3, 2))),
    ("adaptive_avg_pool2d", lambda L, x: F(L).adaptive_avg_pool2d(x, (3, 4))),
    ("max_unpool2d", lambda L, x: F(L).max_unpool2d(*F(L).max_pool2d(x, 2, return_indices=True), 2)),
])
def test_double_backward_through_upstream_gradient(name, call):
    """Pooling is (piecewise) linear: its gradient is a linear map of the upstream gradient
    ``g``, and the derivative of that map w.r.t. ``g`` must be the pooling again."""
    rng = np.random.default_rng(0)
    x = (rng.permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) / 7.0).astype(np.float64)
    results = []
    for L in (torch, ember):
        xt = L.tensor(x, requires_grad=True)
        y = call(L, xt)
        g = L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), requires_grad=True)
        (gx,) = L.autograd.grad(y, xt, g, create_graph=True)
        w = L.tensor(np.cos(np.arange(x.size)).reshape(x.shape))
        (gg,) = L.autograd.grad((gx * w).sum(), g)
        results.append((gx, gg))
    for e, t in zip(results[1], results[0]):
        assert_close(e, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, call, shape", [
    ("avg_pool1d", lambda L, x: F(L).avg_pool1d(x, 3, 2, 1), (2, 3, 9)),
    ("avg_pool2d", lambda L, x: F(L).avg_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 3, 7, 6)),
    ("avg_pool3d", lambda L, x: F(L).avg_pool3d(x, 2, 2, 1, ceil_mode=True), (1, 2, 5, 5, 4)),
    ("adaptive_avg_pool1d", lambda L, x: F(L).adaptive_avg_pool1d(x, 3), (2, 3, 7)),
    ("adaptive_avg_pool2d", lambda L, x: F(L).adaptive_avg_pool2d(x, (3, 2)), (2, 3, 7, 6)),
    ("adaptive_avg_pool2d-same", lambda L, x: F(L).adaptive_avg_pool2d(x, (7, 6)), (2, 3, 7, 6)),
    ("adaptive_avg_pool3d", lambda L, x: F(L).adaptive_avg_pool3d(x, (2, 3, 2)), (1, 2, 5, 5, 4)),
    ("adaptive_max_pool1d", lambda L, x: F(L).adaptive_max_pool1d(x, 3), (2, 3, 7)),
    ("adaptive_max_pool2d", lambda L, x: F(L).adaptive_max_pool2d(x, (3, 2)), (2, 3, 7, 6)),
    ("adaptive_max_pool3d", lambda L, x: F(L).adaptive_max_pool3d(x, (2, 3, 2)), (1, 2, 5, 5, 4)),
    ("max_pool2d", lambda L, x: F(L).max_pool2d(x, 3, 2, 1), (2, 3, 7, 6)),
])
def test_second_derivative_through_the_input_is_torchs(name, call, shape):
    """Under ``create_graph`` the gradient of a (piecewise) linear pool lies in the input's
    graph, as torch's (its backward kernel takes ``self``): differentiating it again w.r.t. the
    input gives torch's zeros, not an error, and w.r.t. the upstream gradient the pool again."""
    x = np.random.default_rng(1).standard_normal(shape)
    results = []
    for L in (torch, ember):
        xt = L.tensor(x, requires_grad=True)
        y = call(L, xt)
        g = L.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape)), requires_grad=True)
        (gx,) = L.autograd.grad(y, xt, g, create_graph=True)
        assert gx.requires_grad
        (through_x,) = L.autograd.grad(gx.sum(), xt, retain_graph=True)
        (through_g,) = L.autograd.grad(gx, g, L.ones_like(gx))
        results.append((through_x, through_g))
    for e, t in zip(results[1], results[0]):
        assert_close(e, t, rtol=1e-12, atol=1e-12)


def test_max_pool_gradient_goes_to_first_maximum():
    x = ember.tensor([[[[3.0, 3.0], [3.0, 3.0]]]], requires_grad=True)
    ember.nn.functional.max_pool2d(x, 2).sum().backward()
    assert x.grad.tolist() == [[[[1.0, 0.0], [0.0, 0.0]]]]


def test_max_pool_without_grad_records_nothing():
    x = ember.randn(2, 3, 6, 6, requires_grad=True)
    with ember.no_grad():
        y = ember.nn.functional.max_pool2d(x, 2)
    assert y.grad_fn is None and not y.requires_grad
    assert ember.nn.functional.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"


def _module_pairs():
    return [
        ("MaxPool1d", (3,), {}, (2, 3, 9)),
        ("MaxPool1d", (2,), {"stride": 1, "padding": 1, "dilation": 2, "return_indices": True,
                             "ceil_mode": True}, (2, 3, 9)),
        ("MaxPool2d", ((3, 2),), {"stride": (2, 1)}, (2, 3, 8, 7)),
        ("MaxPool2d", (3, 2, 1, 2, True, True), {}, (2, 3, 8, 7)),
        ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
         (2, 3, 9)),
        ("AvgPool2d", ((2, 3),), {"stride": 1, "padding": 1, "divisor_override": 4}, (2, 3, 6, 7)),
        ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
        ("AdaptiveAvgPool2d", ((None, 3),), {}, (2, 3, 6, 7)),
        ("AdaptiveMaxPool1d", (4, True), {}, (2, 3, 9)),
        ("AdaptiveMaxPool2d", (2,), {}, (2, 3, 6, 7)),
        ("LPPool1d", (2, 3), {"stride": 2}, (2, 3, 9)),
        ("LPPool2d", (1.5, (2, 3)), {"ceil_mode": True}, (2, 3, 6, 7)),
    ]


@pytest.mark.parametrize("name, args, kwargs, shape", _module_pairs())
def test_modules_match_torch(name, args, kwargs, shape):
    e_mod, t_mod = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e_mod) == repr(t_mod)
    x = np.random.default_rng(1).permutation(int(np.prod(shape))).reshape(shape).astype(np.float32) / 10
    if name.startswith("LP"):
        x = np.abs(x) + 0.1
    e_out, t_out = e_mod(ember.tensor(x)), t_mod(torch.tensor(x))
    if isinstance(t_out, tuple):
        assert_close(e_out[1], t_out[1])
        e_out, t_out = e_out[0], t_out[0]
    assert_close(e_out, t_out, rtol=1e-5, atol=1e-6)


def _unpool_with_modules(L, x):
    pool, unpool = L.nn.MaxPool2d(2, stride=2, return_indices=True), L.nn.MaxUnpool2d(2)
    pool1, unpool1 = L.nn.MaxPool1d(2, return_indices=True), L.nn.MaxUnpool1d(2, stride=2)
    values, indices = pool(L.tensor(x))
    return (unpool(values, indices, output_size=(8, 7)), unpool1(*pool1(L.tensor(x[:, :, 0]))),
            repr(unpool) + repr(unpool1))


def test_max_unpool_modules_match_torch():
    x = np.random.default_rng(2).permutation(2 * 3 * 8 * 7).reshape(2, 3, 8, 7).astype(np.float32)
    e2d, e1d, e_repr = _unpool_with_modules(ember, x)
    t2d, t1d, t_repr = _unpool_with_modules(torch, x)
    assert_close(e2d, t2d)
    assert_close(e1d, t1d)
    assert e_repr == t_repr


@pytest.mark.parametrize("pool", [
    lambda L, x: F(L).max_pool2d(x, 2),
    lambda L, x: F(L).max_pool2d(x, 3, 1, 1, return_indices=True)[0],
    lambda L, x: F(L).adaptive_max_pool2d(x, 3),
])
def test_pooled_output_may_be_changed_in_place(pool):
    """Max pooling's derivative needs only the argmax, so an in-place op on its output (a
    common ``MaxPool2d`` then ``ReLU(inplace=True)``) leaves backward working, as in torch."""
    x = np.random.default_rng(7).permutation(2 * 2 * 6 * 6).reshape(2, 2, 6, 6).astype(np.float32) - 36
    grads = []
    for L in (torch, ember):
        xt = L.tensor(x, requires_grad=True)
        F(L).relu(pool(L, xt), inplace=True).sum().backward()
        grads.append(xt.grad)
    assert_close(grads[1], grads[0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kw,size", [(dict(kernel_size=2), (8, 8)), (dict(kernel_size=2), (9, 7)),
                                     (dict(kernel_size=(1, 3), stride=(2, 3)), (7, 9)),
                                     (dict(kernel_size=2, dilation=2, stride=3), (8, 8))])
def test_max_pool_gradient_of_disjoint_windows_bit_for_bit(kw, size, dtype):
    """Windows that never overlap take the masked strided writes: every gradient bit (signed
    zeros, infinities, NaN) as torch's, for a non-contiguous upstream gradient, with tiling and
    uncovered tails."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3) + size).astype(dtype)
    xs = [L.tensor(x, requires_grad=True) for L in (ember, torch)]
    outs = [F(L).max_pool2d(t, **kw) for L, t in zip((ember, torch), xs)]
    shape = outs[1].shape
    g = rng.standard_normal(shape[:2] + shape[:1:-1]).astype(dtype)  # transposed below: not contiguous
    g.reshape(-1)[:3] = [-0.0, np.inf, np.nan]
    for L, out in zip((ember, torch), outs):
        out.backward(L.tensor(g).transpose(-1, -2))
    assert outs[0].detach().numpy().tobytes() == outs[1].detach().numpy().tobytes()
    assert xs[0].grad.numpy().tobytes() == xs[1].grad.numpy().tobytes()


@pytest.mark.parametrize("shape, stride", [
    ((2, 3, 1), 2), ((2, 3, 1, 4), 1), ((1, 2, 1, 2, 2), 2), ((1, 1, 2, 3, 1), (1, 2, 1)), ((1, 1, 3, 1), 2),
])
def test_windows_of_padding_only_report_torchs_index(shape, stride):
    """A window lying wholly in the padding along a dim (kernel 2, dilation 2 over a dim of
    length 1) reports torch's index: its starts moved past the left padding by whole dilation
    steps, which may lie past the plane (torch's own backward then writes outside the plane,
    so only its indices are compared here)."""
    x = np.random.default_rng(3).standard_normal(shape)
    name = {3: "max_pool1d", 4: "max_pool2d", 5: "max_pool3d"}[len(shape)]
    kw = dict(kernel_size=2, stride=stride, padding=1, dilation=2, ceil_mode=True)
    (yt, it), (ye, ie) = (getattr(F(L), name)(L.tensor(x), return_indices=True, **kw) for L in (torch, ember))
    assert_close(ye, yt, rtol=0, atol=0)
    assert ie.tolist() == it.tolist()


@pytest.mark.parametrize("shape, name, stride", [
    ((1, 1, 3, 1), "max_pool2d", 2), ((1, 1, 2, 3, 1), "max_pool3d", (1, 2, 1)), ((1, 1, 2, 3, 1), "max_pool3d", 2),
])
def test_gradient_of_windows_of_padding_only_goes_where_torchs_does(shape, name, stride):
    """Where torch's index of a window of padding only lies inside the plane, its gradient is
    added there (torch's kernel); eager and compiled agree (the 2-D C kernel)."""
    x = np.random.default_rng(4).standard_normal(shape)
    kw = dict(kernel_size=2, stride=stride, padding=1, dilation=2, ceil_mode=True)
    grads = []
    for L in (torch, ember):
        xt = L.tensor(x, requires_grad=True)
        y = getattr(F(L), name)(xt, **kw)
        (gx,) = L.autograd.grad(y, xt, L.tensor(np.linspace(1, 2, y.numel()).reshape(tuple(y.shape))))
        grads.append(gx)
    assert grads[0].abs().sum() > 0
    assert_close(grads[1], grads[0], rtol=0, atol=0)
    if name == "max_pool2d":
        xe = ember.tensor(x, requires_grad=True)
        compiled = ember.compile(lambda t: getattr(F(ember), name)(t, **kw))
        y = compiled(xe)
        y.backward(ember.tensor(np.linspace(1, 2, y.numel()).reshape(tuple(y.shape))))
        assert_close(xe.grad, grads[0], rtol=0, atol=0)


def test_gradient_of_windows_of_padding_only_past_the_plane_is_dropped():
    """torch's backward writes such a gradient past the plane (into the next plane, or past
    the tensor's end: heap corruption); ember drops it, at first and second order."""
    x = ember.randn(1, 3, 1, 2, 2, dtype=ember.float64, requires_grad=True)
    y, index = F(ember).max_pool3d(x, 2, padding=1, dilation=2, return_indices=True)
    assert index.flatten().tolist() == [7, 7, 7]
    g = ember.ones_like(y, requires_grad=True)
    (gx,) = ember.autograd.grad(y, x, g, create_graph=True)
    assert gx.abs().sum().item() == 0
    (gg,) = ember.autograd.grad(gx.sum(), g)
    assert gg.abs().sum().item() == 0
