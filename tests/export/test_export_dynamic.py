"""ember.export.export(dynamic_shapes=...): torch's Dim/dict/tuple forms and dynamic_spec's
forms give one graph over a range of sizes, with range_constraints and runtime guards that
match torch 2.13's export on the same model; saved and loaded programs keep them."""
import io
import math

import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember._dynamo import exc
from ember.export import Dim, export, load, save
from ember.fx.experimental.dynamic_spec import DictSpec, ObjectSpec, ShapesSpec, ShapeVar, TensorSpec, dynamic_spec


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, y):
        return self.fc(x).relu() + y.sum(), ember.zeros(x.shape[0], 2)


class TNet(torch.nn.Module):  # the same program in torch: the reference
    def __init__(self, net):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.fc.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in net.fc.state_dict().items()})

    def forward(self, x, y):
        return self.fc(x).relu() + y.sum(), torch.zeros(x.shape[0], 2)


class Declared(Net):
    @dynamic_spec({"x": TensorSpec([ShapeVar("batch", min=2, max=64), None])})
    def forward(self, x, y):
        return super().forward(x, y)


def _pair(rows, cols=4, seed=0):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((rows, cols)).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    return (ember.tensor(x), ember.tensor(y)), (torch.from_numpy(x), torch.from_numpy(y))


def _ranges(ep):
    return sorted((v.lower, v.upper) for v in ep.range_constraints.values())


@pytest.mark.parametrize("form", ["dict", "tuple", "list_dims", "spec", "decorator"])
def test_one_graph_for_every_batch_in_range_equals_torch(form):
    ember.manual_seed(0)
    net = Net()
    (x, y), (tx, ty) = _pair(8)
    batch, tbatch = Dim("batch", min=2, max=64), torch.export.Dim("batch", min=2, max=64)
    shapes, tshapes = {"dict": ({"x": {0: batch}, "y": None}, {"x": {0: tbatch}, "y": None}),
                       "tuple": (({0: batch}, None), ({0: tbatch}, None)),
                       "list_dims": (([batch, Dim.STATIC], None), ([tbatch, torch.export.Dim.STATIC], None)),
                       "spec": ({"x": TensorSpec([ShapeVar("batch", min=2, max=64), None])},
                                {"x": {0: tbatch}, "y": None}),
                       "decorator": (None, {"x": {0: tbatch}, "y": None})}[form]
    if form == "decorator":
        net.__class__ = Declared
    ep = export(net, (x, y), dynamic_shapes=shapes)
    tep = torch.export.export(TNet(net), (tx, ty), dynamic_shapes=tshapes)
    assert _ranges(ep) == [(2, 64)] == [(int(v.lower), int(v.upper)) for v in tep.range_constraints.values()]
    assert str(ep).endswith("Range constraints: {batch: VR[2, 64]}\n") and "[batch, 3]" in str(ep)
    module, tmodule = ep.module(), tep.module()
    for rows in (2, 3, 17, 64):
        (x, y), (tx, ty) = _pair(rows, seed=rows)
        for got, want in zip(module(x, y), tmodule(tx, ty)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    for rows, cols in [(65, 4), (5, 3)]:  # out of range; a static dimension changed
        (x, y), (tx, ty) = _pair(rows, cols)
        with pytest.raises(AssertionError) as theirs:
            tmodule(tx, ty)
        with pytest.raises(AssertionError) as ours:
            module(x, y)
        assert str(ours.value) == str(theirs.value)  # "Guard failed: x.size()[0] <= 64"


def test_below_min_and_derived_and_shared_dims():
    class Pair(nn.Module):
        def forward(self, x, y):
            return x[::2] + y * ember.arange(y.shape[0])[:, None]

    b = Dim("b", max=32)
    ep = export(Pair(), (ember.randn(8, 3), ember.randn(4, 3)), dynamic_shapes={"x": {0: 2 * b}, "y": {0: b}})
    assert repr(ep.range_constraints) == "{b: VR[0, 32]}" and repr(b) == "Dim('b', min=0, max=32)"
    module = ep.module()
    for n in (2, 5, 32):
        x, y = ember.randn(2 * n, 3), ember.randn(n, 3)
        want = x.numpy()[::2] + y.numpy() * np.arange(n)[:, None]
        np.testing.assert_allclose(module(x, y).numpy(), want, rtol=1e-6)
    with pytest.raises(AssertionError, match=r"Guard failed: 2\*y.size\(\)\[0\] == x.size\(\)\[0\]"):
        module(ember.randn(7, 3), ember.randn(3, 3))
    with pytest.raises(AssertionError, match=r"Guard failed: y.size\(\)\[0\] <= 32"):
        module(ember.randn(66, 3), ember.randn(33, 3))
    ep = export(Net(), _pair(8)[0], dynamic_shapes=({0: Dim("r", min=6)}, None))
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] >= 6"):
        ep.module()(*_pair(5)[0])


