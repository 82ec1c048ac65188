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


def _laid_out(L, data, order):
    """``data`` (a NumPy array) as a tensor whose dims lie in memory in ``order``, outermost first."""
    return L.tensor(data.transpose(order).copy(order="C")).permute(*np.argsort(order).tolist())


@pytest.mark.parametrize("make", [
    lambda L, x, y: x * 2.0,                     # (1, 2, 3, 3) with strides (1, 9, 3, 1): torch keeps them
    lambda L, x, y: 2.0 + x,
    lambda L, x, y: x * L.tensor(3.0),           # a 0-d tensor is not of the result's shape either
    lambda L, x, y: x + y,                       # both "contiguous": torch's fast setup, row-major
    lambda L, x, y: y - x,
    lambda L, x, y: x + y[:, :1],                # broadcast: the operands' strides order the dims
    lambda L, x, y: L.addcmul(x, y, y[0, 0], value=0.5),
    lambda L, x, y: x.exp(),                     # one operand, "contiguous": row-major
    lambda L, x, y: x.clone(),                   # preserve_format: the strides as they are
    lambda L, x, y: L.where(x > 0, x, 1.5),
], ids=["mul_number", "radd_number", "mul_0d", "add_same_shape", "sub_same_shape", "add_broadcast",
        "addcmul", "exp", "clone", "where"])
def test_size_one_dim_innermost(make):
    """The first operand's size-1 dim lies innermost ((2, 3, 3, 1) permuted [3, 0, 1, 2]): NumPy
    calls it C-contiguous, torch's order keeps its stride where no fast setup applies."""
    data = np.random.default_rng(3).standard_normal((1, 2, 3, 3))
    other = np.random.default_rng(4).standard_normal((1, 2, 3, 3))
    results = []
    for L in (torch, ember):
        r = make(L, _laid_out(L, data, (1, 2, 3, 0)), L.tensor(other))
        results.append(r)
    assert results[1].stride() == results[0].stride()
    assert_close(results[1], results[0], rtol=1e-12, atol=0)


def test_elementwise_strides_with_size_one_dims_random():
    """200 random layouts of shapes with size-1 dims (2 to 5 dims) through a number, a same-shape
    tensor, a broadcast one, three operands and one: ember's strides are torch's (on c71a450
    about 1 in 30 differed: a number, a unary op on a 4-d channels-last-like tensor, 5-d
    operands taken for channels_last_3d, which torch's fast setup does not know)."""
    rng = np.random.default_rng(2026)
    ops = [lambda L, a, b, c: a * 2.0, lambda L, a, b, c: a + b, lambda L, a, b, c: a + c,
           lambda L, a, b, c: c + a, lambda L, a, b, c: a.exp(), lambda L, a, b, c: L.addcmul(a, b, c, value=0.5),
           lambda L, a, b, c: a.clone()]
    for trial in range(200):
        nd = int(rng.integers(2, 6))
        shape = tuple(int(n) for n in rng.choice([1, 1, 2, 3], nd))
        first, second = rng.permutation(nd), rng.permutation(nd)
        bshape = tuple(n if rng.random() < 0.5 else 1 for n in shape)[int(rng.integers(0, nd)):]
        data = [rng.standard_normal(s) for s in (shape, shape, bshape)]
        op = ops[trial % len(ops)]
        strides = [op(L, _laid_out(L, data[0], first), _laid_out(L, data[1], second), L.tensor(data[2])).stride()
                   for L in (torch, ember)]
        assert strides[1] == strides[0], (trial, shape, first.tolist(), second.tolist(), bshape)


def test_clone_of_permuted_tensor_with_size_one_dim_copies_once():
    """``clone`` keeps a size-1 dim's stride as torch does, with one copy: the peak of memory
    traced while cloning is the result's bytes (two copies before: 2x)."""
    import tracemalloc
    x = ember.randn(300, 1, 400).permute(1, 2, 0)  # (1, 400, 300), strides (400, 1, 400)
    tracemalloc.start()
    try:
        c = x.clone()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert c.stride() == torch.randn(300, 1, 400).permute(1, 2, 0).clone().stride() == (400, 1, 400)
    assert peak < 1.5 * x.numel() * x.element_size()
    assert ember.equal(c, x)
