"""Argument errors torch's parser raises and ember matched only in class or not at all:
``clamp``/``clip`` with one tensor bound and one number, ``logsumexp`` without ``dim``,
``count_nonzero`` with ``keepdim``, in-place bitwise ops whose result type does not cast back. torch 2.13 is the oracle for class and message."""
import pytest
import torch

import ember


def _raised(fn, lib):
    try:
        fn(lib, lib.arange(3.0))
    except Exception as error:      # noqa: BLE001 - the class and words are compared
        return type(error), str(error)
    return None


CASES = {
    "clamp-tensor-min-number-max": lambda T, x: T.clamp(x, T.zeros(3), 1.0),
    "clamp-number-min-tensor-max": lambda T, x: T.clamp(x, 0, T.tensor([1.0])),
    "clamp-grad-scalar-tensor": lambda T, x: T.clamp(x, T.tensor(0.0, requires_grad=True), 1.0),
    "clip-tensor-number": lambda T, x: T.clip(x, T.zeros(3), 0.5),
    "logsumexp-dim-none": lambda T, x: T.logsumexp(x, dim=None),
    "count-nonzero-keepdim": lambda T, x: T.count_nonzero(x, keepdim=True),
    "count-nonzero-three-positional": lambda T, x: T.count_nonzero(x, 0, True),
    # in place, the cast check comes before the kernel's refusal (out of place: NotImplementedError)
    "uint8-bitwise-and-float-in-place": lambda T, x: x.to(T.uint8).bitwise_and_(1.5),
    "uint8-bitwise-or-float-tensor-in-place": lambda T, x: x.to(T.uint8).bitwise_or_(T.tensor(1.5)),
    "uint8-left-shift-float-in-place": lambda T, x: x.to(T.uint8).bitwise_left_shift_(1.5),
    "uint8-bitwise-and-float": lambda T, x: x.to(T.uint8).bitwise_and(1.5),
    "float-bitwise-and-int-in-place": lambda T, x: x.bitwise_and_(1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_class_and_words_equal_torchs(name):
    expected, got = _raised(CASES[name], torch), _raised(CASES[name], ember)
    assert expected is not None and got is not None, (expected, got)
    assert got[0] is expected[0], (got, expected)
    assert got[1] == expected[1]


ACCEPTED = {   # what torch's parser takes: both bounds tensors, a 0-dim tensor without grad with a number
    "clamp-0dim-bound-with-number": lambda T, x: T.clamp(x, T.tensor(0.5), 1.5),
    "clamp-number-with-0dim-int": lambda T, x: T.clamp(x, 0.5, T.tensor(1)),
    "clamp-two-tensors": lambda T, x: T.clamp(x, T.zeros(3), T.tensor(1.5)),
    "clip-max-tensor-only": lambda T, x: x.clip(None, T.ones(3)),
    "clamp-method-numbers": lambda T, x: x.clamp(min=0.5, max=1),
    "logsumexp-dim": lambda T, x: T.logsumexp(x, 0),
    "count-nonzero-dim": lambda T, x: T.count_nonzero(x, 0),
}


@pytest.mark.parametrize("call", [lambda T, x: T.logsumexp(x), lambda T, x: x.logsumexp()], ids=["function", "method"])
def test_logsumexp_without_dim_is_a_type_error(call):
    for lib in (torch, ember):   # (Python's words in ember: dim stays a required parameter)
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            call(lib, lib.arange(3.0))


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_combinations_give_torchs_values(name):
    expected = ACCEPTED[name](torch, torch.arange(3.0))
    got = ACCEPTED[name](ember, ember.arange(3.0))
    assert str(got.dtype).replace("ember", "torch") == str(expected.dtype)
    assert got.tolist() == pytest.approx(expected.tolist(), rel=1e-6)
