"""F.fractional_max_pool2d and nn.FractionalMaxPool2d against torch 2.13 with the same
``_random_samples``: exactly equal values and indices (the window starts are computed in the
input's dtype, as torch's), gradients, unbatched input, the module's repr and the errors."""
import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, assert_same_error


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("d, shape, kernel, kwargs", [
    (2, (2, 3, 11, 9), (3, 2), {"output_size": (4, 5)}),
    (2, (2, 3, 11, 9), 2, {"output_ratio": (0.5, 0.7)}),
    (2, (1, 2, 7, 7), 3, {"output_size": 1}),
    (2, (2, 2, 9, 8), (2, 3), {"output_size": (8, 6)}),  # windows overlapping
    (2, (3, 10, 13), 2, {"output_size": (6, 7)}),  # unbatched
    (2, (0, 2, 5, 5), 2, {"output_size": 2}),  # empty batch
    (3, (2, 3, 7, 9, 8), (2, 3, 2), {"output_size": (4, 5, 3)}),
    (3, (2, 2, 9, 7, 8), 2, {"output_ratio": (0.5, 0.7, 0.4)}),
    (3, (1, 2, 7, 5, 7), (2, 3, 2), {"output_size": (5, 1, 5)}),  # windows overlapping; one row
    (3, (3, 6, 7, 5), 2, {"output_size": 3}),  # unbatched 3-D
    (3, (0, 2, 5, 5, 5), 2, {"output_size": 2}),  # empty batch
])
def test_values_indices_gradients(dtype, d, shape, kernel, kwargs):
    rng = np.random.default_rng(0)
    batched = len(shape) == d + 2
    x, u = rng.standard_normal(shape), rng.random((shape[0] if batched else 1, shape[-d - 1], d))
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    ex = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
    pool = f"fractional_max_pool{d}d"
    ty, ti = getattr(torch.nn.functional, pool)(
        tx, kernel, return_indices=True, _random_samples=torch.tensor(u, dtype=tx.dtype), **kwargs)
    ey, ei = getattr(ember.nn.functional, pool)(
        ex, kernel, return_indices=True, _random_samples=ember.tensor(u, dtype=ex.dtype), **kwargs)
    assert_close(ey, ty, rtol=0, atol=0)
    assert_close(ei, ti)
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__ == f"FractionalMaxPool{d}DBackward0"
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


@pytest.mark.parametrize("pool", ["2d", "3d"])
def test_nan_ties_and_infinities_pick_torchs_index(pool):
    """A window's max index is its last NaN (torch's ``val > max || isnan(val)``), else its first
    largest element; an all -inf window picks its first element."""
    rng = np.random.default_rng(5)
    shape = (2, 3, 8, 9) if pool == "2d" else (2, 3, 7, 8, 9)
    x = rng.integers(0, 3, shape).astype(np.float64)  # many ties
    x[rng.random(shape) < 0.15] = np.nan
    x[0, 0] = -np.inf
    u = rng.random(shape[:2] + (len(shape) - 2,))
    e, t = getattr(ember.nn.functional, "fractional_max_pool" + pool), getattr(torch.nn.functional,
                                                                            "fractional_max_pool" + pool)
    ey, ei = e(ember.tensor(x), 3, output_size=4, return_indices=True, _random_samples=ember.tensor(u))
    ty, ti = t(torch.tensor(x), 3, output_size=4, return_indices=True, _random_samples=torch.tensor(u))
    nan_windows = int(np.isnan(ty.numpy()).sum())
    assert nan_windows > 10  # among them windows with several NaNs, where first and last NaN differ
    assert_close(ei, ti)
    assert_close(ey, ty, rtol=0, atol=0)


