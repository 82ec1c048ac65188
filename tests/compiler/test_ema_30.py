"""Floats that user code stores and reads back in compiled steps (EMA30): a float argument traced
as a graph input (:mod:`ember.compiler.traced_floats`) stored where the call can reach it (a
global, a closure cell, an object's attribute, a list) stayed there as ember's traced float, whose
computation names the *argument position*: another compiled function reading it later took its
own argument at that position for it (``x * G + k`` gave ``x * k + k``). Now the recording leaves
a plain float there (``dynamic_ints.plain_ints``), as eager does. The EMA steps (decay warmup,
timm/yolov5's ``ModelEMA``): parameters after 8 steps as torch eager's (rel 1e-6: float32 ops in
the same order), graph counts against torch.compile's CompileCounter. A ``math`` function of an
optimizer group's float (``math.cos(g["lr"])``) follows a scheduler (``group_writes.note_math_read``)."""
import math

import pytest
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter as TorchCounter

import ember
from ember._dynamo.testing import CompileCounter


class _Box:
    pass


class _Config:  # (a class attribute: ``Config.lr = lr``)
    lr = 0.5


_G = 0.5  # (a global: ``G = lr``)


def _leaks(module, where):
    """Values of ``read(x, k)`` over 4 calls after ``store(x, lr)`` left ``lr`` at ``where`` over
    4 calls (the float traced from the second call on), both compiled with ember's."""
    global _G
    box, hist = _Box(), []
    _Config.lr = box.v = _G = 0.5
    state = {"G": 0.5}

    def make():
        v = 0.5

        def store(x, lr):
            nonlocal v
            y = x * lr
            if where == "closure":
                v = lr
            elif where == "object":
                box.v = lr
            elif where == "list":
                hist.append(lr)
            elif where == "class":
                _Config.lr = lr
            elif where == "global":
                global _G
                _G = lr
            else:
                state["G"] = lr
            return y

        def read(x, k):
            value = {"closure": v, "object": box.v, "list": hist[-1] if hist else 0.0, "dict": state["G"],
                     "class": _Config.lr, "global": _G}[where]
            return x * value + k
        return store, read

    store, read = make()
    compiled = (lambda f: f) if module is torch else ember.compile  # (eager torch the oracle)
    step = compiled(store)
    x = module.ones(2)
    for i in range(4):
        step(x, 0.1 * (i + 1))
    types = {type(v) for v in (box.v, state["G"], *hist, _Config.lr, _G)}
    probe = compiled(read)
    return [probe(x, 10.0 * i)[0].item() for i in range(4)], types


@pytest.mark.parametrize("where", ["closure", "object", "list", "dict", "class", "global"])
def test_a_stored_traced_float_is_plain_and_read_right_later(where):
    """A float argument stored by the step and read by another compiled function: torch's values
    (the store's last value, 0.4, then ``+ k``), a plain float there."""
    ember.compiler.reset()
    want, _ = _leaks(torch, where)
    got, types = _leaks(ember, where)
    assert got == pytest.approx(want, rel=1e-6) and types == {float}


def _emas(module, base):
    """The EMA steps as classes over ``base`` (``module.nn.Module`` or ``object``): the decay
    warmup read before the counter is stored, timm/yolov5's ``ModelEMA`` (``math.exp`` of the
    counter), and a decay passed in (``update(model, d)``)."""

    class Warmup(base):
        def __init__(self, ema):
            base.__init__(self)
            self.ema, self.decay, self.step = ema, 0.999, 0

        def update(self, model):
            with module.no_grad():
                d = min(self.decay, (1 + self.step) / (10 + self.step))
                self.step += 1
                for e, p in zip(self.ema.parameters(), model.parameters()):
                    e.mul_(d).add_(p.detach(), alpha=1 - d)

    class ModelEMA(Warmup):
        def update(self, model):
            with module.no_grad():
                self.step += 1
                d = self.decay * (1 - math.exp(-self.step / 2000))
                for e, p in zip(self.ema.parameters(), model.parameters()):
                    e.mul_(d).add_(p.detach(), alpha=1 - d)

    class Passed(Warmup):
        def update(self, model, d):
            with module.no_grad():
                for e, p in zip(self.ema.parameters(), model.parameters()):
                    e.mul_(d).add_(p.detach(), alpha=1 - d)
    return {"warmup": Warmup, "model_ema": ModelEMA, "passed": Passed}


