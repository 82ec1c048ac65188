"""Strides of results torch lays out by rule (its allocation, not NumPy's): tensors with no
element in channels-last and permuted layouts, elementwise results of such tensors, results
of padding, pixel shuffling, unpooling and instance norm of channels-last inputs, and
reductions with ``keepdim``. torch 2.13 is the oracle; values are compared too."""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close


def _cl(L, *shape):
    x = L.tensor(np.random.default_rng(len(shape)).standard_normal(shape))
    return x.contiguous(memory_format=L.channels_last if len(shape) == 4 else L.channels_last_3d)


@pytest.mark.parametrize("shape", [(0, 3, 4, 5), (2, 3, 0, 5), (2, 0, 4, 5), (2, 3, 4, 0), (0, 0, 1, 1),
                                   (0, 3, 4, 5, 2), (2, 3, 0, 5, 2)])
def test_empty_channels_last(shape):
    """``empty(memory_format=)``, its clone, ``+ 1`` and ``relu``, and ``contiguous(format)``
    of a row-major empty tensor: torch's channels-last strides multiply the sizes as they are
    (an empty dim makes the strides outside it 0), row-major ones count a size 0 as 1."""
    results = []
    for L in (torch, ember):
        fmt = L.channels_last if len(shape) == 4 else L.channels_last_3d
        x = L.empty(*shape, memory_format=fmt)
        results.append([x.stride(), x.clone().stride(), (x + 1).stride(), L.relu(x).stride(),
                        L.empty(*shape).contiguous(memory_format=fmt).stride(),
                        x.is_contiguous(memory_format=fmt), x.is_contiguous()])
    assert results[1] == results[0]


@pytest.mark.parametrize("make", [
    lambda L: L.empty(0, 3).t() + 1,
    lambda L: L.empty(0, 3).t() * L.empty(0, 3).t(),
    lambda L: L.empty(0, 3).t().exp(),
    lambda L: L.empty(2, 0, 3).permute(2, 0, 1) + 1,
    lambda L: L.empty(2, 0, 3).permute(2, 0, 1) + L.ones(3, 1, 1),
])
def test_elementwise_results_with_no_element(make):
    """torch's TensorIterator: row-major when every operand is a tensor of the result's shape
    (an empty tensor counts as contiguous), else the operands' order of strides."""
    assert make(ember).stride() == make(torch).stride()


_GRADIENT_LAYOUT_OPEN = ("pad-reflect", "pad-replicate", "pad-reflect-3d", "max_unpool2d", "max_unpool3d")


