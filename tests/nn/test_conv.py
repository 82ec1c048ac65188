"""Convolutions against torch: F.conv1d/conv2d/conv_transpose1d/conv_transpose2d values and
gradients (input, weight, bias; second order for a subset) over a grid of stride x padding x
dilation x groups, plus edge geometries; the Conv/ConvTranspose layers (state_dict, padding
modes, repr, initialisation, output_size); and torch's errors, message for message."""
import itertools
import math
import os
import re
import sys

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, assert_same_error

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ops"))
from harness import FLOATS, Case, I, R, T, check, params  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def torch_on_one_thread():
    """torch's thread pool costs tens of milliseconds per tiny convolution on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def F(L):
    return L.nn.functional


def conv(name, **kw):
    return lambda L, *a: getattr(F(L), name)(*a, **kw)


def _label(kw):
    return ",".join(f"{k}={v}" for k, v in kw.items()).replace(" ", "")


# ---- the grid: every combination, small shapes; torch's refusals must be ember's too ---------
def grid_cases():
    cases = []
    for stride, padding, dilation, groups in itertools.product((1, 2, (2, 3)), (0, 1, (2, 0)), (1, (2, 1)),
                                                                 (1, 2)):
        kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        cases.append(Case(f"conv2d-{_label(kw)}", conv("conv2d", **kw),
                          R(2, 4, 7, 6), R(6, 4 // groups, 3, 2), R(6)))
    for stride, padding, dilation, groups in itertools.product((1, 2, 3), (0, 1, 2), (1, 2), (1, 2)):
        kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        cases.append(Case(f"conv1d-{_label(kw)}", conv("conv1d", **kw), R(2, 4, 9), R(6, 4 // groups, 3), R(6)))
    for stride, padding, output_padding, dilation, groups in itertools.product(
            (1, 2, (3, 1)), (0, 1), (0, 1, (1, 0)), (1, 2), (1, 2)):
        kw = dict(stride=stride, padding=padding, output_padding=output_padding, dilation=dilation, groups=groups)
        cases.append(Case(f"conv_transpose2d-{_label(kw)}", conv("conv_transpose2d", **kw),
                          R(2, 4, 5, 4), R(4, 6 // groups, 3, 2), R(6)))
    for stride, padding, output_padding, dilation, groups in itertools.product(
            (1, 2, 3), (0, 2), (0, 1, 2), (1, 2), (1, 2)):
        kw = dict(stride=stride, padding=padding, output_padding=output_padding, dilation=dilation, groups=groups)
        cases.append(Case(f"conv_transpose1d-{_label(kw)}", conv("conv_transpose1d", **kw),
                          R(2, 4, 6), R(4, 6 // groups, 3), R(6)))
    return cases


@pytest.mark.parametrize("case,dtype", params(grid_cases()))
def test_grid(case, dtype):
    check(case, dtype)


# ---- edge geometries -------------------------------------------------------------------------
def edge_cases():
    c2, c1, t2, t1 = "conv2d", "conv1d", "conv_transpose2d", "conv_transpose1d"
    return [
        Case("depthwise", conv(c2, padding=1, groups=4), R(2, 4, 6, 5), R(4, 1, 3, 3), R(4), grad2=True),
        Case("depthwise-multiplier", conv(c2, stride=2, groups=3), R(2, 3, 7, 7), R(6, 1, 3, 3), R(6)),
        Case("depthwise-1d", conv(c1, padding=2, dilation=2, groups=5), R(2, 5, 8), R(5, 1, 3)),
        Case("depthwise-transposed", conv(t2, stride=2, groups=4), R(2, 4, 3, 3), R(4, 1, 3, 3), R(4)),
        Case("kernel-larger-than-input", conv(c2, padding=2), R(2, 3, 2, 3), R(4, 3, 5, 4), R(4)),
        Case("kernel-larger-than-input-1d", conv(c1, padding=(3,)), R(1, 2, 1), R(3, 2, 6)),
        Case("one-pixel-output", conv(c2), R(2, 3, 4, 5), R(2, 3, 4, 5), R(2), grad2=True),
        Case("one-pixel-input-transposed", conv(t2, stride=3), R(2, 3, 1, 1), R(3, 2, 2, 3), R(2)),
        Case("same-even-kernel", conv(c2, padding="same"), R(2, 3, 5, 6), R(4, 3, 4, 2), R(4), grad2=True),
        Case("same-even-kernel-dilated", conv(c2, padding="same", dilation=(1, 3)), R(1, 2, 5, 7), R(3, 2, 2, 2)),
        Case("same-odd-kernel-groups", conv(c2, padding="same", groups=2), R(2, 4, 5, 5), R(2, 2, 3, 5)),
        Case("same-1d-even", conv(c1, padding="same"), R(2, 3, 7), R(2, 3, 4), R(2)),
        Case("same-1d-even-dilation-2", conv(c1, padding="same", dilation=2), R(2, 3, 7), R(2, 3, 4)),
        Case("valid", conv(c2, padding="valid"), R(2, 3, 5, 4), R(2, 3, 2, 2)),
        Case("stride-beyond-kernel", conv(c2, stride=(3, 4)), R(2, 2, 8, 9), R(3, 2, 2, 2), R(3)),
        Case("no-bias", conv(c2, stride=2, padding=1), R(2, 3, 5, 5), R(4, 3, 3, 3)),
        Case("no-bias-transposed", conv(t1, stride=2), R(2, 3, 4), R(3, 2, 3)),
        Case("one-by-one", conv(c2), R(2, 5, 3, 4), R(2, 5, 1, 1), R(2)),
        Case("unbatched-2d", conv(c2, padding=1), R(3, 5, 4), R(2, 3, 3, 3), R(2)),
        Case("unbatched-1d", conv(c1, stride=2), R(3, 7), R(2, 3, 3), R(2)),
        Case("unbatched-transposed-2d", conv(t2, stride=2, output_padding=1), R(3, 3, 2), R(3, 2, 2, 2)),
        Case("unbatched-transposed-1d", conv(t1, padding=1), R(3, 5), R(3, 4, 3), R(4)),
        Case("non-contiguous-input", conv(c2, padding=1), T(R(2, 3, 4, 6)), R(2, 3, 3, 3), R(2)),
        Case("non-contiguous-weight", conv(c2), R(2, 3, 5, 5), T(R(2, 3, 2, 3)), R(2)),
        Case("empty-batch", conv(c2, padding=1), R(0, 3, 4, 4), R(2, 3, 3, 3), R(2)),
        Case("empty-batch-transposed", conv(t2), R(0, 3, 4, 4), R(3, 2, 3, 3), R(2)),
        Case("empty-batch-per-sample", conv(c2), R(0, 2, 20, 20), R(8, 2, 3, 3), R(8)),  # see test_conv_paths
        Case("second-order-strided", conv(c2, stride=2, padding=(1, 0), dilation=(1, 2), groups=2),
             R(2, 4, 7, 8), R(4, 2, 3, 2), R(4), grad2=True),
        Case("second-order-transposed", conv(t2, stride=(2, 3), padding=1, output_padding=(1, 2), groups=2),
             R(2, 4, 3, 3), R(4, 1, 3, 3), R(2), grad2=True),
        Case("second-order-transposed-dilation-output-padding", conv(t1, dilation=3, output_padding=2),
             R(2, 2, 4), R(2, 3, 2), grad2=True),
        Case("second-order-1d", conv(c1, stride=3, padding=1), R(2, 3, 8), R(2, 3, 2), R(2), grad2=True),
        Case("int64", conv(c2, padding=1), I(1, 2, 3, 3), I(2, 2, 2, 2), dtypes=(None,)),
    ]


@pytest.mark.parametrize("case,dtype", params(edge_cases()))
def test_edges(case, dtype):
    check(case, dtype)


@pytest.mark.parametrize("name,x_shape,w_shape,kw", [
    ("conv2d", (256, 4, 10, 9), (6, 2, 3, 3), dict(padding=1, groups=2)),  # 23040 terms: 5.6 blocks
    ("conv2d", (64, 6, 14, 14), (16, 6, 5, 5), {}),  # LeNet's conv2: 1.6 blocks
    ("conv1d", (2000, 3, 30), (4, 3, 7), dict(stride=2, dilation=3)),
    ("conv_transpose2d", (256, 4, 5, 6), (4, 3, 2, 2), dict(stride=2)),
    ("conv2d", (64, 1, 28, 28), (6, 1, 5, 5), dict(padding=2)),  # LeNet's conv1: per sample
])
def test_weight_gradient_over_long_contractions(name, x_shape, w_shape, kw):
    """The weight gradient of outputs narrower than 12 sums over samples and positions in
    blocks of 4096 terms (wider ones: per sample, then over samples): several blocks and a
    remainder give torch's float64 gradient (float64) and stay within 2e-6 of it relative to
    its largest entry (float32)."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    t_x, t_w = torch.tensor(x), torch.tensor(w, requires_grad=True)
    getattr(torch.nn.functional, name)(t_x, t_w, **kw).pow(2).sum().backward()
    reference = t_w.grad.numpy()
    for dtype, bound in (("float64", 1e-12), ("float32", 2e-6)):
        e_w = ember.tensor(w.astype(dtype), requires_grad=True)
        getattr(ember.nn.functional, name)(ember.tensor(x.astype(dtype)), e_w, **kw).pow(2).sum().backward()
        error = np.abs(e_w.grad.numpy().astype(np.float64) - reference).max() / np.abs(reference).max()
        assert error < bound, (dtype, error)


