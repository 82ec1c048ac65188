"""Regressions found by the widened compile fuzzer (fuzz_wide_32.py, session 32) and by
test_fuzz.py's seeds 10000-10499: each a program whose compiled run raised where eager and
torch ran, reduced to a few lines and compared with torch 2.13."""
import warnings

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.usefixtures("fresh_cache")


def _run(lib, fn, arrays, grads):
    """fn's outputs (float64 arrays; an alias kept as ``is``) and the inputs' gradients of the
    sum of the outputs."""
    inputs = [lib.tensor(a).requires_grad_(g) for a, g in zip(arrays, grads)]
    outs = fn(lib, *inputs)
    sum(o.double().sum() for o in outs if o.requires_grad).backward()
    same = [[o is p for p in outs] for o in outs]
    return [o.detach().double().numpy() for o in outs], [x.grad.numpy() for x in inputs if x.requires_grad], same


def _check(fn, arrays, grads):
    expected = _run(torch, fn, arrays, grads)
    assert _run(ember, fn, arrays, grads)[2] == expected[2]
    compiled = ember.compile(lambda *inputs: fn(ember, *inputs))
    for _ in range(3):
        outs, input_grads, same = _run(ember, lambda lib, *inputs: compiled(*inputs), arrays, grads)
        for a, e in zip(outs + input_grads, expected[0] + expected[1]):
            np.testing.assert_allclose(a, e, rtol=1e-6, atol=0)
        assert same == expected[2]


def test_an_input_view_returned_twice():
    """``return y * 2, v, v`` of ``v = x.t()`` (seeds 10122 and 7 more of 500, wide seeds 25, 63,
    103): the output that is the first again was also remade from the input as a view of its
    own, one remade output too many for the replay (StopIteration); it is the same tensor again."""
    def fn(lib, x, y):
        v = x.t()
        return y * 2, v, v

    _check(fn, [np.arange(6.0).reshape(2, 3), np.ones(3)], [True, True])


def test_a_write_through_a_view_of_a_clone_of_a_tensor_not_requiring_grad():
    """``v = x1.clone(); v.t().add_(x0)`` with only x0 requiring grad (wide seed 132): the
    capture recorded the clone's new value as not requiring grad (eager marks the clone after
    the observers), so the joint graph's backward went unused and its gradient placeholder was
    fetched as an input ('int' object has no attribute 'copy'; dynamic: a backward given one
    gradient fewer than it takes)."""
    def fn(lib, x0, x1):
        v = x1.clone()
        v.t().add_(x0)
        w = x1.clone()
        w[:, ::2].mul_(x0[:, :1].to(lib.float64))
        return v, w

    _check(fn, [np.array([[2.25, 1.0], [0.5, -1.0]], np.float32), np.array([[1.5, 2.0], [3.0, 4.0]])],
           [True, False])


def test_the_mean_of_an_empty_tensor_keeps_its_backward():
    """``s = x.sign(); return s.erf(), s.mean(0, keepdim=True)`` of a (1, 3, 0) x (seed 10340):
    eager's mean relaid its empty result out in a new array the capture did not know, which the
    graph then read as a tensor from outside; its backward took one gradient more than it was
    given (ValueError)."""
    def fn(lib, x):
        s = lib.sign(x)
        return lib.erf(s), s.mean(0, keepdim=True)

    _check(fn, [np.zeros((1, 3, 0), np.float32)], [True])


def test_dynamic_probes_leave_no_warnings():
    """``dynamic=True`` records the function again at sizes no caller passed (its probes); an
    l1 loss warned there "Using a target size ([1, 9]) that is different to the input size
    ([1, 8])" 6 times at the first call and 23 at the next size (the step fuzzer's seeds 2, 4,
    8). torch.compile (backend="eager", torch 2.13) warns none on these calls, and eager none."""
    model = ember.nn.Linear(5, 8)
    f = ember.compile(lambda x, y: ember.nn.functional.l1_loss(model(x), y), dynamic=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for b in (1, 1, 3):
            f(ember.ones(b, 5), ember.ones(b, 8))
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("input_first", [False, True])
def test_an_input_returned_as_it_is_beside_a_result(input_first):
    """``return y * y, x`` (wide seed 681: ``x.float()`` of a float32 x, x itself) with x no op
    read, both requiring grad: the joint graph recorded a backward for x (no node yet: not seen as
    the input's view), the replay left x out of the graph, and the backward was given one
    gradient fewer than it takes (ValueError); x is returned as itself, as torch's."""
    def fn(lib, x, y):
        return (x, y * y) if input_first else (y * y, x)

    _check(fn, [np.ones((1, 3, 1), np.float32), np.arange(3.0, dtype=np.float32).reshape(1, 3, 1)], [True, True])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("classes", [7, 40])  # (cross entropy: rows in blocks below 16 classes, one by one above)
def test_log_softmax_and_cross_entropy_of_large_logits(dtype, classes):
    """The C row kernels computed log_softmax as x - (max + log(sum)) and cross entropy as
    max + log(sum) - x[target]: beside a large max the log was rounded away. A row of 1e20s gave
    0 for -log(n) (wide seed 927, an expanded float64 row of 1e30), float32 logits near 1e4 were
    4e-4 off, near 1e8 0. Now (x - max) - log(sum), as eager and torch: within a few ulp of
    torch's, whose results are small whatever the offset."""
    rng = np.random.default_rng(0)
    offsets = np.array([0.0, 1e2, 1e4, 1e8, 1e20, -1e20])[:, None]
    logits = (offsets + rng.standard_normal((6, classes))).astype(dtype)
    target = rng.integers(0, classes, 6)

    def fn(lib, x, t):
        return lib.nn.functional.log_softmax(x, -1), lib.nn.functional.cross_entropy(x, t, reduction="none")

    expected = [o.numpy() for o in fn(torch, torch.tensor(logits), torch.tensor(target))]
    compiled = ember.compile(lambda x, t: fn(ember, x, t))
    for _ in range(2):
        actual = [o.numpy() for o in compiled(ember.tensor(logits), ember.tensor(target))]
    eps = np.finfo(dtype).eps
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=64 * eps, atol=64 * eps * np.abs(e).max())
