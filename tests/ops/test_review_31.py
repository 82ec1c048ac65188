"""Eager wrong numbers found reviewing session 31 (REVIEW31), against torch 2.13: ``threshold``
and ``addcmul`` of integer tensors take their numbers as torch's checked conversion to the
tensor's type (``Scalar.to<int64_t>()``): truncated (``threshold(x, -2.5, 7)`` compares with -2,
``addcmul(..., value=2.5)`` multiplies by 2; ember compared with -2.5 and gave a float result),
refused beyond the type's range, NaN and inf included (ember gave int64's minimum or kept ``x``)."""
import pytest
import torch

import ember


def _outcome(fn, lib):
    try:
        r = fn(lib)
        return str(r.dtype).split(".")[-1], r.tolist()
    except Exception as error:
        return type(error).__name__, str(error)


THRESHOLDS = [("int64", -2.5, 7), ("int64", -2.5, 7.9), ("int64", float("nan"), 1), ("int64", 1, float("nan")),
              ("int64", float("inf"), 1), ("int64", 1, -1e39), ("int64", 10**20, 1), ("uint8", -1, 3),
              ("uint8", 2, 300), ("uint8", -2.5, 3), ("int8", 200.5, 3), ("int32", 1e10, 3), ("int16", 2, -7.9)]


@pytest.mark.parametrize("dtype, threshold, value", THRESHOLDS)
def test_threshold_of_an_integer_tensor_converts_its_numbers_as_torch(dtype, threshold, value):
    def fn(lib):
        return lib.nn.functional.threshold(lib.arange(-4, 4).to(getattr(lib, dtype)), threshold, value)
    assert _outcome(fn, ember) == _outcome(fn, torch)


@pytest.mark.parametrize("value", [2.5, -1.5, 1000.0, 1e36, float("nan"), True, 3])
def test_addcmul_of_integer_tensors_converts_value_as_torch(value):
    def fn(lib):
        x = lib.arange(-2, 4)
        return lib.addcmul(x, x, x + 1, value=value)
    assert _outcome(fn, ember) == _outcome(fn, torch)


def test_addcdiv_of_integer_tensors_refuses_in_torchs_words():
    def fn(lib):
        return lib.addcdiv(lib.arange(3), lib.arange(3), lib.arange(3) + 1, value=2.0)
    assert _outcome(fn, ember) == _outcome(fn, torch)
