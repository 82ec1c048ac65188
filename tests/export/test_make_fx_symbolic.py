"""make_fx(tracing_mode="symbolic"): graphs with size symbols, compared with torch 2.13's
make_fx symbolic output (which sizes share a symbol, the expressions of every node's shape,
symbols renamed in order of appearance), and run at other sizes equal to eager."""
import re

import numpy as np
import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import ember
from ember.fx.experimental.proxy_tensor import make_fx


def _tensor_shapes_torch(gm):
    return [tuple(str(s) for s in n.meta["val"].shape) for n in gm.graph.nodes
            if isinstance(n.meta.get("val"), torch.Tensor)]


def _tensor_shapes_ember(gm):
    return [tuple(str(s) for s in n.meta["shape"]) for n in gm.graph.nodes if "shape" in n.meta]


def _renamed(shapes):
    """Symbols renamed a0, a1, ... in order of first appearance (torch hashes its names)."""
    names = {}
    return [tuple(re.sub(r"\b[s]\d+\b", lambda m: names.setdefault(m.group(), f"a{len(names)}"), s) for s in shape)
            for shape in shapes]


def _same_graph_shapes(fn, *shapes):
    arrays = [np.random.default_rng(0).standard_normal(s).astype(np.float32) for s in shapes]
    ours = make_fx(lambda *a: fn(ember, *a), tracing_mode="symbolic")(*map(ember.tensor, arrays))
    theirs = torch_make_fx(lambda *a: fn(torch, *a), tracing_mode="symbolic")(*map(torch.tensor, arrays))
    # torch lists its sym_size nodes (ints) apart; the tensors' shapes in order must agree
    assert _renamed(_tensor_shapes_ember(ours)) == _renamed(_tensor_shapes_torch(theirs))
    return ours


CASES = {
    "broadcast and reduce": (lambda lib, x, y: (x * 2).sum(0) + y, [(3, 4), (4,)]),
    "reshape to a product": (lambda lib, x: x.reshape(x.shape[0] * x.shape[1]).relu(), [(3, 5)]),
    "matmul and softmax": (lambda lib, x, w: (x @ w).softmax(-1).transpose(0, 1), [(3, 5), (5, 6)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_symbolic_graph_shapes_match_torch_and_run_at_other_sizes(name):
    fn, shapes = CASES[name]
    gm = _same_graph_shapes(fn, *shapes)
    assert gm.graph.symbols and "# sizes: s0" in gm.code
    rng = np.random.default_rng(1)
    for scale in (2, 3):
        new = [tuple(n * scale if n > 1 else n for n in s) for s in shapes]
        args = [ember.tensor(rng.standard_normal(s).astype(np.float32)) for s in new]
        np.testing.assert_allclose(gm(*args).numpy(), fn(ember, *args).numpy(), rtol=1e-6, atol=1e-6)


def test_symbolic_module_checks_the_sizes_it_was_traced_for():
    gm = make_fx(lambda x, y: x + y, tracing_mode="symbolic")(ember.ones(3, 4), ember.ones(4))
    assert str(gm.graph.placeholders[0].meta["shape"]) == "(s0, s1)"
    with pytest.raises(AssertionError, match=r"Guard failed: y.size\(\)\[0\] == x.size\(\)\[1\]"):
        gm(ember.ones(3, 4), ember.ones(5))  # duck sizing: one symbol for both fours
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] >= 2"):
        gm(ember.ones(1, 4), ember.ones(4))  # 0 and 1 are specialised, as torch


@pytest.mark.parametrize("fn", [
    lambda L: lambda x: L.zeros_like(x).add(1).sum(),
    lambda L: lambda x: L.arange(x.shape[1]).sum(),
    lambda L: lambda x: x.new_empty(x.shape).fill_(1).sum(),
    lambda L: lambda x: L.ones(x.shape[0], x.shape[1]).sum() + L.arange(x.shape[1]).sum(),
])
def test_an_input_read_only_for_its_sizes_binds_them(fn):
    """Its sizes are symbols too (a KeyError 's0' before, even at the traced sizes)."""
    gm = make_fx(fn(ember), tracing_mode="symbolic")(ember.zeros(3, 4))
    tm = torch_make_fx(fn(torch), tracing_mode="symbolic")(torch.zeros(3, 4))
    for shape in ((3, 4), (5, 4), (5, 7)):
        assert gm(ember.zeros(*shape)).item() == tm(torch.zeros(*shape)).item()


class _Cache:
    def __init__(self, keys):
        self.keys = keys


def test_a_dynamic_spec_declares_the_symbols_also_of_tensors_an_object_holds():
    """``@dynamic_spec`` on the traced function: its ShapeVars are the graph's symbols (not
    duck sizing), in any tracing mode; a cache object's keys are an input read at each call
    (were a constant baked in: a new cache ran with the traced one's keys)."""
    from ember.fx.experimental.dynamic_spec import ObjectSpec, ShapeVar, TensorSpec, dynamic_spec
    B, T = ShapeVar("B", min=2, max=8), ShapeVar("T", min=2, max=10)

    @dynamic_spec({"x": TensorSpec([B, None]), "cache": ObjectSpec({"keys": TensorSpec([T, None])})})
    def attend(x, cache):
        return (x @ cache.keys.T).softmax(-1)

    rng = np.random.default_rng(0)
    tensor = lambda *shape: ember.tensor(rng.standard_normal(shape).astype(np.float32))  # noqa: E731
    for mode in ("real", "symbolic"):
        gm = make_fx(attend, tracing_mode=mode)(tensor(3, 4), _Cache(tensor(5, 4)))
        assert gm.graph.symbols == ("B", "T") and "cache_keys" in gm.code
        for b, t in ((3, 5), (8, 2), (2, 10)):
            x, cache = tensor(b, 4), _Cache(tensor(t, 4))
            np.testing.assert_allclose(gm(x, cache).numpy(), attend(x, cache).numpy(), rtol=1e-6)
        with pytest.raises(AssertionError, match=r"Guard failed: cache_keys.size\(\)\[0\] <= 10"):
            gm(tensor(3, 4), _Cache(tensor(11, 4)))
