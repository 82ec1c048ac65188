"""REVIEW20: gradient layouts of channels-last inputs against torch 2.13 (strides and values).
torch's pooling backward kernels allocate the input gradient in the input's suggested memory
format, and torch reads a size-1 dim's stride when it suggests one (``(2, 1, 8, 12)`` at
strides ``(96, 1, 12, 1)``, pixel_shuffle's result of a channels-last input, is channels-last);
ember gave these gradients row-major."""
import numpy as np
import pytest
import torch

import ember

_LAYOUTS = {
    "channels_last": lambda L, t: t.contiguous(memory_format=L.channels_last),
    "permuted": lambda L, t: t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
}
_OPS = {
    "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x, 2),
    "max_pool2d_overlapping": lambda L, x: L.nn.functional.max_pool2d(x, 3, stride=1, padding=1),
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x, 2),
    "avg_pool2d_padded": lambda L, x: L.nn.functional.avg_pool2d(x, 3, stride=2, padding=1),
    "adaptive_max_pool2d": lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (2, 3)),
    "pixel_shuffle": lambda L, x: L.nn.functional.pixel_shuffle(x, 2),
}


def _gradient(L, data, layout, op):
    x = L.tensor(data, requires_grad=True)
    y = op(L, _LAYOUTS[layout](L, x))
    upstream = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(np.float32)
    (g,) = L.autograd.grad(y, x, L.empty_like(y).copy_(L.tensor(upstream)))  # laid out as y
    return y, g


@pytest.mark.parametrize("layout", list(_LAYOUTS))
@pytest.mark.parametrize("name", list(_OPS))
@pytest.mark.parametrize("shape", [(2, 4, 4, 6), (1, 4, 6, 2)])
def test_input_gradient_layout_of_a_channels_last_input(shape, name, layout):
    """Each case failed before: the gradient was row-major where torch's is channels-last."""
    data = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    (ty, tg), (ey, eg) = (_gradient(L, data, layout, _OPS[name]) for L in (torch, ember))
    assert (ey.shape, ey.stride()) == (tuple(ty.shape), ty.stride())
    assert eg.stride() == tg.stride()
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-6, atol=1e-6)


def test_a_size_one_channel_with_channels_last_strides_suggests_channels_last():
    """pixel_shuffle of a channels-last (2, 4, 4, 6) input is (2, 1, 8, 12) at strides (96, 1,
    12, 1): torch reads it as channels-last (the channel stride 1), so pixel_unshuffle of it
    and the input gradient are channels-last; ember took NumPy's contiguity flag (which
    ignores size-1 dims) for row-major. Row-major strides of the same shape stay row-major."""
    data = np.random.default_rng(0).standard_normal((2, 4, 4, 6)).astype(np.float32)
    got = []
    for L in (torch, ember):
        y = L.nn.functional.pixel_shuffle(L.tensor(data).contiguous(memory_format=L.channels_last), 2)
        row = y.contiguous()
        got.append([y.stride(), L.nn.functional.pixel_unshuffle(y, 2).stride(),
                    L.nn.functional.pixel_unshuffle(row, 2).stride(), L.empty_like(y).stride(),
                    L.nn.functional.max_pool2d(y, 2).stride(), L.nn.functional.max_pool2d(row, 2).stride()])
    assert got[1] == got[0]


_TRANSPOSED = {
    "transposed": lambda L, t: t.transpose(-1, -2).contiguous().transpose(-1, -2),
    "expanded": lambda L, t: t[:, :1].expand_as(t),
}
_ROW_MAJOR_RESULTS = {
    "var": lambda L, x: x.var(1),
    "std_keepdim": lambda L, x: x.std((1, 2), keepdim=True),
    "var_mean": lambda L, x: L.var_mean(x, 1)[0],
    "logsumexp": lambda L, x: x.logsumexp(1),
    "norm": lambda L, x: x.norm(dim=1),
    "vector_norm_3": lambda L, x: L.linalg.vector_norm(x, 3, dim=(1, 3)),
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x, 2),
    "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x, 2),
    "pad": lambda L, x: L.nn.functional.pad(x, (1, 1, 2, 0)),
}


@pytest.mark.parametrize("layout", list(_TRANSPOSED))
@pytest.mark.parametrize("name", list(_ROW_MAJOR_RESULTS))
def test_results_torch_allocates_row_major(name, layout):
    """torch's variance, logsumexp and norm kernels and its pooling and padding kernels (for an
    input that suggests no channels-last format) allocate row-major results; ember's kept a
    transposed input's order (NumPy's reduce), and so did their input gradients."""
    data = np.random.default_rng(5).standard_normal((2, 4, 4, 6)).astype(np.float32)
    got = []
    for L in (torch, ember):
        x = L.tensor(data, requires_grad=True)
        y = _ROW_MAJOR_RESULTS[name](L, _TRANSPOSED[layout](L, x))
        (g,) = L.autograd.grad(y, x, L.ones_like(y))
        got.append((y.stride(), g.stride(), y.detach().numpy(), g.numpy()))
    assert got[1][:2] == got[0][:2]
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=2e-6, atol=1e-6)  # float64 oracle not needed: +,*,sqrt,exp,log
    np.testing.assert_allclose(got[1][3], got[0][3], rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_takes_max_and_min(reduce, include_self):
    """torch 2.13's scatter_reduce takes "max"/"min" as "amax"/"amin" (its kernel's legacy
    names); ember raised RuntimeError. index_reduce refuses them in both. (torch's backward
    then refuses the name, ember's takes amax's/amin's gradient: not compared.)"""
    data = np.random.default_rng(7).standard_normal((3, 5)).astype(np.float32)
    index = np.random.default_rng(8).integers(0, 5, (3, 4))
    got = []
    for L in (torch, ember):
        y = L.tensor(data).scatter_reduce(1, L.tensor(index), L.tensor(data[:, :4] * 2), reduce,
                                          include_self=include_self)
        got.append([y.numpy(), L.tensor(data).scatter_reduce_(1, L.tensor(index), L.tensor(data[:, :4]), reduce).numpy()])
        with pytest.raises(RuntimeError, match=f"prod, mean, amax or amin but got {reduce}"):
            L.zeros(3, 5).index_reduce(1, L.tensor([0, 1]), L.ones(3, 2), reduce)
    for e, t in zip(got[1], got[0]):
        np.testing.assert_array_equal(e, t)
