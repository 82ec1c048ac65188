"""``Tensor.view(dtype)``: the same memory read as another dtype (issue 8; UINT found it
missing), against torch 2.13: shapes, strides, offsets, values, shared writes, autograd, and
torch's errors where the element sizes differ."""
import numpy as np
import pytest
import torch

import ember


def _outcomes(L):
    x = L.arange(6.0).reshape(2, 3)
    out = []
    for make in (lambda: x.view(L.int32), lambda: x.view(L.int16), lambda: x.view(L.uint8), lambda: x.t().view(L.int32),
                 lambda: L.zeros(2, 4)[:, 1:].view(L.int32), lambda: L.zeros(4, dtype=L.int16).view(L.float32),
                 lambda: L.zeros(()).view(L.int32), lambda: L.tensor([1.5, -2.0], dtype=L.float64).view(L.int64),
                 lambda: L.tensor([1.0, 2.0]).view(L.bfloat16), lambda: L.tensor([1, 2], dtype=L.int64).view(L.float64),
                 lambda: x.view(L.float64), lambda: x.t().view(L.int16), lambda: L.zeros(()).view(L.int16),
                 lambda: L.zeros(2, 4)[:, 1:].view(L.float64), lambda: L.zeros(2, 4)[:, 1:3].view(L.float64)):
        try:
            v = make()
            out.append((tuple(v.shape), v.stride(), v.storage_offset(), str(v.dtype).split(".")[-1],
                        v.float().tolist() if v.dtype.is_floating_point else v.tolist()))
        except RuntimeError as e:
            out.append(("RuntimeError", str(e)))
    a = L.zeros(4)
    a.view(L.int32)[0] = 1065353216  # 1.0's bits: the write reaches a
    y = L.ones(3, requires_grad=True)
    out += [a.tolist(), y.view(L.int32).requires_grad, y.view(L.int32).grad_fn is None]
    return out


def test_view_dtype_is_torchs():
    got, expected = _outcomes(ember), _outcomes(torch)
    for g, e in zip(got, expected):
        assert g == e or (isinstance(g, tuple) and np.allclose(np.nan_to_num(g[-1]), np.nan_to_num(e[-1]))
                          and g[:-1] == e[:-1]), (g, e)
    assert len(got) == len(expected)


def test_a_write_through_the_view_counts_as_a_write_of_the_tensor():
    w = ember.ones(3, requires_grad=True)
    x = ember.ones(3)
    y = (w * x).sum()
    x.view(ember.int32)[0] = 0  # x was saved for w's gradient
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
