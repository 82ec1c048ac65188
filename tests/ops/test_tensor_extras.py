"""Tensor methods older and hand-written programs call (``ember/_tensor_extras.py``), and
``torch.pi``/``e``/``inf``/``nan``/``newaxis``, against torch 2.13: values, dtypes, shapes,
error classes and the nodes of in-place writes. Each was an AttributeError in ember."""
import math

import pytest
import torch

import ember

CALLS = {
    "new-sizes": lambda L, x: x.new(2, 3).shape, "new-size": lambda L, x: x.new(L.Size([2])).shape,
    "new-empty": lambda L, x: x.new(), "new-data": lambda L, x: x.new([1, 2]),
    "new-data-truncates": lambda L, x: x.long().new([1.5, 2]), "new-tuple-is-data": lambda L, x: x.new((2, 3)),
    "new-dtype": lambda L, x: x.new(3).dtype, "new-tensor": lambda L, x: x.new(L.tensor([1.0, 2.0])),
    "new-device": lambda L, x: x.new(2, device="cpu").shape,
    "new-other-dtype": lambda L, x: x.new(L.tensor([1.0], dtype=L.float64)),
    "new-number": lambda L, x: x.new(2.5), "new-dtype-keyword": lambda L, x: x.new([1], dtype=L.int64),
    "fill_diagonal_-wide": lambda L, x: L.zeros(3, 5).fill_diagonal_(1),
    "fill_diagonal_-tall": lambda L, x: L.zeros(7, 3).fill_diagonal_(2),
    "fill_diagonal_-wrap": lambda L, x: [L.zeros(7, 3).fill_diagonal_(2, wrap=True),
                                         L.zeros(5, 3).fill_diagonal_(1, wrap=True),
                                         L.zeros(4, 3).fill_diagonal_(1, wrap=True)],
    "fill_diagonal_-3d": lambda L, x: L.zeros(2, 2, 2).fill_diagonal_(1),
    "fill_diagonal_-views": lambda L, x: [L.zeros(4, 4)[:, 1:].fill_diagonal_(3), L.zeros(4, 2).t().fill_diagonal_(3)],
    "fill_diagonal_-int-empty": lambda L, x: [L.zeros(3, 3, dtype=L.long).fill_diagonal_(1.7), L.zeros(0, 3).fill_diagonal_(1)],
    "fill_diagonal_-unequal": lambda L, x: L.zeros(2, 3, 2).fill_diagonal_(1),
    "fill_diagonal_-1d": lambda L, x: L.zeros(3).fill_diagonal_(1),
    "is_nonzero": lambda L, x: [L.tensor([0.0]).is_nonzero(), L.tensor(3).is_nonzero()],
    "is_nonzero-empty": lambda L, x: L.tensor([]).is_nonzero(),
    "is_nonzero-several": lambda L, x: L.tensor([1, 2]).is_nonzero(),
    "is_signed": lambda L, x: [x.is_signed(), x.long().is_signed(), x.to(L.uint8).is_signed(), x.bool().is_signed()],
    "is_same_size": lambda L, x: [x.is_same_size(L.ones(2, 3)), x.is_same_size(L.ones(3, 2))],
    "is_cpu": lambda L, x: [x.is_cpu, L.empty(2, device="meta").is_cpu],
    "transpose_": lambda L, x: [x.clone().transpose_(0, 1), x.clone().swapaxes_(0, 1).shape, x.clone().swapdims_(1, 0).stride()],
    "in-place-aliases": lambda L, x: [x.clone().greater_(2), x.clone().greater_equal_(2), x.clone().less_(2),
                                      x.clone().less_equal_(2), x.clone().not_equal_(2),
                                      L.tensor([1, 0]).logical_xor_(L.tensor([1, 1])), L.tensor([1, 0]).bitwise_not_(),
                                      (x - 3).absolute_(), x.clone().arctan2_(x.flip(0))],
    "constants": lambda L, x: [L.pi, L.e, L.inf, L.nan, L.newaxis, x[:, L.newaxis].shape],
}


def _outcome(L, name):
    try:
        out = CALLS[name](L, L.arange(6.0).view(2, 3))
    except Exception as error:
        return type(error).__name__
    return repr(out).replace("torch.", "").replace("ember.", "")