def test_saved_and_loaded_program_keeps_ranges_and_guards():
    class Pos(nn.Module):
        def forward(self, x):
            return x * ember.arange(x.shape[1]), ember.ones(x.shape[0], x.shape[1] + 1)

    ep = export(Pos(), (ember.randn(3, 5),), dynamic_shapes={"x": (Dim("B", max=16), Dim("T", max=10))})
    buf = io.BytesIO()
    save(ep, buf)
    buf.seek(0)
    loaded = load(buf)
    assert str(loaded) == str(ep) and _ranges(loaded) == [(0, 10), (0, 16)]
    module = loaded.module()
    for shape in [(2, 2), (7, 9), (16, 10)]:
        x = ember.randn(*shape)
        out, ones = module(x)
        np.testing.assert_allclose(out.numpy(), x.numpy() * np.arange(shape[1]), rtol=1e-6)
        assert ones.shape == (shape[0], shape[1] + 1) and bool((ones == 1).all())
    with pytest.raises(AssertionError, match=r"x.size\(\)\[1\] <= 10"):
        module(ember.randn(2, 11))


def test_auto_may_specialise_but_a_named_dim_may_not():
    class Fixed(nn.Module):
        def forward(self, x):
            return x.reshape(8, 4)

    x = ember.randn(8, 4)
    assert export(Fixed(), (x,), dynamic_shapes={"x": {0: Dim.AUTO}}).range_constraints == {}
    with pytest.raises(exc.UserError, match=r"Constraints violated \(b\)!.*specialized it to be a constant \(8\)"):
        export(Fixed(), (x,), dynamic_shapes={"x": {0: Dim("b")}})
    with pytest.raises(exc.UserError, match="specialized"):
        export(Fixed(), (x,), dynamic_shapes={"x": {0: Dim.DYNAMIC}})
    auto = export(Net(), _pair(8)[0], dynamic_shapes={"x": {0: Dim.AUTO}, "y": {0: Dim.AUTO}})
    assert _ranges(auto) == [(2, math.inf)] * 2
    assert repr(auto.range_constraints) == "{s0: VR[2, int_oo], s1: VR[2, int_oo]}"


def test_bad_dynamic_shapes_raise_torch_errors():
    (x, y), _ = _pair(8)
    with pytest.raises(exc.UserError, match=r"top-level keys must be the arg names \['x', 'y'\]"):
        export(Net(), (x, y), dynamic_shapes={"x": {0: Dim("b")}})
    with pytest.raises(exc.UserError, match="length must match the number of inputs"):
        export(Net(), (x, y), dynamic_shapes=({0: Dim("b")},))
    with pytest.raises(exc.UserError, match="dimension 2 of x is out of range"):
        export(Net(), (x, y), dynamic_shapes={"x": {2: Dim("b")}, "y": None})
    with pytest.raises(RuntimeError, match=r"x.size\(0\) = 8 is outside the range \[10, 20\]"):
        export(Net(), (x, y), dynamic_shapes={"x": {0: Dim("b", min=10, max=20)}, "y": None})
    with pytest.raises(ValueError, match="max"):
        Dim("b", min=5, max=3)
    with pytest.raises(ValueError, match="names parameter 'w'"):
        export(Net(), (x, y), dynamic_shapes=ShapesSpec({"w": TensorSpec([ShapeVar("b"), None])}))