@pytest.mark.parametrize("name,x_shape,w_shape,kw,transposed", [
    # outputs 12 wide or more: one product per sample
    ("conv2d", (64, 1, 28, 28), (6, 1, 5, 5), dict(padding=2), False),  # LeNet's conv1
    ("conv2d", (3, 4, 44, 15), (6, 2, 3, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2), True),
    ("conv1d", (5, 3, 500), (4, 3, 7), dict(stride=2, dilation=3, padding=4), False),
    ("conv_transpose2d", (2, 4, 14, 14), (4, 3, 3, 3), dict(stride=2, output_padding=1), False),  # cropping Conv
    # narrower outputs, at most 8 output channels per group: column blocks of one product
    ("conv2d", (512, 1, 12, 12), (6, 1, 5, 5), {}, False),
    ("conv2d", (128, 4, 12, 10), (6, 2, 3, 3), dict(groups=2), True),
    ("conv1d", (4096, 2, 15), (4, 2, 5), {}, False),
])
def test_conv_paths(name, x_shape, w_shape, kw, transposed):
    """Each way a convolution runs (per sample for wide outputs; one product, in column blocks
    when it has few rows) gives torch's float64 output and gradients (float64) and stays
    within 2e-6 of them relative to their largest entry (float32); ``transposed``: the input
    is a non-contiguous view."""
    rng = np.random.default_rng(1)
    leaf = x_shape[:-2] + x_shape[:-3:-1] if transposed else x_shape
    out_channels = w_shape[1] * kw.get("groups", 1) if name.startswith("conv_transpose") else w_shape[0]
    x, w, b = rng.standard_normal(leaf), rng.standard_normal(w_shape), rng.standard_normal(out_channels)

    def run(L, dtype):
        leaves = [L.tensor(a.astype(dtype), requires_grad=True) for a in (x, w, b)]
        x_in = leaves[0].transpose(-1, -2) if transposed else leaves[0]
        y = getattr(L.nn.functional, name)(x_in, leaves[1], leaves[2], **kw)
        y.pow(2).sum().backward()
        return [y.detach().numpy()] + [t.grad.numpy() for t in leaves]

    reference = run(torch, "float64")
    for dtype, bound in (("float64", 1e-12), ("float32", 2e-6)):
        for ours, theirs in zip(run(ember, dtype), reference):
            error = np.abs(ours.astype(np.float64) - theirs).max() / np.abs(theirs).max()
            assert error < bound, (dtype, error)