@pytest.mark.parametrize("name, call, shape", [
    ("pad-constant", lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 2)), (2, 3, 4, 5)),
    ("pad-constant-channels", lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 2, 1, 0), value=2.0), (2, 3, 4, 5)),
    ("pad-crop", lambda L, x: L.nn.functional.pad(x, (-1, 1, 2, -1)), (2, 3, 4, 5)),
    ("pad-reflect", lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 2), mode="reflect"), (2, 3, 4, 5)),
    ("pad-replicate", lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 2), mode="replicate"), (2, 3, 4, 5)),
    ("pad-circular", lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 2), mode="circular"), (2, 3, 4, 5)),
    ("pad-reflect-3d", lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 2, 1, 1), mode="reflect"), (2, 3, 4, 5, 3)),
    ("pad-constant-3d", lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 2, 1, 1)), (2, 3, 4, 5, 3)),
    ("pixel_shuffle", lambda L, x: L.nn.functional.pixel_shuffle(x, 2), (2, 8, 3, 5)),
    ("pixel_unshuffle", lambda L, x: L.nn.functional.pixel_unshuffle(x, 2), (2, 2, 4, 6)),
    ("max_unpool2d", lambda L, x: L.nn.functional.max_unpool2d(*L.nn.functional.max_pool2d(x, 2, return_indices=True), 2),
     (2, 3, 4, 6)),
    ("max_unpool3d", lambda L, x: L.nn.functional.max_unpool3d(*L.nn.functional.max_pool3d(x, 2, return_indices=True), 2),
     (2, 3, 4, 6, 2)),
    ("instance_norm", lambda L, x: L.nn.functional.instance_norm(x), (2, 3, 4, 5)),
    ("instance_norm-affine", lambda L, x: L.nn.functional.instance_norm(x, weight=L.ones(3, dtype=L.float64), bias=L.zeros(3, dtype=L.float64)),
     (2, 3, 4, 5)),
    ("instance_norm-3d", lambda L, x: L.nn.functional.instance_norm(x), (2, 3, 4, 5, 2)),
])
def test_channels_last_inputs(name, call, shape):
    """The result's strides and values, and the input gradient's values, as torch's; the
    gradient's strides too except where torch lays it out as the input and ember as the
    upstream gradient (reflection, replication, unpooling)."""
    results = []
    for L in (torch, ember):
        x = _cl(L, *shape).requires_grad_()
        y = call(L, x)
        (g,) = L.autograd.grad(y, x, L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape))))
        results.append((y, g))
    (yt, gt), (ye, ge) = results
    assert ye.stride() == yt.stride()
    if name not in _GRADIENT_LAYOUT_OPEN:
        assert ge.stride() == gt.stride()
    assert_close(ye, yt, rtol=1e-12, atol=1e-12)
    assert_close(ge, gt, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduce", [
    lambda x: x.sum(1, keepdim=True), lambda x: x.sum((2, 3), keepdim=True), lambda x: x.sum(3, keepdim=True),
    lambda x: x.amax(1, keepdim=True), lambda x: x.mean(1, keepdim=True), lambda x: x.prod(2, keepdim=True),
])
@pytest.mark.parametrize("layout", ["channels_last", "transposed"])
def test_keepdim_reductions_are_row_major(reduce, layout):
    """torch allocates a reduction's result row-major, its kept size-1 dims' strides too."""
    results = []
    for L in (torch, ember):
        x = _cl(L, 2, 3, 4, 5) if layout == "channels_last" else L.tensor(
            np.arange(120.0).reshape(5, 4, 3, 2)).permute(3, 2, 1, 0)
        results.append(reduce(x))
    assert results[1].stride() == results[0].stride()
    assert_close(results[1], results[0], rtol=1e-12, atol=1e-12)


_NORMS = {
    "batch_norm-train": lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True),
    "batch_norm-eval": lambda L, x: L.nn.functional.batch_norm(
        x, L.linspace(-1, 1, x.shape[1], dtype=L.float64), L.linspace(1, 2, x.shape[1], dtype=L.float64)),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, x.shape[-1:]),
    "layer_norm-affine": lambda L, x: L.nn.functional.layer_norm(
        x, x.shape[-1:], L.linspace(1, 2, x.shape[-1], dtype=L.float64), L.zeros(x.shape[-1], dtype=L.float64)),
    "rms_norm": lambda L, x: L.nn.functional.rms_norm(x, x.shape[-1:]),
    "group_norm": lambda L, x: L.nn.functional.group_norm(x, 1),
}


@pytest.mark.parametrize("perm", [(0, 2, 1, 3), (0, 1, 3, 2), (3, 1, 2, 0), (0, 3, 1, 2)],
                         ids=["permuted", "transposed", "reversed", "channels_last"])
@pytest.mark.parametrize("norm", sorted(_NORMS))
def test_normalization_result_layouts(norm, perm):
    """torch's norm kernels allocate their results: batch norm and rms norm in the input's
    suggested memory format (channels-last, else row-major), layer norm row-major; ember's
    arithmetic kept a permuted input's strides."""
    results = []
    for L in (torch, ember):
        x = L.tensor(np.random.default_rng(3).standard_normal((2, 4, 3, 5))).permute(perm)
        results.append(_NORMS[norm](L, x))
    assert results[1].stride() == results[0].stride()
    assert_close(results[1], results[0], rtol=1e-10, atol=1e-12)
