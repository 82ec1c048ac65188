"""Shape and view ops against torch: values, gradients, non-contiguous and empty inputs, view
semantics (writes through a view reach the base) and the errors torch raises."""
import numpy as np
import pytest

import ember
from harness import B, Case, I, R, S, T, V, check, params


def _write_through(view):
    """Doubles ``base`` through ``view(base)`` in place and returns the base."""
    def fn(L, x):
        base = x.clone()
        view(base).mul_(2)
        return base
    return fn


CASES = [
    Case("view", lambda L, x: x.view(4, 6), R(2, 3, 4)),
    Case("view-infer", lambda L, x: [x.view(-1), x.view(2, -1), x.view((3, -1, 2))], R(2, 3, 4)),
    Case("view-0d", lambda L, x: [x.view(1), x.view(()), x.view(1, 1)], R()),
    Case("view-empty", lambda L, x: [x.view(3, 0), x.view(-1, 3, 0)], R(0, 3)),
    Case("view-empty-infer-ambiguous", lambda L, x: x.view(-1, 0), R(0, 3)),
    Case("view-transposed-error", lambda L, x: x.view(12), T(R(3, 4))),
    Case("view-transposed-ok", lambda L, x: x.view(4, 3, 1), T(R(3, 4))),
    Case("view-stepped-ok", lambda L, x: x.view(3, 2, 2), S(R(3, 4))),
    Case("view-bad-size", lambda L, x: x.view(5), R(2, 3)),
    Case("view-two-infer", lambda L, x: x.view(-1, -1), R(2, 3)),
    Case("view_as", lambda L, x, y: x.view_as(y), R(2, 6), R(3, 4)),
    Case("view-write-through", _write_through(lambda b: b.view(-1)), R(2, 3)),
    Case("reshape", lambda L, x: [L.reshape(x, (4, 6)), x.reshape(-1), x.reshape(6, -1)], R(2, 3, 4)),
    Case("reshape-transposed", lambda L, x: x.reshape(-1), T(R(3, 4))),
    Case("reshape-stepped", lambda L, x: x.reshape(2, 6), S(R(3, 4))),
    Case("reshape-0d", lambda L, x: [x.reshape(1, 1), x.reshape(-1)], R()),
    Case("reshape-to-0d", lambda L, x: x.reshape(()), R(1, 1)),
    Case("reshape-empty", lambda L, x: x.reshape(0, 2), R(2, 0, 3)),
    Case("reshape_as", lambda L, x, y: x.reshape_as(y), T(R(3, 4)), R(12)),
    Case("reshape-int", lambda L, x: x.reshape(3, 2), I(6), dtypes=(None,)),
    Case("flatten", lambda L, x: [x.flatten(), L.flatten(x, 1), x.flatten(0, 1), x.flatten(-2, -1)], R(2, 3, 4)),
    Case("flatten-0d", lambda L, x: x.flatten(), R()),
    Case("flatten-transposed", lambda L, x: x.flatten(), T(R(3, 4))),
    Case("flatten-empty", lambda L, x: x.flatten(1), R(2, 0, 3)),
    Case("flatten-bad", lambda L, x: x.flatten(2, 1), R(2, 3, 4)),
    Case("unflatten", lambda L, x: [x.unflatten(1, (2, 2)), L.unflatten(x, -1, (2, -1))], R(3, 4)),
    Case("unflatten-bad", lambda L, x: x.unflatten(1, (3, 2)), R(3, 4)),
    Case("squeeze", lambda L, x: [x.squeeze(), x.squeeze(0), x.squeeze(1), x.squeeze(-1), L.squeeze(x, (0, 2))],
         R(1, 3, 1)),
    Case("squeeze-0d", lambda L, x: [x.squeeze(), x.squeeze(0)], R()),
    Case("squeeze-empty", lambda L, x: x.squeeze(), R(1, 0)),
    Case("squeeze-out-of-range", lambda L, x: x.squeeze(3), R(1, 3, 1)),
    Case("unsqueeze", lambda L, x: [x.unsqueeze(0), x.unsqueeze(-1), L.unsqueeze(x, 1), x.unsqueeze(-2)], R(2, 3)),
    Case("unsqueeze-0d", lambda L, x: [x.unsqueeze(0), x.unsqueeze(-1)], R()),
    Case("unsqueeze-out-of-range", lambda L, x: x.unsqueeze(3), R(2)),
    Case("permute", lambda L, x: [x.permute(2, 0, 1), L.permute(x, (1, 0, 2)), x.permute(-1, -2, -3)], R(2, 3, 4)),
    Case("permute-bad-length", lambda L, x: x.permute(1, 0), R(2, 3, 4)),
    Case("permute-duplicate", lambda L, x: x.permute(0, 0, 1), R(2, 3, 4)),
    Case("transpose", lambda L, x: [x.transpose(0, 2), L.transpose(x, -1, 0), x.swapaxes(0, 1), x.swapdims(1, 2)],
         R(2, 3, 4)),
    Case("transpose-1d", lambda L, x: [x.transpose(0, 0), x.transpose(0, -1)], R(3)),
    Case("transpose-0d", lambda L, x: x.transpose(0, -1), R()),
    Case("t", lambda L, x: [x.t(), L.t(x)], T(R(3, 4))),
    Case("t-1d", lambda L, x: x.t(), R(3)),
    Case("t-0d", lambda L, x: x.t(), R()),
    Case("t-3d", lambda L, x: x.t(), R(2, 3, 4)),
    Case("T", lambda L, x: x.T, R(3, 4)),
    Case("mT", lambda L, x: [x.mT, x.mT.mT], R(2, 3, 4)),
    Case("mT-1d", lambda L, x: x.mT, R(3)),
    Case("transpose-write-through", _write_through(lambda b: b.t()[0]), R(3, 4)),
    Case("movedim", lambda L, x: [x.movedim(0, 2), L.movedim(x, (0, 1), (2, 0)), x.moveaxis(-1, 0)], R(2, 3, 4)),
    Case("expand", lambda L, x: [x.expand(2, 3, 4), x.expand(-1, 4), L.broadcast_to(x, (3, 4))], R(3, 1)),
    Case("expand-0d", lambda L, x: x.expand(2, 3), R()),
    Case("expand-empty", lambda L, x: x.expand(0, 3), R(1, 3)),
    Case("expand-bad", lambda L, x: x.expand(2, 4), R(3, 1)),
    Case("expand-fewer-dims", lambda L, x: x.expand(3), R(3, 1)),
    Case("expand_as", lambda L, x, y: x.expand_as(y), R(3, 1), R(2, 3, 4)),
    Case("repeat", lambda L, x: [x.repeat(2, 3), x.repeat(2, 1, 1), x.repeat(1, 0)], R(2, 3)),
    Case("repeat-0d", lambda L, x: x.repeat(3), R()),
    Case("repeat-transposed", lambda L, x: x.repeat(2, 2), T(R(3, 2))),
    Case("repeat-too-few", lambda L, x: x.repeat(2), R(2, 3)),
    Case("tile", lambda L, x: [x.tile((2,)), L.tile(x, (2, 1, 2)), x.tile((3, 1)), x.tile(2), x.tile(3, 1),
                               L.tile(x, dims=[2])], R(2, 3)),
    Case("cat", lambda L, x, y: [L.cat([x, y]), L.cat((x, y), dim=0)], R(2, 3), R(4, 3)),
    Case("cat-dim", lambda L, x, y, z: L.cat([x, y, z], -1), R(2, 3), T(R(4, 2)), S(R(2, 1))),
    Case("cat-empty-1d", lambda L, x, e: L.cat([x, e, x], 1), R(2, 3), R(0)),
    Case("cat-empty-2d", lambda L, x, e: L.cat([x, e]), R(2, 3), R(0, 3)),
    Case("cat-promote", lambda L, x, y: L.cat([x, y]), R(2), I(3)),
    Case("cat-float32-float64", lambda L, x, y: L.cat([x, y]), R(2, dtype="float32"), R(3, dtype="float64"),
         dtypes=(None,)),
    Case("cat-single", lambda L, x: L.cat([x]), R(2, 3)),
    Case("cat-mismatch", lambda L, x, y: L.cat([x, y]), R(2, 3), R(2, 4)),
    Case("cat-ndim-mismatch", lambda L, x, y: L.cat([x, y]), R(2, 3), R(3)),
    Case("cat-empty-list", lambda L: L.cat([])),
    Case("cat-0d", lambda L, x: L.cat([x, x]), R()),
    Case("concat", lambda L, x, y: [L.concat([x, y], 1), L.concatenate([x, y], 1)], R(2, 3), R(2, 1)),
    Case("stack", lambda L, x, y: [L.stack([x, y]), L.stack([x, y], 1), L.stack((x, y), -1)], R(2, 3), T(R(3, 2))),
    Case("stack-0d", lambda L, x, y: L.stack([x, y]), R(), R()),
    Case("stack-mismatch", lambda L, x, y: L.stack([x, y]), R(2, 3), R(3, 2)),
    Case("hstack-vstack", lambda L, x, y: [L.hstack([x, y]), L.vstack([x, y])], R(2, 3), R(2, 3)),
    Case("split", lambda L, x: [x.split(2), L.split(x, 3, 1), x.split([1, 3], dim=1), x.split(5)], R(3, 4)),
    Case("split-empty", lambda L, x: x.split(2), R(0, 3)),
    Case("split-bad-sizes", lambda L, x: x.split([1, 1], 1), R(3, 4)),
    Case("chunk", lambda L, x: [x.chunk(2), L.chunk(x, 3, 1), x.chunk(4, -1), x.chunk(5, 0)], R(5, 4)),
    Case("chunk-uneven", lambda L, x: [x.chunk(4), x.chunk(3)], R(6)),
    Case("chunk-empty", lambda L, x: x.chunk(2), R(0)),
    Case("tensor_split", lambda L, x: [x.tensor_split(3), L.tensor_split(x, [1, 4])], R(7)),
    Case("unbind", lambda L, x: [x.unbind(), L.unbind(x, 1), x.unbind(-1)], R(2, 3, 4)),
    Case("unbind-transposed", lambda L, x: x.unbind(1), T(R(3, 2))),
    Case("narrow", lambda L, x: [x.narrow(0, 1, 2), L.narrow(x, -1, 1, 3), x.narrow(1, -2, 2)], R(3, 4)),
    Case("narrow-empty", lambda L, x: x.narrow(0, 3, 0), R(3, 4)),
    Case("narrow-out-of-range", lambda L, x: x.narrow(0, 2, 2), R(3, 4)),
    Case("narrow-write-through", _write_through(lambda b: b.narrow(1, 1, 2)), R(3, 4)),
    Case("select", lambda L, x: [x.select(0, 1), L.select(x, 1, -1)], R(3, 4)),
    Case("select-out-of-range", lambda L, x: x.select(0, 3), R(3, 4)),
    Case("select-write-through", _write_through(lambda b: b.select(1, 2)), R(3, 4)),
    Case("flip", lambda L, x: [x.flip(0), L.flip(x, (0, 2)), x.flip(-1), L.fliplr(x), L.flipud(x)], R(2, 3, 4)),
    Case("flip-transposed", lambda L, x: x.flip(1), T(R(3, 4))),
    Case("flip-0d", lambda L, x: x.flip(()), R()),
    Case("roll", lambda L, x: [x.roll(1), x.roll(-2, 0), L.roll(x, (1, 2), (0, 1)), x.roll(7, -1)], R(3, 4)),
    Case("roll-empty", lambda L, x: x.roll(1, 0), R(0, 3)),
    Case("tril", lambda L, x: [x.tril(), L.tril(x, 1), x.tril(-1)], R(3, 4)),
    Case("triu", lambda L, x: [x.triu(), L.triu(x, 2), x.triu(-2)], T(R(4, 3))),
    Case("tril-batched", lambda L, x: [x.tril(), x.triu(1)], R(2, 3, 3)),
    Case("tril-inplace", lambda L, x: [x.clone().tril_(), x.clone().triu_(1)], R(3, 3)),
    Case("tril-1d", lambda L, x: x.tril(), R(3)),
    Case("tril-int", lambda L, x: x.tril(), I(3, 3), dtypes=(None,)),
    Case("tril-bool", lambda L, x: x.triu(), B(3, 3), dtypes=(None,)),
    Case("diagonal", lambda L, x: [x.diagonal(), L.diagonal(x, 1), x.diagonal(-1), x.diagonal(0, 1, 0)], R(3, 4)),
    Case("diagonal-batched", lambda L, x: x.diagonal(dim1=-2, dim2=-1), R(2, 3, 3)),
    Case("diag", lambda L, x, y: [L.diag(x), L.diag(y), L.diag(y, 1), L.diag(x, -1)], R(3, 3), R(3)),
    Case("diag_embed", lambda L, x: [L.diag_embed(x), L.diag_embed(x, 1)], R(2, 3)),
    Case("trace", lambda L, x: L.trace(x), R(3, 4)),
    Case("contiguous", lambda L, x: x.contiguous(), T(R(3, 4))),
    Case("clone", lambda L, x: [x.clone(), L.clone(x)], S(R(3, 4))),
    Case("repeat_interleave", lambda L, x: [x.repeat_interleave(2), x.repeat_interleave(2, 0),
                                            x.repeat_interleave(L.tensor([1, 0, 2]), dim=0)], R(3, 2)),
    Case("meshgrid", lambda L, x, y: [*L.meshgrid(x, y, indexing="ij"), *L.meshgrid(x, y, indexing="xy")],
         R(3), R(4)),
    Case("broadcast_tensors", lambda L, x, y: L.broadcast_tensors(x, y), R(3, 1), R(4)),
    Case("sum_to_size", lambda L, x: [x.sum_to_size(3, 1), x.sum_to_size(1, 4), x.sum_to_size(4)], R(3, 4)),
    Case("unfold", lambda L, x: [x.unfold(1, 2, 1), x.unfold(-1, 3, 2), x.unfold(0, 3, 1), x.unfold(1, 0, 3)],
         R(3, 5), grad2=True),
    Case("unfold-views", lambda L, x: [x.unfold(0, 2, 2), x.unfold(1, 1, 1).unfold(0, 2, 1)], T(R(5, 3))),
    Case("unfold-0d-empty", lambda L, x, e: [x.unfold(0, 1, 1), x.unfold(0, 0, 1), e.unfold(1, 2, 1)],
         R(), R(0, 4)),
    Case("unfold-write-through", _write_through(lambda v: v.unfold(1, 2, 2)), R(2, 4)),
    Case("unfold-too-big", lambda L, x: x.unfold(0, 4, 1), R(3)),
    Case("unfold-bad-step", lambda L, x: x.unfold(0, 2, 0), R(3)),
    Case("unfold-negative-size", lambda L, x: x.unfold(0, -1, 1), R(3)),
    Case("unfold-bad-dim", lambda L, x: x.unfold(2, 1, 1), R(3, 2)),
    Case("int-views", lambda L, x: [x.t(), x.view(-1), x.flip(0), x.expand(2, 3, 4), x.unbind(1)], I(3, 4),
         dtypes=(None,)),
]


@pytest.mark.parametrize("case,dtype", params(CASES))
def test_shape(case, dtype):
    check(case, dtype)


def test_views_share_storage():
    x = ember.arange(12.0).reshape(3, 4).clone()
    for v in (x.view(4, 3), x.t(), x[1], x[:, 1:3], x.narrow(0, 1, 1), x.unsqueeze(0), x.expand(2, 3, 4),
              x.permute(1, 0), x.diagonal(), x.unbind(0)[2], x.split(2)[1], x.unfold(1, 2, 1)):
        assert v._base is x, v
        assert v._versions is x._versions
    y = x.t()
    y[0, 1] = 100.0
    assert x[1, 0].item() == 100.0
    assert np.shares_memory(x.reshape(-1)._data, x._data)
    for c in (x.flip(0), x.clone(), x.roll(1, 0), x.repeat(1, 1), x.t().reshape(-1)):
        assert not np.shares_memory(c._data, x._data)