# ---- errors: class and message as torch's ----------------------------------------------------
def _x(L, *s):
    return L.zeros(*s)


ERRORS = {
    "channels": lambda L: F(L).conv2d(_x(L, 32, 3, 32, 32), _x(L, 32, 16, 3, 3)),
    "channels-groups": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), groups=2),
    "channels-transposed": lambda L: F(L).conv_transpose2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3)),
    "channels-1d": lambda L: F(L).conv1d(_x(L, 2, 3), _x(L, 4, 3, 3)),
    "kernel-too-large": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 7, 7)),
    "kernel-too-large-padded": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 8, 3), padding=1),
    "kernel-too-large-dilated": lambda L: F(L).conv1d(_x(L, 2, 3, 5), _x(L, 4, 3, 3), dilation=3),
    "stride-zero": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), stride=0),
    "stride-negative": lambda L: F(L).conv1d(_x(L, 2, 3, 5), _x(L, 4, 3, 3), stride=-1),
    "stride-zero-transposed": lambda L: F(L).conv_transpose2d(_x(L, 2, 3, 5, 5), _x(L, 3, 3, 3, 3), stride=(1, 0)),
    "padding-negative": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), padding=(1, -1)),
    "padding-negative-transposed": lambda L: F(L).conv_transpose1d(_x(L, 2, 3, 5), _x(L, 3, 3, 3), padding=-1),
    "dilation-zero": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), dilation=0),
    "groups-zero": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), groups=0),
    "groups-not-dividing": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 1, 3, 3), groups=3),
    "groups-above-out-channels": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 0, 3, 3, 3)),
    "same-strided": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), padding="same", stride=2),
    "same-strided-1d": lambda L: F(L).conv1d(_x(L, 2, 3, 5), _x(L, 4, 3, 3), padding="same", stride=(2,)),
    "padding-string": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), padding="full"),
    "bias-size": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), bias=_x(L, 3)),
    "bias-rank": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), bias=_x(L, 4, 1)),
    "bias-size-transposed": lambda L: F(L).conv_transpose2d(_x(L, 2, 3, 5, 5), _x(L, 3, 3, 3, 3), bias=_x(L, 4)),
    "bias-dtype": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), bias=_x(L, 4).double()),
    "input-rank": lambda L: F(L).conv2d(_x(L, 5, 5), _x(L, 4, 3, 3, 3)),
    "input-rank-5d": lambda L: F(L).conv2d(_x(L, 1, 2, 3, 5, 5), _x(L, 4, 3, 3, 3)),
    "input-rank-1d": lambda L: F(L).conv1d(_x(L, 5), _x(L, 4, 3, 3)),
    "weight-rank": lambda L: F(L).conv1d(_x(L, 2, 3, 5), _x(L, 4, 3, 3, 3)),
    "stride-length": lambda L: F(L).conv2d(_x(L, 2, 3, 5, 5), _x(L, 4, 3, 3, 3), stride=(1, 1, 1)),
    "padding-length-1d": lambda L: F(L).conv1d(_x(L, 2, 3, 5), _x(L, 4, 3, 3), padding=(1, 1)),
    "output-padding-too-large": lambda L: F(L).conv_transpose2d(_x(L, 2, 3, 5, 5), _x(L, 3, 3, 3, 3),
                                                                output_padding=(0, 2), stride=2),
    "output-padding-too-large-1d": lambda L: F(L).conv_transpose1d(_x(L, 2, 3, 5), _x(L, 3, 3, 3), output_padding=1),
    "output-padding-negative": lambda L: F(L).conv_transpose2d(_x(L, 2, 3, 5, 5), _x(L, 3, 3, 3, 3),
                                                               output_padding=(0, -1)),
    "transposed-groups-not-dividing": lambda L: F(L).conv_transpose2d(_x(L, 2, 3, 5, 5), _x(L, 3, 3, 3, 3), groups=2),
}
# torch's own message comes from a oneDNN path that ember does not have; the class still matches.
CLASS_ONLY = {
    "bias-dtype": "Input type (float) and bias type (double) should be the same",
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_matches_torch(name):
    assert_same_error(lambda: ERRORS[name](ember), lambda: ERRORS[name](torch))


def test_error_messages_named_in_the_brief():
    with pytest.raises(RuntimeError, match=r"^Given groups=1, weight of size \[32, 16, 3, 3\], expected "
                       r"input\[32, 3, 32, 32\] to have 16 channels, but got 3 channels instead$"):
        ember.nn.functional.conv2d(ember.zeros(32, 3, 32, 32), ember.zeros(32, 16, 3, 3))
    with pytest.raises(RuntimeError, match="^non-positive stride is not supported$"):
        ember.nn.functional.conv2d(ember.zeros(1, 1, 3, 3), ember.zeros(1, 1, 1, 1), stride=(1, 0))


def test_errors_torch_words_differently():
    """Where torch's message comes from its oneDNN kernels, ember raises the same class with
    the message of torch's reference kernels."""
    x, w = ember.zeros(2, 3, 5, 5), ember.zeros(3, 3, 3, 3)
    with pytest.raises(RuntimeError, match=r"^Input type \(torch.FloatTensor\) and weight type "
                                           r"\(torch.DoubleTensor\) should be the same"):
        ember.nn.functional.conv2d(x, w.double())
    with pytest.raises(RuntimeError, match=r"^Given input size per channel: \(5 x 5\). Calculated output "
                                           r"size per channel: \(-3 x -3\). Output size is too small$"):
        ember.nn.functional.conv_transpose2d(x, w, padding=5)
    with pytest.raises(RuntimeError, match=r"\(1 x -1\). Output size is too small$"):
        ember.nn.functional.conv_transpose1d(ember.zeros(2, 3, 5), ember.zeros(3, 3, 3), padding=4)
    with pytest.raises(RuntimeError, match=r"kernel size should be greater than zero"):
        ember.nn.functional.conv2d(x, ember.zeros(4, 3, 0, 3))
    with pytest.raises(RuntimeError, match=r"Only zero batch or zero channel inputs are supported"):
        ember.nn.functional.conv_transpose2d(ember.zeros(2, 3, 0, 4), w)
    with torch.backends.mkldnn.flags(enabled=False):
        with pytest.raises(RuntimeError, match="Output size is too small"):
            torch.nn.functional.conv_transpose2d(torch.zeros(2, 3, 5, 5), torch.zeros(3, 3, 3, 3), padding=5)
        with pytest.raises(RuntimeError, match="Only zero batch or zero channel inputs are supported"):
            torch.nn.functional.conv_transpose2d(torch.zeros(2, 3, 0, 4), torch.zeros(3, 3, 3, 3))


def test_integer_arguments_only():
    for bad in (dict(stride=1.5), dict(padding=(1.0, 1)), dict(dilation=True)):
        with pytest.raises(TypeError):
            torch.nn.functional.conv2d(torch.zeros(1, 1, 4, 4), torch.zeros(1, 1, 2, 2), **bad)
        with pytest.raises(TypeError):
            ember.nn.functional.conv2d(ember.zeros(1, 1, 4, 4), ember.zeros(1, 1, 2, 2), **bad)


# ---- layers ------------------------------------------------------------------------------------
def _pair_modules(make, dtype):
    torch.manual_seed(0)
    t_mod = make(torch).to(getattr(torch, dtype))
    e_mod = make(ember).to(getattr(ember, dtype))
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in t_mod.state_dict().items()})
    return e_mod, t_mod


