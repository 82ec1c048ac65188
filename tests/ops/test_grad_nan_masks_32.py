"""Gradients with a nan incoming gradient, against torch 2.13: the piecewise activations
(hardtanh, relu6, threshold, hardsigmoid, hardswish, hardshrink, softshrink) pass 0, not
``nan * 0``, where their slope is 0, as torch's kernels select; and var/std over size-1 and
empty dims (no degrees of freedom: nan values, nan/inf gradients) for every float dtype.
Found by the wide fuzzer's seed 2306 (a bfloat16 ``hardtanh(x).std(-1, keepdim=True)`` over
a size-1 dim: the std's nan gradient reached x through hardtanh's clamped element)."""
import warnings

import numpy as np
import pytest
import torch

import ember

NAN = float("nan")
DTYPES = ("float32", "float64", "float16", "bfloat16")
ACTIVATIONS = {
    "hardtanh": lambda F, x: F.hardtanh(x), "relu6": lambda F, x: F.relu6(x),
    "hardtanh_wide": lambda F, x: F.hardtanh(x, -2.0, 0.75),
    "threshold": lambda F, x: F.threshold(x, 0.5, 2.0), "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x), "hardshrink": lambda F, x: F.hardshrink(x),
    "softshrink": lambda F, x: F.softshrink(x),
}


def _grad(lib, dtype, f, values, g):
    x = lib.tensor(values).to(getattr(lib, dtype)).requires_grad_(True)
    y = f(lib.nn.functional, x)
    y.backward(lib.tensor(g).to(y.dtype))
    return x.grad.double().numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradient_of_nan(name, dtype):
    """A nan (and a finite) incoming gradient at values below, at and beyond the kinks and a nan."""
    values = [-4.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 0.75, 1.0, 3.0, 6.0, 7.0, NAN]
    for g in ([NAN] * len(values), list(np.linspace(-1.5, 2.0, len(values)))):
        expected = _grad(torch, dtype, ACTIVATIONS[name], values, g)
        actual = _grad(ember, dtype, ACTIVATIONS[name], values, g)
        np.testing.assert_allclose(actual, expected, rtol=1e-2, atol=0, equal_nan=True, err_msg=f"{name} {g[0]}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_fuzz_seed_2306(dtype):
    """The fuzzer's program, eager: x0.grad 0.65 in torch (hardtanh's clamped element passes 0
    of the std's nan gradient), nan before."""
    def grads(lib):
        x0 = lib.tensor([-1.5547]).to(getattr(lib, dtype)).requires_grad_(True)
        x1 = lib.tensor([-1.0859]).to(getattr(lib, dtype)).requires_grad_(True)
        v8 = lib.nn.functional.hardtanh(x0).std(-1, keepdim=True)
        v9 = v8 @ v8
        loss = (lib.nan_to_num((x1 + x0).double(), 0.0, 0.0, 0.0) * 0.65).sum() \
            + lib.nan_to_num(v8.double(), 0.0, 0.0, 0.0).sum() + lib.nan_to_num(v9.double(), 0.0, 0.0, 0.0).sum()
        loss.backward()
        return x0.grad.double().numpy(), x1.grad.double().numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, e in zip(grads(ember), grads(torch)):
            np.testing.assert_allclose(a, e, rtol=1e-2, equal_nan=True)
            assert not np.isnan(a).any()


SPREAD_CASES = [((1,), -1), ((1,), None), ((3, 1), -1), ((1, 1), (0, 1)), ((2, 0), -1), ((0,), None),
                ((0,), 0), ((), None), ((2, 3), -1)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_var_std_gradients_without_degrees_of_freedom(dtype):
    """var and std, corrections 0, 1 and 2, over size-1, empty and all dims: values and
    gradients as torch's, nan and +-inf at the same places."""
    rng = np.random.default_rng(32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("var", "std"):
            for correction in (0, 1, 2):
                for shape, dim in SPREAD_CASES:
                    for keepdim in (False, True):
                        values = rng.standard_normal(shape) * 2
                        results = []
                        for lib in (torch, ember):
                            x = lib.tensor(values).to(getattr(lib, dtype)).requires_grad_(True)
                            kw = {} if dim is None else {"dim": dim}
                            y = getattr(x, name)(correction=correction, keepdim=keepdim, **kw)
                            y.backward(lib.ones_like(y) * 0.5)
                            results.append((y.detach().double().numpy(), x.grad.double().numpy()))
                        what = f"{name} correction={correction} {shape} dim={dim} keepdim={keepdim}"
                        for e, a in zip(*results):
                            assert a.shape == e.shape, what
                            np.testing.assert_array_equal(np.isposinf(a), np.isposinf(e), err_msg=what)
                            np.testing.assert_array_equal(np.isneginf(a), np.isneginf(e), err_msg=what)
                            np.testing.assert_allclose(a, e, rtol=1e-2, atol=1e-3, equal_nan=True, err_msg=what)
