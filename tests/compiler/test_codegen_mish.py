"""mish's op entry (``MishForward``, session 15) in the compiler: fused with the C expression
of the composite it replaced, so compiled and eager results and gradients stay bit-equal."""
import numpy as np

import pytest

import ember
from ember.compiler.backends import kernels

pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_mish_compiles_to_its_rule_and_equals_eager(dtype, monkeypatch):
    rule, used = kernels.ELEMENTWISE["Mish"], []
    monkeypatch.setitem(kernels.ELEMENTWISE, "Mish", lambda a, k, d: used.append(d) or rule(a, k, d))
    F = ember.nn.functional

    def f(x):
        return F.mish(x * 1.5) + 1

    values = np.random.default_rng(0).standard_normal(300) * 10
    values[:6] = [800.0, -800.0, 20.5, 13.4, 1e30, -0.0]
    x = ember.tensor(values, dtype=dtype, requires_grad=True)
    got, want = ember.compile(f)(x), f(x)
    assert used, "mish ran outside the fused kernel"
    (g_got,), (g_want,) = ember.autograd.grad(got.sum(), x), ember.autograd.grad(want.sum(), x)
    assert np.array_equal(got.detach().numpy(), want.detach().numpy(), equal_nan=True)
    assert np.array_equal(g_got.numpy(), g_want.numpy(), equal_nan=True)
