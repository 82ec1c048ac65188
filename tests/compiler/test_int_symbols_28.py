"""Int and float arguments that ember specialised (a graph per value) where torch 2.13's
automatic dynamic makes one symbol (2 graphs): a float in an op's attribute (``leaky_relu``'s
slope, ``addcmul``'s and ``addcdiv``'s value; compiler/traced_floats.py ``float_nodes``), a float
returned (``ReturnedFloat``); and two threads recording int arguments at once (traced_ints'
notes, each thread's own). Graphs are counted against torch's CompileCounter, call by call;
values (and gradients) against torch's and ember's eager."""
import collections
import functools
import math
import threading

import pytest
import torch
import torch._dynamo

from graph_counts import compiled_afresh, graph_counts

import ember
from ember._dynamo.utils import counters

SLOPES = (0.1, 0.2, 0.0, -0.5, 3.0, -0.0, 1e-40)


def _leaky(x, slope):
    return ember_or_torch(x).nn.functional.leaky_relu(x - 3, slope) * 2


def ember_or_torch(x):
    """The module ``x`` comes from."""
    return torch if isinstance(x, torch.Tensor) else ember


def test_leaky_relu_slope_counts_and_values():
    calls = [(s,) for s in SLOPES]
    want_counts, want = graph_counts(_leaky, torch, calls)
    got_counts, got = graph_counts(_leaky, ember, calls)
    assert got_counts == want_counts == [1, 2, 2, 2, 2, 2, 2]
    assert got == want


def _leaky_step(module, dtype, slope, compiled, inplace=False):
    """``(values, gradient of x)`` of a leaky ReLU of ``arange(6) - 3`` at ``slope``."""
    x = module.arange(6.0, dtype=getattr(module, dtype)).requires_grad_(not inplace)
    y = compiled(x, slope, inplace)
    if not inplace:
        y.sum().backward()
    return y.tolist(), None if inplace else x.grad.tolist()


def _leaky_any(x, slope, inplace):
    F = ember_or_torch(x).nn.functional
    return F.leaky_relu_(x - 3, slope) if inplace else F.leaky_relu(x - 3, slope) * 3


@pytest.mark.parametrize("dtype, inplace", [("float32", False), ("float64", False), ("float32", True),
                                            ("float16", True)])
def test_leaky_relu_slope_dtypes_and_gradients(dtype, inplace):
    """A training step takes the slope in its backward too: one graph for every value, nan and inf
    included. float16's and bfloat16's slope is taken at float32 (torch's opmath), in eager too;
    there it stays a number (a graph per value; ``x_half * lr`` is an input: test_float_symbols_29.py)."""
    ember.compiler.reset()
    compiled = ember.compile(_leaky_any)
    slopes = (*SLOPES, math.nan, -math.inf) if dtype in ("float32", "float64") else (0.1, 0.2, -0.3)
    for slope in slopes:
        want = _leaky_step(torch, dtype, slope, _leaky_any, inplace)
        assert repr(_leaky_step(ember, dtype, slope, compiled, inplace)) == repr(want), slope
        assert repr(_leaky_step(ember, dtype, slope, _leaky_any, inplace)) == repr(want), slope
    assert counters["stats"]["unique_graphs"] == (2 if dtype in ("float32", "float64") else 3)


def test_leaky_relu_bfloat16_eager_slope_at_float32():
    """Eager's bfloat16 leaky_relu multiplies at float32 (the slope was rounded to bfloat16 first)."""
    got = ember.nn.functional.leaky_relu(ember.arange(6.0, dtype=ember.bfloat16) - 3, 0.3)
    want = torch.nn.functional.leaky_relu(torch.arange(6.0, dtype=torch.bfloat16) - 3, 0.3)
    assert got.float().tolist() == want.float().tolist()


Pair = collections.namedtuple("Pair", "a b")


def _returns_floats(x, lr):
    return x * 3, lr, round(lr), [lr * 2 + 1], {"k": Pair(-lr, lr / 4)}, lr * lr


def _returns_with_int(x, k, lr):
    return x * k * lr, lr * 2, k + 1, k * 0.5 + lr, (k + 1) / 4


def _returned(fn, module, calls):
    """``(counts, results)`` as :func:`graph_counts`'s, each result the returned structure with
    its tensors as lists (its repr: -0.0 told from 0.0)."""
    counts, results = [], []
    compiled, count = compiled_afresh(fn, module)
    for args in calls:
        out = compiled(module.arange(3.0), *args)
        results.append(repr([v.tolist() if isinstance(v, module.Tensor) else v for v in out]))
        counts.append(count())
    return counts, results


@pytest.mark.parametrize("fn, calls", [
    (_returns_floats, [(v,) for v in (0.5, 1.5, 2.5, -0.7, 0.0, -0.0, 3.25)]),
    (_returns_with_int, [(k, v) for k, v in ((1, 0.5), (2, 1.5), (3, 2.5), (0, -1.0), (-3, 0.0), (7, 2.0))]),
])
def test_returned_float_counts_and_values(fn, calls):
    """A float returned is computed from each call's arguments (it was baked in: a graph per
    value; returned beside a dynamic int argument, the first value's at every call)."""
    want_counts, want = _returned(fn, torch, calls)
    got_counts, got = _returned(fn, ember, calls)
    assert got_counts == want_counts == [1] + [2] * (len(calls) - 1)
    assert got == want


