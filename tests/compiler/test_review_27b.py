"""Session 27's second review: an optimizer's hyperparameter read by a compiled function that
runs no optimizer step.

``x * opt.param_groups[0]["lr"]`` in a compiled function: while recorded, the group's float is
a ``GroupFloat`` (a float subclass, ``group_writes.watched_groups``), which NumPy takes as a
float64 operand, not a weak Python number: the recording's result was float64 (torch: float32),
and its graph's replays wrote float32 values read as float64 (4.7e-310). And a function with no
backward, no ``.grad`` read and no optimizer update dropped the optimizer's guards
(``sources.relevant``) although it had read the value: the replays kept the first ``lr`` while
the user (or a scheduler) changed it. torch guards the float it reads: a graph per value.
"""
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _reads(lib, compile_fn, scale):
    w = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([w], lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

    def read(x):
        return x * opt.param_groups[0]["lr"] + scale

    read = compile_fn(read)
    out = []
    for _ in range(4):
        r = read(lib.ones(3))
        out.append((str(r.dtype).split(".")[-1], r.tolist()))
        opt.step()
        sched.step()
    return out


@pytest.mark.parametrize("scale", [0, 1])
def test_group_lr_read_by_a_function_without_a_step(scale):
    expected = _reads(torch, lambda f: f, scale)
    assert _reads(ember, ember.compile, scale) == expected