@pytest.mark.parametrize("name", list(CALLS))
def test_equal_torchs(name):
    got, expected = _outcome(ember, name), _outcome(torch, name)
    assert got == expected or (math.isnan(ember.nan) and got.replace("nan", "") == expected.replace("nan", ""))


@pytest.mark.parametrize("method", ["fill_diagonal_", "transpose_"])
def test_in_place_writes_record_torchs_nodes_and_gradients(method):
    results = []
    for L in (torch, ember):
        x = L.arange(9.0).view(3, 3).requires_grad_()
        y = x * 2
        y.fill_diagonal_(5) if method == "fill_diagonal_" else y.transpose_(0, 1)
        (y * L.arange(9.0).view(3, 3)).sum().backward()
        results.append([y.grad_fn.name().split("::")[-1], y.tolist(), x.grad.tolist()])
    assert results[1] == results[0]


def test_set_default_tensor_type_sets_the_default_dtype_as_torchs():
    def run(L):
        out = []
        for t in ["torch.DoubleTensor", L.HalfTensor, "torch.cuda.FloatTensor", "torch.LongTensor", L.LongTensor,
                  "float", L.float64, 3, "torch.Foo", L.FloatTensor]:
            try:
                L.set_default_tensor_type(t)
                out.append(str(L.ones(1).dtype).split(".")[-1])
            except Exception as error:
                out.append(type(error).__name__ + str(error).replace("ember", "torch"))
        return out
    with pytest.warns(UserWarning, match="set_default_tensor_type"):
        ember._ops.args.WARNED_ONCE.discard(ember._legacy.SET_DEFAULT_TENSOR_TYPE_DEPRECATED)
        got = run(ember)
    assert got == run(torch)
    assert ember.get_default_dtype() is ember.float32


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int64", "float32"), ("float16", "bfloat16"),
                                    ("uint8", "int8"), ("bool", "int16"), ("complex64", "complex128")])
def test_new_of_a_tensor_of_another_dtype_says_what_torch_says(dtypes):
    def message(L):
        with pytest.raises(TypeError) as info:
            L.zeros(1, dtype=getattr(L, dtypes[0])).new(L.zeros(1, dtype=getattr(L, dtypes[1])))
        return str(info.value)
    assert message(ember) == message(torch)


TYPE_CALLS = {
    "legacy-class": lambda L, x: x.type(L.LongTensor), "legacy-double": lambda L, x: x.type(L.DoubleTensor),
    "legacy-bool": lambda L, x: x.type(L.BoolTensor), "legacy-int-view": lambda L, x: x.t().type(L.IntTensor),
    "Tensor-is-default": lambda L, x: x.double().type(L.Tensor), "name": lambda L, x: x.type("torch.ByteTensor"),
    "same-is-self": lambda L, x: [x.type(L.FloatTensor) is x, x.type(L.float32) is x, x.type("torch.FloatTensor") is x],
    "grad": lambda L, x: type(x.detach().requires_grad_().type(L.DoubleTensor).grad_fn).__name__,
    "module": lambda L, x: L.nn.Linear(2, 2).type(L.DoubleTensor).weight.dtype,
    "not-a-tensor-type": lambda L, x: x.type(L.nn.Linear), "number": lambda L, x: x.type(5),
}


@pytest.mark.parametrize("name", TYPE_CALLS)
def test_type_takes_legacy_classes_as_torch(name):
    # old programs: x.type(torch.FloatTensor), torch.unsqueeze(...).type(torch.LongTensor)
    outs = []
    for L in (torch, ember):
        x = L.tensor([[0.5, -1.5, 2.0], [3.0, 0.0, -0.25]])
        try:
            outs.append(TYPE_CALLS[name](L, x))
        except (TypeError, ValueError) as error:
            outs.append((type(error), str(error).replace("torch.nn.modules", "").replace("ember.nn.modules", "")))
    e, t = outs[1], outs[0]
    if isinstance(t, torch.Tensor):
        assert str(e.dtype) == str(t.dtype) and e.tolist() == t.tolist()
    else:
        assert str(e) == str(t)
