"""``tensor()`` of nested sequences whose first elements size a dim 0: torch stores no element
and looks no further, so ``[[], [1]]`` is a (2, 0) tensor of the default (or given) dtype, while
``[[1], []]`` is ragged (ValueError). torch 2.13 is the oracle."""
import pytest
import torch

import ember

DATA = [[[], [1]], [[1], []], [[], []], [[], [1, 2]], [[[]], [[1]]], [[1, 2], []], [[], [True]], [(), [1]]]


def _made(lib, data, **kwargs):
    try:
        t = lib.tensor(data, **kwargs)
    except Exception as error:  # noqa: BLE001 - the class and words are compared
        return type(error).__name__, str(error)
    return tuple(t.shape), str(t.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", [None, "int64", "float64"])
@pytest.mark.parametrize("data", DATA, ids=[repr(d) for d in DATA])
def test_nested_data_with_an_empty_first_element_as_torch(data, dtype):
    kwargs = lambda lib: {} if dtype is None else {"dtype": getattr(lib, dtype)}
    assert _made(ember, data, **kwargs(ember)) == _made(torch, data, **kwargs(torch))
