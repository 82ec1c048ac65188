"""Small eager parity rows of session 30, each against torch 2.13: sizes and dims that torch's
parser reads as ``int[]`` (``torch.flip(x, 0)``, ``x.view(size=6)``, ``torch.reshape(x, 6)``,
``normal(0., 1., size=2)`` refused; ``x.flip(0)`` taken), a bool tensor given as a size (torch's
RuntimeError)."""
import operator

import numpy as np
import pytest
import torch

import ember


def _outcome(lib, code):
    """(class name, message, result's shape and values) of ``code`` run with ``torch`` = ``lib``."""
    x = lib.arange(6.).reshape(2, 3)
    try:
        result = eval(code, {"torch": lib, "x": x, "np": np, "nd": np.ones((2, 3), dtype=np.float32)})
    except Exception as error:  # the class and words are what is compared
        return type(error).__name__, str(error), None
    return "ok", "", (tuple(result.shape), result.tolist()) if hasattr(result, "shape") else result


def _same(code):
    expected, got = _outcome(torch, code), _outcome(ember, code)
    assert got == expected
    return expected


# torch's ``int[]`` (a list without a length): a lone int only as a method's sole positional argument
INT_LISTS = [
    "torch.flip(x, 0)", "torch.flip(x, dims=0)", "x.flip(dims=0)", "torch.flip(x, dims=torch.tensor(0))",
    "torch.permute(x, 0)", "x.permute(dims=0)", "torch.permute(x, 1, 0)", "torch.reshape(x, 6)",
    "x.reshape(shape=6)", "x.reshape(shape=(1.5,))", "torch.tile(x, 2)", "x.tile(dims=2)", "torch.broadcast_to(x, 3)",
    "x.repeat(repeats=2)", "x.view(size=6)", "x.view(size=torch.tensor(6))", "x.view(1.5)", "x.view()",
    "x.view(dtype=2)", "torch.zeros(size=(1.5,))", "x.expand(size=3)", "torch.as_strided(x, 6, 1)", "x.as_strided(6, 1)",
    "x.as_strided((6,), 1)", "torch.empty_strided(2, 1)", "torch.empty_strided((2,), 1)",
    # normal's and randint's signatures: the size a sequence, two numbers with one, tensors without
    "torch.normal(0., 1., size=2)", "torch.normal(0., 1., 2)", "torch.normal(0., 1.)", "torch.normal(x, 1., size=(2,))",
    "torch.normal(0., 1., size=(1.5,))", "torch.randint(5, size=3)", "torch.randint(5, 3)", "torch.randint(0, 5, 3)",
    "torch.randint(0, 5, size=3)", "torch.randint(5)", "torch.randint(0, 5, (2,), 1)"]
TAKEN = [
    "x.flip(0)", "x.flip(0, 1)", "x.flip(dims=(0,))", "torch.flip(x, [0, 1])", "x.permute(1, 0)",
    "torch.permute(x, (1, 0))", "torch.reshape(x, shape=(6,))", "x.reshape(6)", "x.tile(2)", "x.tile(2, 2)",
    "torch.tile(x, (2,))", "torch.broadcast_to(x, size=(2, 3))", "x.broadcast_to(2, 3)", "x.view(size=(3, 2))",
    "x.view(dtype=torch.int32)", "x.view(torch.int32)", "x.view(torch.Size([6]))", "x.expand(size=(2, 3))",
    "x.expand(size=[4, 2, 3])", "x.as_strided((3,), (2,), 1)", "torch.flip(x, (torch.tensor(True),))",
    "torch.permute(x, (torch.tensor(True), 0))", "torch.normal(0., 1., size=[2]).shape", "torch.normal(x, 1.).shape",
    "torch.randint(5, (2,), dtype=torch.int32).shape", "torch.randint(low=0, high=5, size=(2,)).shape"]


@pytest.mark.parametrize("code", INT_LISTS)
def test_a_lone_int_where_torch_takes_a_list_is_torchs_type_error(code):
    assert _same(code)[0] == "TypeError"


@pytest.mark.parametrize("code", TAKEN)
def test_ints_and_sequences_torch_takes(code):
    assert _same(code)[0] == "ok"


BOOL_SIZES = [
    "torch.zeros(torch.tensor(True))", "torch.zeros(2, torch.tensor(True))", "torch.zeros(torch.tensor([False]))",
    "torch.ones((2, torch.tensor(True)))", "x.view(3, torch.tensor(True))", "x.reshape(torch.tensor(True))",
    "x.expand(torch.tensor(True), 3)", "x.new_zeros(torch.tensor(True))", "x.repeat(torch.tensor(True), 1)",
    "torch.full((torch.tensor(True),), 1.)", "x.unflatten(1, (torch.tensor(True), 3))",
    "torch.randn(torch.tensor(True))", "torch.normal(0., 1., (torch.tensor(True),))",
    "torch.randint(5, (2, torch.tensor(True)))"]


@pytest.mark.parametrize("code", ["torch.normal(0., -0.5, size=(2,))", "torch.normal(x, float('nan'))",
                                  "torch.normal(0., -1, size=(2,))"])
def test_a_negative_or_nan_number_std_is_named_as_torch_names_it(code):
    assert _same(code)[0] == "RuntimeError"


@pytest.mark.parametrize("code", BOOL_SIZES)
def test_a_bool_tensor_as_a_size_is_torchs_runtime_error(code):
    assert _same(code)[0] == "RuntimeError"


