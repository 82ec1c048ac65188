"""Float arguments of a compiled function become graph inputs, as torch 2.13's automatic dynamic
makes a changing float a symbol (``specialize_float=False``; compiler/traced_floats.py): counts
of graphs against torch's CompileCounter, results and dtypes against eager's (nan, inf, -0.0,
1e-300, beyond float32's range), in C and in generated Python, and what stays specialised
(Python reading the float)."""
import math
import warnings

import numpy as np
import pytest
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

import ember
from ember._dynamo.utils import counters
from ember.compiler.backends import toolchain

pytestmark = pytest.mark.usefixtures("fresh_compiler")

LRS = [0.1, 0.2, 0.3, 0.4]  # the counter loop
SPECIAL = [0.5, 0.0, -0.0, math.nan, math.inf, -math.inf, 1e-300, 5e-324, 1e300, -3.5, 0.25]


def _forms(t, x, lr):
    """The forms a float takes only as a number: each becomes an input of the graph."""
    out = (x * lr, t.clamp(x, max=lr), x + (lr * 2 + 1), x * (1 - lr) - lr / 4, x * -lr + lr * lr, x < lr)
    if x.is_floating_point():  # (eager refuses these for an integer x)
        p = x.clone()
        p.sub_(x * lr)  # an optimizer's update
        out += (x.add(x, alpha=lr), p)
    return out


@pytest.fixture(scope="module")
def torch_counts():
    counts = {}
    for dynamic in (None, True, False):
        torch._dynamo.reset()
        cnt = CompileCounter()
        step = torch.compile(lambda x, lr: _forms(torch, x, lr), backend=cnt, dynamic=dynamic)
        for lr in LRS:
            step(torch.ones(3), lr)
        counts[dynamic] = cnt.frame_count
    torch._dynamo.reset()
    return counts


def _same(got, want):
    """Equal values, dtypes and signs of zeros (a NaN's sign aside)."""
    a, b = got.numpy(), want.numpy()
    return got.dtype == want.dtype and np.array_equal(a, b, equal_nan=True) and \
        np.array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b))


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_counter_loop_graphs_as_torch(dynamic, torch_counts):
    counters.clear()
    # (dynamic=False: 4 graphs, counted without building 4 C libraries)
    step = ember.compile(lambda x, lr: _forms(ember, x, lr), dynamic=dynamic,
                         backend="aot_eager" if dynamic is False else "inductor")
    for lr in LRS:
        for got, want in zip(step(ember.ones(3), lr), _forms(ember, ember.ones(3), lr)):
            assert _same(got, want), lr
    assert counters["stats"]["unique_graphs"] == torch_counts[dynamic] == {None: 2, True: 1, False: 4}[dynamic]


