"""PyTorch 2.14's autograd extension points (torch 2.13 lacks them, so the references are the
graph itself and closed forms): node_creation_hook and ctx.set_output_grad_dtype."""
import threading

import numpy as np
import pytest

import ember
from ember.autograd import Function
from ember.autograd.graph import node_creation_hook


def _reachable(node):
    seen, stack = [], [node]
    while stack:
        n = stack.pop()
        if n is not None and all(n is not s for s in seen):
            seen.append(n)
            stack += [f for f, _ in n.next_functions]
    return seen


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_hook_sees_each_created_node_once():
    x = ember.randn(3, requires_grad=True)
    made = []
    with node_creation_hook(made.append):
        y = Square.apply((x * 2).sin()).sum()
    graph = _reachable(y.grad_fn)
    assert len(made) == len(graph) == 5  # AccumulateGrad, Mul, Sin, Square, Sum
    assert all(any(m is g for g in graph) for m in made)
    assert sorted(n.name() for n in made) == sorted(n.name() for n in graph)
    with node_creation_hook(made.append), ember.no_grad():
        x * 3  # nothing recorded: no node
    (x * 3).sum()  # outside the context: not seen
    assert len(made) == 5


def test_nested_hooks_run_outermost_first_and_unwind():
    calls = []
    x = ember.randn(2, requires_grad=True)
    x * 1  # x's AccumulateGrad exists before the contexts
    with node_creation_hook(lambda n: calls.append("outer")):
        with node_creation_hook(lambda n: calls.append("inner")):
            x + 1
        x - 1
    x * 2
    assert calls == ["outer", "inner", "outer"]


def test_hooks_are_per_thread():
    seen = {"main": 0, "thread": 0}
    x = ember.randn(2, requires_grad=True)
    x * 1

    def other():
        x.exp()  # the main thread's hook must not see this
        with node_creation_hook(lambda n: seen.__setitem__("thread", seen["thread"] + 1)):
            x.cos()

    with node_creation_hook(lambda n: seen.__setitem__("main", seen["main"] + 1)):
        worker = threading.Thread(target=other)
        worker.start()
        worker.join(timeout=30)
        x.sin()
    assert not worker.is_alive() and seen == {"main": 1, "thread": 1}


def test_hook_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        node_creation_hook(3)


class HalfOut(Function):
    """Computes in float16, asks for float32 gradients (with None: as they come)."""
    seen = []

    @staticmethod
    def forward(ctx, x, dtypes):
        ctx.set_output_grad_dtype(*dtypes)
        return x.half() * 3, x.half() * 2

    @staticmethod
    def backward(ctx, g1, g2):
        HalfOut.seen.append((g1.dtype, g2.dtype))
        return (g1.float() * 3 + g2.float() * 2), None


def test_set_output_grad_dtype_casts_incoming_gradients():
    x = ember.randn(4, requires_grad=True)
    for dtypes, want in [((ember.float32, None), (ember.float32, ember.float16)),
                         ((ember.float64, ember.float32), (ember.float64, ember.float32))]:
        HalfOut.seen.clear()
        x.grad = None
        a, b = HalfOut.apply(x, dtypes)
        assert a.dtype is ember.float16
        (a.float().sum() + b.sum()).backward()
        assert HalfOut.seen == [want]
        np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 5.0, np.float32))
    HalfOut.seen.clear()
    x.grad = None
    a, _ = HalfOut.apply(x, (ember.float32, None))
    a.float().sum().backward()  # the unused output's gradient is materialised, then left as float16
    assert HalfOut.seen == [(ember.float32, ember.float16)]


def test_set_output_grad_dtype_errors():
    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_output_grad_dtype(ember.float32)
            ctx.set_output_grad_dtype(ember.float32)
            return x * 1

    class Miscounted(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_output_grad_dtype(ember.float32, ember.float32)
            return x * 1

    x = ember.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="only be called once"):
        Twice.apply(x)
    with pytest.raises(RuntimeError, match="2 dtypes for the 1 outputs of Miscounted.forward"):
        Miscounted.apply(x)
    with pytest.raises(TypeError, match="dtypes or None"):
        HalfOut.apply(x, ("float32",))
