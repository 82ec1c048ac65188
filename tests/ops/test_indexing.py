"""Indexing against torch: basic, advanced and boolean ``__getitem__`` (gradients accumulate
over repeated indices), ``__setitem__`` (gradients reach both the base and the value), the
gather/scatter family, masks, ``nonzero`` and ``one_hot``; out-of-range and dtype errors."""
import pytest

from harness import B, Case, I, R, S, T, V, check, params


def _idx(values):
    return V(values, dtype="int64")


def _set(index, value_is_arg=True):
    """``base[index] = value`` on a non-leaf copy of ``x``; returns the base."""
    def fn(L, x, *rest):
        base = x * 1
        value = rest[0] if value_is_arg else 0.5
        idx = index(L, *rest[1:]) if callable(index) else index
        base[idx] = value
        return base
    return fn


GETITEM = [
    Case("getitem-int", lambda L, x: [x[0], x[-1], x[1, 2], x[-1, -1, -1]], R(2, 3, 4), grad2=True),
    Case("getitem-slice", lambda L, x: [x[1:], x[::2], x[:, 1:3], x[..., ::3], x[-2:, :-1]], R(3, 4)),
    Case("getitem-none-ellipsis", lambda L, x: [x[None], x[:, None], x[..., None, 1], x[...]], R(2, 3)),
    Case("getitem-0d", lambda L, x: [x[()], x[None], x[...]], R()),
    Case("getitem-transposed", lambda L, x: [x[0], x[:, 1], x[1:, ::2]], T(R(3, 4))),
    Case("getitem-stepped", lambda L, x: [x[1], x[::2]], S(R(3, 4))),
    Case("getitem-negative-step", lambda L, x: x[::-1], R(3)),
    Case("getitem-empty-slice", lambda L, x: [x[2:2], x[:, 5:]], R(3, 4)),
    Case("getitem-tensor", lambda L, x, i: x[i], R(5, 3), _idx([0, 2, 4, 2]), grad2=True),
    Case("getitem-repeated", lambda L, x, i: x[i], R(4), _idx([1, 1, 1, 3, -1])),
    Case("getitem-list", lambda L, x: [x[[0, 2, 0]], x[[1]], x[:, [0, 0, 1]]], R(3, 4)),
    Case("getitem-2d-index", lambda L, x, i: x[i], R(5, 2), _idx([[0, 1], [4, 4]])),
    Case("getitem-pair", lambda L, x, i, j: x[i, j], R(3, 4), _idx([0, 2, 2]), _idx([3, 0, 3])),
    Case("getitem-pair-broadcast", lambda L, x, i, j: x[i, j], R(3, 4), _idx([[0], [2]]), _idx([1, 3, 1])),
    Case("getitem-slice-tensor", lambda L, x, i: [x[:, i], x[1:, i], x[..., i]], R(3, 4), _idx([3, 0, 3])),
    Case("getitem-separated", lambda L, x, i, j: x[i, :, j], R(3, 4, 5), _idx([0, 2]), _idx([4, 1])),
    Case("getitem-adjacent-middle", lambda L, x, i, j: x[:, i, j], R(2, 3, 4), _idx([0, 2]), _idx([3, 1])),
    Case("getitem-int-and-tensor", lambda L, x, i: [x[1, i], x[i, 1]], R(3, 4), _idx([0, 2, 2])),
    Case("getitem-0d-tensor-index", lambda L, x, i: x[i], R(3, 4), _idx(1)),
    Case("getitem-int32-index", lambda L, x, i: x[i], R(4), I(3, low=0, high=4, dtype="int32")),
    Case("getitem-uint8-mask", lambda L, x, m: x[m], R(4), V([1, 0, 1, 1], dtype="uint8")),
    Case("getitem-empty-index", lambda L, x, i: x[i], R(3, 4), _idx([])),
    Case("getitem-mask", lambda L, x, m: x[m], R(3, 4), B(3, 4), grad2=True),
    Case("getitem-row-mask", lambda L, x, m: [x[m], x[m, 1:]], R(3, 4), V([True, False, True])),
    Case("getitem-col-mask", lambda L, x, m: x[:, m], R(3, 4), V([True, False, True, True])),
    Case("getitem-mask-list", lambda L, x: x[[True, False, True]], R(3, 2)),
    Case("getitem-range", lambda L, x: [x[range(2)], x[range(0)], x[range(1, 3), 1:], x[:, range(0, 4, 2)]], R(3, 4)),
    Case("getitem-mask-0d", lambda L, x: [x[True], x[False]], R(2)),
    Case("getitem-mask-empty", lambda L, x, m: x[m], R(0, 3), B(0, 3)),
    Case("getitem-int-tensor-values", lambda L, x, i: x[i], I(5), _idx([4, 0])),
    Case("getitem-bool-tensor-values", lambda L, x, i: x[i], B(5), _idx([4, 0])),
    Case("getitem-out-of-range", lambda L, x: x[3], R(3, 4)),
    Case("getitem-out-of-range-neg", lambda L, x: x[:, -5], R(3, 4)),
    Case("getitem-tensor-out-of-range", lambda L, x, i: x[i], R(3), _idx([0, 3])),
    Case("getitem-too-many", lambda L, x: x[0, 0, 0], R(3, 4)),
    Case("getitem-float-index", lambda L, x, i: x[i], R(3), V([0.0, 1.0])),
    Case("getitem-mask-shape-mismatch", lambda L, x, m: x[m], R(3, 4), B(4)),
    Case("getitem-0d-int", lambda L, x: x[0], R()),
    # a short list holding a sequence, tensor, slice, None or ... is a tuple of indices (torch warns)
    Case("getitem-list-as-tuple", lambda L, x, i: [x[[[0, 2], [1, 3]]], x[[i, i]], x[[0, slice(None)]],
                                                   x[[None, 1]], x[[(0, 2)]], x[[[0, 2]]]], R(3, 4), _idx([0, 2])),
]

