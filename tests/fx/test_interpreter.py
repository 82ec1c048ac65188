"""ember.fx.Interpreter, Transformer and passes.shape_prop.ShapeProp against torch.fx 2.13:
passes written the torch way run, rewrite and annotate graphs as torch's do."""
import operator

import pytest

import ember
import ember.fx
import ember.fx.passes.shape_prop
from torchcompare import assert_close, to_ember

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402
import torch.fx.passes.shape_prop  # noqa: E402


def traced(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 4)
            self.register_buffer("shift", lib.full((4,), 0.5))

        def forward(self, x, k=2.0):
            h = lib.relu(self.lin(x)) - self.shift
            return lib.nn.functional.relu(h).t()[1:] * k, h.sum(dim=0, keepdim=True)
    torch.manual_seed(0)
    gm = lib.fx.symbolic_trace(M())
    if lib is ember:
        gm.load_state_dict({k: to_ember(v) for k, v in traced(torch).state_dict().items()})
    return gm


def both(fn):
    return fn(ember), fn(torch)


def test_an_interpreter_pass_runs_and_collects_values_as_torchs():
    def run(lib):
        class Swap(lib.fx.Interpreter):  # the docs' example: relu becomes sigmoid, neg becomes tanh
            def call_function(self, target, args, kwargs):
                if target in (lib.relu, lib.nn.functional.relu):
                    return lib.sigmoid(*args)
                return super().call_function(target, args, kwargs)

        interp = Swap(traced(lib))
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
        out = interp.run(x)
        kept = sorted(n.name for n in interp.env)
        partial = lib.fx.Interpreter(interp.module, garbage_collect_values=False)
        lin = next(n for n in partial.graph.nodes if n.op == "call_module")
        given = partial.run(x, initial_env={lin: lib.zeros(2, 4)})
        inputs = [x, 3.0]
        boxed = lib.fx.Interpreter(interp.module).boxed_run(inputs)
        with pytest.raises(RuntimeError) as info:
            lib.fx.Interpreter(interp.module).boxed_run([x])
        return out, kept, given, boxed, inputs, len(partial.env), str(info.value)
    e, t = both(run)
    for got, want in zip(e[0] + e[2] + e[3], t[0] + t[2] + t[3]):
        assert_close(got, want)
    assert e[1] == t[1] and e[4] == t[4] == [] and e[5:] == t[5:]


def test_interpreter_errors_equal_torchs():
    def errors(lib):
        gm = traced(lib)
        found = []
        with pytest.raises(RuntimeError) as info:  # no input, no default
            lib.fx.Interpreter(gm).run()
        found.append(str(info.value).split("\n\n")[0])
        with pytest.raises(RuntimeError) as info:  # a shape error inside a node
            lib.fx.Interpreter(gm).run(lib.ones(2, 5))
        found.append(str(info.value).split("\n\n")[1].split("\n")[0])
        interp = lib.fx.Interpreter(gm)
        with pytest.raises(RuntimeError) as info:
            interp.fetch_attr("lin.missing")
        found.append(str(info.value))
        return found
    assert errors(ember) == errors(torch)


def test_a_transformer_rewrites_into_torchs_code():
    def transform(lib):
        class Swap(lib.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target in (lib.relu, lib.nn.functional.relu):
                    return super().call_function(lib.sigmoid, args, {})
                if target is operator.mul:
                    return super().call_function(operator.add, args, kwargs)
                return super().call_function(target, args, kwargs)

            def call_method(self, target, args, kwargs):
                return super().call_method("mean" if target == "sum" else target, args, kwargs)
        gm = Swap(traced(lib)).transform()
        return gm, gm(lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
    (e, out_e), (t, out_t) = both(transform)
    assert e.code == t.code and str(e.graph) == str(t.graph)
    for got, want in zip(out_e, out_t):
        assert_close(got, want)


def test_shape_prop_records_torchs_shapes_dtypes_strides_and_types():
    def propagate(lib):
        gm = traced(lib)
        lib.fx.passes.shape_prop.ShapeProp(gm).propagate(lib.ones(5, 3, dtype=lib.float32))
        rows = []
        for n in gm.graph.nodes:
            meta = n.meta.get("tensor_meta")
            metas = meta if isinstance(meta, tuple) and not hasattr(meta, "dtype") else [meta]
            rows.append((n.name, n.meta["type"].__name__, [
                None if m is None else (tuple(m.shape), str(m.dtype), m.requires_grad, m.stride, m.is_quantized)
                for m in metas]))
        return rows
    assert propagate(ember) == propagate(torch)
    assert ember.fx.passes.shape_prop.TensorMetadata._fields == torch.fx.passes.shape_prop.TensorMetadata._fields
