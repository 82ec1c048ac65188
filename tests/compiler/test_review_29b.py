"""REVIEW29B: the last merges tried against torch 2.13. An input's ``retain_grad()`` inside a
compiled function split at its backward: a replay of the piece calling it did not repeat it, so
the next piece, recorded again (another leaf behind the input), read ``.grad`` None (the inputs'
retain_grad now is Python state a recording compares: the piece runs eagerly); a non-leaf input's
retained ``.grad`` read was a constant of the graph (a replay returned the recording's) and one
assigned was not set by a replay. Held: input
``.grad`` accumulation (a tensor passed twice, a non-contiguous ``.grad``, float64, in-place
zeroing) and fills (int64, bool, -0.0, requires_grad) against torch."""
import numpy as np
import pytest
import torch

import ember


def _retained(lib, compiled):
    def f(h):
        h.retain_grad()
        (h * h).sum().backward()
        return h.grad * 1.0
    out = []
    for leaf in range(3):  # (another leaf behind the input: the second piece's guards fail)
        g = lib.compile(f, backend="eager") if compiled else f  # (compiled again: the pieces' cache is the code's)
        w = lib.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
        for _ in range(2):
            h = w * (2 + leaf)
            out.append((g(h).tolist(), h.grad.tolist(), w.grad.tolist()))
    return out


def test_retain_grad_of_an_input_before_a_backward_as_torch():
    ember._dynamo.reset()
    assert _retained(ember, True) == _retained(torch, False)


def _written(lib, compiled):
    def f(h):
        h.grad.mul_(2)
        y = h.grad + 1
        h.grad = h.grad * 3
        return y
    g = lib.compile(f) if compiled else f
    w, out = lib.tensor([1.0, 2.0], requires_grad=True), []
    for k in range(3):  # (a non-leaf input and a view with their retained .grad: placeholders, not constants)
        h = w * (k + 1) if k < 2 else (w * k)[1:]
        h.retain_grad()
        (h * h).sum().backward()
        out.append((g(h).tolist(), h.grad.tolist()))
    return out


def test_a_retained_grad_of_an_input_read_written_and_assigned_as_torch():
    ember._dynamo.reset()
    assert _written(ember, True) == _written(torch, False)


def _accumulated(lib, compiled):
    def f(a, b):
        ((a * a).sum() + (b.sin() * 3).sum()).backward()
        return a.grad * 2
    g = lib.compile(f) if compiled else f
    x = lib.tensor(np.arange(6.0).reshape(2, 3) / 7 + 0.1, requires_grad=True)  # float64
    out = []
    for _ in range(2):
        out.append((g(x, x).tolist(), x.grad.tolist()))
    x.grad = lib.zeros(3, 2, dtype=lib.float64).t()  # a non-contiguous .grad, added into in place
    held = x.grad
    for _ in range(2):
        out.append((g(x, x).tolist(), x.grad is held, x.grad.stride(), x.grad.dtype == lib.float64))
        x.grad.zero_()
    return out


@pytest.mark.filterwarnings("ignore:grad and param do not obey")  # (torch on the non-contiguous .grad)
def test_input_grad_passed_twice_non_contiguous_float64_as_torch():
    ember._dynamo.reset()
    assert _accumulated(ember, True) == _accumulated(torch, False)


def _fills(lib, compiled):
    def f(x, v):
        return (lib.full((3,), v, dtype=lib.int64), lib.full((3,), v, dtype=lib.bool), lib.full((3,), -0.0) * 1.0,
                lib.full((2,), v, requires_grad=True), lib.full_like(x, v, dtype=lib.int64), x * round(v))
    g = lib.compile(f) if compiled else f
    rows = []
    for v in (2.5, -0.0, 3.5, 0.0):
        out = g(lib.tensor([0.5, 1.5]), v)
        rows.append([(str(t.dtype).split(".")[-1], t.requires_grad, t.tolist(),
                      np.signbit(t.detach().numpy()).tolist()) for t in out])
    return rows


def test_fills_int64_bool_negative_zero_requires_grad_as_torch():
    ember._dynamo.reset()
    assert _fills(ember, True) == _fills(torch, False)
