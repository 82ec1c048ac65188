"""A Python int operand outside [-2**63, 2**64): torch holds a number operand as an int64 or
uint64 scalar and raises OverflowError ("int too big to convert", "can't convert negative int
to unsigned"); ember rounded it into a float tensor's dtype (``ones(2) * 10**300`` was inf)."""
import pytest

import ember

torch = pytest.importorskip("torch")

VALUES = [10**300, 2**64, 2**64 - 1, 2**63, 2**63 - 1, -2**63, -2**63 - 1, -10**30]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "uint8"]


def _outcome(lib, op, dtype, value):
    try:
        out = op(lib.ones(2, dtype=getattr(lib, dtype)), value)
    except OverflowError as e:
        return "OverflowError", str(e)
    return str(out.dtype).split(".")[-1], out.double().tolist()


@pytest.mark.parametrize("op", [lambda x, v: x * v, lambda x, v: x + v, lambda x, v: x - v, lambda x, v: v - x],
                         ids=["mul", "add", "sub", "rsub"])
def test_int_operands_beyond_int64_and_uint64_raise_as_torch(op):
    for dtype in DTYPES:
        for value in VALUES:
            if dtype in ("int64", "uint8") and 2**63 <= value < 2**64:
                continue  # (torch wraps a uint64 scalar into an integer tensor's dtype its own way)
            assert _outcome(ember, op, dtype, value) == _outcome(torch, op, dtype, value), (dtype, value)
