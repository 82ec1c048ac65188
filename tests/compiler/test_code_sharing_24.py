"""Compiled graphs shared per code object, as torch's cache: two modules of one class, two
closures of one ``def``, ``fullgraph`` on and off run one graph, each on its own objects
(ember.compiler.rebind, ember.compiler.shared_cache)."""
import functools
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.testing import CompileCounter
from ember._dynamo.utils import counters

pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _close(got, want):
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)


def _scenarios(lib, counter_class, reset):
    """Frames a CompileCounter backend saw per scenario (a)-(e) with ``lib`` (ember or torch),
    and whether every compiled result equals the eager one."""
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x).relu() + x

    class Stack(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = lib.nn.ModuleList([Block() for _ in range(2)])

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    def make(w):
        def g(x):
            return x * w + 1
        return g

    def f(x):
        return x.sin() * 2

    x = lib.randn(2, 4)
    frames, same = {}, []

    def run(name, calls):
        reset()
        counter = counter_class()
        for compiled, eager in calls(counter):
            same.append(bool(lib.allclose(compiled(x), eager(x))))
        frames[name] = counter.frame_count

    def blocks_compiled(counter):
        blocks = [Block() for _ in range(3)]
        for b in blocks:
            b.compile(backend=counter)
        return [(b, lambda x, b=b: b.fc(x).relu() + x) for b in blocks + blocks]
    run("(a) three Blocks, block.compile()", blocks_compiled)
    run("(a) two Linears, torch.compile(m)", lambda c: [(lib.compile(m, backend=c), m) for m in
                                                        (lib.nn.Linear(4, 4), lib.nn.Linear(4, 4))])
    run("(b) two closures of one def", lambda c: [(lib.compile(g, backend=c), g) for g in
                                                  (make(lib.ones(4)), make(lib.randn(4)))])
    run("(c) one function compiled twice", lambda c: [(lib.compile(f, backend=c), f) for _ in range(2)])
    run("(d) two blocks in one compiled model", lambda c: [(lib.compile(m, backend=c), m) for m in (Stack(),)])
    run("(e) fullgraph True, then False", lambda c: [(lib.compile(f, backend=c, fullgraph=full), f)
                                                     for full in (True, False)])
    return frames, all(same)


def test_frames_per_code_object_as_torchs():
    """(a) modules of one class, each compiled: one frame (torch: the parameters are inputs);
    (b) closures of one def over tensors of one shape: one; (c) one function compiled twice:
    one; (d) blocks inlined into one model: one; (e) fullgraph True and False: one."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounter as TorchCounter
    ours = _scenarios(ember, CompileCounter, ember.compiler.reset)
    theirs = _scenarios(torch, TorchCounter, torch._dynamo.reset)
    assert ours == theirs
    assert ours == ({name: 1 for name in ours[0]}, True)


class _Net(nn.Module):
    def __init__(self, scale=1.0):
        super().__init__()
        self.fc1, self.fc2, self.scale = nn.Linear(4, 8), nn.Linear(8, 1), scale

    def forward(self, x):
        return self.fc2(self.fc1(x).tanh()) * self.scale


def _step(model, opt, x, y):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


def test_training_steps_of_two_models_alternating_equal_eager():
    """One compiled step trains two models of one class in turn: one graph captured, run on each
    model's parameters, gradients and momentum buffers; losses and weights equal eager's."""
    ember.manual_seed(0)
    models = [_Net(), _Net()]
    twins = [_Net(), _Net()]
    for m, t in zip(models, twins):
        t.load_state_dict(m.state_dict())
    opts = [ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in models + twins]
    step = ember.compile(_step, backend="aot_eager")
    x, y = ember.randn(6, 4), ember.randn(6, 1)
    for _ in range(3):
        for k in range(2):
            _close(step(models[k], opts[k], x, y), _step(twins[k], opts[2 + k], x, y))
    for m, t in zip(models, twins):
        for p, q in zip(m.parameters(), t.parameters()):
            _close(p, q)
    assert counters["stats"]["unique_graphs"] == 1


def test_other_values_keep_their_own_graphs():
    """Objects of one kind but other Python values (a module's ``scale``, a closure's number)
    or other shapes are never given another's graph: each result is its own eager one."""
    x = ember.randn(3, 4)
    mods = [_Net(2.0), _Net(3.0), _Net(2.0)]
    for m in mods:
        m.compile(backend="aot_eager")
        _close(m(x), m.fc2(m.fc1(x).tanh()) * m.scale)

    def make(k, w):
        def g(x):
            return x * k + w
        return g
    for g in (make(2.0, ember.ones(4)), make(3.0, ember.ones(4)), make(2.0, ember.ones(1)), make(2.0, ember.ones(4))):
        _close(ember.compile(g, backend="aot_eager")(x), g(x))
    assert counters["stats"]["unique_graphs"] == 2 + 3


def _closure_over(text):
    def g(x):
        return x + len(text)
    return g


def test_recompile_limit_counts_per_code_object_and_warns_once():
    """Ten closures of one def over other strings: the first 8 are captured (8 frames, torch's
    count), the ninth hits ``recompile_limit`` with one warning and the rest run eagerly."""
    x = ember.randn(3)
    counter = CompileCounter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = [ember.compile(_closure_over("a" * n), backend=counter) for n in range(10)]
        for n, g in enumerate(compiled):
            _close(g(x), x + n)
    assert counter.frame_count == 8
    assert [str(w.message).count("hit config.recompile_limit (8)") for w in caught] == [1]


class _Indexed(nn.Module):
    def __init__(self, index):
        super().__init__()
        self.fc, self.index = nn.Linear(4, 4), index

    def forward(self, x):
        return self.fc(x).relu()


def test_blocks_differing_in_an_attribute_never_hit_the_limit():
    """Twelve blocks with their own ``self.index`` (unread): one graph, as torch's (it guards the
    attributes read; ember, since session 25, the ones its recording's code could read), no
    warning; a block recompiling for a new size counts."""
    blocks = [_Indexed(i) for i in range(12)]
    counter = CompileCounter()
    for b in blocks:
        b.compile(backend=counter, dynamic=False)
    x = ember.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for b in blocks:
            _close(b(x), b.fc(x).relu())
    assert counter.frame_count == 1
    blocks[0](ember.randn(3, 4))
    assert counter.frame_count == 2 and counters["recompiles"]["_Indexed.forward"] == 1


def _times(k):
    def decorate(f):
        @functools.wraps(f)
        def wrapper(x):
            return f(x) * k
        return wrapper
    return decorate


def test_wrappers_of_one_code_never_swap_functions():
    """Decorated functions share the wrapper's code (one family) but each runs its own function
    and the wrapper's own cell (ember reads through the wrapper: it guards the function)."""
    def plus(x):
        return x + 1

    def minus(x):
        return x - 1
    x = ember.ones(3)
    fns = [_times(2.0)(plus), _times(3.0)(plus), _times(2.0)(minus)]
    compiled = [ember.compile(f, backend="aot_eager") for f in fns]  # (all alive: one family)
    assert [c(x).tolist() for c in compiled] == [[4.0] * 3, [6.0] * 3, [0.0] * 3]