_LOCAL = threading.local()


def _step():
    """In a thread's recording call (``_LOCAL.step``, its own): the thread's step."""
    step = getattr(_LOCAL, "step", None)
    if step is not None:
        step()


def _once(*steps):
    """The steps, run by the first call only (a recording may run the function again). (A lock
    taken without waiting: an iterator advanced, a list popped, an Event set, in a closure cell of
    user code the call runs are side effects its recording sees: the call would run eagerly.)"""
    first = threading.Lock()
    return lambda: [step() for step in (steps if first.acquire(blocking=False) else ())]


def _thread_a(x, k):
    _step()
    return x * (k * 0.5) + min(k, 4)


def _thread_b(x, y, j):
    _step()
    return x * (j * 0.25) - y + max(j, 2)


def _calls(fn, args_of, step, out, i, done=None):
    try:
        compiled, results = ember.compile(fn), []
        for k in (1, 2, 3, 5, 6):
            _LOCAL.step = step if k >= 2 else None  # (k = 2: the recording with k traced; one guard after)
            args = args_of(k)
            results.append((compiled(*args).tolist(), fn(*args).tolist()))
            if done is not None and k == 2:
                done.set()
        out[i] = results
    except Exception as error:
        out[i] = repr(error)


def test_two_threads_tracing_int_arguments_at_once():
    """The traced ints' notes (traced_ints.TRACING, VALUES, INT_POSITIONS, MINMAX, ...) are each
    thread's own: a's recording waits inside the function until b's has ended, which cleared the
    shared ones (a's ``k * 0.5`` then raised KeyError('i0'), b's symbol of the same name popped)."""
    ember.compiler.reset()
    barrier, done, out = threading.Barrier(2, timeout=10), threading.Event(), [None, None]
    threads = [threading.Thread(target=_calls, daemon=True, args=(
                   _thread_a, lambda k: (ember.arange(3.0), k), _once(barrier.wait, functools.partial(done.wait, 10)),
                   out, 0)),
               threading.Thread(target=_calls, daemon=True, args=(
                   _thread_b, lambda k: (ember.arange(3.0), ember.ones(3), k), _once(barrier.wait), out, 1, done))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for results in out:
        assert type(results) is list and all(got == want for got, want in results), results
    assert counters["stats"]["unique_graphs"] == 4  # (2 each: static, then k a symbol)


def _addcmul_step(x, value):
    """An optimizer-like in-place update and a differentiable addcmul (addcdiv's gradient differs
    from torch's in the last bit in eager)."""
    module = ember_or_torch(x)
    p = x.detach().clone()
    p.addcmul_(x.detach(), x.detach() + 1, value=-value)
    p.addcdiv_(x.detach(), x.detach().abs() + 1, value=value)  # (Adam's update)
    return p, module.addcmul(x, x, x * 3, value=value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_addcmul_value_counts_values_and_gradients(dtype):
    """``addcmul``'s ``value`` is a graph input (``tensor1 * value``, then ``addcmul``'s fused
    multiply-add), its backward's ``* value`` too, and ``addcdiv``'s (``tensor1 * value / tensor2``,
    no longer compared with 1): 2 graphs (torch 2.13's ``CompileCounter``: 3); a float beyond float32's
    range is eager's RuntimeError for float32 (the call records and raises), on the graph for
    float64 (since session 31: a float64 op does not check it)."""
    ember.compiler.reset()
    compiled = ember.compile(_addcmul_step)
    values = (0.1, 0.3, 1.0 / 3, 0.0, -0.0, -2.5, math.nan, math.inf, 1e-45, 1e39, 0.7)
    for value in values:
        want = []
        for module, fn in ((torch, _addcmul_step), (ember, _addcmul_step), (ember, compiled)):
            x = module.linspace(-2.0, 3.0, 7, dtype=getattr(module, dtype)).requires_grad_()
            try:
                p, y = fn(x, value)
                y.sum().backward()
                want.append(repr((p.tolist(), y.tolist(), x.grad.tolist())))
            except RuntimeError as error:
                want.append(repr(error))
        assert want[0] == want[1] == want[2], value
    assert counters["stats"]["unique_graphs"] == 2


def _ratio(x, lr, bc):
    return x * (-lr / bc) + lr / (bc * 2 + 1)


def test_float_divided_by_float_argument():
    """``lr / bc`` of two float arguments (Adam's ``-lr / bias_correction``) is a graph input too,
    guarded ``bc != 0.0``: at 0.0 and -0.0 the call records and raises eager's ZeroDivisionError."""
    calls = [(0.1, 0.5), (0.2, 0.25), (0.3, -0.0), (0.3, 3.0), (0.1, math.inf), (0.2, 0.0), (0.4, -1.0)]
    want_counts, want = graph_counts(_ratio, torch, calls)
    got_counts, got = graph_counts(_ratio, ember, calls)
    assert got_counts == want_counts == [1, 2, 2, 2, 2, 2, 2]
    assert got == want
