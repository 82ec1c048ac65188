"""im2col + BLAS over blocks of samples (conv_gemm.samples_per_product: one product per block of
at least 256 positions, the last block of a batch shorter) and the cost model's im2col for
Winograd-shaped Conv and ConvTranspose nodes with few output tiles (autotune.conv_cost_model):
the chosen variants and the compiled forward and gradients against torch and eager ember."""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F


pytestmark = pytest.mark.usefixtures("private_cache")


def _compiled_step(x_shape, w_shape, geometry, monkeypatch, capsys):
    """(compiled [y, gx, gw, gb], eager ember's, torch's, the log) of conv2d + bias weighted by
    a random r, summed, backward."""
    rng = np.random.default_rng(3)
    x0, w0, b0 = (rng.standard_normal(s).astype(np.float32) for s in (x_shape, w_shape, w_shape[:1]))
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    yt = torch.nn.functional.conv2d(xt, wt, bt, **geometry)
    r0 = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    (yt * torch.tensor(r0)).sum().backward()
    reference = [yt.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()]
    monkeypatch.setenv("EMBER_LOGS", "output_code,autotuning")
    results = []
    for compiled in (True, False):
        x, w, b = (ember.tensor(a, requires_grad=True) for a in (x0, w0, b0))
        r = ember.tensor(r0)

        def step():
            x.grad = w.grad = b.grad = None
            y = F.conv2d(x, w, b, **geometry)
            (y * r).sum().backward()
            return y
        run = ember.compile(step, fullgraph=True) if compiled else step
        for _ in range(3):  # the third call runs the generated C
            y = run()
        results.append([y.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()])
    return results[0], results[1], reference, capsys.readouterr().err


def _check(mine, eager, reference, bound=None):
    for got, e, ref in zip(mine, eager, reference):
        assert got.shape == ref.shape and got.dtype == ref.dtype
        np.testing.assert_allclose(got, e, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_small_planes_take_im2col_in_one_block_of_the_batch(monkeypatch, capsys):
    """3x3 stride-1 on 4x4 planes, batch 6 (24 tiles of F(2, 3)): the forward and both
    gradients take im2col + BLAS, the whole batch in one product (16 positions a sample; the
    weight gradient under _MIN_WINOGRAD_WEIGHT_TILES since session 31)."""
    mine, eager, reference, log = _compiled_step((6, 8, 4, 4), (8, 8, 3, 3), dict(padding=1), monkeypatch, capsys)
    assert "Conv [6, 8, 4, 4] -> [6, 8, 4, 4] -> im2col + BLAS (cost model)" in log
    assert "ConvTranspose [6, 8, 4, 4] -> [6, 8, 4, 4] -> im2col + BLAS (cost model)" in log
    assert "ConvWeight [6, 8, 4, 4] -> [8, 8, 3, 3] -> im2col + BLAS (cost model)" in log
    assert log.count("groups 1, 6 samples per product") == 3, log
    _check(mine, eager, reference)


@pytest.mark.parametrize("groups", [2])
def test_blocks_of_samples_with_a_short_last_block(groups, monkeypatch, capsys):
    """Stride 2 on 14x14 planes: 49 output positions a sample, so blocks of 6 samples, a batch
    of 8 ending in a block of 2; with groups each group's rows of the block in one product."""
    mine, eager, reference, log = _compiled_step((8, 4, 14, 14), (8, 4 // groups, 3, 3),
                                                 dict(stride=2, padding=1, groups=groups), monkeypatch, capsys)
    for name in ("Conv", "ConvTranspose", "ConvWeight"):
        assert f"/* im2col + BLAS {name} " in log and f" {name} [" in log
    assert log.count(f"groups {groups}, 6 samples per product") == 3, log
    assert log.count(".n = 8, ") == 3 and log.count(".per = 6, ") == 3 and "n0 += 6" in log  # (the generic loops')
    _check(mine, eager, reference)