@pytest.mark.parametrize("shape, kwargs", [
    ((1, 2, 7, 8, 9), {}), ((1, 2, 7, 8, 9), {"output_size": (7, 3, 3)}),
    ((1, 2, 7, 8, 9), {"output_size": (3, 8, 3)}), ((1, 2, 7, 8, 9), {"output_size": (3, 3, 9)}),
    ((1, 2, 4, 8, 9), {"output_size": 3}),  # 3 + 2 - 1 == 4: torch's 3-D kernel refuses it
    ((7, 8, 9), {"output_size": 3, "samples": (1, 7, 3)}), ((1, 2, 7, 8, 9), {"output_size": 3, "samples": (2, 3)}),
    ((1, 2, 7, 8, 9), {"output_size": 3, "samples": (1, 2, 2)}), ((1, 2, 7, 8, 9), {"output_size": 3, "samples": (1, 3, 3)}),
    ((2, 2, 7, 8, 9), {"output_size": 3, "samples": (1, 2, 3)}), ((2, 0, 5, 5, 5), {"output_size": 2}),
    ((1, 2, 7, 8, 9), {"output_size": 3, "dtype": "float32"}), ((1, 2, 7, 8, 9), {"output_size": (3, 3)}),
    ((1, 2, 7, 8, 9), {"output_size": 3, "kernel": (2, 2)}),
])
def test_3d_functional_errors(shape, kwargs):
    kwargs = dict(kwargs)
    samples, kernel = kwargs.pop("samples", None) or (shape[0], shape[-4], 3), kwargs.pop("kernel", 2)
    x, u, dtype = np.zeros(shape), np.full(samples, 0.5), kwargs.pop("dtype", "float64")
    e, t = ember.nn.functional, torch.nn.functional
    assert_same_error(
        lambda: e.fractional_max_pool3d(ember.tensor(x), kernel, _random_samples=ember.tensor(u, dtype=getattr(ember, dtype)), **kwargs),
        lambda: t.fractional_max_pool3d(torch.tensor(x), kernel, _random_samples=torch.tensor(u, dtype=getattr(torch, dtype)), **kwargs))


@pytest.mark.parametrize("args, kwargs", [((2,), {}), ((2,), {"output_ratio": 1.5}), ((0,), {"output_size": 2}),
                                          (((2, 0, 2),), {"output_size": 2}), ((2,), {"output_ratio": 0.5, "output_size": 2})])
def test_3d_module_errors(args, kwargs):
    assert_same_error(lambda: ember.nn.FractionalMaxPool3d(*args, **kwargs),
                      lambda: torch.nn.FractionalMaxPool3d(*args, **kwargs))


def test_3d_module_and_2d_samples_of_another_dtype():
    u = torch.rand(2, 3, 3, dtype=torch.float64)
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8, 8))
    t = torch.nn.FractionalMaxPool3d(3, output_ratio=0.5, return_indices=True, _random_samples=u)
    e = ember.nn.FractionalMaxPool3d(3, output_ratio=0.5, return_indices=True, _random_samples=ember.tensor(u.numpy()))
    assert repr(e) == repr(t) == "FractionalMaxPool3d()"
    for a, b in zip(e(ember.tensor(x)), t(torch.tensor(x))):
        assert_close(a, b, rtol=0, atol=0)
    assert tuple(ember.nn.FractionalMaxPool3d(2, output_size=(4, 3, 2))(ember.tensor(x)).shape) == (2, 3, 4, 3, 2)
    x2, u2 = np.zeros((1, 2, 7, 9)), np.full((1, 2, 2), 0.5)
    assert_same_error(
        lambda: ember.nn.functional.fractional_max_pool2d(ember.tensor(x2), 2, 3, _random_samples=ember.tensor(u2, dtype=ember.float32)),
        lambda: torch.nn.functional.fractional_max_pool2d(torch.tensor(x2), 2, 3, _random_samples=torch.tensor(u2, dtype=torch.float32)))


@pytest.mark.parametrize("d", [2, 3])
def test_non_contiguous_input(d):
    """A transposed view pools as its contiguous copy: values, indices, gradient into the view."""
    rng = np.random.default_rng(4)
    shape = (2, 3) + (9, 8, 7)[:d]
    x, u = rng.standard_normal(shape), rng.random((2, 3, d))
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    pool = f"fractional_max_pool{d}d"
    ty, ti = getattr(torch.nn.functional, pool)(tx.transpose(-1, -2), 2, output_size=3, return_indices=True,
                                                _random_samples=torch.tensor(u))
    ey, ei = getattr(ember.nn.functional, pool)(ex.transpose(-1, -2), 2, output_size=3, return_indices=True,
                                                _random_samples=ember.tensor(u))
    assert not ex.transpose(-1, -2).is_contiguous()
    assert_close(ey, ty, rtol=0, atol=0)
    assert_close(ei, ti)
    g = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    assert_close(ex.grad, tx.grad, rtol=1e-12, atol=1e-12)


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
