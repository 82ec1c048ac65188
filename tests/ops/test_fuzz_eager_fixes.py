"""Minimal repros of what the eager differential fuzzer (test_fuzz_eager.py) found, each against
torch 2.13: median() of +-inf (nan: inf - inf in the shared gradient), bfloat16 rounding ops
that returned their input, nansum/nanmean gradients lost at +-inf, fmax/fmin gradients split at
ties (torch gives them whole to ``input``), SELU/CELU gradients at NaN and ELU's second
derivative at huge x (nan), a NaN or an out-of-range number written into an integer tensor
(garbage where torch raises; uint8's -1 refused where torch wraps it to 255), 0-dim tensors
through dim-taking ops (cumsum of a 0-dim uint8 kept uint8, index_fill crashed), logit's dtype
for bfloat16, and the exceptions torch raises where ember returned or raised another class:
median over an empty dim, median of bool, nanmean of integers, argmin and min(dim) of a 0-dim
complex, bitwise ops on complex, a number shifted by a float tensor, lerp with a mismatched or
number end, add/sub with a float (or bool) alpha and an integer result; and bool + bool * 2
(int64 here)."""
import contextlib

import pytest
import torch

import ember
from harness import Case, V, check, params

nan, inf = float("nan"), float("inf")


def _widened(tensors):
    """Each bfloat16 result as its dtype and its float32 values (the harness reads float32)."""
    return [(t.dtype, t.float()) for t in tensors]


BF16_VALUES = [-3.0, -1.375, -0.5, -0.0, 0.625, 1.625, 2.5, nan, inf]

CASES = [
    # bfloat16's NumPy dtype has kind "V": the rounding kernels took it for an integer one
    Case("bf16-rounding", lambda L, x: _widened([x.floor(), x.ceil(), x.trunc(), x.round(), x.frac()]),
         V(BF16_VALUES, dtype="float32", grad=False, view=lambda t: t.bfloat16()), dtypes=(None,)),
    Case("bf16-div-trunc", lambda L, x: _widened([L.div(x, 0.75, rounding_mode="trunc")]),
         V(BF16_VALUES, dtype="float32", grad=False, view=lambda t: t.bfloat16()), dtypes=(None,)),
    Case("bf16-cummax-nan", lambda L, x: _widened(x.cummax(0)),
         V([1.0, nan, 2.0, 3.0], dtype="float32", grad=False, view=lambda t: t.bfloat16()), dtypes=(None,)),
    Case("bf16-max-pool", lambda L, x: _widened([L.nn.functional.max_pool1d(x, 2)]),
         V([[[-inf, -inf, 1.0, nan]]], dtype="float32", grad=False, view=lambda t: t.bfloat16()), dtypes=(None,)),
    Case("nansum-nanmean-grad-at-inf", lambda L, x: [x.nansum(1), x.nanmean(1)],
         V([[-inf, 1.0, nan, 2.0], [inf, inf, 2.0, nan]]), dtypes=("float64",)),
    Case("fmax-fmin-ties-and-nan", lambda L, x, y: [L.fmax(x, y), L.fmin(x, y)],
         V([1.0, 1.125, 2.0, nan, nan, 0.5]), V([1.125, 1.125, 1.125, nan, 1.0, nan]), grad2=True),
    Case("fmax-python-number", lambda L, x: L.fmax(x, 2), V([1.0, 3.0])),
    Case("median-kthvalue-0-dim", lambda L, x: [x.median(0), x.median(-1, keepdim=True), x.kthvalue(1, 0)],
         V(2.5)),
    Case("median-of-inf", lambda L, x: [x.median(), x[:1].median(), x[1:].nanmedian()], V([inf, -inf, nan, -inf]),
         dtypes=("float64",)),
    Case("median-empty-dim-raises", lambda L, x: [x.median(1), x.nanmedian(1)], V([[], []]), grad=False),
    Case("min-0-dim-complex-raises", lambda L, x: x.min(dim=-1), V(1.0, view=lambda t: t * 1j),
         grad=False, dtypes=("float32",)),
    Case("argmin-complex-raises", lambda L, x: x.argmin(dim=-1), V(1.0, view=lambda t: t * 1j),
         grad=False, dtypes=("float32",)),
    Case("bitwise-complex-raises", lambda L, x: x & (1 + 2j), V([1.0, 2.0]), grad=False, dtypes=("float32",)),
    Case("selu-celu-grad-at-nan", lambda L, x: [L.nn.functional.selu(x), L.nn.functional.celu(x, 0.5)],
         V([nan, 0.5, -1.0])),
    Case("elu-second-order-at-huge-x", lambda L, x: L.nn.functional.elu(x), V([1e300, 2.0, -1.0]),
         dtypes=("float64",), grad2=True),
    Case("cumsum-cumprod-0-dim-integer", lambda L, x: [x.cumsum(0), x.cumprod(-1), (x > 0).cumsum(0)],
         V(4, dtype="uint8"), dtypes=(None,)),
    Case("logit-bf16-dtype", lambda L, x: L.logit(x, eps=0.1).dtype,
         V([0.25, 1.5], dtype="float32", grad=False, view=lambda t: t.bfloat16()), dtypes=(None,)),
    Case("nanmean-integer-raises", lambda L, x: x.nanmean(), V([1, 2]), dtypes=(None,)),
    Case("median-bool-raises", lambda L, x: [x.median(), x.nanmedian(0)], V([True, False]), dtypes=(None,)),
    Case("index-fill-0-dim", lambda L, x: x.index_fill(0, L.tensor([0]), -2.0), V(1.5)),
    Case("lerp-end-dtype-raises", lambda L, x: x.lerp(L.ones(()), 0.5), V([1.0, 2.0]), dtypes=("float64",)),
    Case("lerp-integer-raises", lambda L, x: x.lerp(x, 0.5), V([1, 2]), dtypes=(None,)),
    Case("lerp-number-end-raises", lambda L, x: L.lerp(x, 2.0, 0.5), V([1.0, 2.0]), dtypes=("float32",)),
    Case("float-alpha-integer-result-raises", lambda L, x: L.sub(x, x, alpha=0.5), V([1, 5]), dtypes=(None,)),
    Case("bool-alpha-integer-result-raises", lambda L, x: L.add(x, x, alpha=True), V([1, 5]), dtypes=(None,)),
    Case("bool-add-int-alpha", lambda L, x: L.add(x, x, alpha=2), V([True, False]), dtypes=(None,)),
    Case("int-shifted-by-float-raises", lambda L, x: -3 >> x, V(1.75), grad=False, dtypes=("float32",)),
    Case("flip-movedim-0-dim", lambda L, x: [x.flip(0), x.flip(-1), x.movedim(0, -1)], V(2.5)),
]
for name, call in [("split", lambda x: x.split(1, 0)), ("chunk", lambda x: x.chunk(2, 0)),
                   ("narrow", lambda x: x.narrow(0, 0, 1)), ("unflatten", lambda x: x.unflatten(0, (1,))),
                   ("roll", lambda x: x.roll(1, 0))]:
    CASES.append(Case(f"{name}-0-dim-raises", lambda L, x, call=call: call(x), V(2.5), grad=False,
                      dtypes=("float32",)))


