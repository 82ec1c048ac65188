"""A callable backend gets a torch-style fx GraphModule (ember.fx.backend_graph): its nodes'
ops and targets as torch 2.13's dynamo hands them, a rewriting backend's change run, and the
module's results and gradients those of eager."""
import contextlib
import io
import operator

import numpy as np
import torch

import ember
from ember._dynamo.testing import CompileCounter


def _key(node):
    """(op, target) comparable across the libraries: operator functions by their qualified
    name, library functions by name (torch._C._nn.linear and ember.nn.functional.linear alike)."""
    target = node.target
    if not callable(target):
        return node.op, target
    if getattr(operator, getattr(target, "__name__", ""), None) is target:
        return node.op, f"operator.{target.__name__}"
    return node.op, target.__name__


def _graphs(lib, f, *inputs):
    """The (op, target) lists of the graphs ``f`` compiles to, run on ``inputs`` (numpy)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append([_key(n) for n in gm.graph.nodes])
        return gm.forward

    lib.compile(f, backend=backend)(*[lib.tensor(x) for x in inputs])
    return graphs


def _cases(lib):
    F = lib.nn.functional

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 3)

        def forward(self, x):
            return F.relu(self.fc(x))

    return {"abs/add/div/mul": lambda a, b: a / (lib.abs(a) + 1) * b,
            "sum with dim": lambda a, b: lib.sum(a * b, dim=0),
            "matmul": lambda a, b: lib.matmul(a, lib.reshape(b, (4, 2))),
            "softmax": lambda a, b: lib.softmax(a - b, dim=-1),
            "linear module": Net()}


def test_nodes_ops_and_targets_as_torchs():
    a, b = np.random.default_rng(0).standard_normal((2, 2, 4), dtype=np.float32)
    theirs, ours = _cases(torch), _cases(ember)
    for name in theirs:
        args = (a,) if name == "linear module" else (a, b)
        want, got = _graphs(torch, theirs[name], *args), _graphs(ember, ours[name], *args)
        assert len(want) == len(got) == 1, name
        # before: placeholders named a, b; call_op nodes of op classes (Abs, Add, Permute, Addmm)
        if name == "linear module":  # (parameters: torch's L_self_modules_fc_parameters_weight_, ours L_fc_weight_;
            # ours has a saved constant's placeholder more)
            assert ("placeholder", "L_x_") in want[0] and ("placeholder", "L_x_") in got[0]
            want, got = [[k for k in g if k[0] != "placeholder"] for g in (want[0], got[0])]
            assert want == got == [("call_function", "linear"), ("call_function", "relu"), ("output", "output")]
        else:
            assert got == want, name


def _rewritten(lib, a, b):
    """``f`` compiled by a backend that turns its additions into multiplications."""
    def backend(gm, example_inputs):
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target is operator.add:
                node.target = operator.mul
        gm.recompile()
        return gm.forward

    def f(x, y):
        return (x + y).sin() - y

    compiled = lib.compile(f, backend=backend)
    compiled(lib.tensor(a), lib.tensor(b))  # (ember's first call runs f eagerly while capturing it)
    return compiled(lib.tensor(a), lib.tensor(b)).numpy()


def test_a_backend_rewriting_targets_runs_its_change():
    a, b = np.random.default_rng(1).standard_normal((2, 5), dtype=np.float32)
    want = _rewritten(torch, a, b)
    np.testing.assert_allclose(want, np.sin(a * b) - b, rtol=1e-6)
    np.testing.assert_allclose(_rewritten(ember, a, b), want, rtol=1e-6)


def _mixed(x, w, i, c):
    """Ops with table entries and without (max along a dim, cumsum, an index tensor, where),
    and an in-place write into an input."""
    h = ember.nn.functional.relu(x @ w) + 1
    best = ember.max(h, dim=0).values
    picked = h[i].cumsum(0)
    c.mul_(2)
    return ember.where(h > 1.5, h, 0.5 * h).sum(dim=1), best, picked


def test_results_gradients_and_print_tabular_as_eager():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((3, 4), dtype=np.float32), rng.standard_normal((4, 4), dtype=np.float32)
    counter, seen = CompileCounter(), []

    def backend(gm, example_inputs):
        seen.append(gm)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            gm.graph.print_tabular()
        seen.append(out.getvalue())
        return counter(gm, example_inputs)

    results, compiled = [], ember.compile(_mixed, backend=backend)
    for run in (_mixed, compiled, compiled):  # (ember's first compiled call runs eagerly, capturing)
        xs, cs = ember.tensor(x, requires_grad=True), ember.tensor(w)
        outs = run(xs, ember.tensor(w), ember.tensor([2, 0]), cs)
        sum((o * (k + 1)).sum() for k, o in enumerate(outs)).backward()
        results.append([o.detach().numpy() for o in outs] + [xs.grad.numpy(), cs.numpy()])
    np.testing.assert_allclose(results[0][-1], 2 * w)
    for got, want in zip(results[2], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    gm, table = seen
    assert isinstance(gm, ember.fx.GraphModule) and counter.frame_count == 1
    assert {n.op for n in gm.graph.nodes} == {"placeholder", "call_function", "output"}
    assert "call_function" in table and "L_x_" in table and "call_op" not in table
    assert counter.op_count == sum(n.op == "call_function" for n in gm.graph.nodes) > 5
    x_node, matmul = list(gm.graph.nodes)[0], next(n for n in gm.graph.nodes if n.target is ember.matmul)
    assert x_node.meta["example_value"].shape == (3, 4) and x_node.meta["example_value"].requires_grad
    assert matmul.meta["example_value"].shape == (3, 4) and matmul.meta["example_value"].dtype == ember.float32
