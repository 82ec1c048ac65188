"""Session 25's review, eager: ``clamp`` of a float16 tensor at a signed-zero bound. torch keeps
the element on a tie (``clamp(0.0, max=-0.0)`` is 0.0); NumPy's float16 maximum and minimum
return their first argument on a tie, the bound, where its float32 ones return the second."""
import math

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
