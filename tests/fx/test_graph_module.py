"""ember.fx against torch.fx 2.13, continued: unpacking Proxies, type annotations in the
printed graph and code, pickling and copying a GraphModule, dead code elimination."""
import copy
import operator
import pickle
from typing import List, Optional, Tuple

import pytest

import ember
import ember.fx
from torchcompare import assert_close, to_ember

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402


def both(fn):
    return fn(ember), fn(torch)


def test_unpacking_a_proxy_records_getitems_and_other_iteration_raises_torchs_trace_error():
    def unpacking(lib):
        def f(x):
            a, b = x.shape
            c, d, e = x.split(1)
            return (c + a) * b + d.sum() + e.size(0)
        return lib.fx.symbolic_trace(f)
    e, t = both(unpacking)
    assert e.code == t.code and str(e.graph) == str(t.graph)
    x = torch.randn(3, 2)
    assert_close(e(to_ember(x)), t(x))

    def looping(x):
        for row in x:
            x = x + row
        return x

    def starred(x):
        return x.new_zeros(*x)

    def starred_unpack(x):
        a, *rest = x  # UNPACK_EX: its length is not known either
        return a
    for f in (looping, starred, starred_unpack):
        with pytest.raises(torch.fx.proxy.TraceError) as want:
            torch.fx.symbolic_trace(f)
        with pytest.raises(ember.fx.proxy.TraceError) as got:
            ember.fx.symbolic_trace(f)
        assert str(got.value) == str(want.value)
        # (the error's traceback holds the trace's Proxies, which keep ember's functions intercepted
        # while alive; the traceback holds this frame, so only a garbage collection would free them:
        # later tests ran intercepted, until one happened)
        want = got = None
    assert ember.fx.proxy.interception.users == 0


def test_annotations_print_in_the_graph_and_the_code_as_torchs(monkeypatch):
    import builtins
    monkeypatch.setattr(builtins, "_", 5, raising=False)  # as an interactive session leaves it
    def annotated(lib):
        def f(x: lib.Tensor, y: List[int], z: Optional[lib.Tensor], w: Tuple[lib.Tensor, ...], s: lib.Size,
              q: "lib.Tensor", n: int | None = 2, k: float = 1.5) -> Tuple[lib.Tensor, int]:
            return x * k + n, y
        return lib.fx.symbolic_trace(f)
    e, t = both(annotated)
    assert e.code == t.code
    assert str(e.graph) == str(t.graph)
    x = torch.randn(3)
    out_e, out_t = e(to_ember(x), [1], None, (), None, None), t(x, [1], None, (), None, None)
    assert_close(out_e[0], out_t[0])
    assert out_e[1] == out_t[1] == [1]

    def built(lib):
        g = lib.fx.Graph()
        x = g.placeholder("x", type_expr=lib.Tensor)
        r = g.call_function(lib.relu, (x,), type_expr=lib.Tensor)
        g.output(r, type_expr=lib.Tensor)
        return g.python_code("self").src, str(g)
    assert built(ember) == built(torch)


def _model(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 4)
            self.register_buffer("scale", lib.full((4,), 2.0))
            self.layers = lib.nn.ModuleList([lib.nn.Tanh()])

        def forward(self, x: lib.Tensor, k: int = 2) -> lib.Tensor:
            a, b = x.shape
            return self.layers[0](lib.relu(self.lin(x)) * self.scale).sum(0) * k + b
    return lib.fx.symbolic_trace(M())


def test_a_pickled_graph_module_loads_with_torchs_code_graph_and_results(tmp_path):
    e, t = both(_model)
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    e.note = t.note = "kept"  # an attribute the graph does not name
    loaded = [pickle.loads(pickle.dumps(e)), pickle.loads(pickle.dumps(t))]
    ember.save(e, tmp_path / "gm.pt")
    loaded.append(ember.load(tmp_path / "gm.pt", weights_only=False))
    x = torch.randn(5, 3)
    for got in loaded:
        assert got.code == t.code and str(got.graph) == str(t.graph) and type(got).__name__ == "GraphModule"
        assert got.note == "kept" and sorted(got.state_dict()) == sorted(t.state_dict())
        if got is loaded[1]:
            torch.testing.assert_close(got(x), t(x))
        else:
            assert_close(got(to_ember(x)), t(x))
    assert type(loaded[0]) is not type(e) and isinstance(loaded[0], ember.fx.GraphModule)
    with pytest.raises(pickle.UnpicklingError):  # a file naming a GraphModule loads only when trusted
        ember.load(tmp_path / "gm.pt")


def test_a_pickled_graph_whose_targets_are_not_names_is_refused():
    e = _model(ember)
    node = next(n for n in e.graph.nodes if n.op == "call_method")
    node.target = "sum(); __import__('os').system('true'); x.sum"
    with pytest.raises(ValueError, match="invalid call_method target"):
        pickle.loads(pickle.dumps(e))


def test_a_deep_copy_keeps_the_graph_and_training_flag_as_torchs():
    e, t = both(_model)
    for gm in (e, t):
        gm.note = "kept"
        gm.eval()
    e2, t2 = copy.deepcopy(e), copy.deepcopy(t)
    assert e2.code == t2.code and str(e2.graph) == str(t2.graph) and type(e2).__name__ == type(t2).__name__
    assert not hasattr(e2, "note") and not hasattr(t2, "note") and not e2.training and not t2.training
    assert e2.lin.weight is not e.lin.weight and e2.lin.weight.equal(e.lin.weight)


def test_dead_code_elimination_keeps_side_effects_as_torchs():
    def program(lib):
        class Impure(lib.nn.Module):
            _is_impure = True

            def forward(self, x):
                return x

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.impure, self.pure = Impure(), lib.nn.ReLU()

            def forward(self, x):
                self.impure(x)
                self.pure(x)
                x.add_(1)
                lib.relu(x) * 2
                return x

        gm = lib.fx.symbolic_trace(M())
        g = gm.graph
        with g.inserting_before(next(iter(reversed(g.nodes)))):
            g.call_function(operator.setitem, (next(iter(g.nodes)), 0, 1.0))
        changed = g.eliminate_dead_code()
        kept = str(g)
        again = g.eliminate_dead_code(is_impure_node=lambda node: node.op in ("placeholder", "output"))
        return changed, kept, again, str(g)
    assert program(ember) == program(torch)


def test_lint_finds_what_torchs_finds():
    def failures(lib):
        found = []
        for damage in range(4):
            gm = _model(lib)
            g, nodes = gm.graph, list(gm.graph.nodes)
            if damage == 0:  # read before defined
                nodes[3].args = (nodes[-2],) + nodes[3].args[1:]
            elif damage == 1:  # a node of another graph
                nodes[3].args = (lib.fx.Graph().placeholder("z"),) + nodes[3].args[1:]
            elif damage == 2:  # a submodule the module lacks
                next(n for n in nodes if n.op == "call_module").target = "missing"
            else:  # a method target that is not a string
                next(n for n in nodes if n.op == "call_method").target = 3
            with pytest.raises((RuntimeError, ValueError)) as info:
                g.lint()
            found.append((info.type.__name__, str(info.value)))
        return found
    assert failures(ember) == failures(torch)
