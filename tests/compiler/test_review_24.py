"""Session 24 review: compiled programs against the same function run eagerly (REVIEW24)."""
import functools
import types

import pytest

import ember as torch
import ember.nn as nn


def _as_tuple(d):
    return (d,) if type(d) is int else tuple(d)


def _type_reads(x, k):
    return x + len(_as_tuple(k)) + (k.__class__ is int) + 10 * (type(k) is int)


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_int_argument_class_read_is_int(backend):
    # an int argument traced while recorded must still be an int to type() and __class__
    # (it was a TracedInt: a wrong constant, or a TypeError from the branch taken)
    torch._dynamo.reset()
    x = torch.zeros(2)
    step = torch.compile(_type_reads, backend=backend)
    for k in (1, 2, 3, 10, 11):
        assert step(x, k).tolist() == _type_reads(x, k).tolist(), k


def _count(x, step):
    return x * step, [step + 1]


def test_int_returned_from_traced_argument_is_plain():
    # the recording with the int traced returned a TracedInt: passed back in as the next call's
    # step it was guarded by identity, a recompile per call
    torch._dynamo.reset()
    x = torch.ones(2)
    step_fn = torch.compile(_count, backend="eager")
    step = 0
    for i in range(4):
        y, (step,) = step_fn(x, step)
        assert type(step) is int and step == i + 1
        assert y.tolist() == [float(i)] * 2


class _Positioned(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = 0

    def forward(self, x, k):
        self.pos = k
        return x * k


def test_int_stored_on_module_from_traced_argument_is_plain():
    torch._dynamo.reset()
    m = _Positioned()
    step = torch.compile(m, backend="eager")
    for k in (1, 2, 3):
        assert step(torch.ones(2), k).tolist() == [float(k)] * 2
        assert type(m.pos) is int and m.pos == k


class _Activated(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.act = act

    def forward(self, x):
        return self.act(x) + 1


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_module_function_attribute_is_guarded(backend):
    # two modules of one class holding other functions (and one module whose function is
    # replaced) ran the first one's graph: sigmoid's module returned tanh's values
    torch._dynamo.reset()
    x = torch.tensor([-1.0, 0.5, 2.0])
    mods = [_Activated(torch.tanh), _Activated(torch.sigmoid), _Activated(lambda t: t * 2),
            _Activated(lambda t: t * 3)]
    step = torch.compile(lambda m, t: m(t), backend=backend)
    for m in mods * 2:
        assert torch.allclose(step(m, x), m(x))
        assert torch.allclose(torch.compile(m, backend=backend)(x), m(x))
    mods[0].act = torch.relu
    assert torch.allclose(step(mods[0], x), torch.relu(x) + 1)


class _Config:
    def __init__(self, act):
        self.act = act


def _through_config(cfg, table, x):
    return cfg.act(x) + table["act"](x) * 2


def test_functions_in_containers_and_objects_are_guarded():
    # a function held by a plain object, dict or list was guarded by its type only: the first
    # one's graph ran for another one, or after it was replaced
    torch._dynamo.reset()
    x = torch.tensor([-1.0, 0.5, 2.0])
    step = torch.compile(_through_config, backend="eager")
    for act in (torch.tanh, torch.sigmoid):
        cfg, table = _Config(act), {"act": act}
        assert torch.allclose(step(cfg, table, x), _through_config(cfg, table, x))
    cfg.act, table["act"] = torch.relu, torch.tanh
    assert torch.allclose(step(cfg, table, x), _through_config(cfg, table, x))


class _ClassActivated(nn.Module):
    act = staticmethod(torch.tanh)

    def forward(self, x):
        return self.act(x)


def test_class_function_attribute_replaced_is_seen():
    # a class attribute holding a function (a staticmethod too) rebound after the first call
    # kept running the old one's graph
    torch._dynamo.reset()
    x = torch.tensor([-1.0, 0.5, 2.0])
    m = _ClassActivated()
    step = torch.compile(m, backend="eager")
    try:
        for act in (torch.tanh, torch.sigmoid, torch.relu):
            _ClassActivated.act = staticmethod(act)
            assert torch.allclose(step(x), act(x))
    finally:
        _ClassActivated.act = staticmethod(torch.tanh)


_CLAMP = functools.partial(torch.clamp, min=0.0)


def _clamped(x):
    return _CLAMP(x)


def test_global_partial_rebound_is_seen():
    global _CLAMP
    torch._dynamo.reset()
    x = torch.tensor([-1.0, 0.5, 2.0])
    step = torch.compile(_clamped, backend="eager")
    try:
        assert step(x).tolist() == [0.0, 0.5, 2.0]
        _CLAMP = functools.partial(torch.clamp, max=0.0)
        assert step(x).tolist() == [-1.0, 0.0, 0.0]
    finally:
        _CLAMP = functools.partial(torch.clamp, min=0.0)


def _numbers(x):
    for i in range(3):
        yield x * i


def _pairs(x):
    return x + 1, map(lambda t: t * 2, [x, x + 1])


def _made(x):
    y = x * 2
    return types.SimpleNamespace(y=y), _Config(y), lambda: y


def test_returned_iterator_or_new_object_is_not_replayed():
    # a replay returned the first call's generator (of the first call's x), already consumed, and
    # the first call's namespace, object or closure, holding the first call's tensors
    torch._dynamo.reset()
    gen, pairs = torch.compile(_numbers, backend="eager"), torch.compile(_pairs, backend="eager")
    made = torch.compile(_made, backend="eager")
    x = torch.ones(2)
    for scale in (1.0, 2.0, 3.0):
        assert [t.tolist() for t in gen(x * scale)] == [[0.0] * 2, [scale] * 2, [2 * scale] * 2]
        y, twice = pairs(x * scale)
        assert y.tolist() == [scale + 1] * 2 and [t.tolist() for t in twice] == [[2 * scale] * 2, [2 * scale + 2] * 2]
        space, cfg, closure = made(x * scale)
        assert space.y.tolist() == cfg.act.tolist() == closure().tolist() == [2 * scale] * 2
