"""The flat recheck of a training loop's call (``compiler.recheck``): after a call that replayed
a graph, the next call re-reads a flat list of facts instead of building a ``World`` and its
snapshot. Each test warms a compiled program until the recheck is in place, changes one thing
the guards read, and checks that the compiled program still equals eager (and recompiles where
the graph baked the old value in); ``_agrees`` checks before each call that the recheck never
holds where the full path's facts differ (a guard that no longer fires is a silent wrong answer)."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._dynamo.utils import counters
from ember.compiler import eval_frame
from ember.compiler.guards import World, snapshot
from ember.compiler.recheck import Recheck

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _agrees(cf, args=()):
    """The recheck holds only where the full path's snapshot equals the last call's facts."""
    recheck = cf._recheck
    if recheck is not None and recheck.holds(args):
        assert snapshot(World(cf._fn, args, {}, cf._world), args, {}) == cf._last[0], \
            "the recheck holds where a guard fails"


@pytest.fixture
def worlds(monkeypatch):
    """Counts the Worlds the compiled calls build (the full path)."""
    made = []
    monkeypatch.setattr(eval_frame, "World", lambda *a, **k: made.append(1) or World(*a, **k))
    return made


def _build():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = ember.randn(5, 4), ember.tensor([0, 2, 1, 1, 0])

    def step():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    def rebind(*values):
        nonlocal x, y
        x, y = (*values, y)[:2]
    return {"model": model, "opt": opt, "step": step, "rebind": rebind, "x": lambda: x}


class Program:
    """A training step over closure variables built twice from one seed, ``compiled`` and eager."""

    def __init__(self, backend="aot_eager"):
        self.copies = [_build(), _build()]
        self.compiled = ember.compile(self.copies[0]["step"], backend=backend)

    def run(self, calls=3):
        for _ in range(calls):
            _agrees(self.compiled)
            got, want = self.compiled(), self.copies[1]["step"]()
            np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5, atol=1e-6)
        for a, b in zip(*(c["model"].parameters() for c in self.copies)):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def _split_group(c):  # the same parameters in the same order, in two groups: another lr for the last
    opt = c["opt"]
    last = opt.param_groups[0]["params"].pop()
    opt.add_param_group({"params": [last], "lr": 0.5})


def _share(c):  # the input read made the first weight's array: another program
    c["x"]().data = c["model"][0].weight.data


# name: (change applied to both copies, whether the compiled one recompiles)
CHANGES = {
    "p.data = another array, same shape": (lambda c: setattr(c["model"][0].weight, "data", ember.full((5, 4), 0.05)),
                                           False),
    "a tensor read made a parameter's array": (_share, True),
    "a parameter replaced": (lambda c: setattr(c["model"][2], "bias", nn.Parameter(ember.ones(3))), True),
    "requires_grad_(False) on a parameter": (lambda c: c["model"][0].weight.requires_grad_(False), True),
    "eval()": (lambda c: c["model"].eval(), True),
    "lr": (lambda c: c["opt"].param_groups[0].update(lr=0.01), False),
    "momentum 0.9 -> 0": (lambda c: c["opt"].param_groups[0].update(momentum=0.0), True),
    "nesterov": (lambda c: c["opt"].param_groups[0].update(nesterov=True), True),
    "a group's parameter removed": (lambda c: c["opt"].param_groups[0]["params"].pop(), True),
    "one group split in two": (_split_group, True),
    # (torch: no recompile either, the tensor is a graph input: ember.compiler.rebind)
    "a closure tensor rebound, same shape": (lambda c: c["rebind"](ember.full((5, 4), 0.3)), False),
    "a closure tensor's data, same shape": (lambda c: setattr(c["x"](), "data", ember.ones(5, 4)), False),
    "closure tensors' shapes": (lambda c: c["rebind"](ember.full((6, 4), 0.3), ember.tensor([0, 1, 2, 0, 1, 2])),
                                True),
    "a closure tensor written in place": (lambda c: c["x"]().mul_(2.0), False),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_each_change_after_a_warm_loop_equals_eager(name):
    change, recompiles = CHANGES[name]
    p = Program()
    p.run()
    assert p.compiled._recheck is not None and p.compiled._recheck.holds(())  # warm
    for c in p.copies:
        change(c)
    p.run()
    assert bool(counters["recompiles"]) == recompiles


def test_a_training_loop_builds_no_world_once_warm(worlds):
    """The C backend's training loop: after the first replay, no call builds a World."""
    p = Program(backend=None)
    p.run(4)
    before = len(worlds)
    p.run(5)
    assert len(worlds) == before and counters["stats"]["unique_graphs"] == 1


