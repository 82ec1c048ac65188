"""Cross entropy and its gradient over rows narrower than two vectors (the digits MLP's 10
classes): the C runs their exponentials over blocks of rows (rows.py ``_narrow_rows``); loss
and gradient against the float64 closed forms, with rows over several blocks, ignored rows,
and rows holding inf or NaN as eager."""
import numpy as np
import pytest

import ember
from ember.compiler.backends import compile_graph, toolchain
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


def _expected(x, labels, g, mean):
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        m = x64.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(x64 - m).sum(axis=1))
        p = np.exp(x64 - lse[:, None])
    kept = labels != -100
    picked = x64[np.flatnonzero(kept), labels[kept]]
    loss = (lse[kept] - picked).sum() / (kept.sum() if mean else 1)
    onehot = np.zeros_like(p)
    onehot[np.flatnonzero(kept), labels[kept]] = 1
    grad = np.where(kept[:, None], (p - onehot) * g / (kept.sum() if mean else 1), 0.0)
    return loss, grad


@pytest.mark.parametrize("dtype, rows, classes, reduction", [
    (np.float32, 211, 10, "mean"), (np.float32, 7, 3, "sum"), (np.float64, 45, 10, "mean")])
def test_narrow_rows_match_the_float64_closed_forms(dtype, rows, classes, reduction, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rng = np.random.default_rng(25)
    x = (rng.standard_normal((rows, classes)) * 4).astype(dtype)
    labels = rng.integers(0, classes, rows)
    labels[::5] = -100
    x[1, 2] = np.nan        # a NaN row: NaN loss and gradient row
    x[6, :] = -np.inf       # a row of -inf but one 0: its softmax is one-hot
    x[6, 0] = 0.0
    labels[6] = 0
    b = Builder()
    xi, yi = b.input("x", x), b.input("y", labels)
    gi = b.input("g", np.full((), 0.5, dtype))
    loss = b.call("CrossEntropy", xi, yi, None, reduction=reduction)
    grad = b.call("CrossEntropyBackward", gi, yi, None, b.call("Mul", xi, 1.0), reduction=reduction)
    fn = compile_graph(b.output(loss, grad), {})
    assert fn.c_source.count("r0 += ") == 2  # both kernels in blocks of rows
    out_loss, out_grad = fn([x.copy(), labels.copy(), np.full((), 0.5, dtype)])
    finite = np.ones(rows, bool)
    finite[1] = False
    exp_loss, exp_grad = _expected(x[finite], labels[finite], 0.5, False)
    exp_grad *= 1 / ((labels != -100).sum() if reduction == "mean" else 1)
    tol = dict(rtol=2e-6, atol=1e-7) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out_grad[finite], exp_grad, **tol)
    assert np.isnan(out_grad[1]).all() == (labels[1] != -100) and np.isnan(out_loss) == (labels[1] != -100)
    assert out_grad[6, 0] == 0 and (out_grad[6, 1:] == 0).all()  # p = onehot at the label
    # without the NaN row, the loss against the closed form
    labels2 = labels.copy()
    labels2[1] = -100
    out_loss2, _ = fn([x.copy(), labels2, np.full((), 0.5, dtype)])
    exp_loss2, _ = _expected(x, labels2, 0.5, reduction == "mean")
    np.testing.assert_allclose(out_loss2, exp_loss2, rtol=4e-6 if dtype == np.float32 else 1e-12)
    assert out_loss2.dtype == dtype and out_grad.dtype == dtype


def test_narrow_rows_of_a_dynamic_batch_match_torch(tmp_path, monkeypatch):
    """Rows a size symbol (blocks of rows over em_S0, the last one partial): loss and logits'
    gradient as torch's, batches below, at and above one block."""
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    compiled = ember.compile(lambda x, y: ember.nn.functional.cross_entropy(x, y), fullgraph=True)
    rng = np.random.default_rng(5)
    for rows in (5, 102, 250):
        x = (rng.standard_normal((rows, 10)) * 3).astype(np.float32)
        y = rng.integers(0, 10, rows)
        y[::4] = -100
        xe, ye = ember.tensor(x, requires_grad=True), ember.tensor(y)
        ember._dynamo.mark_dynamic(xe, 0)
        ember._dynamo.mark_dynamic(ye, 0)
        xt = torch.tensor(x, requires_grad=True)
        loss, expected = compiled(xe, ye), torch.nn.functional.cross_entropy(xt, torch.tensor(y))
        loss.backward()
        expected.backward()
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=2e-6)
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=2e-6, atol=1e-8)
