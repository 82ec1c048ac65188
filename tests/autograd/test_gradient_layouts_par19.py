"""Gradient layouts torch gives: a mean's input gradient is a new contiguous tensor (torch's
formula divides the expanded gradient), where a sum's is the expanded view (stride 0); so are
the gradients of the poolings that average everything (``adaptive_avg_pool1d/2d`` to size 1)."""
import numpy as np
import pytest

import ember
from torchcompare import assert_close, to_torch, torch


def _grad(module, f, x, g=None):
    x = to_torch(x, True) if module is torch else x.detach().requires_grad_(True)
    out = f(module, x)
    return module.autograd.grad(out, x, g if g is not None else module.ones_like(out))[0]


CASES = {
    "mean": (lambda m, x: x.mean(), (3, 4)),
    "mean-dim": (lambda m, x: x.mean(1), (3, 4)),
    "mean-dims-keepdim": (lambda m, x: x.mean((0, 2), keepdim=True), (2, 3, 4)),
    "mean-transposed": (lambda m, x: x.t().mean(0), (4, 3)),
    "mean-one-row": (lambda m, x: x.mean(-1), (1, 5)),
    "mean-empty-dim": (lambda m, x: x.mean(0), (0, 3)),
    "mean-method-dtype": (lambda m, x: m.mean(x, 1, dtype=m.float64), (3, 4)),
    "sum": (lambda m, x: x.sum(), (3, 4)),
    "sum-dim": (lambda m, x: x.sum(1), (3, 4)),
    "adaptive_avg_pool1d-1": (lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 1), (2, 3, 8)),
    "adaptive_avg_pool2d-1": (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1), (2, 3, 4, 4)),
    "adaptive_avg_pool1d-4": (lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 4), (2, 3, 8)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_reduction_gradients_have_torchs_values_and_strides(case):
    f, shape = CASES[case]
    x = ember.randn(*shape)
    e, t = _grad(ember, f, x), _grad(torch, f, x)
    assert_close(e, t)
    if e.numel() > 1:
        assert e.stride() == t.stride(), (e.stride(), t.stride())


def test_mean_gradient_is_a_new_tensor_whose_second_derivative_is_torchs():
    data = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for module in (ember, torch):
        x = module.tensor(data, requires_grad=True)
        (g,) = module.autograd.grad((x * x).mean(1).sum(), x, create_graph=True)
        g.mul_(1.0)  # a new tensor: writable in place (an expanded view is not)
        (gg,) = module.autograd.grad(g.sum(), x)
        results.append((g, gg))
    (eg, egg), (tg, tgg) = results
    assert_close(eg, tg, rtol=1e-12, atol=1e-12)
    assert_close(egg, tgg, rtol=1e-12, atol=1e-12)
    assert eg.stride() == tg.stride()


def _cl(module, t):
    return t.contiguous(memory_format=module.channels_last)


LAYOUT_CASES = {  # input layout -> gradient layout, as torch's formulas make it
    "std-transposed": (lambda m, x: x.std(0), lambda m, x: x.t(), (3, 5)),
    "std-all-transposed": (lambda m, x: x.std(), lambda m, x: x.t(), (3, 5)),
    "var-transposed-keepdim": (lambda m, x: x.var(1, keepdim=True), lambda m, x: x.t(), (3, 5)),
    "var-correction-0": (lambda m, x: m.var(x, 0, correction=0), lambda m, x: x.t(), (3, 5)),
    "std-channels-last": (lambda m, x: x.std((2, 3)), _cl, (2, 3, 4, 5)),
    "var_mean-transposed": (lambda m, x: m.var_mean(x, 0)[0], lambda m, x: x.t(), (3, 5)),
    "std_mean-transposed": (lambda m, x: m.std_mean(x, 1)[0], lambda m, x: x.t(), (3, 5)),
    "reflect-pad-channels-last": (lambda m, x: m.nn.functional.pad(x, (1, 1, 2, 1), mode="reflect"), _cl,
                                  (2, 3, 4, 5)),
    "replicate-pad-transposed": (lambda m, x: m.nn.functional.pad(x, (1, 2), mode="replicate"),
                                 lambda m, x: x.transpose(1, 2), (2, 5, 3)),
}


@pytest.mark.parametrize("case", list(LAYOUT_CASES))
def test_gradients_follow_the_inputs_layout_as_torchs(case):
    f, layout, shape = LAYOUT_CASES[case]
    data = ember.randn(*shape)
    grads = []
    for m in (ember, torch):
        x = layout(m, data if m is ember else to_torch(data)).detach().requires_grad_(True)
        out = f(m, x)
        grads.append(m.autograd.grad(out, x, m.ones_like(out))[0])
    e, t = grads
    assert_close(e, t, rtol=1e-5, atol=1e-6)
    assert e.stride() == t.stride(), (e.stride(), t.stride())


@pytest.mark.parametrize("upstream_channels_last", [False, True])
@pytest.mark.parametrize("input_channels_last", [False, True])
def test_max_unpool2d_input_gradient_is_row_major_as_torchs(input_channels_last, upstream_channels_last):
    x = ember.randn(2, 3, 4, 4)
    grads = []
    for m in (ember, torch):
        pooled, indices = m.nn.functional.max_pool2d(x if m is ember else to_torch(x), 2, return_indices=True)
        v = (_cl(m, pooled) if input_channels_last else pooled).detach().requires_grad_(True)
        y = m.nn.functional.max_unpool2d(v, indices, 2)
        g = m.arange(y.numel(), dtype=m.float32).reshape(y.shape)
        g = _cl(m, g) if upstream_channels_last else g
        grads.append(m.autograd.grad(y, v, g)[0])
    assert_close(*grads)
    assert grads[0].stride() == grads[1].stride()


@pytest.mark.parametrize("upstream", ["row-major", "channels-last", "expanded"])
@pytest.mark.parametrize("layout", ["row-major", "channels-last", "transposed"])
@pytest.mark.parametrize("function", ["pixel_shuffle", "pixel_unshuffle", "both"])
def test_pixel_shuffle_gradients_are_new_tensors_laid_out_as_torchs(function, layout, upstream):
    data = ember.randn(2, 8, 2, 4)
    results = []
    for m in (ember, torch):
        F = m.nn.functional
        f = {"pixel_shuffle": lambda x: F.pixel_shuffle(x, 2), "pixel_unshuffle": lambda x: F.pixel_unshuffle(x, 2),
             "both": lambda x: F.pixel_unshuffle(F.pixel_shuffle(x, 2), 1)}[function]
        x = data if m is ember else to_torch(data)
        x = {"row-major": x, "channels-last": _cl(m, x),
             "transposed": x.transpose(2, 3).contiguous().transpose(2, 3)}[layout].detach().requires_grad_(True)
        y = f(x)
        if upstream == "expanded":
            (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        else:
            u = m.arange(y.numel(), dtype=m.float32).reshape(y.shape)
            (g,) = m.autograd.grad(y, x, _cl(m, u) if upstream == "channels-last" else u)
        results.append((y, g, type(y.grad_fn).__name__))
    (ey, eg, ename), (ty, tg, tname) = results
    assert_close(ey, ty)
    assert_close(eg, tg)
    assert (ey.stride(), eg.stride(), ename) == (ty.stride(), tg.stride(), tname)
