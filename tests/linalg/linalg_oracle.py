"""Runs one linear-algebra expression in ember and in torch 2.13 and compares values and
gradients. The torch side always runs in float64 (the reference); ember runs in the dtype
under test, with a tolerance that dtype can meet on well-conditioned inputs."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

TOL = {np.float64: dict(rtol=1e-7, atol=1e-9), np.float32: dict(rtol=2e-3, atol=2e-4)}
DTYPES = [np.float32, np.float64]
EMBER_DTYPE = {np.float32: ember.float32, np.float64: ember.float64}


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def compare(fn, *arrays, dtype=np.float64, grad=True, tol=None, seed=0):
    """``fn(lib, *tensors)`` -> tensor(s), for lib = ember and torch: equal values and, with
    ``grad``, equal gradients of ``sum(w_i * out_i)`` for random weights w_i."""
    tol = tol or TOL[dtype]
    e_in = [ember.tensor(np.asarray(a, dtype), requires_grad=grad) for a in arrays]
    t_in = [torch.tensor(np.asarray(a, np.float64), requires_grad=grad) for a in arrays]
    e_out, t_out = _tuple(fn(ember, *e_in)), _tuple(fn(torch, *t_in))
    assert len(e_out) == len(t_out)
    for e, t in zip(e_out, t_out):
        assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
        assert e.dtype == EMBER_DTYPE[dtype]
        np.testing.assert_allclose(e._data.astype(np.float64), t.detach().numpy(), equal_nan=True,
                                   **tol)
    if not grad:
        return
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(tuple(t.shape)) for t in t_out]
    e_loss = sum((e * ember.tensor(w.astype(dtype))).sum() for e, w in zip(e_out, weights))
    t_loss = sum((t * torch.tensor(w)).sum() for t, w in zip(t_out, weights))
    e_loss.backward()
    t_loss.backward()
    for e, t in zip(e_in, t_in):
        scale = max(1.0, float(np.abs(t.grad.numpy()).max()))
        np.testing.assert_allclose(e.grad._data.astype(np.float64), t.grad.numpy(),
                                   rtol=tol["rtol"], atol=tol["atol"] * scale * 10)


def well_conditioned(rng, *shape):
    """Random (*, n, n) matrices with singular values in about [1, 3n]."""
    n = shape[-1]
    return rng.standard_normal(shape) + 2 * np.sqrt(n) * np.eye(n)


def spd(rng, *shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def sign_fix(lib, u, vh=None):
    """Columns of u (and rows of vh) with a positive first entry: a gauge both libraries share
    (the sign has zero gradient)."""
    s = lib.sign(u[..., :1, :])
    return (u * s,) if vh is None else (u * s, vh * s.mT)
