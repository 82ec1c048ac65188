"""Batch norm's statistics and backward as C kernels (backends/norm.py: channel_stats_kernel and
channel_backward_kernel, per channel of a contiguous (N, C, *) array, sums in double): a compiled
training step of BatchNorm (with and without affine parameters, 2-D and 4-D inputs) against
torch and eager ember: output, input, weight and bias gradients, running statistics (their
update, ``lerp_``, a C loop too: torch's two-sided lerp, bit-equal to eager ember's)."""
import numpy as np
import pytest
import torch

import ember


@pytest.fixture(autouse=True)
def _fresh():
    ember.compiler.reset()
    yield
    ember.compiler.reset()


def _step(lib, shape, affine, x0, r0):
    bn = (lib.nn.BatchNorm2d if len(shape) == 4 else lib.nn.BatchNorm1d)(shape[1], affine=affine)
    if affine:
        with lib.no_grad():
            bn.weight.copy_(lib.tensor(np.linspace(0.5, 1.5, shape[1], dtype=np.float32)))
            bn.bias.copy_(lib.tensor(np.linspace(-1, 1, shape[1], dtype=np.float32)))
    x = lib.tensor(x0, requires_grad=True)
    r = lib.tensor(r0)

    def step():
        x.grad = None
        for p in bn.parameters():
            p.grad = None
        y = bn(x)
        (y * r).sum().backward()
        return y
    return bn, x, step


@pytest.mark.parametrize("shape, affine", [((6, 5, 3, 7), True), ((4, 3, 2, 2), False), ((9, 4), True)])
def test_batch_norm_step_in_c_equals_torch(shape, affine, monkeypatch, capsys):
    rng = np.random.default_rng(7)
    x0 = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    r0 = rng.standard_normal(shape).astype(np.float32)
    bt, xt, step_t = _step(torch, shape, affine, x0, r0)
    for _ in range(3):
        yt = step_t()
    expected = [yt.detach().numpy(), xt.grad.numpy()] + [p.grad.numpy() for p in bt.parameters()] + \
        [bt.running_mean.numpy(), bt.running_var.numpy()]
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    for compiled in (True, False):
        be, xe, step_e = _step(ember, shape, affine, x0, r0)
        run = ember.compile(step_e, fullgraph=True) if compiled else step_e
        for _ in range(3):  # the third call runs the generated C
            ye = run()
        got = [ye.detach().numpy(), xe.grad.numpy()] + [p.grad.numpy() for p in be.parameters()] + \
            [be.running_mean.numpy(), be.running_var.numpy()]
        for mine, theirs in zip(got, expected):
            assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
            np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(theirs).max()))
    source = capsys.readouterr().err
    assert "/* batch norm's mean and variance per channel of " in source
    assert "/* batch norm backward per channel of " in source
    assert "Lerp(" in source and "F_lerp" not in source  # (before: run from Python)


def test_lerp_loop_equals_eager_bitwise_on_both_sides_of_one_half():
    rng = np.random.default_rng(2)
    a0, b0, w0 = (rng.standard_normal((4, 9)).astype(np.float32) * 10 for _ in range(3))
    w0[0, :4] = [0.5, -0.5, 0.49999997, np.inf]
    a0[1, 0], b0[1, 1] = np.inf, np.nan
    lerps = lambda a, b, w: (ember.lerp(a, b, w), ember.lerp(a, b, 0.1), ember.lerp(a, b, 0.75))  # noqa: E731
    run = ember.compile(lerps, fullgraph=True)
    args = [ember.tensor(v) for v in (a0, b0, w0)]
    for _ in range(3):
        got = run(*args)
    for mine, eager in zip(got, lerps(*args)):
        np.testing.assert_array_equal(mine.numpy(), eager.numpy())
