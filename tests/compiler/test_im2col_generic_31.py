"""Shape-generic im2col + BLAS loops (backends/conv_gemm.py): one C function per kind and dtype
reads each convolution's sizes, strides and scratch at run time, in a translation unit of its
own that every graph links from the compile cache. Float64 results against torch's over
geometries the per-shape code had constants for: odd planes, strides 2 and (2, 1), padding 0,
1 and (0, 2), dilation, groups, 1x1 kernels, a non-contiguous input, blocks of several samples
(gradients copied into rows) and one sample a block (read in place); and a second graph of
other shapes, in float32, linking the unit compiled for the first (one object per dtype)."""
import re

import numpy as np
import pytest
import torch

import ember
from ember.compiler.backends import autotune, conv_gemm, toolchain

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
GENERIC = r"^void em_im2col_conv_{}\(const em_im2col_args\* restrict a, long n0\) \{{$"


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


def _step(lib, x, ws, b, r):
    """Three convolutions of a transposed (non-contiguous) input: 3x3 stride 2 padding 1 with a
    bias; 1x1 stride 2, groups 2; 3x3 stride (2, 1), padding (0, 2), dilation (1, 2); then the
    weighted sum's backward."""
    for t in (x, *ws, b):
        t.grad = None
    F = lib.nn.functional
    y = F.conv2d(x.transpose(2, 3), ws[0], b, stride=2, padding=1)
    y = F.conv2d(F.relu(y), ws[1], stride=2, groups=2)
    y = F.conv2d(y, ws[2], stride=(2, 1), padding=(0, 2), dilation=(1, 2))
    (y * r).sum().backward()
    return y


def _results(y, x, ws, b):
    return [y.detach().numpy(), x.grad.numpy(), b.grad.numpy()] + [w.grad.numpy() for w in ws]


def _compare(lib_dtype, shapes, rng, capsys, monkeypatch):
    """(ember's compiled results, torch's in float64, the generated C) of :func:`_step`."""
    x0, w0, w1, w2, b0 = (rng.standard_normal(s) for s in shapes)
    exact = [torch.tensor(a, requires_grad=True) for a in (x0, w0, w1, w2, b0)]
    y = _step(torch, exact[0], exact[1:4], exact[4], torch.ones(1, dtype=torch.float64))
    r0 = rng.standard_normal(tuple(y.shape))
    want = _results(_step(torch, exact[0], exact[1:4], exact[4], torch.tensor(r0)), exact[0], exact[1:4], exact[4])
    x, w0, w1, w2, b = (ember.tensor(a.astype(lib_dtype), requires_grad=True) for a in (x0, w0, w1, w2, b0))
    r = ember.tensor(r0.astype(lib_dtype))
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    step = ember.compile(lambda: _step(ember, x, [w0, w1, w2], b, r), fullgraph=True)
    for _ in range(3):  # the third call runs the C
        got = _results(step(), x, [w0, w1, w2], b)
    monkeypatch.delenv("EMBER_LOGS")
    return got, want, capsys.readouterr().err


def test_generic_im2col_equals_torch_and_compiles_once_for_graphs_of_any_shapes(im2col, tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(0)
    # x (5, 4, 9, 11) read as (5, 4, 11, 9): 6 x 5 outputs, the whole batch a block; then 3 x 3
    # (one block); then 1 x 1 (5 samples a block)
    got, want, source = _compare(np.float64, [(5, 4, 9, 11), (6, 4, 3, 3), (6, 3, 1, 1), (3, 6, 3, 3), (6,)],
                                 rng, capsys, monkeypatch)
    assert len(re.findall(GENERIC.format("double"), source, re.M)) == 1
    # each forward's kernel, each input gradient's and each weight gradient's call the generic code
    assert source.count("em_im2col_conv_double(&a, n0);") == 3
    assert source.count("em_im2col_transpose_double(&a);") == 3
    assert source.count("em_im2col_weight_double(&a);") == 3
    assert ".copy = 1" in source  # a block of several samples: gradients copied into rows
    for mine, reference in zip(got, want):
        assert mine.shape == reference.shape and mine.dtype == np.float64
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())
    # a graph of other shapes in float32 (large planes: one sample a block, read in place) links
    # the float unit; a third in float64 links the double unit compiled for the first
    got, want, source = _compare(np.float32, [(2, 3, 33, 21), (4, 3, 3, 3), (4, 2, 1, 1), (2, 4, 3, 3), (4,)],
                                 rng, capsys, monkeypatch)
    assert ".copy = 0" in source and "em_im2col_weight_float(&a);" in source
    for mine, reference in zip(got, want):
        assert mine.shape == reference.shape and mine.dtype == np.float32
        np.testing.assert_allclose(mine, reference, rtol=1e-4, atol=1e-5 * np.abs(reference).max())
    got, want, source = _compare(np.float64, [(1, 2, 11, 10), (2, 2, 3, 3), (2, 1, 1, 1), (1, 2, 3, 3), (2,)],
                                 rng, capsys, monkeypatch)
    for mine, reference in zip(got, want):
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())
    units = [p.read_text() for p in (tmp_path / "ember" / "compile").glob("o-*.c")]
    for dtype in ("double", "float"):
        assert len([u for u in units if re.search(GENERIC.format(dtype), u, re.M)]) == 1
