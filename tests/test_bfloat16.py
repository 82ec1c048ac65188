"""bfloat16 as a real dtype (ml_dtypes underneath) against torch.bfloat16: promotion with every
dtype, casting both ways (round-to-nearest-even, overflow, nan), arithmetic and printing."""
import numpy as np
import pytest

import ember
from ember import _dtype
from ember._dtype import bfloat16
from torchcompare import assert_close

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("other", DTYPES)
def test_promotion_with_every_dtype_matches_torch(other):
    e_other, t_other = getattr(_dtype, other), getattr(torch, other)
    assert _dtype.promote_types(bfloat16, e_other).name == str(torch.promote_types(torch.bfloat16, t_other)).split(".")[1]
    assert _dtype.promote_types(e_other, bfloat16).name == str(torch.promote_types(t_other, torch.bfloat16)).split(".")[1]
    # A tensor with dimensions outranks a 0-d tensor of a lower category, in both directions.
    for e_args, t_args in [((ember.ones(2, dtype=bfloat16), ember.ones((), dtype=e_other)),
                            (torch.ones(2, dtype=torch.bfloat16), torch.ones((), dtype=t_other))),
                           ((ember.ones((), dtype=bfloat16), ember.ones(2, dtype=e_other)),
                            (torch.ones((), dtype=torch.bfloat16), torch.ones(2, dtype=t_other)))]:
        assert _dtype.result_type(*e_args).name == str(torch.result_type(*t_args)).split(".")[1]
    assert _dtype.can_cast(e_other, bfloat16) == torch.can_cast(t_other, torch.bfloat16)
    assert _dtype.can_cast(bfloat16, e_other) == torch.can_cast(torch.bfloat16, t_other)


def test_python_scalars_keep_bfloat16():
    x = ember.ones(3, dtype=bfloat16)
    for scalar in (2, 2.5, True):
        assert _dtype.result_type(x, scalar) is bfloat16


def edge_values():
    rng = np.random.default_rng(0)
    ties = np.float32(1.0) + np.arange(8, dtype=np.float32) * np.float32(2 ** -8)  # half-way cases
    return np.concatenate([rng.standard_normal(50).astype(np.float32) * 10.0 ** rng.integers(-30, 30, 50),
                           ties, [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 1e-40, 1e-45]]).astype(np.float32)


def test_casting_from_float32_rounds_as_torch():
    values = edge_values()
    e, t = ember.tensor(values).to(bfloat16), torch.tensor(values).to(torch.bfloat16)
    assert e.dtype is bfloat16 and e.element_size() == 2
    np.testing.assert_array_equal(e.to(ember.float32).numpy(), t.float().numpy())


@pytest.mark.parametrize("target", ["float64", "float16", "int32", "int64", "bool"])
def test_casting_from_bfloat16_matches_torch(target):
    values = np.array([0.0, -2.5, 3.75, 100.0, -7.0, 0.5], np.float32)
    e = ember.tensor(values).to(bfloat16).to(getattr(_dtype, target))
    assert_close(e, torch.tensor(values).to(torch.bfloat16).to(getattr(torch, target)), rtol=0, atol=0)


def test_arithmetic_rounds_like_torch():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 40)).astype(np.float32)
    ea, eb = ember.tensor(a).to(bfloat16), ember.tensor(b).to(bfloat16)
    ta, tb = torch.tensor(a).to(torch.bfloat16), torch.tensor(b).to(torch.bfloat16)
    for e, t in [(ea + eb, ta + tb), (ea * eb, ta * tb), (ea - 3, ta - 3), (ea / eb, ta / tb),
                 (ea + ember.tensor(b), ta + torch.tensor(b))]:
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(e.to(ember.float32).numpy(), t.float().numpy())


@pytest.mark.parametrize("values", [[1.5, 2.25, 3.3], [1e-5, 3.0, 1e9], [1.0, 2.0, float("inf")],
                                    [[0.1, -0.2], [3e4, 1.0]], [7.0], []])
def test_repr_matches_torch(values):
    e, t = ember.tensor(values, dtype=bfloat16), torch.tensor(values, dtype=torch.bfloat16)
    assert repr(e).replace("ember.", "torch.") == repr(t)
    assert repr(bfloat16) == repr(ember.float32).replace("float32", "bfloat16")


def test_item_and_tolist_give_python_floats():
    x = ember.tensor([1.5, -2.0], dtype=bfloat16)
    assert x.tolist() == [1.5, -2.0] and type(x[0].item()) is float
    assert bfloat16.is_floating_point and bfloat16.itemsize == 2


def test_matmul_stays_bfloat16_and_accumulates_in_float32():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 5, 64)).astype(np.float32), rng.standard_normal((64, 3)).astype(np.float32)
    ea, eb = ember.tensor(a).to(bfloat16), ember.tensor(b).to(bfloat16)
    out = ember.matmul(ea, eb)
    assert out.dtype is bfloat16 and tuple(out.shape) == (2, 5, 3)
    # The float64 product of the rounded inputs, rounded once: at most one bfloat16 ulp away.
    exact = ea.to(ember.float64).numpy() @ eb.to(ember.float64).numpy()
    np.testing.assert_allclose(out.to(ember.float64).numpy(), exact, rtol=2 ** -7, atol=1e-6)
    assert ember.nn.functional.linear(ea, eb.T).dtype is bfloat16
