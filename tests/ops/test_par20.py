"""Session 20 (PAR20): rows of issue 8's "Still open" closed, torch 2.13 the oracle.

* the input gradient of the normalisations is laid out as torch's kernels allocate it: batch and
  group norm in the input's suggested memory format, layer and instance norm row-major, rms norm
  (a composite in torch) like the upstream gradient;
* elementwise results whose first operand has a size-1 dim innermost keep its strides, and
  ``clone`` of a permuted tensor with a size-1 dim copies once.
"""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close


def _input(L, layout):
    """A (2, 3, 4, 5) or (2, 3, 4, 5, 6) float64 tensor laid out as ``layout`` says."""
    rng = np.random.default_rng(20)
    if layout == "channels_last":
        return L.tensor(rng.standard_normal((2, 3, 4, 5))).contiguous(memory_format=L.channels_last)
    if layout == "channels_last_3d":
        return L.tensor(rng.standard_normal((2, 3, 4, 5, 6))).contiguous(memory_format=L.channels_last_3d)
    if layout == "permuted":  # strides (3, 1, 30, 6): no memory format suggested
        return L.tensor(rng.standard_normal((4, 5, 2, 3))).permute(2, 3, 0, 1)
    if layout == "permuted_hw":  # strides (60, 5, 15, 1)
        return L.tensor(rng.standard_normal((2, 4, 3, 5))).permute(0, 2, 1, 3)
    return L.tensor(rng.standard_normal((2, 3, 4, 5)))


def _upstream(L, shape, layout):
    """The gradient fed back: row-major, channels-last or reversed-dims strides."""
    rng = np.random.default_rng(7)
    g = L.tensor(rng.standard_normal(shape))
    if layout == "channels_last":
        return g.contiguous(memory_format=L.channels_last if len(shape) == 4 else L.channels_last_3d)
    if layout == "reversed":
        return L.tensor(rng.standard_normal(shape[::-1])).permute(*range(len(shape) - 1, -1, -1))
    return g


_NORMS = {
    "batch_norm": lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True),
    "batch_norm_affine": lambda L, x: L.nn.functional.batch_norm(
        x, None, None, L.linspace(0.5, 1.5, 3, dtype=L.float64), L.linspace(-1, 1, 3, dtype=L.float64), training=True),
    "group_norm": lambda L, x: L.nn.functional.group_norm(x, 1),
    "group_norm_affine": lambda L, x: L.nn.functional.group_norm(
        x, 3, L.linspace(0.5, 1.5, 3, dtype=L.float64), L.linspace(-1, 1, 3, dtype=L.float64)),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, x.shape[-1:]),
    "layer_norm_affine": lambda L, x: L.nn.functional.layer_norm(
        x, x.shape[-2:], L.ones(x.shape[-2:], dtype=L.float64) * 1.5, L.ones(x.shape[-2:], dtype=L.float64)),
    "instance_norm": lambda L, x: L.nn.functional.instance_norm(x),
    "instance_norm_affine": lambda L, x: L.nn.functional.instance_norm(
        x, weight=L.linspace(0.5, 1.5, 3, dtype=L.float64), bias=L.linspace(-1, 1, 3, dtype=L.float64)),
    "rms_norm": lambda L, x: L.nn.functional.rms_norm(x, x.shape[-1:]),
    "rms_norm_weight": lambda L, x: L.nn.functional.rms_norm(x, x.shape[-1:], L.linspace(0.5, 1.5, x.shape[-1],
                                                                                           dtype=L.float64)),
}


@pytest.mark.parametrize("upstream", ["row_major", "channels_last", "reversed"])
@pytest.mark.parametrize("layout", ["channels_last", "channels_last_3d", "permuted", "permuted_hw", "row_major"])
@pytest.mark.parametrize("name", sorted(_NORMS))
def test_normalization_input_gradient_layout(name, layout, upstream):
    """``autograd.grad``'s input gradient (no AccumulateGrad to relayout it) has torch's strides
    and values, and so has the forward result; the upstream gradient's layout only counts for
    rms norm, whose gradient torch computes elementwise from it."""
    results = []
    for L in (torch, ember):
        x = _input(L, layout).requires_grad_()
        y = _NORMS[name](L, x)
        g = _upstream(L, tuple(y.shape), upstream)
        (gx,) = L.autograd.grad(y, x, g)
        results.append((y, gx))
    (ty, tg), (ey, eg) = results
    assert (ey.stride(), eg.stride()) == (ty.stride(), tg.stride())
    assert_close(ey, ty, rtol=1e-10, atol=1e-12)
    assert_close(eg, tg, rtol=1e-8, atol=1e-10)