def _check_module(make, shape, dtype, **forward_kw):
    e_mod, t_mod = _pair_modules(make, dtype)
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = e_mod(ex, **forward_kw), t_mod(tx, **forward_kw)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    assert_close(eo, to, **tol)
    g = np.random.default_rng(2).standard_normal(tuple(to.shape)).astype(dtype)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    assert_close(ex.grad, tx.grad, **tol)
    for (name, ep), (_, tp) in zip(e_mod.named_parameters(), t_mod.named_parameters()):
        assert_close(ep.grad, tp.grad, **tol)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert repr(e_mod) == repr(t_mod)


MODULES = {
    "conv2d": (lambda L: L.nn.Conv2d(4, 6, 3, stride=2, padding=1), (2, 4, 7, 6)),
    "conv2d-grouped-dilated": (lambda L: L.nn.Conv2d(4, 6, (3, 2), padding=(2, 1), dilation=(2, 1), groups=2),
                               (2, 4, 6, 5)),
    "conv2d-depthwise-no-bias": (lambda L: L.nn.Conv2d(4, 8, 3, groups=4, bias=False), (2, 4, 5, 5)),
    "conv2d-same": (lambda L: L.nn.Conv2d(3, 4, (4, 3), padding="same"), (2, 3, 5, 6)),
    "conv2d-valid": (lambda L: L.nn.Conv2d(3, 4, 2, padding="valid"), (2, 3, 5, 6)),
    "conv2d-unbatched": (lambda L: L.nn.Conv2d(3, 4, 3, padding=1), (3, 5, 6)),
    "conv1d": (lambda L: L.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 9)),
    "conv1d-unbatched": (lambda L: L.nn.Conv1d(4, 2, 2), (4, 5)),
    "conv_transpose2d": (lambda L: L.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
                         (2, 4, 4, 3)),
    "conv_transpose2d-dilated-no-bias": (lambda L: L.nn.ConvTranspose2d(3, 2, (2, 3), dilation=(2, 1), bias=False),
                                         (2, 3, 3, 4)),
    "conv_transpose1d": (lambda L: L.nn.ConvTranspose1d(3, 4, 4, stride=3, padding=2), (2, 3, 5)),
    "conv_transpose1d-unbatched": (lambda L: L.nn.ConvTranspose1d(3, 4, 3), (3, 5)),
}
for _mode in ("reflect", "replicate", "circular"):
    MODULES[f"conv2d-{_mode}"] = (lambda L, m=_mode: L.nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode=m),
                                  (2, 3, 5, 6))
    MODULES[f"conv2d-{_mode}-same-even"] = (lambda L, m=_mode: L.nn.Conv2d(3, 4, (2, 4), padding="same",
                                                                           padding_mode=m), (2, 3, 5, 6))
    MODULES[f"conv2d-{_mode}-unbatched-strided"] = (
        lambda L, m=_mode: L.nn.Conv2d(3, 4, 3, stride=2, padding=1, padding_mode=m), (3, 6, 5))
    MODULES[f"conv1d-{_mode}"] = (lambda L, m=_mode: L.nn.Conv1d(3, 4, 3, padding=2, dilation=2, padding_mode=m),
                                  (2, 3, 7))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(MODULES))
