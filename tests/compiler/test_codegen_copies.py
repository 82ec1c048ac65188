"""cat and stack (each operand into its slice), flip, tril, triu and constant pad (negative pads
crop) inside a compiled graph are C
kernels (cgen._copy_kernel, backends/copies.py), not NumPy calls between the fused loops:
values bit-equal to eager's for float32/float64/int64 operands, strided and transposed ones,
an empty one, NaN above a triangle (zeroed, as eager), and the gradients equal eager's."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.compiler.backends import toolchain

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


def step(x, y, i):
    return (ember.cat([x * 2, y.t(), x], 1) * 1.5, ember.cat([x, y.t()[:, ::2]], -1),
            ember.stack([x, x + 1], 1), ember.cat([i, i.t().reshape(3, 4) * 2], 0), ember.cat([x[:0], x]),
            x.flip(0, -1) * y[:4].t()[:, :1], (x.detach() * 0 / 0).tril(-1), y.t().triu(2) * 2, i.flip(1), i.t().tril(),
            F.pad(x.t(), (1, 2, 0, 1), value=-0.5) * 3, F.pad(y, (-1, 2, 1, -3)), F.pad(i, (2, 0), value=7))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cat_is_c_and_equals_eager(dtype, monkeypatch, capfd, tmp_path):
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    rng = np.random.default_rng(0)
    x0, y0 = rng.standard_normal((4, 6)).astype(dtype), rng.standard_normal((8, 4)).astype(dtype)
    i0 = np.arange(12).reshape(3, 4)

    def run(fn):
        x, y = ember.tensor(x0, requires_grad=True), ember.tensor(y0, requires_grad=True)
        outs = fn(x, y, ember.tensor(i0))
        (outs[0].sum() + (outs[1] * 3).sum() + (outs[2] * outs[2]).sum() + outs[4].sum()
         + (outs[5] * outs[5]).sum() + (outs[7] * outs[7]).sum() + outs[10].sum() + (outs[11] * outs[11]).sum()).backward()
        return [*outs, x.grad, y.grad]

    expected = run(step)
    compiled = ember.compile(step, fullgraph=True)
    try:
        for _ in range(2):
            actual = run(compiled)
        source = capfd.readouterr().err
        for what in ("cat of 3 along dim 1 -> [4, 20]", "cat of 2 along dim 1 -> [4, 10]",
                     "stack of 2 along dim 1 -> [4, 2, 6]", "cat of 2 along dim 0 -> [6, 4]",
                     "cat of 2 along dim 0 -> [4, 6]", "flip of dims [0, 1] -> [4, 6]", "tril with diagonal -1",
                     "triu with diagonal 2", "flip of dims [1] -> [3, 4]", "tril with diagonal 0 -> [4, 3]",
                     "pad [1, 2, 0, 1] with", "pad [-1, 2, 1, -3] with", "pad [2, 0] with 7LL -> [3, 6]",
                     "pad [-1, -2, 0, -1] with 0", "pad [1, -2, -1, 3] with 0"):  # the last two: gradients
            assert what in source, what
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert a.dtype == e.dtype and a.shape == e.shape
            if k < len(actual) - 2:
                np.testing.assert_array_equal(a.detach().numpy(), e.detach().numpy())
            else:  # gradients: y's sums its uses in another order (float32: 1 ulp here)
                np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-13)
        assert np.isnan(actual[6].detach().numpy()).sum() == 6  # NaN below the diagonal - 1, zeros above
    finally:
        ember.compiler.reset()


def mapped(x, z, v, s):
    """reflect, replicate and circular pads (also cropping), rolls (repeated dims, negative
    shifts, an empty dim), of strided views; each op reads its own input."""
    return [F.pad(x[0], (1, 2, 2, 1), mode="reflect"), F.pad(x[1], (1, 2, 2, 1), mode="replicate"),
            F.pad(x[2], (1, 2, 2, 1), mode="circular"), F.pad(x[3].transpose(-1, -2), (2, -1, -1, 3), mode="reflect"),
            F.pad(x[4], (-1, 3, 3, -2), mode="replicate"), F.pad(x[5], (-1, 3, 2, -2), mode="circular"),
            x[6].roll(2, 3), x[7].roll((1, -7), (2, -1)), x[8].roll((3, 2), (0, 0)), F.pad(z, (2, 3), mode="reflect"),
            F.pad(v, (1, 1, 1, 1, 1, 1), mode="replicate"), s.roll(1, 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pad_modes_and_roll_are_c_and_equal_eager(dtype, monkeypatch, capfd, tmp_path):
    """Pad (reflect, replicate, circular), its adjoint and Roll are C kernels: values bit-equal to
    eager's (NaN and inf moved as they are), gradients equal up to the order of their sums
    (bit-equal for a reflect pad along one dim, whose sums run in eager's order)."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((9, 2, 3, 6, 5)).astype(dtype).transpose(0, 1, 2, 4, 3)  # strided
    x0[:, 0, 1, 2, 3], x0[:, 1, 2, 0, 0] = np.nan, -np.inf
    z0, v0 = rng.standard_normal((3, 7)).astype(dtype), rng.standard_normal((1, 2, 3, 4, 5)).astype(dtype)
    s0 = np.zeros((2, 3, 0), dtype)
    ws = [rng.standard_normal(o.shape).astype(dtype) for o in mapped(*map(ember.tensor, (x0, z0, v0, s0)))]

    def run(fn):
        x, z, v = (ember.tensor(a, requires_grad=True) for a in (x0, z0, v0))
        outs = fn(x, z, v, ember.tensor(s0))
        sum((o * ember.tensor(w)).sum() for o, w in zip(outs, ws)).backward()
        return outs, [x.grad, z.grad, v.grad]

    expected, expected_grads = run(mapped)
    compiled = ember.compile(mapped, fullgraph=True)
    try:
        for _ in range(2):
            actual, grads = run(compiled)
        source = capfd.readouterr().err
        assert "= F_pad" not in source and "= F_roll" not in source
        for what in ("reflect pad [1, 2, 2, 1] -> [2, 3, 8, 9]", "replicate pad [-1, 3, 3, -2] -> [2, 3, 6, 8]",
                     "circular pad [-1, 3, 2, -2] (adjoint: sums) -> [2, 3, 5, 6]", "roll by (3, 2) along (0, 0)",
                     "roll by 1 along 1 -> [2, 3, 0]", "replicate pad [1, 1, 1, 1, 1, 1] -> [1, 2, 5, 6, 7]"):
            assert what in source, what
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert a.shape == e.shape and a.dtype == e.dtype, k
            np.testing.assert_array_equal(a.detach().numpy(), e.detach().numpy(), err_msg=str(k))
        np.testing.assert_array_equal(grads[1].numpy(), expected_grads[1].numpy())  # reflect along one dim
        # each gradient element sums at most 4 weights (a corner of a 2-D replicate pad), in
        # another order: within 4 roundings of the largest weight's magnitude
        bound = 4 * np.finfo(dtype).eps * max(np.abs(w).max(initial=0) for w in ws)
        for a, e in zip(grads, expected_grads):
            np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=0, atol=bound)
    finally:
        ember.compiler.reset()
