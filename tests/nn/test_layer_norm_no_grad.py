"""F.layer_norm where nothing is recorded runs as one op (statistics computed inside
Normalize): same values as the recording path and as torch."""
import numpy as np
import pytest

import ember
from torchcompare import assert_close, to_torch

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape, normalized", [((1, 1, 128), (128,)), ((4, 6, 5), (6, 5)), ((3, 7), (7,))])
@pytest.mark.parametrize("affine", [True, False])
def test_no_grad_layer_norm_equals_recording_path_and_torch(shape, normalized, affine):
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal(shape).astype(np.float32) * 3 + 1)
    weight = ember.tensor(rng.standard_normal(normalized).astype(np.float32), requires_grad=True) if affine else None
    bias = ember.tensor(rng.standard_normal(normalized).astype(np.float32), requires_grad=True) if affine else None
    with ember.no_grad():
        fast = ember.nn.functional.layer_norm(x, normalized, weight, bias, eps=1e-5)
    recorded = ember.nn.functional.layer_norm(x.requires_grad_(True), normalized, weight, bias, eps=1e-5)
    assert fast.grad_fn is None and recorded.grad_fn is not None
    np.testing.assert_array_equal(fast.numpy(), recorded.detach().numpy())
    expected = torch.nn.functional.layer_norm(to_torch(x), normalized, None if weight is None else to_torch(weight),
                                              None if bias is None else to_torch(bias), eps=1e-5)
    assert_close(fast, expected)
