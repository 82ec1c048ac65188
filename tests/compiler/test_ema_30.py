"""Floats that user code stores and reads back in compiled steps (EMA30): a float argument traced
as a graph input (:mod:`ember.compiler.traced_floats`) stored where the call can reach it (a
global, a closure cell, an object's attribute, a list) stayed there as ember's traced float, whose
computation names the *argument position*: another compiled function reading it later took its
own argument at that position for it (``x * G + k`` gave ``x * k + k``). Now the recording leaves
a plain float there (``dynamic_ints.plain_ints``), as eager does. The EMA steps (decay warmup,
timm/yolov5's ``ModelEMA``): parameters after 8 steps as torch eager's (rel 1e-6: float32 ops in
the same order), graph counts against torch.compile's CompileCounter."""
import math

import pytest
import torch

import ember
from ember._dynamo.testing import CompileCounter


class _Box:
    pass


def _leaks(module, where):
    """Values of ``read(x, k)`` over 4 calls after ``store(x, lr)`` left ``lr`` at ``where`` over
    4 calls (the float traced from the second call on), both compiled with ember's."""
    box, hist = _Box(), []
    box.v = 0.5
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
            else:
                state["G"] = lr
            return y

        def read(x, k):
            value = {"closure": v, "object": box.v, "list": hist[-1] if hist else 0.0, "dict": state["G"]}[where]
            return x * value + k
        return store, read

    store, read = make()
    compiled = (lambda f: f) if module is torch else ember.compile  # (eager torch the oracle)
    step = compiled(store)
    x = module.ones(2)
    for i in range(4):
        step(x, 0.1 * (i + 1))
    types = {type(v) for v in (box.v, state["G"], *hist)}
    probe = compiled(read)
    return [probe(x, 10.0 * i)[0].item() for i in range(4)], types


@pytest.mark.parametrize("where", ["closure", "object", "list", "dict"])
def test_a_stored_traced_float_is_plain_and_read_right_later(where):
    """A float argument stored by the step and read by another compiled function: torch's values
    (the store's last value, 0.4, then ``+ k``), a plain float there."""
    ember.compiler.reset()
    want, _ = _leaks(torch, where)
    got, types = _leaks(ember, where)
    assert got == pytest.approx(want, rel=1e-6) and types == {float}
