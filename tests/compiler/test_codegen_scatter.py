"""scatter, scatter_add and scatter_reduce (sum, prod, mean, amax, amin; include_self both
ways) inside compiled graphs are C kernels (backends/gather.py): values bit-equal to eager's
NumPy ufunc.at (duplicate indices applied in the index's C order), torch's within rounding,
gradients equal eager's and torch's, torch's RuntimeError for a negative or too large index
raised from the kernel, an empty index a copy."""
import numpy as np
import pytest
import torch

import ember

REDUCES = ("sum", "prod", "mean", "amax", "amin")


def ops(L, x, s, i):
    outs = [x.scatter(0, i, s), x.scatter(1, i.t()[:5, :4].contiguous(), 2.5), x.scatter_add(0, i, s),
            L.gather(x, 1, i.t()[:5, :4].contiguous())]
    outs += [x.scatter_reduce(0, i, s, r, include_self=inc) for r in REDUCES for inc in (True, False)]
    return outs


def _data(dtype):
    rng = np.random.default_rng(21)
    x0 = rng.standard_normal((6, 5, 2)).astype(dtype).transpose(1, 0, 2)[:, :, 0]  # [5, 6], strided
    s0 = rng.standard_normal((4, 6)).astype(dtype)
    i0 = np.array([[0, 1, 1, 4, 4, 4], [1, 1, 0, 0, 3, 4], [4, 0, 2, 2, 2, 3], [0, 0, 0, 1, 4, 4]])
    x0[0, 0], x0[1, 1], s0[0, 2], s0[1, 3], x0[4, 5] = 0.0, -0.0, np.nan, 0.0, np.inf  # zeros, NaN, inf
    return x0, s0, i0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scatters_in_c_equal_eager_and_torch(dtype, monkeypatch, capfd, tmp_path):
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    x0, s0, i0 = _data(dtype)
    ws = [np.random.default_rng(k).standard_normal((5, 6) if k != 3 else (5, 4)).astype(dtype) for k in range(14)]

    def loss(L, fn, x, s, i):
        outs = fn(L, x, s, i)
        total = sum((L.nan_to_num(o, 0.0, 1.0, -1.0) * L.tensor(w)).sum() for o, w in zip(outs, ws))
        return outs, total

    def run(L, compiled):
        x, s = L.tensor(x0, requires_grad=True), L.tensor(s0, requires_grad=True)
        fn = ops if not compiled else lambda L_, *a: compiled(*a)
        outs, total = loss(L, fn, x, s, L.tensor(i0))
        total.backward()
        return [o.detach().numpy() for o in outs], x.grad.numpy(), s.grad.numpy()

    compiled = ember.compile(lambda x, s, i: ops(ember, x, s, i), fullgraph=True)
    try:
        eager, ours, theirs = run(ember, None), run(ember, compiled), run(torch, None)
        source = capfd.readouterr().err
        assert "= F_scatter" not in source and "= F_gather" not in source
        assert "ScatterReduce(amax, include_self=False) along dim 0" in source
        for a, e, t in zip(ours[0], eager[0], theirs[0]):
            np.testing.assert_array_equal(a, e)
            np.testing.assert_array_equal(np.signbit(a), np.signbit(e))
            np.testing.assert_allclose(a, t, rtol=4 * np.finfo(dtype).eps, atol=0)
        for a, e, t in zip(ours[1:], eager[1:], theirs[1:]):
            np.testing.assert_allclose(a, e, rtol=8 * np.finfo(dtype).eps, atol=8 * np.finfo(dtype).eps)
            np.testing.assert_allclose(a, t, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    finally:
        ember.compiler.reset()


@pytest.mark.parametrize("bad", [-1, 5, 9])
def test_scatter_index_out_of_range_raises_torchs_error_from_the_kernel(bad, monkeypatch, capfd, tmp_path):
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    x0, s0, i0 = _data(np.float32)
    i_bad = i0.copy()
    i_bad[2, 3] = bad
    try:
        for name, call in (("scatter", lambda L, x, s, i: x.scatter(0, i, s)),
                           ("scatter_add", lambda L, x, s, i: x.scatter_add(0, i, s)),
                           ("scatter_reduce", lambda L, x, s, i: x.scatter_reduce(0, i, s, "amax", include_self=False)),
                           ("mean", lambda L, x, s, i: x.scatter_reduce(0, i, s, "mean"))):
            compiled = ember.compile(lambda x, s, i: call(ember, x, s, i) * 2, fullgraph=True)
            compiled(ember.tensor(x0), ember.tensor(s0), ember.tensor(i0))  # compiled once, good index
            code = capfd.readouterr().err
            assert "= F_scatter" not in code
            if name == "mean":  # the counts are freed on the bad index's early return too
                assert "{ free(count); em_bad_target = c;" in code
            with pytest.raises(RuntimeError) as expected:
                call(torch, torch.tensor(x0), torch.tensor(s0), torch.tensor(i_bad))
            with pytest.raises(RuntimeError) as ours:
                compiled(ember.tensor(x0), ember.tensor(s0), ember.tensor(i_bad))
            assert str(ours.value) == str(expected.value), name
    finally:
        ember.compiler.reset()


def test_empty_index_is_a_copy(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    x0, s0, _ = _data(np.float64)
    i0 = np.zeros((0, 6), np.int64)
    try:
        fn = ember.compile(lambda x, s, i: [x.scatter_reduce(0, i, s, r, include_self=False) for r in REDUCES]
                           + [x.scatter(0, i, s), x.scatter_add(0, i, s)], fullgraph=True)
        for out in fn(ember.tensor(x0), ember.tensor(s0), ember.tensor(i0)):
            np.testing.assert_array_equal(out.numpy(), x0)
    finally:
        ember.compiler.reset()
