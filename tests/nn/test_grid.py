"""F.affine_grid and F.grid_sample (the spatial transformer's pair) against torch 2.13: values
and gradients for the image, the grid and theta, every mode, padding mode and align_corners,
on 4-D and 5-D inputs, non-contiguous views, grid points on and beyond the edges, non-finite
points, an empty batch; torch's errors and warnings."""
import itertools
import warnings

import numpy as np
import pytest
import torch

import ember

CASES = [(dims, mode, padding, align) for dims, mode, padding, align in itertools.product(
    (2, 3), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True))
    if not (dims == 3 and mode == "bicubic")]


def sample_both(dims, mode, padding, align, dtype, seed=0):
    rng = np.random.default_rng(seed)
    image = rng.standard_normal((2, 3, 5, 6) if dims == 2 else (2, 2, 3, 5, 4)).astype(dtype)
    grid = rng.uniform(-1.6, 1.6, (2, 3, 4, dims) if dims == 2 else (2, 2, 3, 4, dims)).astype(dtype)
    grid.reshape(-1)[:6] = [-1, 1, 0, 1, 1, -1][:6]  # points on the edges and the centre
    results = []
    for lib in (torch, ember):
        x = lib.tensor(image, requires_grad=True)
        g = lib.tensor(grid, requires_grad=True)
        view = x.transpose(-1, -2).transpose(-1, -2)  # a non-contiguous view of the same values
        out = lib.nn.functional.grid_sample(view, g, mode=mode, padding_mode=padding, align_corners=align)
        weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(dtype))
        (out * weights).sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy(), g.grad.numpy()])
    return results


@pytest.mark.parametrize("dims, mode, padding, align", CASES)
def test_grid_sample_values_and_gradients_equal_torchs(dims, mode, padding, align):
    (t_out, t_dx, t_dg), (e_out, e_dx, e_dg) = sample_both(dims, mode, padding, align, "float64")
    assert e_out.shape == t_out.shape
    np.testing.assert_allclose(e_out, t_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(e_dx, t_dx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(e_dg, t_dg, rtol=1e-12, atol=1e-12)  # nearest: zeros, as torch


def test_grid_sample_in_float32_is_torchs_to_roundoff():
    # sums of a few products: both libraries' float32 results lie within ~1e-6 of the float64 ones
    for case in [(2, "bilinear", "zeros", False), (2, "bicubic", "reflection", True), (3, "bilinear", "border", False)]:
        (t_out, t_dx, t_dg), (e_out, e_dx, e_dg) = sample_both(*case, "float32", seed=1)
        np.testing.assert_allclose(e_out, t_out, rtol=0, atol=2e-5)
        np.testing.assert_allclose(e_dx, t_dx, rtol=0, atol=2e-5)
        np.testing.assert_allclose(e_dg, t_dg, rtol=0, atol=1e-4)


def test_grid_sample_of_non_finite_points_and_empty_batches_is_torchs():
    rng = np.random.default_rng(2)
    image = rng.standard_normal((1, 2, 3, 4)).astype("float32")
    inf, nan = float("inf"), float("nan")
    grid = np.array([[[[nan, 0.0], [inf, 0.0], [-inf, 0.0], [0.0, nan], [0.3, 2.0]]]], "float32")
    for mode, padding in itertools.product(("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection")):
        t, e = (lib.nn.functional.grid_sample(lib.tensor(image), lib.tensor(grid), mode=mode, padding_mode=padding,
                                              align_corners=False).numpy() for lib in (torch, ember))
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=0)  # NaN where torch has NaN
    t, e = (lib.nn.functional.grid_sample(lib.ones(0, 2, 3, 3), lib.zeros(0, 4, 5, 2), align_corners=True)
            for lib in (torch, ember))
    assert e.shape == t.shape == (0, 2, 4, 5)


@pytest.mark.parametrize("dims, align", itertools.product((2, 3), (False, True)))
def test_affine_grid_and_its_theta_gradient_equal_torchs(dims, align):
    size = (2, 3, 4, 5) if dims == 2 else (2, 3, 3, 1, 5)  # a unit dim: its points sit at 0
    theta = np.random.default_rng(dims).standard_normal((2, dims, dims + 1))
    results = []
    for lib in (torch, ember):
        t = lib.tensor(theta, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # align_corners with a unit dim warns, in both
            grid = lib.nn.functional.affine_grid(t, size, align_corners=align)
        (grid * grid).sum().backward()
        results.append((grid.detach().numpy(), t.grad.numpy(), grid.grad_fn.name()))
    (t_grid, t_dtheta, t_name), (e_grid, e_dtheta, e_name) = results
    assert e_grid.shape == t_grid.shape and e_name == t_name == "AffineGridGeneratorBackward0"
    np.testing.assert_allclose(e_grid, t_grid, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(e_dtheta, t_dtheta, rtol=1e-12, atol=1e-12)


def test_the_identity_transform_samples_the_image_back():
    image = ember.randn(1, 2, 4, 6)
    grid = ember.nn.functional.affine_grid(ember.eye(2, 3).unsqueeze(0), image.shape, align_corners=False)
    out = ember.nn.functional.grid_sample(image, grid, align_corners=False)
    assert ember.allclose(out, image, atol=1e-6) and out.grad_fn is None


def errors(lib):
    F, out = lib.nn.functional, []
    calls = [
        lambda: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 2), mode="area", align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 2), padding_mode="wrap", align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 3), align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(2, 2, 2, 3), align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 2, dtype=lib.float64), align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 3, 3), lib.zeros(1, 2, 2), align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 3, 3), lib.zeros(1, 2, 1), align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 1, 3, 3), lib.zeros(1, 2, 2, 2, 2), align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 1, 0, 3), lib.zeros(1, 2, 2, 2), align_corners=False),
        lambda: F.grid_sample(lib.ones(1, 1, 2, 3, 3), lib.zeros(1, 2, 2, 2, 3), mode="bicubic", align_corners=False),
        lambda: F.affine_grid(lib.zeros(1, 2, 3, dtype=lib.long), (1, 1, 2, 2), align_corners=False),
        lambda: F.affine_grid(lib.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False),
        lambda: F.affine_grid(lib.zeros(1, 2, 3), [1, 1, 2, 2, 2], align_corners=False),
        lambda: F.affine_grid(lib.zeros(1, 2, 3), (1, 2, 2), align_corners=False),
        lambda: F.affine_grid(lib.zeros(1, 2, 3), (1, 1, 0, 2), align_corners=False),
    ]
    for call in calls:
        with pytest.raises(Exception) as info:
            call()
        out.append((type(info.value), str(info.value).replace("torch.", "").replace("ember.", "")))
    return out


