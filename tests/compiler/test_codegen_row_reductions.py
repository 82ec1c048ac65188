"""logsumexp, argmax and cumsum over the last dim (backends/row_reductions.py) and prod over
any dims (the sum kernel's loops) run as C kernels inside a compiled graph, not from NumPy, and
equal eager: the values, the gradients, and eager's rules for rows of -inf, +inf, NaN and ties."""
import numpy as np
import pytest

import ember


def _inputs(dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((7, 9)) * 3).astype(dtype)
    x[1] = -np.inf                        # logsumexp -inf; argmax 0
    x[2, 3] = np.inf                      # logsumexp +inf; argmax 3
    x[3, 4], x[3, 6] = np.nan, np.inf     # NaN wins: logsumexp NaN, argmax 4
    x[4, 2] = x[4, 7] = x[4].max() + 1    # a tie: the first
    x[5, 0] = np.nan                      # NaN first
    return x


def step(x):
    return ember.logsumexp(x, -1), x.argmax(-1), x.argmax(1, keepdim=True), x.cumsum(-1), \
        (ember.logsumexp(x * 2, 1, keepdim=True) + x.cumsum(1)).tanh(), (x * 0.5).prod(0), x.prod()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_reductions_in_c_equal_eager(dtype, monkeypatch, capfd):
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    ember.compiler.reset()
    x0 = _inputs(dtype)
    compiled = ember.compile(step, fullgraph=True)
    for _ in range(3):
        results = compiled(ember.tensor(x0))
    source = capfd.readouterr().err
    for kind in ("logsumexp", "argmax", "cumsum"):
        assert f"/* {kind} over the last dim of [7, 9]" in source, kind
    assert "/* prod over dims [0] of [7, 9]" in source and "/* prod over dims [0, 1] of [7, 9]" in source
    expected = step(ember.tensor(x0))
    bound = 3e-5 if dtype == np.float32 else 1e-13  # ember's exp/log, a few ulp (test_codegen_math)
    for a, e in zip(results, expected):
        a, e = a.numpy(), e.numpy()
        assert a.dtype == e.dtype and a.shape == e.shape
        if a.dtype.kind == "i":
            np.testing.assert_array_equal(a, e)
        else:
            np.testing.assert_allclose(a, e, rtol=bound, atol=bound * np.abs(e[np.isfinite(e)]).max(initial=1.0))
    ember.compiler.reset()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_reduction_gradients_equal_eager(dtype):
    ember.compiler.reset()
    x0 = np.random.default_rng(1).standard_normal((5, 8)).astype(dtype)
    w = ember.tensor(np.random.default_rng(2).standard_normal((5, 8)).astype(dtype))

    def loss(x):
        return (ember.logsumexp(x, -1).sum() * 3 + (x.cumsum(-1) * w).sum()
                + (x * x.argmax(-1, keepdim=True).to(x.dtype)).sum() + (x + 2).prod(1).sum())  # argmax: no gradient of its own
    grads = []
    for fn in (loss, ember.compile(loss, fullgraph=True)):
        for _ in range(3):
            x = ember.tensor(x0, requires_grad=True)
            fn(x).backward()
        grads.append(x.grad.numpy())
    bound = 3e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(grads[1], grads[0], rtol=bound, atol=bound * np.abs(grads[0]).max())
    ember.compiler.reset()