def test_module_matches_torch(name, dtype):
    make, shape = MODULES[name]
    _check_module(make, shape, dtype)


@pytest.mark.parametrize("output_size", [(12, 12), [2, 2, 11, 12], (11, 11)])
def test_conv_transpose_output_size(output_size):
    _check_module(lambda L: L.nn.ConvTranspose2d(3, 2, 3, stride=2), (2, 3, 5, 5), "float64",
                  output_size=output_size)


def test_conv_transpose1d_output_size_unbatched():
    _check_module(lambda L: L.nn.ConvTranspose1d(3, 2, 3, stride=3), (3, 5), "float64", output_size=[3, 16])


@pytest.mark.parametrize("output_size", [(13, 12), (1, 12, 12), (8, 12)])
def test_conv_transpose_output_size_errors(output_size):
    with pytest.raises(ValueError) as t_err:
        torch.nn.ConvTranspose2d(3, 2, 3, stride=2)(torch.zeros(2, 3, 5, 5), output_size=output_size)
    with pytest.raises(ValueError) as e_err:
        ember.nn.ConvTranspose2d(3, 2, 3, stride=2)(ember.zeros(2, 3, 5, 5), output_size=output_size)
    assert str(e_err.value).replace("ember.Size", "torch.Size") == str(t_err.value)