def test_a_tensor_hyperparameter_written_in_place_to_zero_recompiles():
    """A 0-d tensor ``lr`` is read as the full path reads it: its value may change in place."""
    models = []
    for _ in range(2):
        ember.manual_seed(0)
        model = nn.Linear(4, 2)
        models.append((model, ember.optim.SGD(model.parameters(), lr=ember.tensor(0.1), weight_decay=ember.tensor(0.1))))

    def stepper(model, opt):
        def step(x):
            model(x).square().sum().backward()
            opt.step()
            opt.zero_grad()
        return step
    run, eager = ember.compile(stepper(*models[0])), stepper(*models[1])
    x = ember.randn(3, 4)
    for i in range(6):
        if i == 3:
            for _, opt in models:
                opt.param_groups[0]["weight_decay"].fill_(0.0)  # zero: a term the kernel leaves out
        _agrees(run, (x,))
        run(x)
        eager(x)
        np.testing.assert_allclose(models[0][0].weight.detach().numpy(), models[1][0].weight.detach().numpy(),
                                   rtol=1e-6, atol=1e-7)
    assert counters["stats"]["unique_graphs"] == 2


def _inputs_fn(x, y):
    x.add_(1.0)  # an alias of x in y sees this write
    return (x * y).sum(-1)


INPUT_CHANGES = {  # name: the arguments of the call after a warm loop with fresh (5, 4) float32 pairs
    "the same tensor twice": lambda: (lambda a: (a, a))(ember.randn(5, 4)),
    "another shape": lambda: (ember.randn(7, 4), ember.randn(7, 4)),
    "another dtype": lambda: (ember.randn(5, 4, dtype=ember.float64), ember.randn(5, 4, dtype=ember.float64)),
    "an input requiring grad": lambda: (ember.randn(5, 4), ember.randn(5, 4, requires_grad=True)),
    "a number in place of a tensor": lambda: (ember.randn(5, 4), 2.0),
}


@pytest.mark.parametrize("name", list(INPUT_CHANGES))
def test_fresh_inputs_each_call_take_the_recheck_and_a_changed_input_is_seen(name, worlds):
    cf = ember.compile(_inputs_fn, backend="aot_eager", dynamic=False)
    for i in range(4):
        args = ember.randn(5, 4), ember.randn(5, 4)  # a data loader's batches: new tensors each call
        before = len(worlds)
        _agrees(cf, args)
        want = _inputs_fn(*[a.clone() for a in args])
        np.testing.assert_allclose(cf(*args).numpy(), want.numpy(), rtol=1e-6)
    assert len(worlds) == before  # the last call took the recheck
    args = INPUT_CHANGES[name]()
    _agrees(cf, args)
    copies = [a.detach().clone() if isinstance(a, ember.Tensor) else a for a in args]
    if args[0] is args[1]:
        copies[1] = copies[0]
    want = _inputs_fn(*copies)
    np.testing.assert_allclose(cf(*args).detach().numpy(), want.detach().numpy(), rtol=1e-6)
    assert len(worlds) > before


def test_grad_mode_default_dtype_stance_and_reset_are_seen():
    ember.manual_seed(0)
    layer = nn.Linear(3, 3)
    x = ember.randn(2, 3)

    def fn():
        return layer(x) * ember.tensor(2.0)
    cf = ember.compile(fn, backend="aot_eager")

    def check(requires_grad=True, dtype=ember.float32):
        _agrees(cf)
        got, want = cf(), fn()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
        assert got.requires_grad == want.requires_grad == requires_grad and got.dtype == want.dtype

    for _ in range(3):
        check()
    with ember.no_grad():
        check(False)
        check(False)
    ember.set_default_dtype(ember.float64)  # the constant tensor(2.0) is float64 now
    try:
        check(dtype=ember.float64)
        check(dtype=ember.float64)
    finally:
        ember.set_default_dtype(ember.float32)
    check()
    graphs = counters["stats"]["unique_graphs"]
    ember.compiler.set_stance("force_eager")
    try:
        check()
    finally:
        ember.compiler.set_stance("default")
    assert counters["stats"]["unique_graphs"] == graphs
    ember.compiler.reset()
    check()
    check()
    assert counters["stats"]["unique_graphs"] == 1  # captured again after the reset


SETTINGS = {"scale": [2.0]}


def test_values_in_containers_and_plain_objects_are_seen():
    """The guards few programs have: a number inside a global dict's list, a tensor rebound on
    a plain object, a module swapped in a closure list."""
    class Holder:
        pass
    ember.manual_seed(0)
    holder, layers, x = Holder(), [nn.Linear(3, 3)], ember.randn(2, 3)
    holder.shift = ember.ones(3)

    def fn():
        return layers[0](x) * SETTINGS["scale"][0] + holder.shift
    cf = ember.compile(fn, backend="aot_eager")
    changes = [lambda: SETTINGS["scale"].__setitem__(0, 3.0), lambda: setattr(holder, "shift", ember.zeros(3)),
               lambda: layers.__setitem__(0, nn.Linear(3, 3))]
    try:
        for change in [None] + changes:
            if change is not None:
                change()
            for _ in range(3):
                _agrees(cf)
                np.testing.assert_allclose(cf().detach().numpy(), fn().detach().numpy(), rtol=1e-6)
    finally:
        SETTINGS["scale"][0] = 2.0
    assert counters["stats"]["unique_graphs"] == 2  # the new number's (a new tensor or module: rebound, as torch's)