def scans(x):
    return [x.cumprod(-1), x.cumprod(0), x.transpose(0, 2).cumprod(1), x[:, ::2].cumsum(1), x.cumsum(2),
            x.cumprod(1) * 2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scans_along_any_dim_in_c_equal_eager(dtype, monkeypatch, capfd):
    """cumprod and cumsum along any dim of strided inputs are C kernels: values bit-equal to
    NumPy's accumulate (in order: zeros, -0.0, NaN and inf carried on as IEEE says), the
    gradients (cumprod's: products over a grid, sums of them) within a few roundings."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    ember.compiler.reset()
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((4, 5, 6)).astype(dtype)
    x0[1, 2, 3], x0[2, 1, 1], x0[3, 3, 3], x0[0, 0, 2] = 0, np.nan, np.inf, -0.0
    ws = [rng.standard_normal(o.shape).astype(dtype) for o in scans(ember.tensor(x0))]

    def run(fn):
        x = ember.tensor(x0, requires_grad=True)
        outs = fn(x)
        sum((o * ember.tensor(w)).sum() for o, w in zip(outs, ws)).backward()
        return outs, x.grad.numpy()

    expected, expected_grad = run(scans)
    compiled = ember.compile(scans, fullgraph=True)
    try:
        for _ in range(2):
            actual, grad = run(compiled)
        source = capfd.readouterr().err
        assert "= F_cumprod" not in source and "= F_cumsum" not in source
        for what in ("cumprod over dim 0 of [4, 5, 6]", "cumprod over dim 1 of [6, 5, 4]",
                     "cumsum over dim 1 of [4, 3, 6]", "cumprod over the last dim of [4, 5, 6]"):
            assert what in source, what
        for a, e in zip(actual, expected):
            a, e = a.detach().numpy(), e.detach().numpy()
            assert a.dtype == e.dtype and a.shape == e.shape
            np.testing.assert_array_equal(a, e)
            np.testing.assert_array_equal(np.signbit(a), np.signbit(e))
        bound = 3e-5 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(grad, expected_grad, rtol=bound, atol=bound * np.nanmax(np.abs(expected_grad)))
    finally:
        ember.compiler.reset()


def norms(x):
    L = ember.linalg
    return [L.vector_norm(x[0]), L.vector_norm(x[1], 1, dim=1), L.vector_norm(x[2], float("inf"), dim=(0, 2), keepdim=True),
            L.vector_norm(x[3], -float("inf"), dim=-1), L.vector_norm(x[4], 0, dim=0),
            L.vector_norm(x[5].transpose(0, 1) * 2 - 1, 3.5, dim=1), L.vector_norm(x[6], -1, dim=2),
            L.vector_norm(x[7], 2, dim=(1, 2)), x[8].norm(dim=1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_norms_are_sum_kernels_equal_eager(dtype, monkeypatch, capfd):
    """vector_norm of ord 2, 1, +-inf, 0 and general p (also negative) over any dims, of strided
    inputs with their elementwise producers fused in, is the sum kernel's loop (the root taken
    after): the extremes and counts bit-equal to eager, the sums within their reordering
    (float32 2e-7 relative measured), NaN and inf kept; gradients within a few roundings."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    ember.compiler.reset()
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((9, 4, 5, 6)).astype(dtype)
    x0[:, 1, 2, 3], x0[2, 0, 0, 0], x0[3, 2, 2, 2], x0[1, 3, 1, 1] = 0, np.nan, np.inf, np.nan
    ws = [rng.standard_normal(o.shape).astype(dtype) for o in norms(ember.tensor(x0))]

    def run(fn):
        x = ember.tensor(x0, requires_grad=True)
        outs = fn(x)
        sum((o * ember.tensor(w)).sum() for o, w in zip(outs, ws)).backward()
        return outs, x.grad.numpy()

    expected, expected_grad = run(norms)
    compiled = ember.compile(norms, fullgraph=True)
    try:
        for _ in range(2):
            actual, grad = run(compiled)
        source = capfd.readouterr().err
        assert "= F_vector_norm" not in source and "vectornorm over dims [1] of [5, 4, 6]" in source
        bound = 1e-6 if dtype == np.float32 else 1e-14
        for k, (a, e) in enumerate(zip(actual, expected)):
            a, e = a.detach().numpy(), e.detach().numpy()
            assert a.dtype == e.dtype and a.shape == e.shape
            if k in (2, 3, 4):
                np.testing.assert_array_equal(a, e)
            np.testing.assert_allclose(a, e, rtol=bound, atol=0)
        np.testing.assert_allclose(grad, expected_grad, rtol=3 * bound, atol=3 * bound * np.nanmax(np.abs(expected_grad)))
    finally:
        ember.compiler.reset()
