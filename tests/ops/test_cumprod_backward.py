"""cumprod's gradient against torch's on inputs with no zero, one zero and several zeros per
slice (at the start, in the middle, at the end, adjacent), along every dim, both float dtypes;
O(n) (no n x n grid) outside create_graph, torch's second derivative under it."""
import numpy as np
import pytest
import torch

import ember


def _inputs(dtype):
    rng = np.random.default_rng(11)
    x = rng.uniform(0.5, 1.5, (6, 9)).astype(dtype) * rng.choice([-1, 1], (6, 9))
    x[1, 4] = 0                          # one zero in the middle
    x[2, [0, 5]] = 0                     # a leading zero and a later one
    x[3, [2, 3, 8]] = 0                  # adjacent zeros and one at the end
    x[4, 8] = 0                          # a zero at the end only
    x[5, :] = 0                          # all zeros
    return x                             # row 0: no zero


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_grad_equals_torch_at_zeros(dtype, dim):
    x0 = _inputs(dtype)
    w = np.random.default_rng(12).standard_normal(x0.shape).astype(dtype)
    x, t = ember.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    (x.cumprod(dim) * ember.tensor(w)).sum().backward()
    (t.cumprod(dim) * torch.tensor(w)).sum().backward()
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=rtol)
    assert ((x.grad.numpy() == 0) == (t.grad.numpy() == 0)).all()  # exact zeros where torch's are


def test_cumprod_second_derivative_equals_torch_at_zeros():
    x0 = _inputs(np.float64)
    x, t = ember.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    (gx,) = ember.autograd.grad(x.cumprod(1).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(t.cumprod(1).sum(), t, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), gt.detach().numpy(), rtol=1e-12, atol=1e-12)
    (gx * gx).sum().backward()
    (gt * gt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_cumprod_backward_is_linear_compiled(monkeypatch, capfd, tmp_path):
    """The compiled backward of cumprod over [3, 50] holds no [3, 50, 50] grid and equals eager's."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    rng = np.random.default_rng(13)
    x0 = rng.uniform(0.9, 1.1, (3, 50))
    x0[1, [7, 30]] = 0

    def loss(x):
        return (x.cumprod(1) * 2).sum()
    try:
        x = ember.tensor(x0, requires_grad=True)
        ember.compile(loss, fullgraph=True)(x).backward()
        assert "[3, 50, 50]" not in capfd.readouterr().err
        t = torch.tensor(x0, requires_grad=True)
        loss(t).backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)
    finally:
        ember.compiler.reset()