class _Tiled(nn.Module):
    def forward(self, x, n):
        return x.repeat(n, 1) * 2 + n


def test_intvar_on_an_int_argument_is_a_symbol_read_from_each_call():
    from ember.fx.experimental.dynamic_spec import STATIC, IntVar
    spec = ShapesSpec({"x": TensorSpec([ShapeVar("B", max=16), STATIC]), "n": IntVar("N", min=1, max=9)})
    model = _Tiled()
    ep = export(model, (ember.randn(3, 4), 5), dynamic_shapes=spec)
    assert ep.int_inputs == {"N": 1} and {str(k): (v.lower, v.upper) for k, v in ep.range_constraints.items()} == \
        {"B": (0, 16), "N": (1, 9)}
    assert "View(clone, shape=(B*N, 4))" in str(ep)
    buffer = io.BytesIO()
    save(ep, buffer)
    buffer.seek(0)
    rng = np.random.default_rng(3)
    for module in (ep.module(), load(buffer).module()):
        for b, n in ((2, 3), (7, 8), (16, 1)):
            x = ember.tensor(rng.standard_normal((b, 4)).astype(np.float32))
            want = torch.tensor(x.numpy()).repeat(n, 1) * 2 + n  # torch on the same program
            np.testing.assert_allclose(module(x, n).numpy(), want.numpy(), rtol=1e-6)
        with pytest.raises(AssertionError, match=r"Guard failed: argument 1 <= 9"):
            module(ember.ones(2, 4), 10)
        with pytest.raises(RuntimeError, match=r"position 1 to be an int \(IntVar N\), got float"):
            module(ember.ones(2, 4), 2.0)


class _Cache:
    def __init__(self, keys, bias):
        self.keys, self.extra = keys, {"bias": bias}


class Attend(nn.Module):
    """Attention over a key cache an object holds, its length T declared by an ObjectSpec."""
    T = ShapeVar("T", min=2, max=12)

    @dynamic_spec({"x": TensorSpec([ShapeVar("B", min=2, max=16), None]),
                   "cache": ObjectSpec({"keys": TensorSpec([T, None]), "extra": DictSpec({"bias": TensorSpec([T])})})})
    def forward(self, x, cache):
        return (x @ cache.keys.T + cache.extra["bias"]).softmax(-1)


def test_tensors_an_object_spec_declares_are_symbolic_inputs_of_the_program(tmp_path):
    """Not constants baked in: each call reads them from its object (torch 2.13's export has no
    ObjectSpec: the reference is the eager module)."""
    rng = np.random.default_rng(0)

    def call(b, t):
        x, keys, bias = (ember.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((b, 4), (t, 4), (t,)))
        return x, _Cache(keys, bias)
    ep = export(Attend(), call(3, 5))
    assert sorted(map(str, ep.range_constraints)) == ["B", "T"] and _ranges(ep) == [(2, 12), (2, 16)]
    assert ep.constants == {} and "cache_keys" in ep.graph_module.code
    save(ep, tmp_path / "attend.pt2")
    for module in (ep.module(), load(tmp_path / "attend.pt2").module()):
        for b, t in ((3, 5), (16, 2), (7, 12)):
            x, cache = call(b, t)
            np.testing.assert_allclose(module(x, cache).numpy(), Attend()(x, cache).numpy(), rtol=1e-6)
        with pytest.raises(AssertionError, match=r"cache_keys.size\(\)\[0\] <= 12"):
            module(*call(3, 13))
        x, cache = call(3, 5)
        cache.extra["bias"] = ember.zeros(4)
        with pytest.raises(AssertionError, match="Guard failed"):
            module(x, cache)
        with pytest.raises(RuntimeError, match="has no attribute 'keys'"):
            module(x, object())