def _ema_run(module, kind, base, compiled=True, steps=8):
    """(the EMA model's parameters after ``steps`` updates, graphs compiled), the model's
    parameters moved before each update; compiled with a CompileCounter backend (torch's, ember's)."""
    module.manual_seed(0)
    model, ema = module.nn.Linear(3, 4), module.nn.Linear(3, 4)
    ema.load_state_dict(model.state_dict())
    averaged = _emas(module, module.nn.Module if base == "module" else object)[kind](ema)
    counter = (TorchCounter if module is torch else CompileCounter)()
    (torch._dynamo.reset if module is torch else ember.compiler.reset)()
    update = module.compile(averaged.update, backend=counter) if compiled else averaged.update
    for i in range(steps):
        with module.no_grad():
            for p in model.parameters():
                p.add_(0.1 * (i + 1)).mul_(0.9)
        update(model) if kind != "passed" else update(model, min(0.999, (1 + i) / (10 + i)))
    return [v for p in ema.parameters() for v in p.detach().flatten().tolist()], counter.frame_count


@pytest.mark.parametrize("kind, base", [("warmup", "module"), ("warmup", "object"), ("model_ema", "object"),
                                        ("passed", "object")])
def test_ema_parameters_and_graph_counts(kind, base):
    """The EMA model's parameters after 8 updates equal torch eager's within rel 1e-6 (float32
    mul_/add_ in the same order); with the decay passed in, ember's graph count is torch.compile's
    (2: the decay a symbol from the second call). (A counter stored on the object is a side effect
    ember's replay does not repeat: it runs those steps eagerly, 0 graphs, where torch makes 8 on
    a module (its int attributes static) and 2 on an object (the counter a symbol).)"""
    want, _ = _ema_run(torch, kind, base, compiled=False)
    got, graphs = _ema_run(ember, kind, base)
    assert got == pytest.approx(want, rel=1e-6, abs=1e-7)
    if kind == "passed":
        assert graphs == _ema_run(torch, kind, base)[1] == 2


def _group_read_steps():
    """Steps scaling a loss by a ``math`` function of the group's lr: ``math.cos`` (patched while
    recorded), ``math.exp`` and ``math.log`` (C functions called directly), read from a local
    group, through ``opt.param_groups`` and as a function imported by name."""
    from math import log1p

    def cos_local(model, opt, x):
        g = opt.param_groups[0]
        return model(x).sum() * math.cos(g["lr"])

    def exp_local(model, opt, x):
        g = opt.param_groups[0]
        return model(x).sum() * math.exp(g["lr"])

    def log_chain(model, opt, x):
        return model(x).sum() * math.log(opt.param_groups[0]["lr"])

    def imported(model, opt, x):
        g = opt.param_groups[0]
        return model(x).sum() * log1p(g["lr"])
    return {f.__name__: f for f in (cos_local, exp_local, log_chain, imported)}


def _group_read_run(module, name):
    """The step's losses over 5 calls, a scheduler setting the group's lr between them."""
    module.manual_seed(0)
    model = module.nn.Linear(3, 1)
    opt = module.optim.SGD(model.parameters(), lr=0.1)
    body = _group_read_steps()[name]
    if module is ember:
        ember.compiler.reset()
    step = ember.compile(body) if module is ember else body
    x, losses = module.linspace(-1, 1, 12).reshape(4, 3), []
    for i in range(5):
        opt.param_groups[0]["lr"] = 0.1 * (i + 1)
        losses.append(step(model, opt, x).item())
    return losses


@pytest.mark.parametrize("name", list(_group_read_steps()))
def test_a_math_function_of_a_group_float_follows_the_scheduler(name):
    """A ``math`` function reads a group's float without its methods: the graph kept the first
    call's ``cos(lr)`` at every replay while a scheduler moved ``lr`` (0.35189 five times for
    torch's 0.35189 ... 0.31036). Now the group is guarded by value, as when the user's code
    multiplies by ``lr``: torch eager's losses (rel 1e-6)."""
    assert _group_read_run(ember, name) == pytest.approx(_group_read_run(torch, name), rel=1e-6)