CONSTRUCTOR_ERRORS = {
    "same-strided": lambda L: L.nn.Conv2d(3, 4, 3, padding="same", stride=2),
    "padding-string": lambda L: L.nn.Conv1d(3, 4, 3, padding="full"),
    "in-channels-groups": lambda L: L.nn.Conv2d(3, 4, 3, groups=2),
    "out-channels-groups": lambda L: L.nn.Conv2d(4, 3, 3, groups=2),
    "groups-zero": lambda L: L.nn.Conv2d(4, 4, 3, groups=0),
    "transposed-padding-mode": lambda L: L.nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"),
    "transposed-groups": lambda L: L.nn.ConvTranspose1d(4, 3, 3, groups=2),
}


@pytest.mark.parametrize("name", list(CONSTRUCTOR_ERRORS))
def test_constructor_errors(name):
    with pytest.raises(ValueError) as t_err:
        CONSTRUCTOR_ERRORS[name](torch)
    with pytest.raises(ValueError) as e_err:
        CONSTRUCTOR_ERRORS[name](ember)
    assert _sets_sorted(str(e_err.value)) == _sets_sorted(str(t_err.value))


def _sets_sorted(message):
    """torch prints Python sets of names, whose order varies from run to run."""
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


def test_padding_mode_error():
    with pytest.raises(ValueError, match=r"^padding_mode must be one of .*'circular'.*but got padding_mode='bad'$"):
        ember.nn.Conv2d(4, 4, 3, padding_mode="bad")