@pytest.mark.parametrize("python", [False, True], ids=["C", "generated Python"])
def test_results_and_dtypes_as_eager_at_special_values(python, monkeypatch):
    """One graph per dtype of ``x`` takes nan, +-inf, +-0.0, subnormals and a finite float beyond
    float32's range (eager's ``clamp(x_float32, max=1e300)`` raises, as the graph's guard finds;
    float64 takes it, on the graph since session 31)."""
    if python:
        monkeypatch.setattr(toolchain, "find_compiler", lambda: None)
    data = {"float32": [1.0, -1.0, 0.0, math.inf, -math.inf, math.nan, 3e38, 1e-40],
            "int32": [1, -2, 0, 7], "float64": [1.0, -1.0, -0.0, math.inf]}
    for dtype, values in data.items():
        counters.clear()
        x = ember.tensor(values, dtype=getattr(ember, dtype))
        step = ember.compile(lambda x, lr: _forms(ember, x, lr), dynamic=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (no C compiler: generated Python)
            for lr in SPECIAL:
                try:
                    want = _forms(ember, x, lr)
                except RuntimeError as error:
                    with pytest.raises(RuntimeError, match=str(error)):
                        step(x, lr)
                    continue
                for i, (got, expected) in enumerate(zip(step(x, lr), want)):
                    assert _same(got, expected), (dtype, lr, i, got, expected)
        # x_int * lr is of the default dtype (torch's promotion of a Python float)
        assert step(x, 0.5)[0].dtype == (ember.float32 if dtype == "int32" else x.dtype)
        assert counters["stats"]["unique_graphs"] == 1, dtype


def test_zero_signs_are_guarded_apart():
    """``x * lr`` with a baked 0.0 served -0.0 too (0.0 == -0.0): ``inf * -0.0`` is nan, ``-1 * -0.0`` is 0.0."""
    counters.clear()
    step = ember.compile(lambda x, lr: (x * lr, 1 / (x + lr)), dynamic=False, backend="aot_eager")
    x = ember.tensor([-1.0, 0.0, 2.0])
    for lr in (0.0, -0.0, 0.0, -0.0):
        for got, want in zip(step(x, lr), (x * lr, 1 / (x + lr))):
            assert _same(got, want), lr
    assert counters["stats"]["unique_graphs"] == 2


def _is_float(x, lr):
    return x * lr if type(lr) is float else x


@pytest.mark.parametrize("f", [lambda x, lr: x * math.log(lr, 2), lambda x, lr: x * float(f"{lr:.1f}"),
                               _is_float, lambda x, lr: x * float(np.sqrt(lr))],
                         ids=["math.log-base", "format", "type", "np.sqrt"])
def test_python_reading_the_float_specialises_it(f):
    """Here a graph per value, each eager's result (``if lr > 0.5``, ``round(lr, 1)``, ``lr **
    0.5``, ``math.sqrt(lr)`` are torch's since session 26: ``test_symbols_26.py``; a returned
    float since session 28: ``test_int_symbols_28.py``; a fill value since session 29:
    ``test_float_symbols_29.py``; ``int(lr * 10)`` since session 30: ``test_floats_30.py``)."""
    counters.clear()
    compiled = ember.compile(f, backend="aot_eager")  # (a graph per value: no C library each)
    x = ember.tensor([1.0, -2.0])
    lrs = [0.1, 0.9, 0.2, 0.8, 0.1, 0.9]
    for lr in lrs:
        got, want = compiled(x, lr), f(x, lr)
        for a, b in zip(*((got, want) if isinstance(got, tuple) else ((got,), (want,)))):
            assert (_same(a, b) if isinstance(a, ember.Tensor) else type(a) is type(b) and a == b), lr
    assert counters["stats"]["unique_graphs"] == len(set(lrs))


def _training_step(w):
    def step(x, lr, decay):
        loss = (w * x * lr).sum()
        loss.backward()
        with ember.no_grad():
            w.sub_(w.grad * decay)
        w.grad = None
        return loss.detach()
    return step


def test_gradient_and_training_step_as_eager():
    """The backward of ``x * lr`` takes ``lr`` saved by autograd: set to the traced float while
    recorded, it is the graph's input there too (torch's 2 graphs), in a step calling
    ``backward()`` and in a forward whose backward runs after it."""
    weights = [ember.nn.Parameter(ember.ones(3)) for _ in range(2)]
    compiled, eager = ember.compile(_training_step(weights[0]), backend="aot_eager"), _training_step(weights[1])
    counters.clear()
    for lr, decay in ((0.5, 0.1), (0.5, 0.2), (0.5, 0.3), (2.0, 0.4), (-0.0, 0.5), (0.75, 0.6)):
        assert _same(compiled(ember.arange(3.0), lr, decay), eager(ember.arange(3.0), lr, decay)), (lr, decay)
        assert _same(weights[0].detach(), weights[1].detach()), (lr, decay)
    assert counters["stats"]["unique_graphs"] == 3  # (lr, decay constant; decay an input; both)
    f = lambda x, lr: ((x * lr).exp() * (lr * 2 + 1)).sum() + x.pow(2).mul(lr).sum()  # noqa: E731
    forward = ember.compile(f, backend="aot_eager")
    counters.clear()
    for lr in (0.5, 0.25, -0.0, 2.0, math.inf):
        xs = [ember.tensor([1.0, -2.0, 0.5], requires_grad=True) for _ in range(2)]
        losses = forward(xs[0], lr), f(xs[1], lr)
        for loss in losses:
            loss.backward()
        assert _same(*(loss.detach() for loss in losses)) and _same(xs[0].grad, xs[1].grad), lr
    assert counters["stats"]["unique_graphs"] == 2


def test_ember_checking_the_float_before_its_op_as_eager():
    """ember's functions compare a number before their op (``dropout``'s ``p > 1`` raises; ``add``
    without a scale where ``alpha == 1``): a comparison from any code is a use, and a float
    ``alpha`` keeps the scaled op (``1.0 * b`` is ``b``), so the recording at 1.0 stands for 0.25."""
    x = ember.tensor([1.5, -2.0, 0.0])
    dropout = ember.compile(lambda x, p: ember.nn.functional.dropout(x, p, training=False), dynamic=True)
    scaled = ember.compile(lambda x, lr: ember.sub(x, x * 3, alpha=lr * 2), dynamic=True)
    counters.clear()
    for lr in (0.5, 0.25, 2.0, 0.125):
        assert _same(scaled(x, lr), ember.sub(x, x * 3, alpha=lr * 2)), lr
        if lr > 1:
            with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
                dropout(x, lr)
        else:
            assert _same(dropout(x, lr), x), lr
    assert counters["stats"]["unique_graphs"] == 1 + 3  # (sub: one graph; dropout: one per value)
