"""The C backend's average-pooling kernels (AvgPool and its gradient AvgPoolTranspose) against
eager ember (bit for bit: the same sums in the same order) and torch: 1-, 2- and 3-D windows over
a grid of kernel, stride, padding, ceil_mode, count_include_pad and divisor_override, float32
and float64, contiguous inputs and transposed views (read in place)."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo import mark_dynamic
from ember._dynamo.utils import counters

pytestmark = pytest.mark.usefixtures("fresh_compiler")

CASES = {  # name: (x shape, n spatial dims, kwargs, dtype, transposed input)
    "lenet": ((4, 6, 8, 8), 2, dict(kernel_size=2), np.float32, False),
    "padded_overlapping": ((2, 3, 9, 7), 2, dict(kernel_size=3, stride=2, padding=1), np.float32, False),
    "ceil_exclude_pad": ((2, 2, 10, 11), 2, dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True,
                                                count_include_pad=False), np.float64, False),
    "ceil_include_pad_strided": ((3, 7, 6), 2, dict(kernel_size=2, stride=2, padding=1, ceil_mode=True), np.float64,
                                 True),
    "divisor_override_strided": ((2, 3, 8, 9), 2, dict(kernel_size=(2, 3), stride=1, padding=(1, 0),
                                                       divisor_override=5), np.float32, True),
    "1d_strided": ((3, 13, 4), 1, dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False),
                   np.float32, True),
    "3d": ((2, 2, 5, 6, 7), 3, dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), ceil_mode=True,
                                    count_include_pad=False), np.float64, False),
}
POOLS = {1: "avg_pool1d", 2: "avg_pool2d", 3: "avg_pool3d"}


def _run(lib, pool, x0, r, kwargs, transposed):
    """(output, input gradient) of ``pool`` under ``lib`` (ember or torch); ``transposed``: of
    ``x0`` read through a transposed view of its contiguous copy, ``pool`` taking that copy."""
    base = lib.tensor(np.ascontiguousarray(x0.swapaxes(-1, -2)) if transposed else x0, requires_grad=True)
    y = pool(base, **kwargs)
    (y * lib.tensor(r)).sum().backward()
    g = base.grad.transpose(-1, -2) if transposed else base.grad
    return y.detach().numpy(), g.numpy()


def _pool(pool, transposed):
    return (lambda b, **kw: pool(b.transpose(-1, -2), **kw)) if transposed else pool


@pytest.mark.parametrize("case", list(CASES))
def test_avg_pool_kernels_equal_eager_and_torch(case, plans, monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    shape, n, kwargs, dtype, transposed = CASES[case]
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(shape).astype(dtype)
    pool = getattr(F, POOLS[n])
    if n == 1:
        kwargs = {k: v for k, v in kwargs.items() if k != "divisor_override"}
    r = rng.standard_normal(tuple(pool(ember.tensor(x0), **kwargs).shape)).astype(dtype)
    eager = _run(ember, _pool(pool, transposed), x0, r, kwargs, transposed)
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    step = ember.compile(_pool(pool, transposed), fullgraph=True)
    for _ in range(3):  # the third call runs the generated C
        mine = _run(ember, step, x0, r, kwargs, transposed)
    source = capsys.readouterr().err
    assert "average pool" in source and "average-pool gradient" in source
    assert not {"AvgPool", "AvgPoolTranspose"} & set(plans.numpy_nodes())
    for a, e in zip(mine, eager):
        assert a.shape == e.shape and a.dtype == e.dtype
        np.testing.assert_array_equal(a, e)
    want = _run(torch, _pool(getattr(torch.nn.functional, POOLS[n]), transposed), x0, r, kwargs, transposed)
    for a, w in zip(mine, want):
        np.testing.assert_allclose(a, w, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


def test_dynamic_batch_avg_pool_runs_in_c(plans):
    # Average pooling and its gradient loop over a symbolic batch: one graph for every batch
    # size, loss and gradients equal eager's at each, and no pooling node left to NumPy.
    ember.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.AvgPool2d(2), nn.ReLU(),
                          nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                          nn.Flatten(), nn.Linear(27, 3))

    def loss(x, y):
        return F.cross_entropy(model(x), y)
    compiled = ember.compile(loss)
    rng = np.random.default_rng(3)
    for n in (3, 5, 2, 8, 4, 1):
        x = ember.tensor(rng.standard_normal((n, 2, 8, 8)).astype(np.float32), requires_grad=True)
        y = ember.tensor(rng.integers(0, 3, n))
        mark_dynamic(x, 0, max=8)
        mark_dynamic(y, 0, max=8)
        got = []
        for fn in (compiled, loss):
            model.zero_grad()
            x.grad = None
            fn(x, y).backward()
            got.append([x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()])
        for a, e in zip(*got):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6, err_msg=f"{n}")
        if n == 4:  # (a batch of 1 is a graph of its own)
            assert counters["stats"]["unique_graphs"] == 1 and len(plans) == 2  # forward, backward
            assert not {"AvgPool", "AvgPoolTranspose"} & set(plans.numpy_nodes()), plans.numpy_nodes()