@pytest.mark.parametrize("make", [
    lambda L: L.nn.Conv2d(1, 6, 5),
    lambda L: L.nn.Conv2d(2, 6, (5, 3), stride=(2, 1), padding=1, dilation=2, groups=2, bias=False,
                          padding_mode="circular"),
    lambda L: L.nn.Conv2d(2, 6, 3, padding="same"),
    lambda L: L.nn.Conv1d(2, 4, 3, padding="valid"),
    lambda L: L.nn.ConvTranspose2d(2, 6, 3, stride=2, output_padding=1),
    lambda L: L.nn.ConvTranspose1d(2, 4, 3, padding=1, dilation=2, groups=2),
])
def test_attributes_and_repr(make):
    e_mod, t_mod = make(ember), make(torch)
    assert repr(e_mod) == repr(t_mod)
    for name in t_mod.__constants__ + ["transposed", "_reversed_padding_repeated_twice"]:
        assert getattr(e_mod, name) == getattr(t_mod, name), name
    for name, tp in t_mod.named_parameters():
        assert tuple(getattr(e_mod, name).shape) == tuple(tp.shape)
    assert repr(ember.nn.Conv2d(1, 6, 5)) == "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))"


@pytest.mark.parametrize("make,fan_in", [
    (lambda: ember.nn.Conv2d(16, 64, 3), 16 * 9),
    (lambda: ember.nn.Conv2d(16, 64, 3, groups=4), 4 * 9),
    (lambda: ember.nn.ConvTranspose2d(64, 16, 3), 16 * 9),
    (lambda: ember.nn.Conv1d(8, 64, 5, dtype=ember.float64), 8 * 5),
])
def test_default_initialisation(make, fan_in):
    """kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the bias the same."""
    ember.manual_seed(0)
    m = make()
    bound = 1 / math.sqrt(fan_in)
    for p in (m.weight, m.bias):
        values = np.asarray(p._data, np.float64)
        assert np.abs(values).max() <= bound
        assert values.max() > 0.8 * bound and values.min() < -0.8 * bound
        assert abs(values.mean()) < 0.25 * bound
    m2 = make()
    assert not np.array_equal(m.weight._data, m2.weight._data)


def test_output_is_contiguous_and_views():
    y = ember.nn.Conv2d(3, 4, 3, stride=2)(ember.randn(2, 3, 9, 9))
    assert y.is_contiguous()
    assert tuple(y.view(2, -1).shape) == (2, 64)
    z = ember.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1)(ember.randn(2, 3, 4, 4))
    assert z.is_contiguous()


