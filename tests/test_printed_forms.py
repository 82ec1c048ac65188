"""What a user sees printed equals torch's: Size, dtypes, legacy type names, tensor suffixes."""
import pytest

import ember
from ember import _dtype

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (1, 1, 5)])
def test_size_prints_as_torch(shape):
    e, t = ember.zeros(shape).shape, torch.zeros(shape).shape
    assert repr(e) == repr(t) and str(e) == str(t)
    assert repr(e[1:]) == repr(t[1:])


@pytest.mark.parametrize("name", DTYPES)
def test_dtypes_and_type_names_print_as_torch(name):
    e_dtype, t_dtype = getattr(_dtype, name), getattr(torch, name)
    assert repr(e_dtype) == repr(t_dtype) and str(e_dtype) == str(t_dtype)
    assert ember.zeros(2, dtype=e_dtype).type() == torch.zeros(2, dtype=t_dtype).type()
    assert repr(ember.zeros(2, dtype=e_dtype)) == repr(torch.zeros(2, dtype=t_dtype))


def test_aliases_print_their_canonical_name():
    for alias in ("half", "float", "double", "short", "int", "long"):
        assert repr(getattr(ember, alias)) == repr(getattr(torch, alias))


def test_error_messages_name_sizes_as_torch():
    e_input, t_input = ember.zeros(3), torch.zeros(3)
    with pytest.raises(ValueError) as t_err:
        torch.nn.functional.binary_cross_entropy(t_input, torch.zeros(4))
    with pytest.raises(ValueError) as e_err:
        ember.nn.functional.binary_cross_entropy(e_input, ember.zeros(4))
    assert str(e_err.value) == str(t_err.value)