def test_sizes_of_a_dynamic_graph_follow_each_call():
    """A dynamic graph's entry replays at the sizes the last full path bound; the recheck holds
    only for those very shapes."""
    ember.manual_seed(0)
    layer = nn.Linear(4, 3)

    def fn(x):
        return layer(x).relu().sum(0)
    cf = ember.compile(fn, backend="aot_eager")
    for n in (5, 5, 5, 7, 7, 7, 9, 9, 5, 5, 7):
        x = ember.randn(n, 4)
        _agrees(cf, (x,))
        np.testing.assert_allclose(cf(x).detach().numpy(), fn(x).detach().numpy(), rtol=1e-6, atol=1e-7)
    assert counters["stats"]["unique_graphs"] <= 3


def test_grads_set_and_cleared_between_calls_are_seen():
    """Forward and backward compiled, the gradients kept across calls (accumulated) and cleared
    outside the compiled function now and then: which parameters have a .grad is a guard."""
    copies = []
    for _ in range(2):
        ember.manual_seed(0)
        copies.append(nn.Linear(4, 2))
    x = ember.randn(3, 4)

    def stepper(model):
        def step():
            model(x).square().sum().backward()
        return step
    run, eager = ember.compile(stepper(copies[0]), backend="aot_eager"), stepper(copies[1])
    for i in range(8):
        if i in (3, 6):
            for m in copies:
                m.zero_grad()
        _agrees(run)
        run()
        eager()
        for a, b in zip(copies[0].parameters(), copies[1].parameters()):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_a_scheduler_stepping_each_call_keeps_the_recheck(worlds):
    """A new lr each step (a graph input: only whether it is zero is guarded) changes the
    optimizer's group, not its facts: the recheck reads them as the full path does and holds."""
    copies = []
    for _ in range(2):
        ember.manual_seed(0)
        model = nn.Linear(4, 2)
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        copies.append((model, opt, ember.optim.lr_scheduler.LambdaLR(opt, lambda i: 1.0 / (1 + i))))
    x = ember.randn(3, 4)

    def stepper(model, opt, sched):
        def step():
            model(x).square().sum().backward()
            opt.step()
            opt.zero_grad()
        return step
    run, eager = ember.compile(stepper(*copies[0]), backend="aot_eager"), stepper(*copies[1])
    for i in range(8):
        if i == 4:
            before = len(worlds)
        _agrees(run)
        run()
        eager()
        for _, _, sched in copies:
            sched.step()
        np.testing.assert_allclose(copies[0][0].weight.detach().numpy(), copies[1][0].weight.detach().numpy(),
                                   rtol=1e-6, atol=1e-7)
    assert len(worlds) == before and counters["stats"]["unique_graphs"] == 1


def test_a_recheck_that_never_holds_is_made_ever_more_rarely(worlds, monkeypatch):
    """``x.data = batch`` before each call: the facts stay, the array read does not. The
    rechecks made then never hold; one is made at the 1st, 2nd, 4th ... such call, and once
    the loop stops rebinding, the recheck holds again."""
    made = []
    of = Recheck.of.__func__
    monkeypatch.setattr(Recheck, "of", classmethod(lambda cls, *a: made.append(1) or of(cls, *a)))
    ember.manual_seed(0)
    layer, x = nn.Linear(4, 2), ember.randn(3, 4)

    def fn():
        return layer(x)
    cf = ember.compile(fn, backend="aot_eager")
    for i in range(40):
        if i >= 2:
            x.data = ember.randn(3, 4)
        np.testing.assert_allclose(cf().detach().numpy(), fn().detach().numpy(), rtol=1e-6)
    assert len(made) <= 8
    for _ in range(45):
        cf()
    before = len(worlds)
    for _ in range(5):
        cf()
    assert len(worlds) == before


def test_a_parameter_moved_to_the_next_group_in_place_is_seen():
    """The groups' parameters read one after another are the same objects in the same order,
    but one moved from the first group's list to the second's (in place): its lr is another."""
    copies = []
    for _ in range(2):
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
        ps = list(model.parameters())
        copies.append((model, ember.optim.SGD([{"params": ps[:3]}, {"params": ps[3:], "lr": 0.05}], lr=0.01)))
    x = ember.randn(5, 4)

    def stepper(model, opt):
        def step():
            model(x).square().mean().backward()
            opt.step()
            opt.zero_grad()
        return step
    run, eager = ember.compile(stepper(*copies[0]), backend="aot_eager"), stepper(*copies[1])
    for i in range(6):
        if i == 3:
            for _, opt in copies:
                opt.param_groups[1]["params"].insert(0, opt.param_groups[0]["params"].pop())
        _agrees(run)
        run()
        eager()
        for a, b in zip(copies[0][0].parameters(), copies[1][0].parameters()):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
