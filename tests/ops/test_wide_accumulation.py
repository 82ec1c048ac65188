"""float32/float16/bfloat16 ``std`` and ``var`` of values whose squares leave the dtype's
range (near 3.4e38, or below 1e-19): torch accumulates them in double (Welford); ember computes
them again in float64 when the narrow result overflowed or underflowed. The reference is
torch's float64 result of the same (rounded) values, rounded to the dtype: torch's own result
where it is not CPU-dependent. (torch's float32 ``norm`` squares in float32 and overflows:
``norm([1e30, 1e30])`` is inf in both, see test_reduce.py's vector_norm-edge.)"""
import numpy as np
import pytest
import torch

import ember

M = float(np.finfo(np.float32).max)
CASES = [[M, 1.5, 2.0, -2.75], [M, M, 0.0], [3e38, -3e38], [1e-25, 3e-25], [1e-25, 3e-25, 5e-25, -1e-25],
         [2.0 ** -149, 0.0], [1.0, 2.0, 3.0, 4.5]]


def _reference(fn, values, dtype):
    t = torch.tensor(values, dtype=getattr(torch, dtype)).double()
    return fn(torch, t).to(getattr(torch, dtype)).float().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("values", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("name", ["std", "var", "std_dim", "var_mean", "std_mean_c0"])
def test_narrow_std_and_var_equal_the_float64_result(name, values, dtype):
    fn = {"std": lambda lib, x: x.std(), "var": lambda lib, x: x.var(),
          "std_dim": lambda lib, x: x.reshape(1, -1).expand(2, -1).std(dim=1),
          "var_mean": lambda lib, x: lib.var_mean(x, 0)[0],
          "std_mean_c0": lambda lib, x: lib.std_mean(x, correction=0)[0]}[name]
    got = fn(ember, ember.tensor(values, dtype=getattr(ember, dtype))).float().numpy()
    np.testing.assert_allclose(got, _reference(fn, values, dtype), rtol=1e-6, atol=0)


def test_float32_std_gradient_near_the_largest_float():
    values = [M, M, 0.0]
    x = ember.tensor(values, requires_grad=True)
    s = x.std()
    s.backward()
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    t.std().backward()
    assert s.grad_fn.name() == "StdBackward0" and s.dtype == ember.float32
    np.testing.assert_allclose(x.grad.numpy(), t.grad.float().numpy(), rtol=1e-6)
    v = ember.tensor(values, requires_grad=True).var()
    assert v.grad_fn.name() == "VarBackward0" and v.item() == float("inf")