SETITEM = [
    Case("setitem-list-as-tuple", _set([[0, 2], [1, 3]]), R(3, 4), R(2)),
    Case("setitem-range-and-tensor", _set(lambda L, i: (range(3), i)), R(3, 4), R(3), _idx([0, 3, 1])),
    Case("setitem-int", _set(1), R(3, 4), R(4)),
    Case("setitem-scalar", _set((0, 2), value_is_arg=False), R(3, 4)),
    Case("setitem-scalar-bcast", _set(slice(1, None), value_is_arg=False), R(3, 4)),
    Case("setitem-slice", _set((slice(1, None), slice(None, None, 2))), R(3, 4), R(2, 2)),
    Case("setitem-slice-bcast", _set((slice(None), 1)), R(3, 4), R(1)),
    Case("setitem-tensor", lambda L, x, v, i: _set(lambda L, i: i)(L, x, v, i), R(5, 3), R(2, 3), _idx([4, 1])),
    Case("setitem-tensor-bcast", lambda L, x, v, i: _set(lambda L, i: i)(L, x, v, i), R(5, 3), R(3), _idx([0, 2])),
    Case("setitem-mask", lambda L, x, v, m: _set(lambda L, m: m)(L, x, v, m), R(3, 4), R(), B(3, 4)),
    Case("setitem-mask-values", lambda L, x, m: _set(lambda L, m: m, value_is_arg=False)(L, x, m), R(3, 4), B(3, 4)),
    Case("setitem-pair", lambda L, x, v, i, j: _set(lambda L, i, j: (i, j))(L, x, v, i, j), R(3, 4), R(2),
         _idx([0, 2]), _idx([3, 1])),
    Case("setitem-0d", lambda L, x, v: _set(())(L, x, v), R(), R()),
    Case("setitem-ellipsis", _set(Ellipsis), R(2, 3), R(3)),
    Case("setitem-transposed", lambda L, x, v: _set(0)(L, x.t(), v), R(3, 4), R(3)),
    Case("setitem-int-value-into-float", lambda L, x, v: _set(0)(L, x, v), R(2, 3), I(3)),
    Case("setitem-float-into-int", lambda L, x: _set(0, value_is_arg=False)(L, x), I(2, 3), dtypes=(None,)),
    Case("setitem-shape-mismatch", _set(0), R(3, 4), R(3)),
    Case("setitem-out-of-range", _set(5), R(3, 4), R(4)),
    Case("setitem-leaf", lambda L, x: x.__setitem__(0, 1.0), R(3)),
    Case("setitem-value-only-grad", lambda L, x, v: _set(1)(L, x.detach(), v), R(3, 4), R(4)),
    Case("setitem-augmented", lambda L, x, v, i, m: _augmented(x, v, i, m), R(4, 3), R(3), _idx([0, 2]), B(4, 3)),
    Case("setitem-through-view", lambda L, x, v: _set_through_view(x, v), R(3, 4), R()),
]


def _augmented(x, v, i, m):
    base = x * 1
    base[i] += v
    base[:, 1] -= v[0]
    base[m] *= 2
    return base


def _set_through_view(x, v):
    base = x * 1
    base.view(-1)[5] = v
    base.t()[1:, 0] = v * 2
    return base

