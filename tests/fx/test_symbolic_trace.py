"""ember.fx against torch.fx 2.13: the same program traced, printed, rewritten and run under
both libraries gives the same graph text, code, tabular rows and results."""
import gc
import operator
import re

import numpy as np
import pytest

import ember
import ember.fx
import ember.fx.experimental.proxy_tensor
from torchcompare import assert_close, to_ember

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402


def model(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 4)
            self.w = lib.nn.Parameter(lib.ones(4))
            self.register_buffer("buf", lib.full((4,), 2.0))
            self.block = lib.nn.Sequential(lib.nn.Tanh(), lib.nn.ReLU())

        def forward(self, x, y):
            a = lib.cat([x, y]).view(-1, 3)
            b = self.lin(a) * self.w + 1 - self.buf
            c = lib.nn.functional.relu(self.block(b))
            m = lib.max(c)
            unused = x * 2  # noqa: F841
            return c.float()[0, 1:], m, x.shape[0], x.size(1), -c.sum(dim=0, keepdim=True)
    return M()


def both(fn):
    return fn(ember), fn(torch)


def test_symbolic_trace_prints_torchs_graph_and_code_and_runs_the_model():
    e, t = both(lambda lib: lib.fx.symbolic_trace(model(lib)))
    assert e.code == t.code
    assert str(e.graph) == str(t.graph)
    assert str(e) == str(t)
    assert type(e).__name__ == type(t).__name__ == "M"
    assert [n.name for n in e.graph.nodes] == [n.name for n in t.graph.nodes]
    assert [n.op for n in e.graph.nodes] == [n.op for n in t.graph.nodes]
    assert sorted(dict(e.named_parameters())) == sorted(dict(t.named_parameters()))
    for (_, pe), (_, pt) in zip(sorted(e.named_parameters()), sorted(t.named_parameters())):
        pe.data.copy_(to_ember(pt.detach()))
    x, y = torch.randn(2, 3), torch.randn(4, 3)
    out_e, out_t = e(to_ember(x), to_ember(y)), t(x, y)
    for a, b in zip(out_e, out_t):
        if isinstance(b, torch.Tensor):
            assert_close(a, b)
        else:
            assert a == b


def test_print_tabular_rows_equal_torchs(capsys):
    pytest.importorskip("tabulate")
    for lib in (ember, torch):
        lib.fx.symbolic_trace(model(lib)).graph.print_tabular()
    ember_rows, torch_rows = capsys.readouterr().out.split("\nopcode")
    # a function's repr differs (torch's are built-in methods), and so the column widths
    same = lambda rows: re.sub(r"[ -]+", " ", re.sub(r"<[^>]*>", "<function>", rows)).strip()  # noqa: E731
    assert same("opcode" + torch_rows) == same(ember_rows)


def test_a_function_traces_with_its_name_and_reruns_after_rewriting():
    def f(x, input):
        return lib.tanh(x + input).sum(1)

    outs = []
    for lib in (ember, torch):
        gm = lib.fx.symbolic_trace(f)
        assert type(gm).__name__ == "f"
        for node in gm.graph.nodes:
            if node.target == lib.tanh:
                with gm.graph.inserting_after(node):
                    new = gm.graph.call_function(lib.sigmoid, (node.args[0],))
                with gm.graph.inserting_after(new):
                    extra = gm.graph.call_function(operator.mul, (new, 2))
                node.replace_all_uses_with(extra)
                gm.graph.erase_node(node)
        gm.graph.lint()
        gm.recompile()
        outs.append((gm.code, str(gm.graph)))
        x = lib.tensor(np.arange(6.0).reshape(2, 3))
        np.testing.assert_allclose(np.asarray(gm(x, x)), 2 / (1 + np.exp(-2 * np.arange(6.0).reshape(2, 3))).sum(1) * 0
                                   + (2 / (1 + np.exp(-2 * np.arange(6.0).reshape(2, 3)))).sum(1))
    assert outs[0] == outs[1]


def test_erasing_a_node_with_users_raises_torchs_error():
    msgs = []
    for lib in (ember, torch):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        r = g.call_function(lib.relu, (x,))
        g.output(r)
        with pytest.raises(RuntimeError) as info:
            g.erase_node(x)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_proxies_reach_public_functions_operators_and_methods():
    def build(lib):
        g = lib.fx.Graph()
        tracer = lib.fx.proxy.GraphAppendingTracer(g)
        x, y = (lib.fx.Proxy(g.placeholder(n), tracer) for n in "xy")
        z = lib.stack([x, y]).view(2, -1)
        z = lib.nn.functional.leaky_relu(z, negative_slope=0.2) + 1
        z = 2 ** z[0].view(3, 3) @ y.t()
        g.output((z.node, lib.exp(x).size(0).node))
        return lib.fx.GraphModule(lib.nn.Module(), g)
    e, t = both(build)
    assert e.code == t.code
    x, y = torch.randn(3, 3), torch.randn(3, 3)
    out_e, out_t = e(to_ember(x), to_ember(y)), t(x, y)
    assert_close(out_e[0], out_t[0])
    assert out_e[1] == out_t[1] == 3


