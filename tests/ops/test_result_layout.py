"""The layout of results against torch 2.13 (CPU): elementwise ops follow TensorIterator's
stride rule (random operand layouts, broadcasting, size-1 and empty dims), and convolutions,
pooling, adaptive pooling, batch norm and interpolation keep a channels-last input (or
weight) channels-last, gradients included. Strides are compared exactly; values with torch
(float64 references for float32 transcendental and summed results, bound stated)."""
import random

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from ember._ops.core import OPS
from ember._result_layout import pointwise

CL, CL3 = "channels_last", "channels_last_3d"


def _pair(shape, fmt=None, seed=0, dtype=np.float32, grad=False):
    """The same random tensor in ember and torch, laid out as ``fmt`` (a format's name)."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    pair = [L.tensor(x) for L in (ember, torch)]
    if fmt is not None:
        pair = [t.contiguous(memory_format=getattr(L, fmt)) for t, L in zip(pair, (ember, torch))]
    if grad:
        pair = [t.requires_grad_() for t in pair]
    return pair


def _laid_out(shape, outermost_first, seed):
    """torch and ember tensors of ``shape`` whose dims lie in memory outermost-first as given."""
    x = np.random.default_rng(seed).standard_normal([shape[d] for d in outermost_first]).astype(np.float32)
    back = tuple(int(d) for d in np.argsort(outermost_first))
    return ember.tensor(x).permute(back), torch.tensor(x).permute(back)


def _same_layout(e, t, fmt=None):
    assert e.shape == t.shape
    assert e.stride() == t.stride(), (e.stride(), t.stride())
    if fmt is not None:
        for name in (fmt, "contiguous_format"):
            assert e.is_contiguous(memory_format=getattr(ember, name)) == \
                t.is_contiguous(memory_format=getattr(torch, name))


def _close(e, t, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


# ---- elementwise: TensorIterator's rule ------------------------------------------------------
BINARY = {
    "add": lambda L, a, b: a + b,
    "mul": lambda L, a, b: L.mul(a, b),
    "sub_alpha": lambda L, a, b: L.sub(a, b, alpha=2),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "gt": lambda L, a, b: a > b,
    "where": lambda L, a, b: L.where(a > 0, a, b),
    "addcmul": lambda L, a, b: L.addcmul(a, b, a, value=0.5),
}


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("case", ["cl,cl", "cl,c", "c,cl", "cl,bias", "bias,cl", "cl,one", "one,cl",
                                  "cl3,c", "cl,empty"])
def test_named_operand_layouts(op, case):
    """The cases the rule is known by: the first operand that orders two dims decides."""
    shapes = {"cl": ((2, 3, 4, 5), CL), "c": ((2, 3, 4, 5), None), "bias": ((3, 1, 1), None),
              "one": ((1,), None), "cl3": ((2, 3, 4, 5, 6), CL3), "empty": ((0, 3, 4, 5), CL)}
    left, right = case.split(",")
    if left == "cl3":
        right_shape = (2, 3, 4, 5, 6)
        shapes["c"] = (right_shape, None)
    if right == "empty":
        shapes["cl"] = ((0, 3, 4, 5), CL)
    (ea, ta), (eb, tb) = _pair(*shapes[left], seed=1), _pair(*shapes[right], seed=2)
    e, t = BINARY[op](ember, ea, eb), BINARY[op](torch, ta, tb)
    _same_layout(e, t, CL3 if left == "cl3" else CL)
    _close(e, t)


UNARY = {
    "neg": lambda L, a: -a, "exp": lambda L, a: L.exp(a), "relu": lambda L, a: L.relu(a),
    "sigmoid": lambda L, a: L.sigmoid(a), "abs": lambda L, a: a.abs(), "mul_number": lambda L, a: a * 3,
    "rsub_number": lambda L, a: 2 - a, "pow": lambda L, a: a ** 2, "gelu": lambda L, a: L.nn.functional.gelu(a),
    "leaky_relu": lambda L, a: L.nn.functional.leaky_relu(a, 0.1), "clamp": lambda L, a: a.clamp(-0.5, 0.5),
}


@pytest.mark.parametrize("op", list(UNARY))
@pytest.mark.parametrize("fmt,shape", [(CL, (2, 3, 4, 5)), (CL, (2, 3, 1, 1)), (CL3, (2, 3, 2, 4, 5))])
def test_unary_keeps_layout(op, fmt, shape):
    ea, ta = _pair(shape, fmt)
    e, t = UNARY[op](ember, ea), UNARY[op](torch, ta)
    _same_layout(e, t, fmt)
    # float64 reference: gelu/exp/sigmoid in float32 within 4 ulp-ish of it
    ref = UNARY[op](torch, ta.double())
    np.testing.assert_allclose(e.numpy(), ref.numpy(), rtol=3e-6, atol=1e-6)


def test_random_layouts_follow_torch():
    """300 random binary and ternary cases: operands permuted in memory, broadcast (size-1
    dims, fewer dims, (1,) tensors), sizes 1 to 3: ember's strides are torch's."""
    rng = random.Random(0)
    for trial in range(300):
        ndim = rng.choice([2, 3, 4])
        shape = [rng.choice([1, 2, 3]) for _ in range(ndim)]
        pairs = []
        for k in range(rng.choice([2, 3])):
            kind = rng.random()
            if kind < 0.2:
                sub = [1 if rng.random() < 0.5 else n for n in shape][rng.choice([0, 0, 1]):] or [1]
                pairs.append(_laid_out(sub, list(range(len(sub))), trial * 7 + k))
            else:
                order = list(range(ndim))
                rng.shuffle(order)
                pairs.append(_laid_out(shape, order, trial * 7 + k))
        if len(pairs) == 2:
            e, t = pairs[0][0] * pairs[1][0], pairs[0][1] * pairs[1][1]
        else:
            e, t = (ember.addcmul(*(p[0] for p in pairs)), torch.addcmul(*(p[1] for p in pairs)))
        assert e.stride() == t.stride(), (trial, [(tuple(p[1].shape), p[1].stride()) for p in pairs])
        _close(e, t)


def test_dispatcher_shortcuts_keep_the_rule():
    """The dispatcher skips the layout rule where NumPy's result already has the rule's layout
    (a row-major first operand with a row-major second of its shape or a result without size-1
    dims, or a single operand, a number aside, whose strides the result has): random shapes
    with size-1 dims, permuted or row-major operands, numbers on either side, the strides
    ``_result_layout.pointwise`` gives the kernel's result (the rule itself is checked against
    torch above)."""
    rng = random.Random(1)
    for trial in range(120):
        shape = [rng.choice([1, 2, 3]) for _ in range(rng.choice([2, 3, 4]))]
        orders = [list(range(len(shape))) if rng.random() < 0.6 else rng.sample(range(len(shape)), len(shape))
                  for _ in range(2)]
        a, b = (_laid_out(shape, order, trial * 3 + k)[0] for k, order in enumerate(orders))
        for got, op, arrays in ((a + b, "Add", (a._data, b._data)), (a * 2.5, "Mul", (a._data, 2.5)),
                                (2.5 - a, "Sub", (2.5, a._data)), (a.exp(), "Exp", (a._data,))):
            want = pointwise(OPS[op].forward(*arrays), arrays)
            assert got._data.strides == want.strides, (trial, shape, orders, op, got.stride())
            np.testing.assert_array_equal(got.numpy(), want)


def test_transposed_first_operand_decides():
    """Not only channels-last: ``a.T + b`` follows ``a.T`` (column-major), ``b + a.T`` row-major."""
    (ea, ta), (eb, tb) = _pair((4, 3), seed=1), _pair((3, 4), seed=2)
    _same_layout(ea.T + eb, ta.T + tb)
    _same_layout(eb + ea.T, tb + ta.T)


def test_like_factories_and_clone_preserve():
    ea, ta = _pair((2, 3, 4, 5), CL)
    for name in ("empty_like", "zeros_like", "ones_like", "rand_like", "clone"):
        _same_layout(getattr(ember, name)(ea), getattr(torch, name)(ta), CL)


# ---- convolution, pooling, normalisation, interpolation ---------------------------------------
def _conv_case(conv, x_shape, w_shape, x_fmt, w_fmt, **kw):
    (ex, tx), (ew, tw) = _pair(x_shape, x_fmt, 1, grad=True), _pair(w_shape, w_fmt, 2, grad=True)
    e, t = getattr(EF, conv)(ex, ew, **kw), getattr(TF, conv)(tx, tw, **kw)
    fmt = CL if len(x_shape) == 4 else CL3
    _same_layout(e, t, fmt)
    ref = getattr(TF, conv)(tx.detach().double(), tw.detach().double(), **kw)
    np.testing.assert_allclose(e.detach().numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    g = np.random.default_rng(3).standard_normal(tuple(t.shape)).astype(np.float32)
    (e * ember.tensor(g)).sum().backward()
    (t * torch.tensor(g)).sum().backward()
    _same_layout(ex.grad, tx.grad, fmt)
    _same_layout(ew.grad, tw.grad, fmt)
    _close(ex.grad, tx.grad, rtol=1e-4, atol=1e-4)
    _close(ew.grad, tw.grad, rtol=1e-4, atol=1e-4)
    return ex, ew, tx, tw, e, t


@pytest.mark.parametrize("x_fmt,w_fmt", [(CL, None), (None, CL), (CL, CL), (None, None)])
def test_conv2d(x_fmt, w_fmt):
    _conv_case("conv2d", (2, 3, 7, 6), (4, 3, 3, 3), x_fmt, w_fmt, padding=1, stride=(1, 2))


@pytest.mark.parametrize("x_fmt,w_fmt", [(CL3, None), (None, CL3), (CL3, CL3)])
def test_conv3d(x_fmt, w_fmt):
    _conv_case("conv3d", (1, 2, 4, 5, 3), (3, 2, 2, 3, 2), x_fmt, w_fmt, padding=1)


@pytest.mark.parametrize("conv,fmt,x_shape,w_shape,groups", [
    ("conv2d", CL, (2, 4, 6, 5), (4, 2, 3, 3), 2), ("conv3d", CL3, (2, 2, 4, 5, 3), (3, 2, 2, 3, 2), 1)])
@pytest.mark.parametrize("x_cl,w_cl,g_cl", [(1, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 1), (0, 0, 1)])
def test_conv_raw_gradients(conv, fmt, x_shape, w_shape, groups, x_cl, w_cl, g_cl):
    """The gradients autograd.grad returns (no leaf layout contract): torch computes both in
    the input's or the weight's channels-last format, whatever the output gradient's layout."""
    (ex, tx), (ew, tw) = (_pair(shape, fmt if cl else None, seed, grad=True)
                          for shape, cl, seed in ((x_shape, x_cl, 1), (w_shape, w_cl, 2)))
    e, t = getattr(EF, conv)(ex, ew, groups=groups), getattr(TF, conv)(tx, tw, groups=groups)
    g = _pair(tuple(t.shape), fmt if g_cl else None, 5)
    for got, want in zip(ember.autograd.grad(e, (ex, ew), g[0]), torch.autograd.grad(t, (tx, tw), g[1])):
        _same_layout(got, want, fmt)
        _close(got, want, rtol=1e-4, atol=1e-4)


