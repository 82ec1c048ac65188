"""What torch programs read from ``torch._dynamo`` after a compile, against real torch: the
graphs ``explain`` returns are GraphModules (``.graph.print_tabular()``, ``.graph.nodes``,
``.code``, ``print_readable()``, called on their inputs) and ``utils.counters`` holds torch's
``frames``, ``stats`` (``calls_captured``, ``unique_graphs``) and ``resumes`` counts."""
import contextlib
import io

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _one_break(t):
    def f(x):
        y = x.sin() + 1
        t._dynamo.graph_break()
        return y.cos() * 2
    return f


def _two_breaks(t):
    def h(x):
        a = x + 1
        t._dynamo.graph_break()
        b = a * 2
        t._dynamo.graph_break()
        return b - 1
    return h


def _no_break(t):
    def g(x):
        return t.relu(x @ x.T + 1).sum(0)
    return g


def _printed(fn):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn()
    return out.getvalue()


def test_explain_graphs_are_graph_modules_as_torchs():
    x = np.random.default_rng(0).standard_normal(5).astype(np.float32)
    want = torch._dynamo.explain(_one_break(torch))(torch.tensor(x))
    got = ember._dynamo.explain(_one_break(ember))(ember.tensor(x))
    assert got.graph_count == want.graph_count == 2
    for g, w in zip(got.graphs, want.graphs):
        assert isinstance(g, ember.fx.GraphModule) and isinstance(g.graph, ember.fx.Graph)
        # torch's calls x.sin() as a method, ember's as torch.sin: the same nodes otherwise
        assert [n.op.replace("call_method", "call_function") for n in w.graph.nodes] == \
            [n.op for n in g.graph.nodes] == ["placeholder", "call_function", "call_function", "output"]
        table = _printed(g.graph.print_tabular).splitlines()
        assert table[0].split() == _printed(w.graph.print_tabular).splitlines()[0].split()
        assert [line.split()[0] for line in table[2:]] == [n.op for n in g.graph.nodes]
    # the first graph's inputs and outputs as torch's: forward(self, L_x_ : torch.Tensor), one output
    assert got.graphs[0].code.splitlines()[3] == want.graphs[0].code.splitlines()[3] == \
        "def forward(self, L_x_ : torch.Tensor):"
    readable = got.graphs[0].print_readable(print_output=False).splitlines()
    assert readable[:2] == want.graphs[0].print_readable(print_output=False).splitlines()[:2]
    assert readable[-1] == "        return (add,)" and 'add: "f32[5]" = sin + 1;  sin = None' in readable[-2]
    assert str(got.graphs[0].graph).startswith("graph():\n    %l_x_ : torch.Tensor [num_users=1] = placeholder")
    # each graph runs on its inputs: the first's output is the second's input, as torch's
    mid_want, mid_got = want.graphs[0](torch.tensor(x)), got.graphs[0](ember.tensor(x))
    assert len(mid_got) == len(mid_want) == 1
    out_want, out_got = want.graphs[1](*mid_want), got.graphs[1](*mid_got)
    expected = np.cos(np.sin(x.astype(np.float64)) + 1) * 2
    np.testing.assert_allclose(out_got[0].numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_want[0].numpy(), expected, rtol=1e-5, atol=1e-6)
    assert [[op.name for op in ops] for ops in got.ops_per_graph] == [["Sin", "Add"], ["Cos", "Mul"]]
    assert got.captured[0].placeholders[0].name == "x"  # ember's own graphs, for its code generators


def test_print_readable_annotates_dtypes_and_shapes_as_torchs():
    def f(t):
        return lambda x, i, b: (x.double() * 2, i + 1, (b & b), x.sum())
    args = np.ones((4, 3), np.float32), np.arange(3), np.ones(2, bool)
    want = torch._dynamo.explain(f(torch))(*map(torch.tensor, args)).graphs[0]
    got = ember._dynamo.explain(f(ember))(*map(ember.tensor, args)).graphs[0]
    signature = '    def forward(self, L_x_: "f32[4, 3]", L_i_: "i64[3]", L_b_: "b8[2]"):'
    assert got.print_readable(print_output=False).splitlines()[1] == signature == \
        want.print_readable(print_output=False).splitlines()[1]
    shown = lambda gm: sorted(line.split('"')[1] for line in gm.print_readable(False).splitlines()[5:] if '"' in line)  # noqa: E731
    assert shown(got) == shown(want) == ["b8[2]", "f32[]", "f64[4, 3]", "f64[4, 3]", "i64[3]"]


def test_explain_names_a_modules_inputs_as_torchs():
    def inputs(t):
        class M(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = t.nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x).relu()
        gm = t._dynamo.explain(M())(t.ones(4, 3)).graphs[0]
        return [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    assert inputs(ember) == inputs(torch) == \
        ["L_self_modules_fc_parameters_weight_", "L_self_modules_fc_parameters_bias_", "L_x_"]


def _counts(t, make, inputs):
    t._dynamo.reset()
    t._dynamo.utils.counters.clear()
    compiled = t.compile(make(t), backend="eager")
    for x in inputs:
        compiled(t.tensor(x))
        compiled(t.tensor(x))
    counters = t._dynamo.utils.counters
    return {k: dict(counters[k]) for k in ("frames", "stats", "resumes") if counters[k]}


@pytest.mark.parametrize("make", [_no_break, _one_break, _two_breaks])
def test_counters_hold_torchs_frames_stats_and_resumes(make):
    inputs = [np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)]
    if make is _no_break:  # a second shape: a recompile, counted again (torch: dynamic; ember: a new graph)
        inputs.append(np.ones((4, 4), np.float32))
    want = _counts(torch, make, inputs)
    got = _counts(ember, make, inputs)
    assert got == want  # (the resume functions named after the breaks' lines: the same source here)
    assert (got["stats"]["calls_captured"], got["stats"]["unique_graphs"]) == \
        {_no_break: (10, 2), _one_break: (4, 2), _two_breaks: (3, 3)}[make]