@pytest.mark.parametrize("case,dtype", params(CASES))
def test_against_torch(case, dtype):
    check(case, dtype)


def _write(lib, how, dtype, value):
    y = lib.zeros(2, dtype=getattr(lib, dtype))
    if how == "setitem":
        y[0] = value
    elif how == "fill_":
        y.fill_(value)
    elif how == "masked_fill":
        y = y.masked_fill(lib.tensor([True, False]), value)
    else:
        y = lib.full((2,), value, dtype=getattr(lib, dtype))
    return str(y.tolist())  # (nan == nan)


@pytest.mark.parametrize("how", ["setitem", "fill_", "masked_fill", "full"])
@pytest.mark.parametrize("dtype,value", [
    ("int64", nan), ("int64", inf), ("int32", -inf), ("uint8", 300), ("int32", 2 ** 40), ("uint8", -1),
    ("uint8", -255), ("uint8", -256), ("uint8", 1e10), ("uint8", 255.9), ("uint8", -0.5),
    ("int8", -128.9), ("float32", 1e300), ("complex64", 1e300)])
def test_a_number_written_into_a_tensor_converts_as_torch_checks_it(how, dtype, value):
    """Garbage (nan into int64 gave -2**63) or OverflowError where torch raises RuntimeError
    or wraps (uint8 takes -255..-1 modulo 256)."""
    try:
        expected = _write(torch, how, dtype, value)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="without overflow"):
            _write(ember, how, dtype, value)
        return
    assert _write(ember, how, dtype, value) == expected


@pytest.mark.parametrize("name", ["hardshrink", "softshrink"])
def test_piecewise_linear_first_gradient_stays_in_the_graph(name):
    """Under create_graph torch's first gradient requires grad (its derivative is zero), so a
    second autograd.grad works; ember's did not require grad and the second call raised.
    (hardsigmoid's second derivative raises in torch: autograd/test_par20_autograd.py.)"""
    firsts = []
    for lib in (torch, ember):
        x = lib.tensor([-4.0, -1.0, 0.25, 2.0], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(getattr(lib.nn.functional, name)(x).sum(), x, create_graph=True)
        firsts.append(g.requires_grad)
    assert firsts[1] == firsts[0] is True
    h, = ember.autograd.grad(g.sum(), x)
    assert h.tolist() == [0.0] * 4


def test_zero_dim_prod_gradient_is_the_incoming_gradient_and_zero_dim_mT_is_the_tensor():
    # session 11: a 0-d prod's gradient depended on x (so a second grad followed); torch's is g
    for lib in (torch, ember):
        x = lib.tensor(-2.25, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(x.prod(), [x], create_graph=True)
        assert g.item() == 1.0 and not g.requires_grad
        with pytest.warns(UserWarning, match="identity"):
            assert x.mT is x
        with pytest.warns(UserWarning) if lib is torch else contextlib.nullcontext():  # (degrees of freedom)
            assert x.var().grad_fn.name() == x.var(dim=0, correction=2).grad_fn.name() == "VarBackward0"


@pytest.mark.parametrize("call", ["L.tensor([3, 4], dtype=L.int32) // 2**40", "L.tensor([3, 4], dtype=L.int8).floor_divide_(256)",
                                  "L.tensor([3, 4], dtype=L.uint8) // 256", "L.round(L.tensor([2, 6], dtype=L.int8), decimals=1)",
                                  "L.nn.functional.relu6(L.tensor(0.75 - 0.25j))", "L.nn.functional.hardtanh(L.tensor([0.5j]))"])
def test_refused_where_torch_refuses(call):
    # session 11: an int divisor that wraps to 0 in the tensor's dtype, integer round(decimals=),
    # complex hardtanh/relu6 computed a value
    with pytest.raises(Exception) as want:
        eval(call, {"L": torch})
    with pytest.raises(type(want.value), match=str(want.value)[:12]):
        eval(call, {"L": ember})