def test_wrap_records_a_call_and_the_code_rewraps_it():
    e, t = both(lambda lib: lib.fx.symbolic_trace(_Wrapped(lib)))
    assert e.code.replace(__name__.replace(".", "_"), "M") == t.code.replace(__name__.replace(".", "_"), "M")
    assert "wrap(" in e.code and "_wrapped_helper(" in e.code


def _wrapped_helper(x, k):
    if k > 0:  # control flow on a Python value: fine, since the call is not traced through
        return x * k
    return x


ember.fx.wrap("_wrapped_helper")
torch.fx.wrap("_wrapped_helper")


class _Wrapped:
    def __new__(cls, lib):
        class M(lib.nn.Module):
            def forward(self, x):
                return _wrapped_helper(x, 3) + 1
        return M()


def test_control_flow_on_a_proxy_raises_torchs_error_class():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    for lib in (ember, torch):
        with pytest.raises(torch.fx.proxy.TraceError if lib is torch else ember.fx.proxy.TraceError,
                           match="symbolically traced variables cannot be used as inputs to control flow"):
            lib.fx.symbolic_trace(f)


def test_replace_pattern_rewrites_like_torch():
    def program(lib):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([lib.neg(w1), w2]).sum()
                m2 = lib.cat([lib.neg(w1), w2]).sum()
                keep = lib.neg(w1)
                return x + lib.max(m1) + lib.max(m2) + keep

        gm = lib.fx.symbolic_trace(M())
        matches = lib.fx.replace_pattern(gm, lambda a1, a2: lib.cat([lib.neg(a1), a2]).sum(),
                                         lambda w1, w2: lib.stack([w1, w2]))
        return gm, len(matches)
    (e, ne), (t, nt) = both(program)
    assert ne == nt == 2
    assert e.code == t.code


def test_the_compilers_graph_modules_stay_graph_modules():
    gm = ember.fx.experimental.proxy_tensor.make_fx(lambda x: x.sin() + 1)(ember.ones(2))
    assert isinstance(gm, ember.fx.GraphModule) and "sin" in gm.code
    assert_close(gm(ember.zeros(2)), torch.ones(2))


def test_public_functions_are_plain_again_once_no_proxy_is_alive():
    gc.collect()  # Proxies an earlier test's traceback kept (in reference cycles) are gone
    relu, cat = ember.nn.functional.relu, ember.cat
    graph = ember.fx.Graph()
    proxy = ember.fx.Proxy(graph.placeholder("x"))
    assert ember.cat is not cat and ember.cat == cat and ember.nn.functional.relu == relu
    ember.cat([proxy, proxy])
    ember.fx.symbolic_trace(lambda x: ember.nn.functional.relu(x))
    assert ember.cat is not cat  # the Proxy is still alive
    del proxy
    assert ember.cat is cat and ember.nn.functional.relu is relu
    assert [n.target for n in graph.nodes][1] is cat


def test_a_deep_copy_runs_alone():
    import copy
    gm = ember.fx.symbolic_trace(model(ember))
    twin = copy.deepcopy(gm)
    assert twin.code == gm.code and type(twin).__name__ == "GraphModule" and type(twin) is not type(gm)
    x, y = ember.randn(2, 3), ember.randn(4, 3)
    for a, b in zip(twin(x, y), gm(x, y)):
        assert a.equal(b) if isinstance(a, ember.Tensor) else a == b
    twin.lin.weight.data.zero_()
    for node in twin.graph.nodes:
        if node.op == "call_module" and node.target == "lin":
            with twin.graph.inserting_after(node):
                doubled = twin.graph.call_function(operator.mul, (node, 2))
            node.replace_all_uses_with(doubled)
            doubled.update_arg(0, node)
    twin.recompile()
    assert "lin * 2" in twin.code and "lin * 2" not in gm.code
    assert not gm.lin.weight.eq(0).all()


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_a_tensor_operator_with_a_proxy_on_its_right_records_torchs_method(dtype):
    """``constant OP proxy`` (the Tensor on the left) is a call_method on the constant, named
    and freed as torch.fx does (it read the Proxy as a value before)."""
    def traced(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                c = lib.ones(3, dtype=getattr(lib, dtype))
                if dtype == "int64":
                    return c & x, c | x, c ^ x, c << x, c >> x
                return c + x, c - x, c * x, c / x, c // x, c % x, c ** x, c == x, c < x, c >= x, c @ x
        return lib.fx.symbolic_trace(M())
    e, t = both(traced)
    assert e.code == t.code
    x = np.arange(1, 4).astype(dtype)
    for got, want in zip(e(ember.tensor(x)), t(torch.tensor(x))):
        assert_close(got, want)
    assert (ember.ones(2) + ember.ones(2)).tolist() == [2.0, 2.0]  # the operators are Tensor's again
