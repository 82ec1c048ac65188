"""float64 ``lgamma`` of subnormal numbers (SciPy's gammaln gives inf there; torch
``-log|x|``, 744.44 at 5e-324) and ``sinc``'s gradient where ``pi x^2`` underflows (nan
before; torch 0), against torch 2.13."""
import pytest
import torch

import ember

VALUES = [5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 0.0, -0.0, 0.75, -2.5]


@pytest.mark.parametrize("op", ["lgamma", "sinc"])
def test_values_and_gradients_at_tiny_arguments_equal_torch(op):
    t = torch.tensor(VALUES, dtype=torch.float64, requires_grad=True)
    e = ember.tensor(VALUES, dtype=ember.float64, requires_grad=True)
    want, got = getattr(t, op)(), getattr(e, op)()
    assert got.tolist() == pytest.approx(want.tolist(), rel=1e-14)
    if op == "sinc":  # lgamma's gradient (digamma) is -inf/inf at these points in both
        want.sum().backward()
        got.sum().backward()
        assert e.grad.tolist() == pytest.approx(t.grad.tolist(), rel=1e-12, abs=1e-300)