FAMILY = [
    Case("gather", lambda L, x, i: [L.gather(x, 1, i), x.gather(-1, i)], R(3, 4), I(3, 2, low=0, high=4),
         grad2=True),
    Case("gather-dim0", lambda L, x, i: x.gather(0, i), T(R(4, 3)), I(2, 4, low=0, high=3)),
    Case("gather-smaller", lambda L, x, i: x.gather(1, i), R(3, 4), I(2, 6, low=0, high=4)),
    Case("gather-empty", lambda L, x, i: x.gather(1, i), R(3, 4), I(3, 0, low=0, high=4)),
    Case("gather-out-of-range", lambda L, x, i: x.gather(1, i), R(3, 4), _idx([[4], [0], [0]])),
    Case("gather-int32-index", lambda L, x, i: x.gather(1, i), R(3, 4), I(3, 2, low=0, high=4, dtype="int32")),
    Case("gather-1d", lambda L, x, i: x.gather(0, i), R(5), _idx([4, 4, 0])),
    Case("gather-0d", lambda L, x, i: x.gather(0, i), R(), _idx(0)),
    Case("scatter", lambda L, x, s: [x.scatter(1, L.tensor([[2, 0], [1, 3], [0, 1]]), s)], R(3, 4), R(3, 2)),
    # torch's backward fails for a src larger than index ("ScatterBackward0 returned an invalid
    # gradient"); ember pads the gradient with zeros. Only the gradient of x is compared.
    Case("scatter-src-larger", lambda L, x, s: L.scatter(x, 0, L.tensor([[1, 0, 2]]), s), R(3, 3), R(2, 4, grad=False)),
    Case("scatter-value", lambda L, x: x.scatter(1, L.tensor([[2], [0], [1]]), 9.5), R(3, 4)),
    Case("scatter-inplace", lambda L, x, s: (x * 1).scatter_(0, L.tensor([[1, 0, 2, 1]]), s), R(3, 4), R(1, 4)),
    Case("scatter-reduce-add", lambda L, x, s: x.scatter(1, L.tensor([[0, 0], [1, 1]]), s, reduce="add"),
         R(2, 3), R(2, 2), grad=False),
    Case("scatter_add", lambda L, x, s: L.scatter_add(x, 1, L.tensor([[0, 0, 3], [1, 1, 1]]), s), R(2, 4), R(2, 3)),
    Case("scatter_add-inplace", lambda L, x, s: (x * 1).scatter_add_(0, L.tensor([[0, 0], [0, 1]]), s), R(2, 2), R(2, 2)),
    Case("scatter_add-src-larger", lambda L, x, s: x.scatter_add(1, L.tensor([[0, 0]]), s), R(2, 3), R(2, 4, grad=False)),
    Case("index_select", lambda L, x, i: [L.index_select(x, 0, i), x.index_select(1, i)], R(3, 4), _idx([2, 0, 2])),
    Case("index_select-transposed", lambda L, x, i: x.index_select(-1, i), T(R(4, 3)), _idx([1])),
    Case("index_select-empty", lambda L, x, i: x.index_select(0, i), R(3, 4), _idx([])),
    Case("index_select-2d-index", lambda L, x, i: x.index_select(0, i), R(3, 4), _idx([[0]])),
    Case("index_select-out-of-range", lambda L, x, i: x.index_select(0, i), R(3, 4), _idx([3])),
    Case("index_add", lambda L, x, i, s: [x.index_add(0, i, s), L.index_add(x, 0, i, s, alpha=-2)],
         R(3, 4), _idx([0, 2, 0]), R(3, 4)),
    Case("index_add-dim1", lambda L, x, i, s: x.index_add(1, i, s), R(2, 3), _idx([2, 2]), R(2, 2)),
    Case("index_add-inplace", lambda L, x, i, s: (x * 1).index_add_(0, i, s), R(3, 2), _idx([1, 1]), R(2, 2)),
    Case("index_put", lambda L, x, i, v: x.index_put((i,), v), R(4, 2), _idx([3, 0]), R(2, 2)),
    Case("index_put-accumulate", lambda L, x, i, v: x.index_put((i,), v, accumulate=True), R(4), _idx([1, 1, 2]), R(3)),
    Case("index_put_-accumulate", lambda L, x, i, j, v: (x * 1).index_put_((i, j), v, accumulate=True),
         R(3, 3), _idx([0, 0, 2]), _idx([1, 1, 1]), R(3)),
    Case("index_put_-bcast-value", lambda L, x, i, v: (x * 1).index_put_((i,), v), R(3, 3), _idx([0, 2]), R()),
    Case("index_put-mask", lambda L, x, m, v: x.index_put((m,), v), R(2, 3), B(2, 3), R()),
    Case("index_fill", lambda L, x, i: [x.index_fill(1, i, -1.0), (x * 1).index_fill_(0, i[:1], 2)], R(3, 4),
         _idx([0, 3])),
    Case("index_copy", lambda L, x, i, s: [x.index_copy(0, i, s), (x * 1).index_copy_(0, i, s)], R(3, 2),
         _idx([2, 0]), R(2, 2)),
    Case("masked_fill", lambda L, x, m: [x.masked_fill(m, 0.5), L.masked_fill(x, m, -2)], R(3, 4), B(3, 4)),
    Case("masked_fill-bcast", lambda L, x, m: x.masked_fill(m, 1.0), R(3, 4), B(4)),
    Case("masked_fill-tensor-value", lambda L, x, m, v: x.masked_fill(m, v), R(3, 4), B(3, 1), R()),
    Case("masked_fill-inplace", lambda L, x, m: (x * 1).masked_fill_(m, float("-inf")), R(3, 4), B(3, 4)),
    Case("masked_fill-int", lambda L, x, m: x.masked_fill(m, 7), I(3, 4), B(3, 4), dtypes=(None,)),
    Case("masked_fill-int-mask", lambda L, x, m: x.masked_fill(m, 1.0), R(3), I(3, low=0, high=2)),
    Case("masked_fill-nonscalar-value", lambda L, x, m, v: x.masked_fill(m, v), R(3), B(3), R(3)),
    Case("masked_fill-mask-bigger", lambda L, x, m: x.masked_fill(m, 1.0), R(4), B(3, 4)),
    Case("masked_fill_-mask-bigger", lambda L, x, m: (x * 1).masked_fill_(m, 1.0), R(4), B(3, 4)),
    Case("masked_fill-mask-mismatch", lambda L, x, m: x.masked_fill(m, 1.0), R(4), B(3)),
    Case("masked_select", lambda L, x, m: [x.masked_select(m), L.masked_select(x, m)], R(3, 4), B(3, 4)),
    Case("masked_select-bcast", lambda L, x, m: x.masked_select(m), R(3, 1), B(4)),
    Case("take_along_dim", lambda L, x, i: [L.take_along_dim(x, i, 1), L.take_along_dim(x, i.t()[:1].t(), dim=-1)],
         R(3, 4), I(3, 2, low=0, high=4)),
    Case("take_along_dim-flat", lambda L, x, i: L.take_along_dim(x, i), R(3, 4), _idx([11, 0, 5])),
    Case("take_along_dim-bcast", lambda L, x, i: x.take_along_dim(i, 1), R(3, 4), I(1, 2, low=0, high=4)),
    Case("take_along_dim-argsort", lambda L, x: L.take_along_dim(x, x.argsort(1), 1), R(3, 4)),
    Case("take", lambda L, x, i: L.take(x, i), T(R(4, 3)), _idx([[0, 11], [5, 5]])),
    Case("nonzero", lambda L, x: [L.nonzero(x), x.nonzero(as_tuple=True), L.argwhere(x)],
         I(3, 4, low=0, high=2), dtypes=(None,)),
    Case("nonzero-float", lambda L, x: L.nonzero(x), V([[0.0, 1.5], [float("nan"), -0.0]])),
    Case("nonzero-0d", lambda L, x: [L.nonzero(x), L.nonzero(x, as_tuple=True)], V(3.0)),
    Case("nonzero-0d-zero", lambda L, x: L.nonzero(x), V(0.0)),
    Case("nonzero-empty", lambda L, x: L.nonzero(x), R(0, 3)),
    Case("where-single", lambda L, x: L.where(x), B(2, 3), dtypes=(None,)),
    Case("one_hot", lambda L, x: [L.nn.functional.one_hot(x), L.nn.functional.one_hot(x, 6)],
         I(2, 3, low=0, high=4), dtypes=(None,)),
    Case("one_hot-0d", lambda L, x: L.nn.functional.one_hot(x, 3), V(2), dtypes=(None,)),
    Case("one_hot-empty", lambda L, x: L.nn.functional.one_hot(x, 3), I(0), dtypes=(None,)),
    Case("one_hot-empty-infer", lambda L, x: L.nn.functional.one_hot(x), I(0), dtypes=(None,)),
    Case("one_hot-too-small", lambda L, x: L.nn.functional.one_hot(x, 2), V([0, 2]), dtypes=(None,)),
    Case("one_hot-negative", lambda L, x: L.nn.functional.one_hot(x), V([0, -1]), dtypes=(None,)),
    Case("one_hot-float", lambda L, x: L.nn.functional.one_hot(x), V([0.0, 1.0])),
]


@pytest.mark.parametrize("case,dtype", params(GETITEM + SETITEM + FAMILY))
def test_indexing(case, dtype):
    check(case, dtype)
