"""Guards on the Python state a compiled function reads besides its tensors: keyword names,
scalars from globals and closures, modules' plain attributes (scalars and tensors), modules held
in global containers or objects, and module hooks. Each case changes the state after the graph
is replayed and compares with eager (a break-it review found each one replaying stale values;
torch's guards recompile on all of them)."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember._dynamo.utils import counters

USE_RELU = True
MODELS = []


pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _check(compiled, eager, *args, **kwargs):
    got, want = compiled(*args, **kwargs), eager(*args, **kwargs)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)


def _warm(compiled, *args, **kwargs):
    for _ in range(3):  # capture, then replays
        compiled(*args, **kwargs)


def test_keyword_names_are_guarded():
    def f(x, scale=1.0, shift=0.0, y=None, z=None):
        out = x * scale + shift
        return out + (y if y is not None else 0) - (z if z is not None else 0)
    cf, x = ember.compile(f, dynamic=False), ember.ones(2)
    _warm(cf, x, scale=2.0)
    _check(cf, f, x, shift=2.0)
    _warm(cf, x, y=ember.ones(2))
    _check(cf, f, x, z=ember.ones(2))


def test_scalars_from_globals_and_closures_are_guarded():
    global USE_RELU
    k = 1.0

    def f(x):
        y = x * k
        return y.relu() if USE_RELU else y
    cf, x = ember.compile(f, dynamic=False), -ember.ones(2)
    _warm(cf, x)
    USE_RELU = False
    try:
        _check(cf, f, x)
        k = 7.0  # noqa: F841 (read by f through its closure)
        _check(cf, f, x)
    finally:
        USE_RELU = True


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.drop = nn.Linear(3, 2), nn.Dropout(0.5)
        self.scale, self.offset, self.table = 1.0, ember.tensor(2.0), [ember.ones(2)]

    def forward(self, x):
        return self.drop(self.fc(x)) * self.scale * self.offset + self.table[0]


def test_module_attributes_are_guarded():
    ember.manual_seed(0)
    m = Scaled().eval()
    cf, x = ember.compile(m, dynamic=False), ember.ones(1, 3)
    _warm(cf, x)
    m.scale = 3.0
    _check(cf, m, x)
    m.offset = ember.tensor(10.0)  # rebound tensor attribute
    _check(cf, m, x)
    m.offset.fill_(4.0)  # written in place
    _check(cf, m, x)
    m.table[0] = ember.zeros(2)  # a tensor in a list attribute
    _check(cf, m, x)
    m.train()
    m.drop.p = 0.0  # torch recompiles on a changed p
    _check(cf, m, x)


def test_modules_swapped_in_containers_and_objects_are_guarded():
    class Holder:
        pass
    hold, table = Holder(), {"net": nn.Linear(3, 2)}
    hold.net = nn.Linear(3, 2)
    MODELS[:] = [nn.Linear(3, 2)]
    x = ember.ones(1, 3)
    for fn, swap in [(lambda x: MODELS[0](x), lambda: MODELS.__setitem__(0, nn.Linear(3, 2))),
                     (lambda x: table["net"](x), lambda: table.__setitem__("net", nn.Linear(3, 2))),
                     (lambda x: hold.net(x), lambda: setattr(hold, "net", nn.Linear(3, 2)))]:
        cf = ember.compile(fn, dynamic=False)
        _warm(cf, x)
        swap()
        _check(cf, fn, x)


def test_hooks_registered_after_compiling_run():
    m = nn.Linear(3, 2)
    cf, x = ember.compile(m, dynamic=False), ember.ones(1, 3)
    _warm(cf, x)
    handle = m.register_forward_hook(lambda mod, inp, out: out * 0 + 42)
    _check(cf, m, x)
    handle.remove()
    m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 2,))
    _check(cf, m, x)


@pytest.mark.parametrize("backward_inside", [False, True])
def test_gradient_hooks_run_once_per_compiled_call(backward_inside):
    """A parameter's register_hook (how DistributedDataParallel averages gradients) runs on every
    call, once, and its returned gradient is used once (it was baked into the recorded backward
    and then applied again: gradients 10x too large, or its Python side effects skipped)."""
    ember.manual_seed(0)
    lin, calls = nn.Linear(3, 2), []
    lin.weight.register_hook(lambda g: (calls.append(1), g * 10)[1])

    def forward(x):
        return lin(x).sum()

    def step(x):
        loss = forward(x)
        loss.backward()
        return loss
    compiled = ember.compile(step if backward_inside else forward, dynamic=False)
    for i in range(4):
        x = ember.ones(4, 3) * (i + 1)
        lin.zero_grad()
        forward(x).backward()
        want = lin.weight.grad.clone()
        lin.zero_grad()
        calls.clear()
        if backward_inside:
            compiled(x)
        else:
            compiled(x).backward()
        assert len(calls) == 1
        np.testing.assert_allclose(lin.weight.grad.numpy(), want.numpy(), rtol=1e-6)


CONFIG = {"k": 1.0}


def test_python_values_inside_containers_and_objects_are_guarded():
    """Numbers inside a list argument, an object argument's attributes, a global dict and a
    global object are baked into the graph: a change recompiles (it replayed the first value)."""
    class Options:
        pass
    opts, settings = Options(), Options()
    opts.scale, settings.scale = 1.0, 1.0

    def by_list(x, factors):
        return x * factors[0]

    def by_object(x, o):
        return x * o.scale

    def by_globals(x):
        return x * CONFIG["k"] * settings.scale
    x = ember.ones(2)
    compiled = ember.compile(by_list, dynamic=False)
    _warm(compiled, x, [1.0])
    _check(compiled, by_list, x, [5.0])
    _check(compiled, by_list, x, [5.0, 2.0])
    compiled = ember.compile(by_object, dynamic=False)
    _warm(compiled, x, opts)
    opts.scale = 4.0
    _check(compiled, by_object, x, opts)
    compiled = ember.compile(by_globals, dynamic=False)
    _warm(compiled, x)
    try:
        CONFIG["k"] = 3.0
        _check(compiled, by_globals, x)
        settings.scale = 2.0
        _check(compiled, by_globals, x)
    finally:
        CONFIG["k"] = 1.0


SHIFT = np.float32(2.0)


class WithPlainList(nn.Module):
    """A Dropout held in a plain Python list (not a ModuleList): not a registered submodule,
    but the graph still depends on its train/eval flag."""

    def __init__(self, lib):
        super().__init__() if lib is ember else lib.nn.Module.__init__(self)
        self.fc, self.extras = lib.nn.Linear(4, 4), [lib.nn.Dropout(0.5)]

    def forward(self, x):
        return self.extras[0](self.fc(x))


def _rebound_numpy_scalar(lib, compile):
    """A global NumPy scalar rebound between calls (np.float32(2) -> np.float32(3))."""
    global SHIFT

    def f(x):
        return x + SHIFT
    cf, x, outs = compile(f), lib.ones(3), []
    try:
        for value in (2.0, 3.0):
            SHIFT = np.float32(value)
            outs += [cf(x) for _ in range(3)]
    finally:
        SHIFT = np.float32(2.0)
    return outs


def _default_dtype_changed(lib, compile):
    """ember.set_default_dtype between calls: the factory inside makes the new dtype."""
    def f(x):
        return x + lib.ones(3)
    cf, x, outs = compile(f), lib.arange(3), []
    try:
        for dtype in (lib.float32, lib.float64):
            lib.set_default_dtype(dtype)
            outs += [cf(x) for _ in range(3)]
    finally:
        lib.set_default_dtype(lib.float32)
    return outs


def _dropout_in_a_plain_list_to_eval(lib, compile):
    """.eval() on that Dropout after the graph was captured in training mode."""
    lib.manual_seed(0)
    net = WithPlainList(lib) if lib is ember else type("Net", (lib.nn.Module,), dict(vars(WithPlainList)))(lib)
    cf, x = compile(net), lib.ones(2, 4)
    for _ in range(3):
        cf(x)
    net.extras[0].eval()
    return [cf(x) for _ in range(3)] + [net(x)]


@pytest.mark.parametrize("scenario", [_rebound_numpy_scalar, _default_dtype_changed, _dropout_in_a_plain_list_to_eval])
def test_python_state_torch_guards_recompiles_on(scenario):
    """Each scenario run eagerly, compiled by ember, and by torch.compile(backend="eager")
    (torch's guards, no code generation): the same values and dtypes (ember replayed the
    stale graph before: 2 instead of 3, float32 instead of float64, dropout still applied)."""
    torch = pytest.importorskip("torch")
    ember.manual_seed(0)
    eager = scenario(ember, lambda f: f)
    got = scenario(ember, lambda f: ember.compile(f, dynamic=False))
    torch._dynamo.reset()
    theirs = scenario(torch, lambda f: torch.compile(f, backend="eager", dynamic=False))
    for e, g, t in zip(eager, got, theirs, strict=True):
        assert g.dtype == e.dtype and str(t.dtype) == str(e.dtype)
        np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(t.detach().numpy(), e.detach().numpy(), rtol=1e-6)


def scale():  # a global function whose name is also an attribute read below (``model.scale``)
    return 1.0


def test_an_attribute_named_like_a_global_is_not_a_global_read():
    """``model.scale`` names no global: rebinding the global ``scale`` (read by no code here)
    neither recompiles nor takes the full path (the guards read a code's LOAD_GLOBAL names,
    not every name in ``co_names``)."""
    global scale
    model, x = nn.Linear(4, 3), ember.ones(2, 4)
    model.scale = 2.0
    compiled = ember.compile(lambda t: model(t) * model.scale)
    _warm(compiled, x)
    old = scale
    try:
        for value in (3.0, 4.0):
            scale = lambda value=value: value  # noqa: E731
            _check(compiled, lambda t: model(t) * model.scale, x)
    finally:
        scale = old
    assert sum(counters["recompiles"].values()) == 0
    assert compiled._recheck is not None and compiled._missed == 0


def _nest(value, depth):
    for _ in range(depth):
        value = [value]
    return value


def _inner(nest, depth):
    for _ in range(depth):
        nest = nest[0]
    return nest


@pytest.mark.parametrize("depth", [5, 12, 40])
def test_values_nested_deep_in_arguments_and_closures_are_guarded(depth):
    # A scalar or tensor more than 4 levels down an argument or a closure's list: a change is
    # seen (a review found depth 5 and more replaying the first call's values). Past
    # contents.DEPTH levels the closure's list is not compared: the function runs eagerly.
    def from_argument(nest):
        x, scale = _inner(nest, depth)
        return x * scale
    compiled = ember.compile(from_argument)
    x = ember.ones(3)
    for scale in (2.0, 2.0, 3.0):
        _check(compiled, from_argument, _nest((x, scale), depth))
    _check(compiled, from_argument, _nest((ember.ones(5, dtype=ember.float64), 4.0), depth))
    held = _nest(ember.ones(3), depth)

    def from_closure(x):
        return _inner(held, depth) * x
    compiled = ember.compile(from_closure)
    _warm(compiled, x)
    _inner(held, depth - 1)[0] = ember.full((3,), 7.0)
    _check(compiled, from_closure, x)


def test_a_list_holding_itself_is_a_graph_break_not_a_recursion():
    loop = [2.0]
    loop.append(loop)

    def f(x):
        return x * loop[1][1][0]
    explanation = ember._dynamo.explain(f)(ember.ones(2))
    assert explanation.graph_break_count == 1 and "levels deep" in explanation.break_reasons[0].reason
    _check(ember.compile(f), f, ember.ones(2))


def test_a_callable_objects_rebound_call_is_guarded():
    # ``Step.__call__ = ...`` after compiling is another program, for the object compiled and
    # for one the function calls (torch guards the type's __call__).
    class Step:
        def __call__(self, x):
            return x + 1

    step = Step()

    def f(x):
        return step(x) * 2
    compiled, direct, x = ember.compile(f), ember.compile(step), ember.ones(3)
    _warm(compiled, x)
    _warm(direct, x)
    Step.__call__ = lambda self, x: x * 10
    _check(compiled, f, x)
    _check(direct, step, x)


def test_modules_and_optimizers_bound_as_default_arguments_are_captured_and_guarded():
    """``def step(x, y, net=net, opt=opt)``: the defaults are what the function reads (they ran
    eagerly, uncaptured, before); rebinding ``__defaults__`` is another program."""
    def make():
        ember.manual_seed(0)
        net = nn.Linear(4, 2)
        return net, ember.optim.SGD(net.parameters(), lr=0.1)

    def step(x, y, net=None, opt=None):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    x, y = ember.randn(3, 4), ember.randn(3, 2)
    (n1, o1), (n2, o2) = make(), make()
    # a function object per side, each with its own defaults
    eager = type(step)(step.__code__, step.__globals__, "eager", (n1, o1), step.__closure__)
    fast = type(step)(step.__code__, step.__globals__, "fast", (n2, o2), step.__closure__)
    cf = ember.compile(fast)
    for _ in range(3):
        _check(cf, eager, x, y)
    assert counters["stats"]["unique_graphs"] >= 1
    np.testing.assert_allclose(n2.weight.detach().numpy(), n1.weight.detach().numpy(), rtol=1e-6, atol=1e-6)
    (n3, o3), (n4, o4) = make(), make()
    eager.__defaults__, fast.__defaults__ = (n3, o3), (n4, o4)
    _check(cf, eager, x, y)
    np.testing.assert_allclose(n4.weight.detach().numpy(), n3.weight.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(n2.weight.detach().numpy(), n1.weight.detach().numpy(), rtol=1e-6, atol=1e-6)


def _step_program(post_hook=None, pre_hook=None):
    ember.manual_seed(0)
    net = nn.Linear(4, 1)
    opt = ember.optim.SGD(net.parameters(), lr=0.1)
    x, y = ember.randn(8, 4), ember.randn(8, 1)

    def step(x, y, opt=opt):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    return net, opt, step, x, y


def test_optimizer_step_hooks_run_on_every_compiled_call():
    """A step hook with a Python side effect (counting steps) ran at capture only, then every
    replay skipped it; one registered after compiling (its own or global) never ran."""
    from ember.optim.optimizer import register_optimizer_step_post_hook
    for kind in ("own", "global", "late"):
        net, opt, step, x, y = _step_program()
        calls = []
        hook = lambda optimizer, args, kwargs: calls.append(1)  # noqa: E731
        handle = opt.register_step_post_hook(hook) if kind == "own" else \
            register_optimizer_step_post_hook(hook) if kind == "global" else None
        compiled = ember.compile(step)
        for i in range(5):
            if kind == "late" and i == 3:
                handle = opt.register_step_pre_hook(lambda optimizer, args, kwargs: calls.append(1))
            compiled(x, y)
        handle.remove()
        assert len(calls) == (2 if kind == "late" else 5), kind
    # a hook on tensors only is captured: replays equal eager, no graph break
    results = []
    for compile_it in (False, True):
        net, opt, step, x, y = _step_program()

        def halve(optimizer, args, kwargs, net=net):
            for p in net.parameters():
                p.grad.mul_(0.5)
        opt.register_step_pre_hook(halve)
        ember.compiler.reset()  # (the closures of step above count against one recompile_limit)
        run = ember.compile(step) if compile_it else step
        for _ in range(4):
            run(x, y)
        results.append(net.weight.detach().numpy().copy())
    assert not counters["graph_break"] and counters["stats"]["unique_graphs"] == 1
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
