"""Session 27's second review: an optimizer's hyperparameter read by a compiled function that
runs no optimizer step.

``x * opt.param_groups[0]["lr"]`` in a compiled function: while recorded, the group's float is
a ``GroupFloat`` (a float subclass, ``group_writes.watched_groups``), which NumPy takes as a
float64 operand, not a weak Python number: the recording's result was float64 (torch: float32;
``x.add(y, alpha=lr)``: float64 from the second call),
and its graph's replays wrote float32 values read as float64 (4.7e-310). And a function with no
backward, no ``.grad`` read and no optimizer update dropped the optimizer's guards
(``sources.relevant``) although it had read the value: the replays kept the first ``lr`` while
the user (or a scheduler) changed it. torch guards the float it reads: a graph per value.

Grad mode was one flag for all threads (torch's is per thread, on in a new thread): a thread
inside ``no_grad`` (an optimizer step) made another thread's results require no grad, eager
and compiled; two threads training raised "element 0 of tensors does not require grad".
A post-accumulate-grad hook returning a non-tensor raises torch's TypeError (was RuntimeError).
"""
import threading

import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("fresh_compiler")


_USES = {"mul": lambda x, lr: x * lr, "mul, add": lambda x, lr: x * lr + 1,
         "alpha": lambda x, lr: x.add(x, alpha=lr)}


def _reads(lib, compile_fn, use):
    w = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([w], lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

    def read(x):
        return _USES[use](x, opt.param_groups[0]["lr"])

    read = compile_fn(read)
    out = []
    for _ in range(4):
        r = read(lib.ones(3))
        out.append((str(r.dtype).split(".")[-1], r.tolist()))
        opt.step()
        sched.step()
    return out


@pytest.mark.parametrize("use", list(_USES))
def test_group_lr_read_by_a_function_without_a_step(use):
    expected = _reads(torch, lambda f: f, use)
    assert _reads(ember, ember.compile, use) == expected


def _other_thread_sees(lib, compile_fn):
    """What a thread computes while another thread is inside ``no_grad``, and grad mode in a new
    thread started from inside ``no_grad``."""
    inside, done, seen = threading.Event(), threading.Event(), []
    w = lib.ones(2, requires_grad=True)
    double = compile_fn(lambda x: (w * x).sum())

    def holder():
        with lib.no_grad():
            inside.set()
            done.wait(120)  # (bounds, not measures: the user's first call compiles, C included)

    def user():
        inside.wait(120)
        seen.append((lib.is_grad_enabled(), double(lib.ones(2)).requires_grad))
        done.set()

    threads = [threading.Thread(target=holder), threading.Thread(target=user)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    with lib.no_grad():
        started = threading.Thread(target=lambda: seen.append(lib.is_grad_enabled()))
        started.start()
        started.join(120)
    return seen


@pytest.mark.parametrize("compiled", [False, True])
def test_grad_mode_is_per_thread(compiled):
    # ember's grad mode was one flag for every thread: a thread's optimizer step (under no_grad)
    # made another thread's loss require no grad ("element 0 of tensors does not require grad")
    expected = _other_thread_sees(torch, lambda f: f)
    assert _other_thread_sees(ember, ember.compile if compiled else (lambda f: f)) == expected == [(True, True), True]


@pytest.mark.parametrize("returned", ["tensor", "int", "tuple"])
def test_post_accumulate_grad_hook_returning_a_value(returned):
    def error(lib):
        p = lib.nn.Parameter(lib.ones(3))
        p.register_post_accumulate_grad_hook(lambda t: {"tensor": t * 1, "int": 3, "tuple": (1, 2)}[returned])
        with pytest.raises(Exception) as info:
            (p * 2).sum().backward()
        return type(info.value), str(info.value)
    assert error(ember) == error(torch)
