"""Review of session 18's additions against torch 2.13 (review19): each fix has cases that failed before it."""
import array
import collections
import warnings

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_same_error


def _nested(m):
    """Nested data whose inner sequences are not lists or tuples (torch reads any sequence)."""
    return {"Size": [m.Size([2, 3]), m.Size([4, 5])], "range": [range(3), range(1, 4)],
            "deque": (collections.deque([1.5, 2.]), [3, 4]), "array": [array.array("f", [1., 2.])],
            "namedtuple": [collections.namedtuple("P", "x y")(1, 2)],
            "0-d array after the first": [1, np.array(2.5, np.float32)],
            "0-d arrays inside": [[1, 2], [np.array(3), np.int16(4)]]}


@pytest.mark.parametrize("case", list(_nested(torch)))
def test_tensor_of_nested_sequences_of_any_kind_as_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "list of numpy.ndarrays is extremely slow"
        expected = torch.tensor(_nested(torch)[case])
    got = ember.tensor(_nested(ember)[case])
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("data", [lambda: None, lambda: [1, None], lambda: [[1], [None]], lambda: {}, lambda: [set()],
                                  lambda: object(), lambda: [np.array(2.5)], lambda: [[np.array(1), 2]]])
def test_tensor_of_what_has_no_dtype_raises_torchs_error(data):
    assert_same_error(lambda: ember.tensor(data()), lambda: torch.tensor(data()),
                      normalize=lambda message: message.split(" at 0x")[0])
