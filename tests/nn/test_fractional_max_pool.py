"""F.fractional_max_pool2d and nn.FractionalMaxPool2d against torch 2.13 with the same
``_random_samples``: exactly equal values and indices (the window starts are computed in the
input's dtype, as torch's), gradients, unbatched input, the module's repr and the errors."""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, assert_same_error


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, kernel, kwargs", [
    ((2, 3, 11, 9), (3, 2), {"output_size": (4, 5)}),
    ((2, 3, 11, 9), 2, {"output_ratio": (0.5, 0.7)}),
    ((1, 2, 7, 7), 3, {"output_size": 1}),
    ((2, 2, 9, 8), (2, 3), {"output_size": (8, 6)}),  # windows overlapping
    ((3, 10, 13), 2, {"output_size": (6, 7)}),  # unbatched
])
def test_values_indices_gradients(dtype, shape, kernel, kwargs):
    rng = np.random.default_rng(0)
    x, u = rng.standard_normal(shape), rng.random((shape[0] if len(shape) == 4 else 1, shape[-3], 2))
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    ex = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    ty, ti = torch.nn.functional.fractional_max_pool2d(
        tx, kernel, return_indices=True, _random_samples=torch.tensor(u, dtype=tx.dtype), **kwargs)
    ey, ei = ember.nn.functional.fractional_max_pool2d(
        ex, kernel, return_indices=True, _random_samples=ember.tensor(u, dtype=ex.dtype), **kwargs)
    assert_close(ey, ty, rtol=0, atol=0)
    assert_close(ei, ti)
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    g = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g, dtype=ty.dtype))
    ey.backward(ember.tensor(g, dtype=ey.dtype))
    assert_close(ex.grad, tx.grad, rtol=1e-6, atol=1e-6)


def test_module_and_random_windows():
    u = torch.rand(2, 3, 2, dtype=torch.float64)
    x = np.random.default_rng(1).standard_normal((2, 3, 10, 10))
    t = torch.nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True, _random_samples=u)
    e = ember.nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True,
                                     _random_samples=ember.tensor(u.numpy()))
    assert repr(e) == repr(t) == "FractionalMaxPool2d()"
    for a, b in zip(e(ember.tensor(x)), t(torch.tensor(x))):
        assert_close(a, b, rtol=0, atol=0)
    y = ember.nn.FractionalMaxPool2d(2, output_size=(4, 3))(ember.tensor(x))  # samples drawn by rand
    assert tuple(y.shape) == (2, 3, 4, 3)


@pytest.mark.parametrize("kwargs", [{"output_ratio": 1.5}, {"output_ratio": 0.5, "output_size": 2}, {}])
def test_module_errors(kwargs):
    assert_same_error(lambda: ember.nn.FractionalMaxPool2d(2, **kwargs),
                      lambda: torch.nn.FractionalMaxPool2d(2, **kwargs))


@pytest.mark.parametrize("shape, kwargs", [
    ((1, 2, 7, 9), {}), ((1, 2, 7, 9), {"output_size": (7, 3)}), ((1, 2, 7, 9), {"output_size": (3, 9)}),
    ((1, 2, 7, 9), {"output_size": 3, "samples": (2, 2)}), ((1, 2, 7, 9), {"output_size": 9, "samples": (2, 2)}),
    ((2, 2, 7, 9), {"output_size": 3, "samples": (1, 2, 2)}), ((2, 2, 7, 9), {"output_size": 3, "samples": (3, 3, 2)}),
    ((1, 2, 7, 9), {"output_ratio": 0.5}), ((1, 2, 7, 9), {"output_size": 3, "samples": (1, 2, 3)}),
])
def test_functional_errors(shape, kwargs):
    kwargs = dict(kwargs)
    samples = kwargs.pop("samples", (shape[0], shape[1], 2))
    x, u = np.zeros(shape), np.full(samples, 0.5)
    e, t = ember.nn.functional, torch.nn.functional
    assert_same_error(lambda: e.fractional_max_pool2d(ember.tensor(x), 2, _random_samples=ember.tensor(u), **kwargs),
                      lambda: t.fractional_max_pool2d(torch.tensor(x), 2, _random_samples=torch.tensor(u), **kwargs))


def test_a_window_with_nans_picks_its_last_nan_as_torch():
    """torch's kernel takes every nan it meets: the index (and the gradient) is the window's
    last nan; argmax gave the first."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 2, 8, 7))
    x[0, 0, :, 0] = np.nan
    x[1, 1, 2:5, 3] = np.nan
    x[0, 1, 3, :] = np.inf
    samples = rng.uniform(0, 1, (2, 2, 2))
    out = []
    for L in (ember, torch):
        xt = L.tensor(x, requires_grad=True)
        v, i = L.nn.functional.fractional_max_pool2d(xt, (4, 3), output_size=(4, 3), return_indices=True,
                                                     _random_samples=L.tensor(samples))
        v.sum().backward()
        out.append((v.detach().numpy(), i.numpy(), xt.grad.numpy()))
    for got, want in zip(*out):
        np.testing.assert_array_equal(got, want)
