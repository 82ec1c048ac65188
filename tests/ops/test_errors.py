"""Errors against torch: the same exception class and the same message, which names the
offending shapes, dtypes or arguments."""
import pytest
import torch

import ember


def _raises(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return info.value


def _x(L, *shape, dtype=None):
    return L.ones(*shape, dtype=dtype)


def _inplace_leaf(L):
    x = L.ones(3, requires_grad=True)
    x.add_(1)


def _inplace_view_of_leaf(L):
    x = L.ones(3, requires_grad=True)
    x[0].mul_(2)


def _backward_twice(L):
    x = L.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _modified_saved(L):
    x = L.ones(3, requires_grad=True)
    y = x.exp()
    z = y * 2
    y.add_(1)
    z.sum().backward()
    y.sum().backward()


def _setitem_mismatch(L):
    x = _x(L, 3, 4)
    x[0] = _x(L, 3)


CASES = {
    "matmul-2d": lambda L: _x(L, 2, 3) @ _x(L, 4, 5),
    "matmul-1d-2d": lambda L: _x(L, 3) @ _x(L, 4, 5),
    "matmul-2d-1d": lambda L: _x(L, 2, 3) @ _x(L, 4),
    "matmul-1d": lambda L: _x(L, 3) @ _x(L, 4),
    "matmul-batched": lambda L: _x(L, 2, 2, 3) @ _x(L, 2, 4, 5),
    "matmul-batch-broadcast": lambda L: _x(L, 2, 2, 3) @ _x(L, 3, 3, 5),
    "matmul-0d": lambda L: _x(L) @ _x(L, 3),
    "matmul-dtype": lambda L: _x(L, 2, 3) @ _x(L, 3, 2, dtype=L.float64),
    "mm-1d": lambda L: L.mm(_x(L, 3), _x(L, 3, 2)),
    "mm-shape": lambda L: L.mm(_x(L, 2, 3), _x(L, 2, 3)),
    "bmm-2d": lambda L: L.bmm(_x(L, 2, 3), _x(L, 3, 2)),
    "bmm-batch": lambda L: L.bmm(_x(L, 2, 2, 3), _x(L, 3, 3, 2)),
    "dot-2d": lambda L: L.dot(_x(L, 2, 2), _x(L, 2, 2)),
    "add-broadcast": lambda L: _x(L, 2, 3) + _x(L, 4),
    "mul-broadcast": lambda L: _x(L, 2, 3) * _x(L, 2, 4),
    "sub-broadcast-3d": lambda L: _x(L, 5, 2, 3) - _x(L, 4, 1, 3),
    "div-broadcast": lambda L: L.div(_x(L, 3), _x(L, 2)),
    "eq-broadcast": lambda L: _x(L, 3) == _x(L, 2),
    "maximum-broadcast": lambda L: L.maximum(_x(L, 3, 1), _x(L, 2, 2)),
    "where-broadcast": lambda L: L.where(_x(L, 3, dtype=L.bool), _x(L, 2), _x(L, 3)),
    "atan2-broadcast": lambda L: L.atan2(_x(L, 3), _x(L, 2)),
    "inplace-broadcast": lambda L: _x(L, 3).add_(_x(L, 2, 3)),
    "inplace-cast": lambda L: _x(L, 3, dtype=L.int64).add_(_x(L, 3)),
    "inplace-cast-div": lambda L: _x(L, 3, dtype=L.int64).div_(2),
    "requires-grad-int": lambda L: _x(L, 3, dtype=L.int64).requires_grad_(),
    "requires-grad-int-factory": lambda L: L.zeros(3, dtype=L.int64, requires_grad=True),
    "requires-grad-nonleaf-off": lambda L: (_x(L, 3).requires_grad_() * 2).requires_grad_(False),
    "inplace-leaf": _inplace_leaf,
    "inplace-view-of-leaf": _inplace_view_of_leaf,
    "backward-twice": _backward_twice,
    "backward-modified": _modified_saved,
    "backward-nonscalar": lambda L: (_x(L, 3).requires_grad_() * 2).backward(),
    "backward-no-grad": lambda L: _x(L, 3).sum().backward(),
    "index-out-of-range": lambda L: _x(L, 3)[5],
    "index-out-of-range-dim1": lambda L: _x(L, 3, 2)[:, 2],
    "index-negative-out-of-range": lambda L: _x(L, 3)[-4],
    "index-tensor-out-of-range": lambda L: _x(L, 3)[L.tensor([0, 3])],
    "index-too-many": lambda L: _x(L, 3)[0, 0],
    "index-float": lambda L: _x(L, 3)[L.tensor([0.0])],
    "setitem-out-of-range": lambda L: _x(L, 3).__setitem__(3, 1.0),
    "setitem-shape": _setitem_mismatch,
    "view-noncontiguous": lambda L: _x(L, 3, 4).t().view(12),
    "view-size": lambda L: _x(L, 2, 3).view(5),
    "reshape-size": lambda L: _x(L, 2, 3).reshape(4, -1),
    "view-two-infer": lambda L: _x(L, 2, 3).view(-1, -1),
    "dim-out-of-range": lambda L: _x(L, 2, 3).sum(2),
    "dim-out-of-range-neg": lambda L: _x(L, 2, 3).softmax(-3),
    "squeeze-dim": lambda L: _x(L, 2, 3).squeeze(2),
    "transpose-dim": lambda L: _x(L, 2, 3).transpose(0, 2),
    "expand": lambda L: _x(L, 3, 1).expand(2, 4),
    "expand-fewer": lambda L: _x(L, 3, 1).expand(3),
    "cat-sizes": lambda L: L.cat([_x(L, 2, 3), _x(L, 2, 4)]),
    "cat-ndim": lambda L: L.cat([_x(L, 2, 3), _x(L, 3)]),
    "cat-0d": lambda L: L.cat([_x(L), _x(L)]),
    "stack-sizes": lambda L: L.stack([_x(L, 2, 3), _x(L, 3, 2)]),
    "permute-length": lambda L: _x(L, 2, 3, 4).permute(1, 0),
    "t-3d": lambda L: _x(L, 2, 3, 4).t(),
    "mean-int": lambda L: _x(L, 3, dtype=L.int64).mean(),
    "item-many": lambda L: _x(L, 2).item(),
    "bool-many": lambda L: bool(_x(L, 2)),
    "sub-bool": lambda L: _x(L, 2, dtype=L.bool) - _x(L, 2, dtype=L.bool),
    "sub-bool-scalar": lambda L: _x(L, 2, dtype=L.bool) - 1,
    "neg-bool": lambda L: -_x(L, 2, dtype=L.bool),
    "div-mode": lambda L: L.div(_x(L, 2), 2, rounding_mode="round"),
    "floor-divide-int-zero": lambda L: _x(L, 2, dtype=L.int64) // 0,
    "clamp-none": lambda L: L.clamp(_x(L, 2)),
    "topk-k": lambda L: _x(L, 3).topk(4),
    "narrow": lambda L: _x(L, 3).narrow(0, 2, 2),
    "select": lambda L: _x(L, 3, 2).select(0, 3),
    "gather-ndim": lambda L: _x(L, 3, 2).gather(1, L.tensor([0])),
    "gather-dtype": lambda L: _x(L, 3, 2).gather(1, L.tensor([[0.0]])),
    "gather-out-of-range": lambda L: _x(L, 3, 2).gather(1, L.tensor([[2]])),
    "index_select-dtype": lambda L: _x(L, 3).index_select(0, L.tensor([0.0])),
    "masked_fill-mask-dtype": lambda L: _x(L, 3).masked_fill(L.tensor([1, 0, 1]), 0.0),
    "masked_fill-value-dim": lambda L: _x(L, 3).masked_fill(L.tensor([True, False, True]), _x(L, 3)),
    "one_hot-dtype": lambda L: L.nn.functional.one_hot(L.tensor([0.0])),
    "one_hot-negative": lambda L: L.nn.functional.one_hot(L.tensor([-1])),
    "one_hot-classes": lambda L: L.nn.functional.one_hot(L.tensor([3]), 3),
    "amax-empty": lambda L: _x(L, 0).amax(),
    "max-empty-dim": lambda L: _x(L, 0, 2).max(0),
    "argmax-bool": lambda L: _x(L, 2, dtype=L.bool).argmax(),
    "vector_norm-int": lambda L: L.linalg.vector_norm(_x(L, 2, dtype=L.int64)),
    "vector_norm-empty-inf": lambda L: L.linalg.vector_norm(_x(L, 0), float("inf")),
    "softmax-int": lambda L: _x(L, 2, dtype=L.int64).softmax(0),
    "abs-bool": lambda L: _x(L, 2, dtype=L.bool).abs(),
    "bitwise-float": lambda L: _x(L, 2) & _x(L, 2),
    "frac-int": lambda L: _x(L, 2, dtype=L.int64).frac(),
    "pow-int-negative": lambda L: _x(L, 2, dtype=L.int64) ** -1,
    "where-cond-dtype": lambda L: L.where(_x(L, 2), _x(L, 2), _x(L, 2)),
    "arange-step": lambda L: L.arange(0, 5, 0),
    "arange-sign": lambda L: L.arange(0, 5, -1),
    "randint-range": lambda L: L.randint(3, 3, (2,)),
    "zeros-negative": lambda L: L.zeros(2, -1),
    "tensor-overflow": lambda L: L.tensor([300], dtype=L.uint8),
    "tensor-ragged": lambda L: L.tensor([[1, 2], [3]]),
    "numpy-requires-grad": lambda L: _x(L, 2).requires_grad_().numpy(),
    "len-0d": lambda L: len(_x(L)),
    "iter-0d": lambda L: iter(_x(L)),
    "cuda": lambda L: _x(L, 2).cuda(),
}

# ember raises torch's exception class here, but words the message differently.
MESSAGE_DIFFERS = {
    "matmul-batched": "torch names the expanded batch2 sizes",
    "matmul-batch-broadcast": "torch names the expanded batch2 sizes",
    "tensor-ragged": "torch names the offending sequence length and dimension",
    "index-float": "torch's message lists the types of every index",
    "cuda": "ember has no CUDA build to name",
    "backward-modified": "torch names its own node (ExpBackward0 output)",
}


@pytest.mark.parametrize("name", CASES)
def test_error(name):
    expected = _raises(CASES[name], torch)
    got = _raises(CASES[name], ember)
    assert type(got) is type(expected), f"{type(got).__name__}: {got} != {type(expected).__name__}: {expected}"
    if name not in MESSAGE_DIFFERS:
        assert str(got).replace("ember.", "torch.") == str(expected), f"\n  ember: {got}\n  torch: {expected}"
