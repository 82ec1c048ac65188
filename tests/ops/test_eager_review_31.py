"""Eager wrong numbers found reviewing session 31 (REVIEW31), against torch 2.13: ``threshold``
and ``addcmul`` of integer tensors take their numbers as torch's checked conversion to the
tensor's type (``Scalar.to<int64_t>()``): truncated (``threshold(x, -2.5, 7)`` compares with -2,
``addcmul(..., value=2.5)`` multiplies by 2; ember compared with -2.5 and gave a float result),
refused beyond the type's range, NaN and inf included (ember gave int64's minimum or kept ``x``); a
matrix product's ``out=`` of another dtype is refused (ember cast into it).
An augmented assignment with a NumPy array (``x += nd``) declines it in torch: Python computes
``x = x + nd``, a new tensor (float64), the old one (a parameter) unchanged; ember wrote in place."""
import operator

import numpy as np
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


@pytest.mark.parametrize("op", [operator.iadd, operator.isub, operator.imul, operator.itruediv])
@pytest.mark.parametrize("dtype, array", [("float32", np.array([0.1, 0.2, 0.3])), ("float64", np.array([0.5, 2.0, 4.0])),
                                          ("float32", np.array(2.5)), ("int64", np.array([1, 2, 3]))])
def test_an_augmented_assignment_with_an_array_makes_a_new_tensor_as_torch(op, dtype, array):
    got = []
    if op is operator.itruediv and dtype == "int64":  # (x / nd of ints: float64 in torch, NumPy's; ember float32)
        array = array.astype(np.float64)
    for lib in (torch, ember):
        x = lib.tensor([1.0, -2.0, 3.0]).to(getattr(lib, dtype))
        result = op(x, array)
        got.append((result is x, str(result.dtype).split(".")[-1], result.tolist(), x.tolist()))
    assert got[1] == got[0] and not got[0][0]


def test_a_parameter_minus_an_array_is_left_as_it_was():
    got = []
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        q = p
        with lib.no_grad():
            q -= np.array([0.5, 0.5])
        got.append((p.tolist(), type(q).__name__, q.tolist(), str(q.dtype)))
    assert got[1] == got[0] == ([1.0, 2.0], "Tensor", [0.5, 1.5], "torch.float64")


PRODUCTS = {"mm": lambda lib, a, b, out: lib.mm(a, b, out=out),
            "matmul": lambda lib, a, b, out: lib.matmul(a, b, out=out),
            "bmm": lambda lib, a, b, out: lib.bmm(a[None], b[None], out=out[None]),
            "addmm": lambda lib, a, b, out: lib.addmm(lib.zeros(3, 4, dtype=a.dtype), a, b, out=out),
            "mv": lambda lib, a, b, out: lib.matmul(a, b[:, 0], out=out[:, 0].contiguous())}


@pytest.mark.parametrize("name", PRODUCTS)
@pytest.mark.parametrize("dtype, out_dtype", [("float32", "float64"), ("float32", "float16"), ("int64", "float32")])
def test_a_matrix_products_out_of_another_dtype_is_refused_as_torch(name, dtype, out_dtype):
    def fn(lib):
        a, b = lib.arange(6).reshape(3, 2).to(getattr(lib, dtype)), lib.arange(8).reshape(2, 4).to(getattr(lib, dtype))
        return PRODUCTS[name](lib, a, b, lib.zeros(3, 4, dtype=getattr(lib, out_dtype)))
    assert _outcome(fn, ember) == _outcome(fn, torch)