POOLS = {
    "max_pool2d": lambda F, x: F.max_pool2d(x, 2),
    "max_pool2d_pad": lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    "max_pool2d_indices": lambda F, x: F.max_pool2d(x, 2, return_indices=True)[1],
    "avg_pool2d": lambda F, x: F.avg_pool2d(x, 2, stride=1),
    "adaptive_avg_pool2d": lambda F, x: F.adaptive_avg_pool2d(x, (3, 2)),
    "adaptive_avg_pool2d_1x1": lambda F, x: F.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda F, x: F.adaptive_max_pool2d(x, (2, 3)),
    "adaptive_max_pool2d_indices": lambda F, x: F.adaptive_max_pool2d(x, 2, return_indices=True)[1],
    "batch_norm": lambda F, x: F.batch_norm(x, None, None, training=True),
    "nearest": lambda F, x: F.interpolate(x, scale_factor=2),
    "bilinear": lambda F, x: F.interpolate(x, size=(5, 9), mode="bilinear"),
    "bicubic_corners": lambda F, x: F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_pooling_and_resampling_keep_channels_last(name):
    (ex, tx) = _pair((2, 3, 6, 7), CL, grad=True)
    e, t = POOLS[name](EF, ex), POOLS[name](TF, tx)
    _same_layout(e, t, CL)
    if not e.dtype.is_floating_point:
        assert (e.numpy() == t.numpy()).all()
        return
    _close(e, POOLS[name](TF, tx.detach().double()), rtol=1e-5, atol=1e-5)
    g = np.random.default_rng(3).standard_normal(tuple(t.shape)).astype(np.float32)
    (e * ember.tensor(g)).sum().backward()
    (t * torch.tensor(g)).sum().backward()
    _same_layout(ex.grad, tx.grad, CL)
    _close(ex.grad, tx.grad, rtol=1e-4, atol=1e-5)


POOLS_3D = {
    "max_pool3d": lambda F, x: F.max_pool3d(x, 2),
    "avg_pool3d": lambda F, x: F.avg_pool3d(x, 2),
    "adaptive_avg_pool3d": lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
    "adaptive_max_pool3d": lambda F, x: F.adaptive_max_pool3d(x, 2),
    "trilinear": lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear"),
}


@pytest.mark.parametrize("name", list(POOLS_3D))
def test_pooling_3d_keeps_channels_last_3d(name):
    (ex, tx) = _pair((2, 3, 4, 6, 5), CL3)
    e, t = POOLS_3D[name](EF, ex), POOLS_3D[name](TF, tx)
    _same_layout(e, t, CL3)
    _close(e, POOLS_3D[name](TF, tx.double()), rtol=1e-5, atol=1e-5)


def test_compiled_graph_takes_channels_last_inputs():
    """A compiled conv-bias-relu-pool-add graph fed channels-last tensors gives eager's values."""
    (ex, tx), (ew, tw) = _pair((2, 3, 8, 8), CL, 1), _pair((4, 3, 3, 3), CL, 2)
    (eb, tb), (er, tr) = _pair((4, 1, 1), None, 3), _pair((2, 4, 4, 4), CL, 4)

    def f(F, x, w, b, r):
        return F.max_pool2d(F.relu(F.conv2d(x, w, padding=1) + b), 2) * 2 + r

    compiled = ember.compile(lambda x, w, b, r: f(EF, x, w, b, r))
    got = compiled(ex, ew, eb, er)
    want = f(TF, tx.double(), tw.double(), tb.double(), tr.double())
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got.numpy(), f(EF, ex, ew, eb, er).numpy(), rtol=1e-6, atol=1e-6)
