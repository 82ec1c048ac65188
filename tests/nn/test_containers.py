"""Containers compared with torch: list/dict behaviour, naming, state_dict keys, repr, errors."""
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close


def same_text(e_text, t_text):
    return e_text.replace("ember.", "torch.") == t_text


def layers(lib, n=4):
    return [lib.nn.Linear(i + 1, i + 2) for i in range(n)]


def names(module):
    return list(module.state_dict())


def run_both(fn):
    """``fn(lib)`` in both libraries; returns the (ember, torch) results."""
    return fn(ember), fn(torch)


@pytest.mark.parametrize("edit", [
    lambda lib, s: s,
    lambda lib, s: s[1:3],
    lambda lib, s: s[::-2],
    lambda lib, s: s.append(lib.nn.Identity()),
    lambda lib, s: s.insert(1, lib.nn.Flatten()),
    lambda lib, s: s.insert(-1, lib.nn.Flatten()),
    lambda lib, s: s.insert(4, lib.nn.Identity()),
    lambda lib, s: s.extend([lib.nn.Identity(), lib.nn.Flatten()]),
    lambda lib, s: (s.__delitem__(1), s)[1],
    lambda lib, s: (s.__delitem__(slice(0, 3, 2)), s)[1],
    lambda lib, s: (s.pop(-1), s)[1],
    lambda lib, s: (s.__setitem__(-2, lib.nn.Identity()), s)[1],
    lambda lib, s: s + lib.nn.Sequential(lib.nn.Identity()),
    lambda lib, s: s * 2,
    lambda lib, s: 2 * s[:1],
    lambda lib, s: s.__iadd__(lib.nn.Sequential(lib.nn.Flatten())),
    lambda lib, s: s.__imul__(2),
])
def test_sequential_edits_match_torch(edit):
    e, t = run_both(lambda lib: edit(lib, lib.nn.Sequential(*layers(lib))))
    assert len(e) == len(t)
    assert names(e) == names(t)
    assert same_text(repr(e), repr(t))


def test_sequential_ordered_dict_indexing_and_forward():
    def build(lib):
        return lib.nn.Sequential(OrderedDict([("fc1", lib.nn.Linear(3, 4)), ("act", lib.nn.Identity()),
                                              ("fc2", lib.nn.Linear(4, 2))]))
    e, t = run_both(build)
    assert names(e) == names(t) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert same_text(repr(e), repr(t))
    assert e[-1] is e.fc2 and e[0] is e.fc1 and [m for m in e] == [e.fc1, e.act, e.fc2]
    assert isinstance(e[1:], ember.nn.Sequential) and names(e[1:]) == names(t[1:])
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = e(ex), t(tx)
    assert_close(eo, to)
    eo.sum().backward()
    to.sum().backward()
    assert_close(ex.grad, tx.grad)
    assert_close(e.fc1.weight.grad, t.fc1.weight.grad)


@pytest.mark.parametrize("action", [
    lambda lib, s: s[5],
    lambda lib, s: s[-6],
    lambda lib, s: s.insert(9, lib.nn.Identity()),
    lambda lib, s: s.insert(0, 3),
    lambda lib, s: s + [1],
    lambda lib, s: s * 0,
    lambda lib, s: s * 1.5,
    lambda lib, s: s.append(3),
])
def test_sequential_errors_match_torch(action):
    def run(lib):
        with pytest.raises(Exception) as err:
            action(lib, lib.nn.Sequential(*layers(lib)))
        return err
    e_err, t_err = run_both(run)
    assert type(e_err.value) is type(t_err.value)
    assert same_text(str(e_err.value), str(t_err.value))


@pytest.mark.parametrize("edit", [
    lambda lib, m: m,
    lambda lib, m: m[1:],
    lambda lib, m: m.append(lib.nn.Identity()),
    lambda lib, m: (m.insert(1, lib.nn.Flatten()), m)[1],
    lambda lib, m: m.extend([lib.nn.Identity(), lib.nn.Identity()]),
    lambda lib, m: (m.__delitem__(0), m)[1],
    lambda lib, m: (m.__delitem__(slice(1, None)), m)[1],
    lambda lib, m: (m.pop(1), m)[1],
    lambda lib, m: (m.__setitem__(-1, lib.nn.Flatten()), m)[1],
    lambda lib, m: m + lib.nn.ModuleList([lib.nn.Identity()]),
    lambda lib, m: lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)] + [lib.nn.Identity()] * 2),
    lambda lib, m: lib.nn.ModuleList(),
])
def test_module_list_edits_match_torch(edit):
    e, t = run_both(lambda lib: edit(lib, lib.nn.ModuleList(layers(lib, 3))))
    assert len(e) == len(t)
    assert names(e) == names(t)
    assert same_text(repr(e), repr(t))


