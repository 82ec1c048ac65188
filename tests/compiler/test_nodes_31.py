"""What a compiled call that ran a backward returns, against torch.compile (session 31, NODES31).

torch's dynamo breaks at ``loss.backward()``: what the function computed before it is an output of
the forward graph (a freed ``CompiledFunctionBackward`` under aot_eager and inductor), what it
computed after it an output of the next graph, with that graph's live node (FGSM's
``x + eps * x.grad.sign()``: a backward through it reaches ``x``). ember replayed such a result
detached (``requires_grad`` False) and its first calls, which run the function eagerly, returned
eager's nodes (``NllLossBackward0``, ``SumBackward0``). A ``TorchFunctionMode`` logging the calls
around a compiled call made it run eagerly (0 frames): torch replays the appends after its graph.
"""
import functools

import numpy as np
import pytest
import torch

import ember
import ember._dynamo.testing

BACKENDS = ["inductor", "aot_eager", "eager"]
# torch.compile's node for its graphs' outputs (inductor and aot_eager; torch 2.13, seen here for
# every result of _fgsm_run on 5 calls: its compile costs 3-4 s, so not run here); the eager
# backend keeps eager's nodes, as uncompiled torch's
COMPILED_NODE = "CompiledFunctionBackward"


def _fgsm_run(lib, backend, calls=5):
    """``calls`` calls of a compiled FGSM step (the loss's backward into an input ``x`` requiring
    grad, then ``x + eps * x.grad.sign()`` and a parameter's sum computed after it); per call the
    values, ``.grad``s, what the results show and what backwards through them give and raise."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 3))
    F = lib.nn.functional

    def fgsm(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return x + 0.1 * x.grad.sign(), loss, model[2].bias.sum()

    run = lib.compile(fgsm, backend=backend) if backend else fgsm
    seen = []
    for i in range(calls):
        x = (lib.arange(8.0).reshape(2, 4) / (i + 1) - 1).requires_grad_()
        adv, loss, bias_sum = run(x, lib.tensor([0, 2]))
        row = [adv.tolist(), loss.item(), x.grad.tolist(), model[0].weight.grad.tolist(),
               [(t.requires_grad, t.grad_fn and t.grad_fn.name()) for t in (adv, loss, bias_sum)]]
        before = x.grad.clone()
        ((adv * lib.arange(4.0)).sum() + bias_sum).backward()  # (torch: through the second graph's node)
        row += [(x.grad - before).tolist(), model[2].bias.grad.tolist()]
        try:
            loss.backward()
            row.append(None)
        except RuntimeError as e:
            row.append(str(e)[:60])
        seen.append(row)
        model.zero_grad()
    return seen


@functools.lru_cache(maxsize=None)
def _torch_fgsm():
    return _fgsm_run(torch, None)


def _close(got, want):
    for a, b in zip(got, want):
        if isinstance(a, float) or isinstance(a, list) and a and isinstance(a[0], (int, float, list)):
            np.testing.assert_allclose(np.array(a, float), np.array(b, float), rtol=1e-5, atol=1e-6)
        else:
            assert a == b


@pytest.mark.parametrize("backend", BACKENDS)
def test_fgsm_returns_x_adv_requiring_grad_with_torchs_node_on_every_call(backend):
    # (a replay returned x_adv and the bias's sum detached: requires_grad False, a backward through it raised)
    got, eager = _fgsm_run(ember, backend), _torch_fgsm()
    assert len(got) == len(eager) == 5
    for row, want in zip(got, eager):
        _close(row[:4] + row[5:], want[:4] + want[5:])  # values and .grads, each call
        names = [(r, COMPILED_NODE) for r, _ in want[4]] if backend != "eager" else want[4]
        # requires_grad and the nodes, from the recording call on (it returned eager's: NllLossBackward0 freed,
        # AddBackward0 and SumBackward0 live, where torch.compile's are CompiledFunctionBackward)
        assert row[4] == names and [r for r, _ in names] == [True] * 3


def _step_run(lib, backend, calls=4):
    """A compiled SGD step returning its loss after ``loss.backward()``: per call the loss's node,
    the parameters its node leads to, the value."""
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x):
        loss = model(x).pow(2).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    run = lib.compile(step, backend=backend) if backend else step
    lib.manual_seed(1)
    seen = []
    for _ in range(calls):
        loss = run(lib.randn(4, 3))
        edges = sorted(id(n.variable) for n, _ in loss.grad_fn.next_functions if hasattr(n, "variable"))
        seen.append((loss.grad_fn.name(), edges == sorted(map(id, model.parameters())), round(loss.item(), 4)))
    return seen


@pytest.mark.parametrize("backend", ["inductor", "eager"])
def test_a_steps_first_calls_return_torchs_node(backend):
    # inductor: CompiledFunctionBackward from the first call, its next_functions the parameters'
    # (ember's first two calls, unrecorded and recording, returned eager's SumBackward0)
    names = [COMPILED_NODE if backend != "eager" else name for name, _, _ in _step_run(torch, None)]
    want = [(name, backend != "eager", value) for name, (_, _, value) in zip(names, _step_run(torch, None))]
    assert _step_run(ember, backend) == want


def _logging_run(lib, backend, counter=None):
    """A ``TorchFunctionMode`` appending each function (and its name) to its own lists, around
    calls of a compiled function (a new mode object per call; sizes 2, 2, 2, 3, 4, 2: a dynamic
    recompile); per call the logs and the value."""
    class Log(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names, self.funcs = [], []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__)
            self.funcs.append(func)
            return func(*args, **(kwargs or {}))

    def f(x, y):
        return (x + y).sin() * 2

    run = lib.compile(f, backend=counter or backend) if backend else f
    seen = []
    for n in (2, 2, 2, 3, 4, 2):
        x, y = lib.arange(float(n)), lib.ones(n)
        with Log() as mode:
            r = run(x, y)
        seen.append((mode.names, [g.__name__ for g in mode.funcs], [round(v, 5) for v in r.tolist()]))
    return seen


@pytest.mark.parametrize("backend", BACKENDS + ["counter"])
def test_a_logging_mode_around_the_call_is_replayed_after_the_graph(backend):
    # torch replays the mode's appends after its graph: 1 frame, then 2 (the sizes made dynamic);
    # ember ran every such call eagerly (0 frames), the appends a side effect
    counter = ember._dynamo.testing.CompileCounter() if backend == "counter" else None
    ember.compiler.reset()
    assert _logging_run(ember, backend, counter) == _logging_run(torch, None)
    # (torch 2.13's CompileCounter, seen here: 2 frames)
    assert (counter.frame_count if counter else ember._dynamo.utils.counters["stats"]["unique_graphs"]) == 2


def _logged_step_run(lib, backend):
    """A logging mode around each call of a compiled step running a backward (the model's
    ``.grad`` zeroed between calls): the log, the loss, a gradient."""
    class Log(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)

    def step(x):
        loss = model(x).pow(2).sum()
        loss.backward()
        return loss

    run = lib.compile(step, backend=backend) if backend else step
    seen = []
    for i in range(4):
        with Log() as mode:
            loss = run(lib.ones(4, 3) * i)
        seen.append((mode.names, round(loss.item(), 4), model.weight.grad.sum().item()))
        model.zero_grad()
    return seen


@pytest.mark.parametrize("backend", ["inductor", "eager"])
def test_a_logging_mode_around_a_step_sees_the_users_calls_only(backend):
    # ['linear', 'pow', 'sum', 'backward'] on every call: the recording's own reads of requires_grad
    # (its tracer's, the first calls') reached the mode, and were replayed with its appends
    ember.compiler.reset()
    got = _logged_step_run(ember, backend)
    assert got == _logged_step_run(torch, None)
    assert ember._dynamo.utils.counters["stats"]["unique_graphs"] == 1
