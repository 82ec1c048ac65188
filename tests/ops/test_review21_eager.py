"""REVIEW21: session 20's eager fast paths (int/slice indexing, view links, matmul, sum) and
the in-place view ops against torch 2.13: results, strides, ``_base``, version counters,
gradients and IndexError messages. Tests named ``*_fixed`` failed before their fix."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(21)
A = RNG.standard_normal((4, 5)).astype(np.float32)


def _pair(array=A, grad=False):
    return torch.tensor(array, requires_grad=grad), ember.tensor(array, requires_grad=grad)


def _same(got, want):
    assert tuple(got.shape) == tuple(want.shape)
    assert tuple(got.stride()) == tuple(want.stride()) and got.storage_offset() == want.storage_offset()
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert (got._base is None) == (want._base is None)
    assert got._version == want._version and got.requires_grad == want.requires_grad
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)


def _raises_same(fn, want_lib=torch, got_lib=ember, array=A):
    want_x, got_x = _pair(array)
    with pytest.raises(Exception) as want:
        fn(want_x, want_lib)
    with pytest.raises(type(want.value), match="^" + __import__("re").escape(str(want.value)) + "$"):
        fn(got_x, got_lib)


@pytest.mark.parametrize("index", [
    -1, -4, slice(-3, -1), slice(None, None, 3), slice(10, 20), slice(3, 1), (1, 2), (-1, slice(1, None, 2)),
    (Ellipsis, 1), None, (None, 1), True, (slice(None), None, -2),
])
def test_basic_indices_as_torch(index):
    want_x, got_x = _pair(grad=True)
    want, got = want_x[index], got_x[index]
    _same(got, want)
    g = RNG.standard_normal(tuple(want.shape)).astype(np.float32)
    want.backward(torch.tensor(g)), got.backward(ember.tensor(g))
    np.testing.assert_allclose(got_x.grad.numpy(), want_x.grad.numpy())


@pytest.mark.parametrize("view", [
    lambda x: x.t()[1], lambda x: x.t()[1:3], lambda x: x[0].expand(3, 5)[1], lambda x: x[:1].expand(3, 5)[1:],
    lambda x: x[1:][1:], lambda x: x[1:][:, 2], lambda x: x[1, 2][()], lambda x: x[::2].t()[-1],
])
def test_views_of_views_write_through(view):
    want_x, got_x = _pair()
    want, got = view(want_x), view(got_x)
    _same(got, want)
    assert got._base is got_x
    if not any(s == 0 for s in want.stride()):
        want.add_(1), got.add_(1)
        _same(got, want), _same(got_x, want_x)


@pytest.mark.parametrize("index", [4, -5, (1, 5), (0, 0, 0), (None, 0, 0, 0), (slice(None), None, 0, 0)])
def test_out_of_range_indices_fixed(index):
    """An index holding None whose ints and slices ran past the dims raised 'tuple index out
    of range' (torch: 'too many indices for tensor of dimension 2')."""
    _raises_same(lambda x, lib: x[index])


@pytest.mark.parametrize("index", [0, slice(None), slice(0, 0), (0,), (slice(None), 0), (None, 0), (Ellipsis, 0)])
def test_zero_dim_index_errors_fixed(index):
    """A 0-d tensor's slice raised 'invalid index of a 0-dim tensor' (torch: 'slice() cannot be
    applied to a 0-dim tensor.'), a tuple index the same (torch: 'too many indices for tensor of
    dimension 0'), and an index holding None past the dims 'tuple index out of range'."""
    _raises_same(lambda x, lib: x[index], array=np.float32(1.5))

    def write(x, lib):
        x[index] = 1.0
    _raises_same(write, array=np.float32(1.5))


def test_in_place_view_ops_count_versions_fixed():
    """squeeze_, unsqueeze_, t_, transpose_ and as_strided_ left the version counter as it was
    (torch counts each, so a saved output changed by one fails the backward)."""
    for lib in (torch, ember):
        t = lib.tensor(A[:1].copy())
        view = t[:]
        versions = []
        for step in (lambda: t.squeeze_(0), lambda: t.unsqueeze_(0), lambda: t.t_(), lambda: t.transpose_(0, 1),
                     lambda: t.as_strided_((5,), (1,))):
            step()
            versions.append(t._version)
        assert versions == [1, 2, 3, 4, 5] and view._version == 5
        x = lib.tensor(A[:1].copy(), requires_grad=True)
        e = x.exp()
        e.squeeze_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            e.sum().backward()


@pytest.mark.parametrize("shapes", [((4,), (4, 5)), ((4, 5), (5,)), ((5,), (5,)), ((2, 4, 5), (5,)),
                                    ((5,), (2, 5, 3)), ((4, 0), (0, 5))])
def test_matmul_results_fixed(shapes):
    """A vector times a matrix had the internal product as its _base and version 0 (torch
    squeezes its product in place: no _base, version 1)."""
    a, b = (RNG.standard_normal(s).astype(np.float32) for s in shapes)
    want = torch.tensor(a, requires_grad=True) @ torch.tensor(b)
    got_a = ember.tensor(a, requires_grad=True)
    got = got_a @ ember.tensor(b)
    _same(got, want)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__


@pytest.mark.parametrize("reduce", [lambda x: x.sum(), lambda x: x.t().sum(0), lambda x: x[:0].sum(),
                                    lambda x: (x > 0).sum(), lambda x: x.sum(-1, keepdim=True),
                                    lambda x: x[1, 2].sum(), lambda x: x[:, :0].sum(1)])
def test_sums_as_torch(reduce):
    want_x, got_x = _pair()
    _same(reduce(got_x), reduce(want_x))