def test_bools_and_int_tensors_as_sizes_torch_takes():
    for code in ("torch.zeros(2, True)", "x.view(torch.tensor(3), 2)", "torch.zeros(torch.tensor([2]))"):
        assert _same(code)[0] == "ok"


# a NumPy array: torch's functions refuse one (the parser's TypeError), its operators take one
ARRAY_FUNCTIONS = [
    "torch.add(x, nd)", "torch.add(nd, x)", "torch.add(x, np.array(2.))", "torch.sub(x, nd)", "torch.mul(x, nd)",
    "torch.div(x, nd)", "torch.eq(x, nd)", "torch.ne(x, nd)", "torch.lt(nd, x)", "torch.maximum(x, nd)",
    "torch.atan2(x, nd)", "torch.hypot(x, nd)", "torch.logical_and(x, nd)", "torch.lerp(x, nd, 0.5)",
    "torch.clamp(x, nd)", "torch.matmul(x, nd.T)", "x.add(nd)", "x.mul(nd)", "x.sub(nd)", "x.eq(nd)",
    "torch.exp(nd)", "torch.sqrt(nd)", "torch.sigmoid(nd)", "torch.neg(nd)", "torch.abs(nd)", "torch.relu(nd)",
    "torch.isnan(nd)", "torch.clone(nd)", "torch.sum(nd)", "torch.mean(nd)", "torch.max(nd)", "torch.argmax(nd)",
    "torch.cumsum(nd, 0)", "torch.softmax(nd, 0)"]


@pytest.mark.parametrize("code", ARRAY_FUNCTIONS)
def test_function_forms_refuse_a_numpy_array_in_torchs_words(code):
    assert _same(code)[0] == "TypeError"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (torch's __array_wrap__, NumPy 2)
@pytest.mark.parametrize("code", ["x + nd", "x - nd", "x * nd", "x / nd", "x ** nd", "x % nd", "x // nd", "x == nd",
                                  "nd / x", "x + np.array(2.)", "x.int() + np.array(2)", "x.int() + np.array([2, 2, 2])"])
def test_operators_take_a_numpy_array_with_numpys_promotion(code):
    expected = eval(code, {"x": torch.arange(6.).reshape(2, 3), "np": np, "nd": np.ones((2, 3), dtype=np.float32)})
    got = eval(code, {"x": ember.arange(6.).reshape(2, 3), "np": np, "nd": np.ones((2, 3), dtype=np.float32)})
    assert str(got.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
    assert got.tolist() == expected.tolist()


def test_an_operator_inside_ember_and_a_user_operator_calling_a_function():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy"):  # (torch's operators hand it to NumPy)
        x * np.full(2, 3.0)
    assert operator.add(x.detach(), np.ones(2)).tolist() == [2.0, 2.0]  # (an operator's slot, called from outside)
    assert sum([x.detach(), np.ones(2)]).tolist() == [2.0, 2.0]

    class Wrapper:
        def __add__(self, other):
            return ember.add(x, other)
    with pytest.raises(TypeError, match=r"add\(\): argument 'other' \(position 2\) must be Tensor, not numpy.ndarray"):
        Wrapper() + np.ones(2)


# methods whose bad calls kept Python's wording: sort and to (torch's parser), split (torch's Python method)
METHOD_CALLS = [
    "x.sort(foo=1)", "x.sort(1, 2, 3, 4)", "x.sort('a')", "x.sort(dim='a')", "x.sort(0, stable=True)",
    "torch.sort(x, foo=1)", "torch.sort(x, 'a')", "torch.sort(x, 0, True, 1)", "torch.sort()",
    "x.view(foo=1)", "x.view(1, foo=1)", "x.to(foo=1)", "x.to(torch.float64, foo=1)", "x.to(0, 0, 0, 0, 0, 0)",
    "x.split()", "x.split(foo=1)", "x.split('s')", "x.split(split_size_or_sections=1)", "torch.split(x, 's')",
    "x.split(0, 0, 0, 0, 0, 0)"]


@pytest.mark.parametrize("code", METHOD_CALLS)
def test_bad_calls_of_methods_without_out_are_worded_as_torch(code):
    assert _same(code)[0] == "TypeError"


@pytest.mark.parametrize("code", ["len(x.split(split_size=1))", "x.sort(descending=True)[1]", "torch.sort(x, axis=0)[0]",
                                  "torch.sort(x, dim=0, stable=True)[0]", "x.to('cpu', torch.float64)",
                                  "x.to(x.int())", "x.to(dtype=torch.int32)"])
def test_calls_of_those_methods_torch_takes(code):
    assert _same(code)[0] == "ok"


@pytest.mark.parametrize("code", [
    "torch.where()", "torch.where(x, foo=1)", "torch.where(x > 0, 's')", "torch.where('s')",
    "torch.where(x > 0, 0, 0, 0, 0, 0, 0)", "torch.where(1, foo=1)", "torch.where(x > 0, x, nd)",
    "torch.zeros_like(x, 's')", "torch.ones_like(x, foo=1)", "torch.empty_like(x, 0, 0)"])
def test_where_and_the_like_factories_word_bad_calls_as_torch(code):
    assert _same(code)[0] == "TypeError"


@pytest.mark.parametrize("code", ["x.where()", "x.where(foo=1)", "x.where('s')", "x.where(0, 0, 0, 0, 0, 0)"])
def test_tensor_where_words_bad_calls_as_torch(code):
    assert _same(code)[0] == "TypeError"