def test_errors_are_torchs():
    assert errors(ember) == errors(torch)


def test_align_corners_none_warns_as_torch():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
            grid = lib.nn.functional.affine_grid(lib.eye(2, 3).unsqueeze(0), (1, 1, 2, 2))
        with pytest.warns(UserWarning, match="Please specify align_corners=True"):
            lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), grid)


@pytest.mark.parametrize("dims", [2, 3])
def test_float32_bilinear_and_nearest_samples_are_torchs_bit_for_bit(dims):
    # A spatial transformer starts at the identity, where every grid point sits on a pixel
    # centre: the samples' last bits decide max-pooling's ties downstream, so the training
    # run follows torch's only if they are torch's (its 2-D kernel rounds multiply-adds once).
    rng = np.random.default_rng(dims)
    image = rng.standard_normal((2, 3, 6, 7) if dims == 2 else (2, 3, 4, 6, 7)).astype("float32")
    grid = rng.uniform(-1.1, 1.1, (2, 5, 9, 2) if dims == 2 else (2, 3, 5, 9, 3)).astype("float32")
    for mode, padding, align in itertools.product(("bilinear", "nearest"), ("zeros", "border", "reflection"),
                                                  (False, True)):
        t, e = (lib.nn.functional.grid_sample(lib.tensor(image), lib.tensor(grid), mode=mode, padding_mode=padding,
                                              align_corners=align).numpy() for lib in (torch, ember))
        np.testing.assert_array_equal(e, t, err_msg=f"{mode} {padding} align_corners={align}")
    theta = ember.tensor([[1.0, 0, 0], [0, 1, 0]]).unsqueeze(0)
    identity = [lib.nn.functional.affine_grid(lib.tensor(theta.numpy()), (1, 1, 28, 28), align_corners=False).numpy()
                for lib in (torch, ember)]
    np.testing.assert_array_equal(identity[1], identity[0])
