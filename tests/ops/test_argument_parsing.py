"""Calls torch's argument parser refuses and ember used to compute (the fuzzer's "lenient"
class): a Python number where the op's only signature takes a Tensor (``maximum``, ``atan2``,
``logical_and``...), or a number first where the signatures are ``(Tensor, Tensor)`` and
``(Tensor, Number)`` (comparisons, ``fmod``, ``rsub``, ``lerp``, ``where``). ember raises
torch's TypeError with torch's message (its first line, for the "invalid combination" ones,
whose list of signatures torch annotates per call)."""
import pytest
import torch

import ember

T = "T"  # stands for a float32 tensor of two ones
BOTH_TENSORS = ["maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "logical_and", "logical_or",
                "logical_xor", "igamma", "igammac", "isclose", "hypot"]
TENSOR_FIRST = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "not_equal", "fmod", "rsub"]
ALIASES = {"arctan2": "atan2", "greater": "gt", "less": "lt", "not_equal": "ne"}
CASES = ([(name, (T, s)) for name in BOTH_TENSORS for s in (2, 1.5, True, 1 + 2j)]
         + [(name, (s, T)) for name in BOTH_TENSORS for s in (2, -0.5)]
         + [(name, (s, T)) for name in TENSOR_FIRST for s in (2, -0.5, True, 1j)]
         + [("lerp", (1.0, T, 0.25)), ("where", (True, 1, T)), ("where", (False, T, 2.0))])


def _call(lib, name, args):
    t = lib.ones(2)
    return getattr(lib, name)(*[t if a is T else a for a in args])


@pytest.mark.parametrize("name,args", CASES, ids=[f"{n}{a}" for n, a in CASES])
def test_a_number_where_torch_takes_only_a_tensor_raises_torchs_type_error(name, args):
    with pytest.raises(TypeError) as expected:
        _call(torch, name, args)
    with pytest.raises(TypeError) as got:
        _call(ember, name, args)
    want = str(expected.value).split("\n")[0]
    # ember's aliases share their op's check, which names the op: arctan2 -> atan2, less -> lt
    want = want.replace(f"{name}()", f"{ALIASES.get(name, name)}()")
    assert str(got.value).split("\n")[0] == want


@pytest.mark.parametrize("name", TENSOR_FIRST)
def test_a_number_second_still_works(name):
    for s in (2, -0.5) if name == "rsub" else (2, -0.5, True):
        t = torch.tensor([1.0, -2.0, 3.0])
        want = getattr(torch, name)(t, s)
        got = getattr(ember, name)(ember.tensor([1.0, -2.0, 3.0]), s)
        assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype)
    t = ember.tensor([1.0, -2.0])
    assert (2 < t).tolist() == [False, False] and (0 == t).tolist() == [False, False]
    assert ember.where(t > 0, 1.0, t).tolist() == [1.0, -2.0]


X = "X"  # stands for a float32 tensor [[3, 1, 2]]
PARSER_CASES = ["torch.sort(X, 0, stable=True)", "X.sort(0, stable=False)", "X.argsort(0, stable=True)",
                "torch.argsort(X, -1, True, stable=True)", "X.sort(0, True, True)", "X.argsort(0, True, True)",
                "X.prod((0,))", "X.prod(None)", "X.prod(dim=None)", "torch.prod(X, dim=(0, 1))", "X.max(None)",
                "torch.max(X, dim=None)", "X.min(dim=None)", "torch.min(X, None, True)", "X.median(None)",
                "X.median(dim=None)", "X.nanmedian(dim=None)", "X.median((0,))", "X.permute()", "X.view()",
                "X.reshape()", "X.expand()", "X.flip()", "X.repeat()", "X.tile()"]


@pytest.mark.parametrize("call", PARSER_CASES)
def test_what_torchs_parser_refuses_is_a_type_error(call):
    with pytest.raises(TypeError):
        eval(call, {"torch": torch, "X": torch.tensor([[3.0, 1.0, 2.0]])})
    with pytest.raises(TypeError) as got:
        eval(call, {"torch": ember, "X": ember.tensor([[3.0, 1.0, 2.0]])})
    assert call.split("(")[0].split(".")[-1] in str(got.value)


@pytest.mark.parametrize("call", ["X.sort(dim=0, stable=True)", "X.argsort(stable=True, descending=True)",
                                  "X.sort(1, True)", "torch.argsort(X, 1)", "X.prod()", "X.prod(1, True)",
                                  "torch.max(X)", "X.max(1)", "X.min(dim=0, keepdim=True)", "X.median()",
                                  "X.median(1)", "X.nanmedian()", "X.permute(1, 0)", "X.reshape(-1)", "X.view(3)", "X.flip(0, 1)", "X.flip(dims=(1,))", "X.tile(2)",
                                  "X.tile(1, 2)", "X.repeat(2, 1)", "X.expand(2, 3)", "X.max(axis=1)"])
def test_what_torchs_parser_accepts_still_works(call):
    want = eval(call, {"torch": torch, "X": torch.tensor([[3.0, 1.0, 2.0]])})
    got = eval(call, {"torch": ember, "X": ember.tensor([[3.0, 1.0, 2.0]])})
    want, got = (want, got) if isinstance(want, torch.Tensor) else (want[0], got[0])
    assert got.tolist() == want.tolist()
