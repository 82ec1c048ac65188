"""Clamping ops keep ``x`` itself on a tie with a bound, as torch's do: ``relu(-0.0)``,
``clamp(-0.0, min=0)``, ``relu6`` and ``hardtanh`` give -0.0 (NumPy's maximum(x, 0) gave +0.0),
and a bound of -0.0 is returned as -0.0. Checked on short arrays and on long, strided ones
(NumPy's scalar and vector loops)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

OPS = {
    "relu": lambda L, x: L.relu(x),
    "relu_method": lambda L, x: x.relu(),
    "clamp_min": lambda L, x: L.clamp(x, min=0),
    "clamp_max": lambda L, x: L.clamp(x, max=0.0),
    "clamp_signed_bounds": lambda L, x: L.clamp(x, -0.0, 0.0),
    "clamp_tensor_bounds": lambda L, x: L.clamp(x, L.zeros(()), L.full((), 3.0)),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "hardtanh_signed_bounds": lambda L, x: L.nn.functional.hardtanh(x, -0.0, 0.0),
}
VALUES = [-0.0, 0.0, -1.0, float("nan"), 2.0, -2.0, 7.0, float("inf"), float("-inf")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("length", [9, 4 * 64 + 5])
def test_zeros_keep_torchs_signs(name, dtype, length):
    values = np.repeat(np.resize(np.array(VALUES), length), 2)  # [::2] below: every value, strided
    e = OPS[name](ember, ember.tensor(values, dtype=getattr(ember, dtype))[::2]).numpy()
    t = OPS[name](torch, torch.tensor(values, dtype=getattr(torch, dtype))[::2]).numpy()
    np.testing.assert_array_equal(e, t)
    np.testing.assert_array_equal(np.signbit(e), np.signbit(t), err_msg=f"{name}: signs of zeros")
