"""sort and argsort (and topk, msort, built on them) inside compiled graphs are the C merge
sort of backends/sort.py: values and indices bit-equal to torch's stable sort (ties in order,
-0.0 and 0.0 equal, NaN last ascending and first descending) along every dim of strided
inputs, rows shorter and longer than the insertion runs; gradients equal eager's and torch's
(topk's values as eager's: torch's topk orders ties its own way)."""
import numpy as np
import pytest
import torch

import ember


def sorts(L, x):
    v, i = L.sort(x, dim=1, stable=True)
    vd, idd = L.sort(x, dim=1, descending=True, stable=True)
    v0, i0 = L.sort(x.transpose(0, 1), dim=0, stable=True)
    v2, i2 = L.sort(x[:, ::3], dim=0, descending=True, stable=True)
    return [v * 2, i, vd * 2, idd, v0 * 2, i0, v2 * 2, i2, L.argsort(x, dim=1, descending=True, stable=True),
            L.msort(x) * 2, L.topk(x, min(7, x.shape[1]), dim=1).values * 2]


@pytest.mark.parametrize("dtype, n", [(np.float32, 5), (np.float64, 41), (np.float32, 300)])
def test_sorts_in_c_equal_torch(dtype, n, monkeypatch, capfd, tmp_path):
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    rng = np.random.default_rng(n)
    x0 = rng.integers(-3, 4, (8, n)).astype(dtype)  # many ties
    x0[0, rng.integers(0, n, 3)] = np.nan
    x0[1, rng.integers(0, n, 4)] = -0.0
    x0[2, 0], x0[2, -1], x0[3, :] = np.inf, -np.inf, rng.standard_normal(n)
    x0[4, :] = np.nan
    ws = [rng.standard_normal(o.shape).astype(dtype) for o in sorts(ember, ember.tensor(x0))]

    def run(L, fn):
        x = L.tensor(x0, requires_grad=True)
        outs = fn(L, x)
        sum((L.nan_to_num(o, 0.0, 1.0, -1.0) * L.tensor(w)).sum() for o, w in zip(outs[:-1], ws) if o.dtype != L.int64).backward()  # (not topk's)
        return [o.detach().numpy() for o in outs], x.grad.numpy()

    compiled = ember.compile(lambda x: sorts(ember, x), fullgraph=True)
    try:
        (ours, grad), (eager, eager_grad) = run(ember, lambda L, x: compiled(x)), run(ember, sorts)
        theirs, torch_grad = run(torch, sorts)
        source = capfd.readouterr().err
        assert "= F_sort" not in source and "= F_argsort" not in source
        assert f"Sort along dim 1 of [8, {n}], descending (stable)" in source
        for k, (a, e, t) in enumerate(zip(ours, eager, theirs)):
            np.testing.assert_array_equal(a, e)
            np.testing.assert_array_equal(np.signbit(a), np.signbit(e))
            if k < len(ours) - 1:  # (topk's order of ties is torch's unstable sort's)
                np.testing.assert_array_equal(a, t)
                np.testing.assert_array_equal(np.signbit(a), np.signbit(t))
        np.testing.assert_array_equal(grad, eager_grad)
        np.testing.assert_allclose(grad, torch_grad, rtol=4 * np.finfo(dtype).eps, atol=4 * np.finfo(dtype).eps)
    finally:
        ember.compiler.reset()


def topks(L, x, k):
    out = []
    for largest in (True, False):
        out += [*L.topk(x, k, dim=1, largest=largest), *L.topk(x.t()[::2], min(k, (x.shape[1] + 1) // 2), dim=0, largest=largest)]
    return out


@pytest.mark.parametrize("dtype, n, k", [(np.float32, 5, 5), (np.float64, 41, 1), (np.float32, 300, 7)])
def test_topk_in_c_equals_eager_and_torch(dtype, n, k, monkeypatch, capfd, tmp_path):
    """topk is the C heap selection of backends/sort.py, not a full sort: values and indices
    equal eager's (ties in index order, NaN the largest) and torch's values; torch's indices
    where a row has no ties, and elsewhere indices of torch's values (torch orders ties its own
    way); the gradient equal to eager's, and to torch's on rows without ties."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    rng = np.random.default_rng(n)
    x0 = rng.integers(-3, 4, (8, n)).astype(dtype)  # ties
    x0[0, rng.integers(0, n, 3)] = np.nan
    x0[1, rng.integers(0, n, 4)] = -0.0
    x0[2, 0], x0[2, -1], x0[4, :] = np.inf, -np.inf, np.nan
    x0[3, :], x0[5, :] = rng.permutation(n), rng.standard_normal(n)  # no ties
    distinct = [3, 5]

    def run(L, fn):
        x = L.tensor(x0, requires_grad=True)
        outs = fn(x)
        sum((L.nan_to_num(o, 0.0, 1.0, -1.0) * (j + 1)).sum() for j, o in enumerate(outs[::2])).backward()
        return [o.detach().numpy() for o in outs], x.grad.numpy()

    compiled = ember.compile(lambda x: topks(ember, x, k), fullgraph=True)
    try:
        (ours, grad), (eager, eager_grad) = run(ember, compiled), run(ember, lambda x: topks(ember, x, k))
        theirs, torch_grad = run(torch, lambda x: topks(torch, x, k))
        source = capfd.readouterr().err
        assert "= F_topk" not in source and "Sort along" not in source
        assert f"Topk: {k} largest along dim 1 of [8, {n}]" in source
        for a, e in zip(ours, eager):
            np.testing.assert_array_equal(a, e)
            np.testing.assert_array_equal(np.signbit(a), np.signbit(e))
        for j, (a, t) in enumerate(zip(ours, theirs)):
            if j % 2 == 0:  # values
                np.testing.assert_array_equal(a, t)
            elif j % 4 == 1:  # indices along dim 1: those of the values, torch's on rows without ties
                np.testing.assert_array_equal(a[distinct], t[distinct])
                np.testing.assert_array_equal(np.take_along_axis(x0, a, 1), np.take_along_axis(x0, t, 1))
        np.testing.assert_array_equal(grad, eager_grad)
        np.testing.assert_array_equal(grad[distinct], torch_grad[distinct])
    finally:
        ember.compiler.reset()
