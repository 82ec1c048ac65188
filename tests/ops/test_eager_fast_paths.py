"""The dispatch shortcuts of session 20's eager-overhead work against torch 2.13: ``matmul``'s
shape checks on plain tuples (batch dims broadcast only when both operands have them),
``x[int]``/``x[slice]`` past the general index walk, ``sum`` without ``dtype``/``out``, and
view ops linked by their NumPy base (``_backend.is_view_of``): the same shapes, strides,
errors, view links and gradients as the general paths and as torch."""
import numpy as np
import pytest
import torch

import ember


def _matmul_outcome(L, a, b):
    try:
        out = L.tensor(a) @ L.tensor(b)
        return tuple(out.shape), np.round(out.numpy(), 4).tolist()
    except RuntimeError as e:
        return "RuntimeError", str(e)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 5)),
                                    ((2, 3, 4), (3, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((6, 2, 3, 4), (5, 4, 2)),
                                    ((3, 4), (5, 6)), ((4,), (5,)), ((3, 4), (5,)), ((2, 3, 4), (2, 5, 6)),
                                    ((2, 3, 4), (5,)), ((4,), (2, 5, 3))])
def test_matmul_shapes_and_errors_equal_torch(shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    assert _matmul_outcome(ember, a, b) == _matmul_outcome(torch, a, b)


def _index_outcome(L, index):
    x = L.arange(24.0).reshape(4, 6).requires_grad_()
    try:
        v = x[index]
    except (IndexError, ValueError) as e:
        return type(e).__name__, str(e)
    v.sum().backward()
    return (tuple(v.shape), v.stride(), v.storage_offset(), type(v.grad_fn).__name__,
            v._base is x, x.grad.tolist())


@pytest.mark.parametrize("index", [1, -1, 4, -5, slice(1, None), slice(None, None, 2), slice(3, 1),
                                   slice(-2, None), slice(None, None, -1), True, (1, slice(None))])
def test_int_and_slice_indices_equal_torch(index):
    assert _index_outcome(ember, index) == _index_outcome(torch, index)


def test_a_view_of_a_view_is_linked_and_a_copying_reshape_is_not():
    for L in (ember, torch):
        x = L.arange(12.0).reshape(3, 4).clone()
        v = x[1:][:, 1:]  # a view of a view: its base is x
        assert v._base is x
        copy = x.t().reshape(-1)  # the strides forbid a view
        assert copy._base is None
        flat = x[1:].reshape(-1)  # a view of a view, reshaped in place
        assert flat._base is x
        flat[0] = 100.0
        assert x[1, 0].item() == 100.0
        empty = x[:0].view(0, 4)
        assert empty._base is x


@pytest.mark.parametrize("call", [lambda L, x: x.sum(), lambda L, x: x.sum(0), lambda L, x: x.sum((0, 1), keepdim=True),
                                  lambda L, x: x.sum(dtype=L.float64), lambda L, x: L.sum(x, -1),
                                  lambda L, x: x.int().sum(), lambda L, x: x.bool().sum(1)])
def test_sum_paths_equal_torch(call):
    data = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    e, t = call(ember, ember.tensor(data)), call(torch, torch.tensor(data))
    assert (tuple(e.shape), str(e.dtype).split(".")[-1], e.tolist()) == \
        (tuple(t.shape), str(t.dtype).split(".")[-1], t.tolist())
    out_e, out_t = ember.empty(0), torch.empty(0)
    ember.sum(ember.tensor(data), 0, out=out_e)
    torch.sum(torch.tensor(data), 0, out=out_t)
    assert out_e.tolist() == out_t.tolist()
