"""``gather`` and the scatters with 0-d operands and with an index larger than ``src``,
against torch 2.13. The transforms tutorial's one-hot target
(``zeros(10).scatter_(0, tensor(y), value=1)``, pytorch/tutorials
``beginner_source/basics/transforms_tutorial.py``) raised IndexError in ember; an index larger
than ``src`` was filled by broadcasting ``src`` where torch raises."""
import pytest
import torch

import ember


def _calls(L):
    t = L.tensor
    return {
        "one-hot-target": lambda: L.zeros(10, dtype=L.float).scatter_(0, t(3), value=1),
        "scatter-0d-index-number": lambda: L.zeros(5).scatter(0, t(3), 2.5),
        "scatter-0d-index-0d-src": lambda: L.zeros(5).scatter(0, t(3), t(7.0)),
        "scatter-0d-index-1d-src": lambda: L.zeros(5).scatter(0, t(3), t([7.0, 8.0])),
        "scatter-0d-self": lambda: t(1.0).scatter(0, t(0), t(7.0)),
        "scatter-0d-self-1d-index": lambda: t(1.0).scatter(0, t([0]), t([7.0])),
        "scatter-reduce-add-number": lambda: L.zeros(5).scatter(0, t([3, 3, 1]), 2.0, reduce="add"),
        "scatter_add-0d-index": lambda: L.zeros(5).scatter_add(0, t(3), t([7.0, 8.0])),
        "scatter_add-0d-index-0d-src": lambda: L.zeros(5).scatter_add(0, t(3), t(7.0)),
        "scatter_reduce-0d-index": lambda: L.zeros(5).scatter_reduce(0, t(3), t([7.0, 8.0]), "sum"),
        "gather-0d-index": lambda: L.arange(5.0).gather(0, t(3)),
        "gather-0d-self-0d-index": lambda: t(4.0).gather(0, t(0)),
        "gather-0d-self-1d-index": lambda: t(4.0).gather(0, t([0, 0])),
        # errors: torch's class and message
        "index-larger-than-0d-src": lambda: L.zeros(5).scatter(0, t([1, 2]), t(7.0)),
        "scatter_add-index-larger-than-src": lambda: L.zeros(2, 2).scatter_add(0, t([[0, 0]]), L.ones(1, 1)),
        "scatter_reduce-index-larger-than-src": lambda: L.zeros(2, 2).scatter_reduce(0, t([[0, 0]]), L.ones(1, 1), "sum"),
        "scatter-index-larger-than-self": lambda: L.zeros(2, 2).scatter(0, t([[0, 0, 0]]), 1.0),
        "scatter-src-rank": lambda: L.zeros(3).scatter(0, t([0, 1]), L.ones(1, 2)),
        "scatter-self-rank": lambda: L.ones(2, 2).scatter(0, t(0), 3.0),
        "gather-self-rank": lambda: L.ones(2, 2).gather(0, t(0)),
        "gather-index-larger-than-self": lambda: L.zeros(2, 2).gather(0, t([[0, 0, 0]])),
        "empty-index-skips-the-size-checks": lambda: L.zeros(2, 2).scatter(0, L.zeros(0, 7, dtype=L.long), L.ones(1, 1)),
    }


def _outcome(L, name):
    try:
        out = _calls(L)[name]()
    except Exception as error:  # the class and the message are compared
        return type(error).__name__, str(error)
    return tuple(out.shape), out.dtype.__repr__().split(".")[-1], out.tolist()


@pytest.mark.parametrize("name", list(_calls(torch)))
def test_values_and_errors_equal_torchs(name):
    assert _outcome(ember, name) == _outcome(torch, name)


@pytest.mark.parametrize("op", ["gather", "scatter", "scatter_add"])
def test_gradients_through_0d_operands_equal_torchs(op):
    results = []
    for L in (torch, ember):
        x = L.tensor(2.0, requires_grad=True) if op == "gather" else L.zeros(4, requires_grad=True)
        src = L.tensor(5.0, requires_grad=True)
        y = x.gather(0, L.tensor(0)) if op == "gather" else getattr(x, op)(0, L.tensor(2), src)
        y.backward(L.arange(float(y.numel())).reshape(y.shape) + 1)
        results.append([y.grad_fn.name(), y.tolist(), x.grad.tolist(), None if src.grad is None else src.grad.tolist()])
    assert results[1] == results[0]
