"""im2col + BLAS nodes with few channels (backends/conv_gemm.py, FEW_CHANNELS): an input of
fewer than 16 channels has its windows copied, and a ConvTranspose whose groups have fewer its
col2im, by loops unrolled for the node's shape, handed to the generic functions in the args
struct (``.im2col``, ``.col2im``), where the others point to the generic loops (a non-contiguous
input, more channels), which are compiled only where some node points to them. Float64 forward
and both gradients against torch's: LeNet's two layers (blocks of one and of several samples)
and geometries that cut windows: padding, strides, dilation, groups."""
import re

import numpy as np
import pytest
import torch

import ember
from ember.compiler.backends import autotune, conv_gemm, toolchain

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture
def im2col(tmp_path, monkeypatch):
    """A private compile cache; the cost model picks im2col + BLAS wherever it applies."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(autotune, "conv_cost_model", lambda node, have_blas: 1 if 1 in conv_gemm.applicable(
        node, have_blas) else 0)
    ember.compiler.reset()
    yield
    ember.compiler.reset()


def _step(lib, xs, ws, bs, rs):
    """Each case's convolution (of a transposed input where it says so), weighted by its r."""
    for t in (*xs, *ws, *bs):
        t.grad = None
    loss = 0
    for (_, _, kw, transposed), x, w, b, r in zip(CASES, xs, ws, bs, rs):
        loss = loss + (lib.nn.functional.conv2d(x.transpose(2, 3) if transposed else x, w, b, **kw) * r).sum()
    loss.backward()
    return loss


# (input shape, weight shape, arguments, input transposed)
CASES = [((3, 1, 12, 12), (6, 1, 5, 5), {}, False),      # LeNet's first layer: own windows (x needs no gradient)
         ((4, 6, 14, 14), (16, 6, 5, 5), {}, False),     # its second, 3 samples a block: own windows, col2im
         ((2, 4, 9, 7), (6, 2, 3, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2), False),  # own
         ((2, 3, 8, 9), (4, 3, 3, 3), dict(padding=1), True),  # transposed input: generic windows, own col2im
         ((2, 16, 6, 6), (4, 16, 3, 3), dict(stride=2), False)]  # 16 channels: the generic loops


def _tensors(lib, arrays, grad):
    return [lib.tensor(a, requires_grad=grad(a)) for a in arrays]


def test_few_channels_equal_torch(im2col, monkeypatch, capsys):
    rng = np.random.default_rng(2)
    arrays = [[rng.standard_normal(s) for s in (xs, ws, ws[0])] for xs, ws, _, _ in CASES]
    shapes = [torch.nn.functional.conv2d(torch.zeros(xs).transpose(2, 3) if t else torch.zeros(xs), torch.zeros(ws),
                                         **kw).shape for xs, ws, kw, t in CASES]
    r0 = [rng.standard_normal(tuple(s)) for s in shapes]
    results = []
    for lib in (torch, ember):
        xs = _tensors(lib, [a[0] for a in arrays], lambda a: a.shape[1] > 1)
        ws, bs = (_tensors(lib, [a[i] for a in arrays], lambda a: True) for i in (1, 2))
        rs = [lib.tensor(r) for r in r0]
        if lib is ember:
            monkeypatch.setenv("EMBER_LOGS", "output_code")
            step = ember.compile(lambda: _step(ember, xs, ws, bs, rs), fullgraph=True)
            for _ in range(2):  # the third call runs the C
                step()
        loss = step() if lib is ember else _step(torch, xs, ws, bs, rs)
        results.append([loss.detach().numpy()] + [t.grad.numpy() for t in (*xs, *ws, *bs) if t.requires_grad])
    source = capsys.readouterr().err
    # the two layers' and the third case's Conv and ConvWeight; the input gradients but the first
    assert len(re.findall(r"^static void \w+_im2col\(", source, re.M)) == 6, source
    assert len(re.findall(r"^static void \w+_col2im\(", source, re.M)) == 3
    # the others point to the generic loops: the transposed input's and the 16 channels'
    assert source.count(".im2col = em_im2col_cols_double,") == 4 and source.count(".col2im = em_im2col_col2im_double}") == 1
    assert source.count("em_im2col_conv_double(&a, n0);") == 5 and source.count("em_im2col_transpose_double(&a);") == 4
    for mine, reference in zip(*results[::-1]):
        assert mine.shape == reference.shape
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())


def test_generic_windows_and_col2im_compile_only_where_a_node_points_to_them():
    calls = "em_im2col_conv_float(&a, n0); em_im2col_transpose_float(&a); .col2im = k3_1_col2im"
    (unit,) = conv_gemm.support(calls)[1]
    assert "void em_im2col_transpose_float(" in unit and "em_im2col_cols_float(" not in unit
    assert "em_im2col_col2im_float(" not in unit
    (unit,) = conv_gemm.support(calls + " .im2col = em_im2col_cols_float, .col2im = em_im2col_col2im_float}")[1]
    assert "void em_im2col_cols_float(" in unit and "void em_im2col_col2im_float(" in unit
