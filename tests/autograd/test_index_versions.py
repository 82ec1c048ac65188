"""An index tensor a backward reads (``x[idx]``, gather, scatter, index_put, embedding ...)
written in place before the backward: torch raises its "modified by an inplace operation"
RuntimeError, naming the tensor and its versions, where a backward reading the new values would
send the gradient elsewhere. Compared with real torch: the same cases raise, the same message,
and the others give the same gradient."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = {
    "getitem": lambda lib, x, i: x[i],
    "getitem of a view": lambda lib, x, i: x[i.view(3)],
    "getitem of a copy": lambda lib, x, i: x[1, i % 3],
    "boolean mask": lambda lib, x, i: x[x > 0],
    "index_select": lambda lib, x, i: lib.index_select(x, 0, i),
    "take": lambda lib, x, i: lib.take(x, i),
    "gather": lambda lib, x, i: lib.gather(x, 0, i.view(1, 3)),
    "scatter": lambda lib, x, i: x.scatter(0, i.view(1, 3), 1.0),
    "scatter_add into x": lambda lib, x, i: x.scatter_add(0, i.view(1, 3), lib.ones(1, 3)),
    "scatter_add of x": lambda lib, x, i: lib.zeros(5, 3).scatter_add(0, i.view(1, 3), x[:1] * 2),
    "scatter_reduce": lambda lib, x, i: x.scatter_reduce(0, i.view(1, 3), x[:1], "sum"),
    "index_add into x": lambda lib, x, i: x.index_add(0, i, lib.ones(3, 3)),
    "index_add of x": lambda lib, x, i: lib.zeros(5, 3).index_add(0, i, x[:3]),
    "index_fill": lambda lib, x, i: x.index_fill(0, i, 0.5),
    "index_put": lambda lib, x, i: x.index_put((i,), lib.ones(3)),
    "index_put accumulate": lambda lib, x, i: x.index_put((i,), lib.ones(3), accumulate=True),
    "embedding": lambda lib, x, i: lib.nn.functional.embedding(i, x),
    "put": lambda lib, x, i: x.put(i, lib.ones(3)),
    "setitem": lambda lib, x, i: _set(x * 1, i, 0.5),
    "setitem of a tensor": lambda lib, x, i: _set(x * 1, i, x[0] * 2),
    "setitem after an integer": lambda lib, x, i: _set(x * 1, (i, 1), x[0] * 2),
}


def _set(y, index, value):
    y[index] = value
    return y


def _run(lib, case):
    x = lib.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3), requires_grad=True)
    idx = lib.tensor([0, 2, 2])
    y = CASES[case](lib, x, idx)
    idx.add_(1)
    try:
        (y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
    except RuntimeError as e:
        return str(e)
    return x.grad.numpy()


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_index_written_in_place_before_the_backward_raises_as_torch(case):
    got, want = _run(ember, case), _run(torch, case)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)


def test_an_index_written_after_the_backward_is_fine():
    x, idx = ember.ones(4, requires_grad=True), ember.tensor([1, 1, 3])
    x[idx].sum().backward()
    idx.zero_()
    assert x.grad.tolist() == [0.0, 2.0, 0.0, 1.0]