@pytest.mark.parametrize("size", [6, 16])  # w_out below and above the per-sample products' width
def test_weight_gradient_is_contiguous_as_torch(size):
    # whichever product the geometry picks, the weight's gradient is laid out as torch's (a
    # 1x1 convolution's was a transposed view over narrow maps: the graphs of a step recorded
    # at two image sizes then differed)
    grads = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(16, 10, 1)
        grads += lib.autograd.grad(conv(lib.ones(2, 16, size, size)).sum(), conv.weight)
    assert grads[0].is_contiguous() and grads[0].stride() == grads[1].stride()


def test_sequential_cnn_trains_like_torch():
    """A small CNN (conv, relu, depthwise conv, transposed conv) takes identical SGD steps
    (written out: torch.optim's first import costs seconds)."""
    def make(L):
        return L.nn.Sequential(L.nn.Conv2d(2, 4, 3, padding=1), L.nn.ReLU(),
                               L.nn.Conv2d(4, 4, 3, stride=2, groups=4, padding_mode="reflect", padding=1),
                               L.nn.ConvTranspose2d(4, 2, 2, stride=2))
    e_mod, t_mod = _pair_modules(make, "float64")
    x = np.random.default_rng(3).standard_normal((3, 2, 6, 6))
    for _ in range(3):
        for mod, L in ((e_mod, ember), (t_mod, torch)):
            mod.zero_grad()
            loss = ((mod(L.tensor(x)) - L.tensor(x)) ** 2).mean()
            loss.backward()
            with L.no_grad():
                for p in mod.parameters():
                    p -= 0.1 * p.grad
    for (name, ep), (_, tp) in zip(e_mod.named_parameters(), t_mod.named_parameters()):
        assert_close(ep, tp, rtol=1e-9, atol=1e-12)


def test_docstring_examples_run():
    import doctest

    from ember.nn.functional import conv as functional_conv
    from ember.nn.modules import conv as module_conv
    for module in (functional_conv, module_conv):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


@pytest.mark.parametrize("block_bytes", [1, 12000])
@pytest.mark.parametrize("kw", [dict(padding=1), dict(stride=2, padding=(2, 1), dilation=(2, 1)),
                                dict(padding=1, groups=4), dict(stride=(3, 1), groups=2)])
def test_conv2d_in_blocks_of_output_rows_matches_torch(monkeypatch, kw, block_bytes):
    """The im2col buffer is built a block of output rows at a time (one row, or a few with a
    shorter last block): values and all three gradients as torch's (float64), a non-contiguous
    input, and batches of 1 and 0."""
    from ember._ops import conv as conv_ops
    monkeypatch.setattr(conv_ops, "_BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(5)
    w, b = rng.standard_normal((8, 4 // kw.get("groups", 1), 3, 3)), rng.standard_normal(8)
    for x in (rng.standard_normal((2, 4, 13, 9)), rng.standard_normal((1, 4, 9, 13)).transpose(0, 1, 3, 2),
              rng.standard_normal((0, 4, 13, 9))):
        results = []
        for L in (ember, torch):
            args = [L.tensor(a, requires_grad=True) for a in (x, w, b)]
            out = F(L).conv2d(*args, **kw)
            out.backward(L.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape))))
            results.append([out.detach()] + [a.grad for a in args])
        for got, expected in zip(*results):
            assert_close(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("block_bytes", [1, 50000])
def test_conv2d_per_sample_in_blocks_of_samples_matches_torch(monkeypatch, block_bytes):
    """Wide outputs with few terms run one product per sample, a block of samples at a time
    (one, or two with a shorter last block): values and gradients as torch's (float64)."""
    from ember._ops import conv as conv_ops
    monkeypatch.setattr(conv_ops, "_BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(6)
    x, w, b = rng.standard_normal((3, 2, 14, 16)), rng.standard_normal((8, 2, 3, 3)), rng.standard_normal(8)
    assert conv_ops._per_sample(w.shape, 1, 12, 14)
    results = []
    for L in (ember, torch):
        args = [L.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = F(L).conv2d(*args)
        out.backward(L.tensor(np.sin(np.arange(out.numel())).reshape(tuple(out.shape))))
        results.append([out.detach()] + [a.grad for a in args])
    for got, expected in zip(*results):
        assert_close(got, expected, rtol=1e-10, atol=1e-12)
