"""``Op.at_float32`` (READ31): the op entries whose kernels compute float16/bfloat16 at float32, as
torch's ``opmath_t``, share one wrapper; against torch 2.13. ``threshold``'s replacement value is
rounded to 16 bits through float32, as torch's ``Scalar.to<Half>()`` (c10's Half is made from a
float): ``1 + 2**-11 + 2**-40`` is a float16 tie after float32 and rounds to 1.0 (ember gave
1.0009765625 from float64 directly), eager and compiled."""
import pytest
import torch

import ember


@pytest.mark.parametrize("dtype, value", [("float16", 1 + 2 ** -11 + 2 ** -40), ("bfloat16", 1 + 2 ** -8 + 2 ** -40),
                                          ("float16", -(1 + 2 ** -11 + 2 ** -40)), ("bfloat16", 70000.0)])
def test_thresholds_value_rounds_to_16_bits_through_float32(dtype, value):
    want = torch.nn.functional.threshold(torch.tensor([-1.0, 2.0], dtype=getattr(torch, dtype)), 0.0, value).tolist()
    x = ember.tensor([-1.0, 2.0], dtype=getattr(ember, dtype))
    assert ember.nn.functional.threshold(x, 0.0, value).tolist() == want
    compiled = ember.compile(lambda x: ember.nn.functional.threshold(x, 0.0, value), fullgraph=True)
    assert compiled(x).tolist() == want


def test_the_flag_wraps_the_kernel_once_and_leaves_float64_as_it_was():
    from ember._ops.nn import Elu
    x = ember.tensor([-1.0, 0.5], dtype=ember.float64)
    assert ember.nn.functional.elu(x, 2.0).tolist() == torch.nn.functional.elu(torch.tensor([-1.0, 0.5],
                                                                                             dtype=torch.float64), 2.0).tolist()
    assert Elu.at_float32 and Elu.forward.__wrapped__.__name__ == "forward"
    assert not hasattr(Elu.forward.__wrapped__, "__wrapped__")
