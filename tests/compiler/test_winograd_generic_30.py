"""Shape-generic Winograd loops (backends/winograd.py): one C function per kind, tile size and
dtype reads each convolution's sizes, strides and scratch at run time, in a translation unit
of its own that every graph links from the compile cache. Float32 F(2, 3) results against
torch's in float64 (Winograd's bound, test_codegen_conv.WINOGRAD_BOUND, which covers float64 and
F(4, 3)) over geometries the per-shape code had constants for: odd planes whose last tiles
overhang the output, batches not a multiple of the block, padding 0, 1, 2 and unequal per
dimension (ConvTranspose's 2 - padding), groups, a non-contiguous input; and a second graph of
other shapes linking the generic unit compiled for the first, whose direct sums for an inf in
the input or the weight give torch's inf and NaN masks (a padding's 0 times inf adds no NaN)."""
import re

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember.compiler.backends import autotune, conv_gemm, toolchain

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
BOUND = 2e-6  # F(2, 3)'s: test_codegen_conv.WINOGRAD_BOUND
GENERIC = r"^void em_winograd2_block_float\(const em_winograd_args\* restrict a, long n0\) \{$"


@pytest.fixture
def winograd(tmp_path, monkeypatch):
    """A private compile cache; the cost model picks F(2, 3) wherever it applies."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(autotune, "conv_cost_model", lambda node, have_blas: next(
        c for c in (2, 1, 0) if c in conv_gemm.applicable(node, have_blas)))
    ember.compiler.reset()
    yield
    ember.compiler.reset()


def _step(lib, x, ws, b, r):
    """Three 3x3 stride-1 convolutions (odd plane, padding 1 with a bias; groups 2, padding 2;
    padding (0, 2)) of a transposed (non-contiguous) input, then the weighted sum's backward."""
    for t in (x, *ws, b):
        t.grad = None
    y = lib.nn.functional.conv2d(x.transpose(2, 3), ws[0], b, padding=1)
    y = lib.nn.functional.conv2d(lib.nn.functional.relu(y), ws[1], padding=2, groups=2)
    y = lib.nn.functional.conv2d(y, ws[2], padding=(0, 2))
    (y * r).sum().backward()
    return y


def _results(y, x, ws, b):
    return [y.detach().numpy(), x.grad.numpy(), b.grad.numpy()] + [w.grad.numpy() for w in ws]


def test_generic_winograd_equals_torch_and_compiles_once_for_graphs_of_any_shapes(winograd, tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(0)
    shapes = [(3, 5, 11, 7), (6, 5, 3, 3), (6, 3, 3, 3), (5, 6, 3, 3), (6,), (3, 5, 7, 15)]
    x0, w0, w1, w2, b0, r0 = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    exact = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x0, w0, w1, w2, b0)]
    want = _results(_step(torch, exact[0], exact[1:4], exact[4], torch.tensor(r0, dtype=torch.float64)),
                    exact[0], exact[1:4], exact[4])
    x, w0, w1, w2, b = (ember.tensor(a, requires_grad=True) for a in (x0, w0, w1, w2, b0))
    r = ember.tensor(r0)
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    step = ember.compile(lambda: _step(ember, x, [w0, w1, w2], b, r), fullgraph=True)
    for _ in range(3):  # the third call runs the C
        got = _results(step(), x, [w0, w1, w2], b)
    source = capsys.readouterr().err
    assert len(re.findall(GENERIC, source, re.M)) == 1
    # each forward's and input gradient's kernel, and each weight gradient's, call the generic code
    assert source.count("em_winograd2_block_float(&a, n0);") == 6
    assert source.count("em_winograd2_weight_float(&a);") == 3
    for mine, reference in zip(got, want):
        assert mine.shape == reference.shape and mine.dtype == np.float32
        assert np.abs(mine - reference).max() <= BOUND * np.abs(reference).max()
    # a graph of other shapes links the generic unit compiled for the first; an operand not
    # finite (x, then the weight) takes its direct sums: torch's inf and NaN masks
    def conv_step(x, w):
        y = F.conv2d(x, w, padding=1)
        y.sum().backward()
        return y
    conv_step = ember.compile(conv_step, fullgraph=True)
    x0, w0 = rng.standard_normal((1, 4, 6, 5)).astype(np.float32), rng.standard_normal((5, 4, 3, 3)).astype(np.float32)
    x_inf, w_inf = x0.copy(), w0.copy()
    x_inf[0, 1, 2, 3], w_inf[1, 2, 0, 0] = np.inf, np.inf
    for x0, w0 in ((x0, w0), (x0, w0), (x_inf, w0), (x0, w_inf)):  # (the second call compiles)
        x, w = ember.tensor(x0, requires_grad=True), ember.tensor(w0, requires_grad=True)
        xt, wt = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
        yt = torch.nn.functional.conv2d(xt, wt, padding=1)
        yt.sum().backward()
        for mine, theirs in zip((conv_step(x, w), x.grad, w.grad), (yt, xt.grad, wt.grad)):
            mine, theirs = mine.detach().numpy(), theirs.detach().numpy()
            np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs))
            np.testing.assert_array_equal(np.isinf(mine), np.isinf(theirs))
            finite = np.isfinite(theirs)
            np.testing.assert_allclose(mine[finite], theirs[finite], rtol=1e-4, atol=1e-4)
    assert "em_winograd2_block_float(&a, n0);" in capsys.readouterr().err
    units = [p.read_text() for p in (tmp_path / "ember" / "compile").glob("o-*.c")]
    assert len([u for u in units if re.search(GENERIC, u, re.M)]) == 1 and len(units) >= 3