def test_module_list_indexing_and_errors():
    m = ember.nn.ModuleList(layers(ember, 3))
    assert m[-1] is m[2] and list(m) == [m[0], m[1], m[2]]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        m[3]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got Linear"):
        m.extend(ember.nn.Linear(1, 1))
    with pytest.raises(NotImplementedError):
        m(ember.zeros(1))
    assert "0" not in dir(m)


def test_module_dict_matches_torch():
    def build(lib):
        d = lib.nn.ModuleDict({"b": lib.nn.Linear(2, 3), "a": lib.nn.Identity()})
        d["c"] = lib.nn.Linear(3, 1)
        d.update([("e", lib.nn.Flatten()), ("d", lib.nn.Linear(1, 1))])
        d.update(OrderedDict([("z", lib.nn.Identity())]))
        del d["a"]
        popped = d.pop("z")
        return d, popped
    (e, ep), (t, tp) = run_both(build)
    assert list(e) == list(t) == list(e.keys())
    assert names(e) == names(t)
    assert same_text(repr(e), repr(t))
    assert isinstance(ep, ember.nn.Identity) and "b" in e and "a" not in e and len(e) == len(t)
    assert [k for k, _ in e.items()] == list(t.keys()) and len(list(e.values())) == 4
    e.clear()
    assert len(e) == 0
    for bad, exc in [(3, TypeError), ([("a",)], ValueError), ([3], TypeError)]:
        with pytest.raises(exc) as e_err:
            ember.nn.ModuleDict().update(bad)
        with pytest.raises(exc) as t_err:
            torch.nn.ModuleDict().update(bad)
        assert str(e_err.value) == str(t_err.value)


def test_parameter_list_matches_torch():
    def build(lib):
        pl = lib.nn.ParameterList([lib.ones(2, 3), lib.nn.Parameter(lib.zeros(4))])
        pl.append(lib.ones(1, dtype=lib.float64))
        pl.extend([lib.zeros(2)])
        pl.append("not a tensor")
        pl[0] = lib.full((2, 3), 2.0)
        return pl
    e, t = run_both(build)
    assert len(e) == len(t) == 5
    assert names(e) == names(t) == ["0", "1", "2", "3"]
    assert same_text(repr(e), repr(t))
    assert all(isinstance(p, ember.nn.Parameter) for p in list(e)[:4]) and e[-1] == "not a tensor"
    assert e[0].tolist() == [[2.0] * 3] * 2 and e[0].requires_grad
    assert len(e[1:3]) == 2 and e[1:3][0] is e[1]
    assert [p.shape for p in e.parameters()] == [p.shape for p in t.parameters()]
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        e()
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable"):
        e.extend(ember.zeros(2))
    with pytest.raises(IndexError):
        e[7]


def test_parameter_dict_matches_torch():
    def build(lib):
        pd = lib.nn.ParameterDict({"w": lib.ones(2), "b": lib.nn.Parameter(lib.zeros(3))})
        pd["a"] = lib.zeros(1, 2)
        pd.update([("z", lib.ones(1))])
        pd.setdefault("y", lib.ones(3))
        pd["s"] = "text"
        popped = pd.pop("z")
        last = pd.popitem()
        return pd, popped, last
    (e, ep, el), (t, tp, tl) = run_both(build)
    assert list(e) == list(t) == list(e.keys())
    assert names(e) == names(t)
    assert same_text(repr(e), repr(t))
    assert el[0] == tl[0] and ep.shape == (1,) and isinstance(ep, ember.nn.Parameter)
    assert "a" in e and e.get("nope", 5) == 5 and isinstance(e["a"], ember.nn.Parameter)
    merged = e | ember.nn.ParameterDict({"q": ember.ones(1)})
    assert list(merged) == list(t | torch.nn.ParameterDict({"q": torch.ones(1)}))
    assert list(e.copy()) == list(e) and list(e.fromkeys(["k"], ember.ones(1))) == ["k"]
    with pytest.raises(TypeError, match="not a string"):
        e[1] = ember.ones(1)
    with pytest.raises(RuntimeError, match="ParameterDict should not be called"):
        e(1)
    e.clear()
    assert len(e) == 0 and list(e.parameters()) == []


def test_containers_register_for_module_methods():
    net = ember.nn.Sequential(ember.nn.ModuleList([ember.nn.Linear(2, 2)]),
                              ember.nn.ModuleDict({"x": ember.nn.Linear(2, 1)}))
    net.add_module("pl", ember.nn.ParameterList([ember.ones(3)]))
    assert names(net) == ["0.0.weight", "0.0.bias", "1.x.weight", "1.x.bias", "pl.0"]
    net.double()
    assert all(p.dtype == ember.float64 for p in net.parameters())
