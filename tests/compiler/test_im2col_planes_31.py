"""The generic im2col's two ways of copying windows (backends/conv_gemm.py): a small plane at
stride 1 or 2 is copied into a zero-bordered plane first, every window row then one copy; a
large plane (over 4096 bordered values) or a stride of 3 takes the ranges computed per kernel
column. Float64 forward and both gradients against torch's, each way, with padding that cuts
windows on every side, a bias, dilation and strides that differ per axis."""
import numpy as np
import pytest
import torch

import ember
from ember.compiler.backends import autotune, conv_gemm, toolchain

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture
def im2col(tmp_path, monkeypatch):
    """A private compile cache; the cost model picks im2col + BLAS wherever it applies, and every
    node takes the generic loops (none has windows or col2im of its own for few channels)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(conv_gemm, "FEW_CHANNELS", 0)
    monkeypatch.setattr(autotune, "conv_cost_model", lambda node, have_blas: 1 if 1 in conv_gemm.applicable(
        node, have_blas) else 0)
    ember.compiler.reset()
    yield
    ember.compiler.reset()


def _step(lib, x, w, b, r, kw):
    for t in (x, w, b):
        t.grad = None
    y = lib.nn.functional.conv2d(x, w, b, **kw)
    (y * r).sum().backward()
    return y


def _results(y, x, w, b):
    return [y.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()]


@pytest.mark.parametrize("xshape, kw", [
    ((2, 3, 70, 66), dict(padding=1)),                                   # 72 x 68 bordered: ranges
    ((3, 2, 13, 14), dict(stride=3, padding=2)),                         # stride 3: ranges
    ((3, 2, 9, 12), dict(stride=(1, 2), padding=(2, 1), dilation=(2, 1))),  # small, stride 2 across
    ((4, 3, 5, 6), dict(padding=(1, 2), dilation=(1, 2))),               # small, stride 1
])
def test_window_copies_equal_torch(im2col, xshape, kw):
    rng = np.random.default_rng(1)
    x0, w0, b0 = rng.standard_normal(xshape), rng.standard_normal((4, xshape[1], 3, 3)), rng.standard_normal(4)
    shape = torch.nn.functional.conv2d(torch.tensor(x0), torch.tensor(w0), **kw).shape
    r0 = rng.standard_normal(tuple(shape))
    exact = [torch.tensor(a, requires_grad=True) for a in (x0, w0, b0)]
    want = _results(_step(torch, *exact, torch.tensor(r0), kw), *exact)
    x, w, b = (ember.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    r = ember.tensor(r0)
    step = ember.compile(lambda: _step(ember, x, w, b, r, kw), fullgraph=True)
    for _ in range(3):  # the third call runs the C
        got = _results(step(), x, w, b)
    for mine, reference in zip(got, want):
        assert mine.shape == reference.shape
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())
