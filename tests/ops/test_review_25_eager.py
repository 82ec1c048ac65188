"""Session 25's review, eager: ``clamp`` of a float16 tensor at a signed-zero bound. torch keeps
the element on a tie (``clamp(0.0, max=-0.0)`` is 0.0); NumPy's float16 maximum and minimum
return their first argument on a tie, the bound, where its float32 ones return the second.

``gelu`` of float16 and bfloat16 (and its gradient): torch computes at float32 (opmath); ember
computed in the tensor's dtype, so the tail below -3 rounded to 0 (-0.0 at -3.85 where torch
gives -0.000228: 80 of 241 points off by more than an ulp, up to 1911)."""
import math

import numpy as np

import pytest
import torch

import ember


def _signs(t):
    return [math.copysign(1.0, v) if v == v else "nan" for v in t.float().tolist()]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("bounds", [{"max": -0.0}, {"min": -0.0}, {"min": 0.0}, {"max": 0.0}, {"min": -0.0, "max": 0.0}],
                         ids=["max-0", "min-0", "min0", "max0", "min-0max0"])
def test_clamp_signed_zero_bound_as_torch(dtype, bounds):
    values = [0.0, -0.0, 1.0, float("nan"), -3.0]
    got = ember.tensor(values).to(getattr(ember, dtype)).clamp(**bounds)
    want = torch.tensor(values).to(getattr(torch, dtype)).clamp(**bounds)
    assert _signs(got) == _signs(want) and str(got.float().tolist()) == str(want.float().tolist())


@pytest.mark.parametrize("dtype, rtol", [("float16", 2 ** -9), ("bfloat16", 2 ** -6)])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_half_as_torch(dtype, rtol, approximate):
    values = np.linspace(-6, 6, 97).astype(np.float32)
    x = ember.tensor(values).to(getattr(ember, dtype)).requires_grad_()
    t = torch.tensor(values).to(getattr(torch, dtype)).requires_grad_()
    got = ember.nn.functional.gelu(x, approximate=approximate)
    want = torch.nn.functional.gelu(t, approximate=approximate)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got.float().detach().numpy(), want.float().detach().numpy(), rtol=rtol, atol=1e-6)
    (gx,), (gt,) = ember.autograd.grad(got.sum(), x), torch.autograd.grad(want.sum(), t)
    np.testing.assert_allclose(gx.float().numpy(), gt.float().numpy(), rtol=rtol, atol=2 * rtol)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_relu_and_sign_at_signed_zero_and_nan_are_torchs(dtype):
    # float16's NumPy maximum returns the 0 on a tie (relu(-0.0) gave 0.0), ml_dtypes' bfloat16
    # sign keeps -0.0 (torch: 0.0); torch's relu keeps -0.0 and nan
    got = []
    for lib in (ember, torch):
        x = lib.tensor([-0.0, 0.0, float("nan"), -2.0, 3.0], dtype=getattr(lib, dtype))
        got.append([[math.copysign(1.0, v) if v == 0 else v for v in t.float().tolist()]
                    for t in (lib.relu(x), lib.sign(x), lib.nn.functional.relu(x))])
    assert str(got[0]) == str(got[1])
