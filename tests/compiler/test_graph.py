"""The graph IR: naming, users, printing, and that ``code`` is the program it stands for."""
import operator

import numpy as np

import ember
from ember._ops import OPS
from ember.compiler.graph import Graph


def _meta(shape):
    return {"shape": shape, "dtype": ember.float32, "requires_grad": False}


def _small_graph():
    g = Graph()
    x = g.placeholder("x", _meta((2, 3)))
    w = g.placeholder("l1.weight", _meta((3, 3)))
    mm = g.call_op(OPS["Matmul"], (x, w), {}, _meta((2, 3)))
    add = g.call_op(OPS["Add"], (mm, 1.0), {"alpha": 2}, _meta((2, 3)))
    add_1 = g.call_op(OPS["Add"], (add, x), {}, _meta((2, 3)))
    g.mutate(w, g.call_op(OPS["Mul"], (w, 0.5), {}, _meta((3, 3))))
    g.output([add_1])
    return g


def test_names_order_and_users():
    g = _small_graph()
    assert [n.name for n in g.nodes] == ["x", "l1_weight", "matmul", "add", "add_1", "mul", "output"]
    assert [p.name for p in g.placeholders] == ["x", "l1_weight"]
    x, w, mm, add, add_1, mul, out = g.nodes
    assert x.users == [mm, add_1] and add_1.users == [out] and g.outputs == [add_1]
    assert g.mutations == [(w, mul)] and mul.target is OPS["Mul"]
    late = g.placeholder("x", _meta((1,)))  # placeholders stay first, names stay unique
    assert late.name == "x_1" and g.nodes.index(late) == 2


def test_print_tabular_and_code(capsys):
    g = _small_graph()
    g.print_tabular()
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert table[4].split()[:3] == ["call_op", "matmul", "Matmul"] and "(x, l1_weight)" in table[4]
    assert "{'alpha': 2}" in table[5] and table[-1].split() == ["mutation", "l1_weight", "<-", "mul"]
    code = g.code
    assert code.startswith("def forward(x, l1_weight):\n")
    assert "    add = Add(matmul, 1.0, alpha=2)  # torch.float32[2, 3]\n" in code
    # the program text is the graph: running it on the ops' forwards gives the same values
    env = {name: op.forward for name, op in OPS.items()}
    env["ember"] = ember
    env["copy_"] = np.copyto
    exec(code, env)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3)), rng.standard_normal((3, 3))
    w0 = w.copy()
    (out,) = env["forward"](x, w)
    np.testing.assert_allclose(out, x @ w0 + 2.0 + x)
    np.testing.assert_allclose(w, w0 * 0.5)


def test_getitem_node_prints_as_indexing():
    g = Graph()
    x = g.placeholder("x", _meta((4,)))
    pair = g.call_op(OPS["Amax"], (x,), {"dim": (0,), "keepdim": False}, {})
    first = g.call_op(operator.getitem, (pair, 0), {}, _meta(()))
    g.output([first])
    assert first.name == "getitem" and "    getitem = amax[0]\n" in g.code
