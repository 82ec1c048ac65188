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


def _double(x):
    return x * 2


@pytest.mark.parametrize("kwargs", [dict(mode="nope"), dict(options={"max_autotune": "yes"}),
                                    dict(options={"trace.enabled": 1}), dict(options={"bogus-option": True})],
                         ids=["mode", "str value", "int value", "unknown"])
def test_compile_refuses_modes_and_option_values_as_torch(kwargs):
    """The list of modes (torch 2.13 has "lite") and the option's type in torch's message;
    the option list itself is each one's own (ember's shorter), so only its start is compared."""
    assert_same_error(lambda: ember.compile(_double, **kwargs), lambda: torch.compile(_double, **kwargs),
                      normalize=lambda message: message.split(", known options are")[0])


def test_compile_takes_torchs_mode_and_option_spellings():
    for kwargs in (dict(mode="lite"), dict(options={"max-autotune": False}), dict(options={"epilogue-fusion": True})):
        torch.compile(_double, **kwargs)
        assert ember.compile(_double, **kwargs)(ember.ones(2)).tolist() == [2., 2.]


def test_compile_of_what_is_not_callable_raises_torchs_assertion():
    assert_same_error(lambda: ember.compile(3), lambda: torch.compile(3))


@pytest.mark.parametrize("dim", [(0, 0), (1, -2), (2, 0, 2, 1), (0, 2, -1), [1, 1]])
@pytest.mark.parametrize("reduce", ["sum", "amax", "mean", "var", "logsumexp", "flip"])
def test_a_repeated_dim_is_named_as_torch_names_it(dim, reduce):
    assert_same_error(lambda: getattr(ember.zeros(3, 4, 5), reduce)(dim), lambda: getattr(torch.zeros(3, 4, 5), reduce)(dim))


@pytest.mark.parametrize("scramble", [True, False])
def test_sobol_first_point_is_rounded_in_the_default_dtype_of_construction_as_torch(scramble):
    """torch computes the first point when the engine is made, in the default float dtype then,
    and converts it to each draw's dtype: a float64 draw's first row holds float32 values."""
    def draws(m):
        engine = m.quasirandom.SobolEngine(5, scramble=scramble, seed=7)
        first = engine.draw(3, dtype=m.float64)
        engine.reset()
        return first, engine.draw(1, dtype=m.float64), engine.draw(2, dtype=m.float64)
    for got, expected in zip(draws(ember), draws(torch)):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    previous = (torch.get_default_dtype(), ember.get_default_dtype())
    try:
        for m in (torch, ember):
            m.set_default_dtype(m.float64)
        engines = [m.quasirandom.SobolEngine(3, scramble=scramble, seed=1) for m in (ember, torch)]
    finally:
        torch.set_default_dtype(previous[0])
        ember.set_default_dtype(previous[1])
    np.testing.assert_array_equal(engines[0].draw(4, dtype=ember.float64).numpy(),
                                  engines[1].draw(4, dtype=torch.float64).numpy())


_DENSE_LAYOUTS = {"transposed": lambda m: m.zeros(3, 4).t(), "permuted, a size-1 dim": lambda m: m.zeros(4, 1, 3).permute(2, 0, 1),
                  "mT, size-1 dims": lambda m: m.zeros(3, 1, 2, 1).mT,
                  "channels-last, size-1 dims": lambda m: m.zeros(1, 2, 1, 3).contiguous(memory_format=m.channels_last),
                  "channels-last, empty": lambda m: m.zeros(2, 3, 0, 5).contiguous(memory_format=m.channels_last),
                  "stepped (not dense)": lambda m: m.zeros(3, 8)[:, ::2].t(),
                  "expanded (not dense)": lambda m: m.zeros(3, 1).expand(3, 4)}
_PRESERVING = {"clone": lambda m, x: x.clone(), "empty_like": lambda m, x: m.empty_like(x),
               "zeros_like": lambda m, x: m.zeros_like(x), "full_like": lambda m, x: m.full_like(x, 2.),
               "to float64": lambda m, x: x.to(m.float64), "half()": lambda m, x: x.half()}


@pytest.mark.parametrize("layout", list(_DENSE_LAYOUTS))
@pytest.mark.parametrize("make", list(_PRESERVING))
def test_preserve_format_keeps_a_dense_tensors_strides_as_torch(layout, make):
    """torch's preserve_format copies the strides of a non-overlapping and dense tensor exactly
    (size-1 dims' and an empty tensor's included); others get the format their strides suggest."""
    got = _PRESERVING[make](ember, _DENSE_LAYOUTS[layout](ember))
    expected = _PRESERVING[make](torch, _DENSE_LAYOUTS[layout](torch))
    assert got.stride() == expected.stride()
    np.testing.assert_array_equal(got.numpy() if make != "empty_like" else 0, expected.numpy() if make != "empty_like" else 0)


@pytest.mark.parametrize("shape", [(2, 3, 0, 5), (0, 3, 4, 5), (0, 0), (1, 0, 1)])
def test_mean_of_no_element_keeps_torchs_row_major_strides(shape):
    for dim in range(len(shape)):
        got, expected = ember.zeros(shape).mean(dim, keepdim=True), torch.zeros(shape).mean(dim, keepdim=True)
        assert got.stride() == expected.stride(), dim
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_randint_like_lays_out_its_result_as_torch():
    for make in (lambda m: m.zeros(3, 4).t(), lambda m: m.zeros(2, 3, 4, 5).contiguous(memory_format=m.channels_last)):
        assert ember.randint_like(make(ember), 5).stride() == torch.randint_like(make(torch), 5).stride()
        assert ember.randint_like(make(ember), 2, 5, memory_format=ember.contiguous_format).stride() == \
            torch.randint_like(make(torch), 2, 5, memory_format=torch.contiguous_format).stride()


@pytest.mark.parametrize("args", [lambda m: (None,), lambda m: (3,), lambda m: (m.zeros(2).untyped_storage(), 0)])
def test_set_with_no_matching_form_names_what_it_got_as_torch(args):
    """The first line (torch's later lines also say which forms failed on a type: not ember's)."""
    assert_same_error(lambda: ember.zeros(2).set_(*args(ember)), lambda: torch.zeros(2).set_(*args(torch)),
                      normalize=lambda message: message.split("\n")[0])
