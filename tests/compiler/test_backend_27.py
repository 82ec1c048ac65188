"""Callable backends as torch 2.13's: the backend is called once per graph at the first call and
the callable it returns runs from that first call on (ember.compiler.custom_backend.first_run),
and the graph's placeholders are named as torch's dynamo names them (ember.compiler.torch_names)."""
import numpy as np
import torch

import ember
from graph_counts import counting_backend


def _pure_runs(lib, a, b):
    """Counts and results of a pure function at one shape, then of a module (its gradients too),
    then of a function at sizes that change (a dynamic graph after the first)."""
    rows, results = [], []
    if lib is torch:
        torch._dynamo.reset()
    counts = [0, 0]
    f = lib.compile(lambda x, y: (x * y).sin() + x.sum(), backend=counting_backend(counts))
    for k in range(3):
        results.append(f(lib.tensor(a) + k, lib.tensor(b)).numpy())
    rows.append(tuple(counts))
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU())
    with lib.no_grad():
        for p, value in zip(net.parameters(), (b[:3], a[0, :3])):
            p.copy_(lib.tensor(value))
    counts = [0, 0]
    compiled = lib.compile(net, backend=counting_backend(counts))
    for k in range(2):
        out = compiled(lib.tensor(a) * (k + 1))
        (out * out).sum().backward()
        results += [out.detach().numpy(), net[0].weight.grad.numpy().copy()]
    rows.append(tuple(counts))
    counts = [0, 0]
    f = lib.compile(lambda x: x.cos() * 2, backend=counting_backend(counts))
    for n in (3, 3, 5, 7, 5):
        results.append(f(lib.tensor(a[0, :n])).numpy())
    rows.append(tuple(counts))
    return rows, results


def test_the_callable_runs_from_the_first_call_with_torchs_results():
    a, b = np.random.default_rng(0).standard_normal((2, 8, 4), dtype=np.float32)
    (want_counts, want), (got_counts, got) = _pure_runs(torch, a, b), _pure_runs(ember, a, b)
    # before: the first call ran eagerly, the callable from the second: (1, 2), (1, 1), (2, 3)
    assert want_counts == got_counts == [(1, 3), (1, 2), (2, 5)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _in_place_runs(lib, a):
    """A function writing into its input, a batch norm in training (its running statistics) and
    an SGD step: each write made once per call."""
    if lib is torch:
        torch._dynamo.reset()

    def f(x, c):
        c.add_(1)
        return x * c
    counts = [[0, 0], [0, 0]]
    compiled, c = lib.compile(f, backend=counting_backend(counts[0])), lib.zeros(4)
    results = [compiled(lib.tensor(a[k]), c).numpy() for k in range(3)] + [c.numpy().copy()]
    bn = lib.nn.BatchNorm1d(4)
    compiled = lib.compile(bn, backend=counting_backend(counts[1]))
    results += [compiled(lib.tensor(a) * k).detach().numpy() for k in range(1, 4)]
    results += [bn.running_mean.numpy(), bn.running_var.numpy(), bn.num_batches_tracked.numpy()]
    net = lib.nn.Linear(4, 1)
    with lib.no_grad():
        net.weight.copy_(lib.tensor(a[:1])), net.bias.zero_()
    opt = lib.optim.SGD(net.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = net(x).square().mean()
        loss.backward()
        opt.step()
        return loss
    compiled_step = lib.compile(step, backend=counting_backend([0, 0]))
    results += [compiled_step(lib.tensor(a)).detach().numpy() for _ in range(3)] + [net.weight.detach().numpy()]
    return counts, results


def test_writes_into_inputs_buffers_and_optimizer_steps_are_made_once_per_call():
    a = np.random.default_rng(1).standard_normal((3, 4), dtype=np.float32)
    (want_counts, want), (got_counts, got) = _in_place_runs(torch, a), _in_place_runs(ember, a)
    np.testing.assert_allclose(got[3], [3.0] * 4)  # (c written once per call, not twice at the first)
    assert got[9] == 3
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    # the written tensors set back after the recording, the callable writes them at the first
    # call too (before: from the second call, [1, 2])
    assert got_counts == want_counts == [[1, 3], [1, 3]]


def test_random_ops_at_the_first_call_draw_what_eager_draws():
    drop = ember.nn.Dropout(0.5)
    x = ember.ones(64)
    ember.manual_seed(3)
    want, want_next = drop(x), ember.rand(4)
    counts = [0, 0]
    compiled = ember.compile(drop, backend=counting_backend(counts))
    ember.manual_seed(3)
    got = compiled(x)
    assert counts == [1, 1]  # (the recording drew once; the callable draws the same again)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(ember.rand(4).numpy(), want_next.numpy())  # the stream moved once


def _names(lib):
    """The placeholders' targets of the graphs of modules reached as torch's frames reach them."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.seq = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 4)))
            self.held = [nn.Linear(4, 4)]  # (a plain list: not registered)
            self.scale = lib.ones(4)  # (a plain tensor attribute)

        def forward(self, x):
            return self.seq(self.fc(x)) * self.scale + self.held[0](x)

    class Norm(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(4)

        def forward(self, x):
            return self.bn(x)

    block, norm, w = Block(), Norm().eval(), lib.ones(4)
    scope = {"block": block, "w": w}
    exec("def global_reads(x):\n    return block(x) * w\n", scope)

    def closure_reads(x):
        return block(x) * w

    def argument(m, x):
        return m(x)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append([n.target for n in gm.graph.nodes if n.op == "placeholder"])
        assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == [t.lower() for t in graphs[-1]]
        return gm.forward
    for f, args in ((block, ()), (scope["global_reads"], ()), (closure_reads, ()), (argument, (block,)),
                    (norm, ())):
        if lib is torch:
            torch._dynamo.reset()
        lib.compile(f, backend=backend)(*args, lib.ones(2, 4))
    return graphs


def test_placeholders_named_as_torchs():
    want, got = _names(torch), _names(ember)
    # before: L_fc_weight_, L_seq_1_0_weight_, L_tensor_, L_param_, L_bn_running_mean_
    assert got[0][:3] == want[0][:3] == ["L_self_modules_fc_parameters_weight_",
                                         "L_self_modules_fc_parameters_bias_", "L_x_"]
    for g, w in zip(got, want, strict=True):
        assert sorted(g) == sorted(w)  # (ember's batch_norm reads its inputs in another order)
    assert "L_self_modules_seq_modules_1_modules_0_parameters_weight_" in got[0]
    assert {"L_self_scale", "L_self_held_0_parameters_weight_"} <= set(got[0])
    assert {"G_w_", "G_block_modules_fc_parameters_bias_"} <= set(got[1])
    assert {"L_w_", "L_m_modules_fc_parameters_bias_"} <= set(got[2]) | set(got[3])
    assert "L_self_modules_bn_buffers_running_mean_" in got[4]


def _dynamic_graph(lib, a):
    """(op, target) of the dynamic graph of a function reading a size, its example inputs'
    sizes, and its results at the capturing sizes and at others."""
    seen = []

    def backend(gm, example_inputs):
        seen.append([(n.op, "s" if n.op == "placeholder" and n.target[0] == "s" else
                      getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes])
        # (the sizes' values: ember's ints; torch's SymInts, which int() would specialise)
        seen.append([tuple(e.shape) if hasattr(e, "shape") else e if lib is ember else "size"
                     for e in example_inputs])
        return gm.forward
    if lib is torch:
        torch._dynamo.reset()
    f = lib.compile(lambda x: lib.sum(x * 2 + 1, dim=0) / x.shape[0], backend=backend, dynamic=True)
    return seen, [f(lib.tensor(np.ascontiguousarray(a[:n, :m]))).numpy() for n, m in ((3, 4), (5, 2), (2, 3))]


def test_dynamic_graphs_are_call_functions_over_int_placeholders_as_torchs():
    a = np.random.default_rng(4).standard_normal((5, 4), dtype=np.float32)
    (want, want_results), (got, got_results) = _dynamic_graph(torch, a), _dynamic_graph(ember, a)
    # before: a SizedGraphModule of call_op nodes (Mul, Add, Sum, Div), placeholder x only
    assert got[0] == want[0] == [("placeholder", "s"), ("placeholder", "s"), ("placeholder", "L_x_"),
                                 ("call_function", "mul"), ("call_function", "add"), ("call_function", "sum"),
                                 ("call_function", "truediv"), ("output", "output")]
    assert len(got) == len(want) == 2 and want[1] == ["size", "size", (3, 4)] and got[1] == [3, 4, (3, 4)]
    for g, w in zip(got_results, want_results, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def _outputs(lib, a):
    """The graph's code outputs and inputs for a module whose output needs a gradient, and the
    gradient through the backend's callable at the first call."""
    seen = []

    def backend(gm, example_inputs):
        seen.append(([n.target for n in gm.graph.nodes if n.op == "placeholder"], len(example_inputs),
                     len(next(n for n in gm.graph.nodes if n.op == "output").args[0])))
        return gm.forward
    if lib is torch:
        torch._dynamo.reset()
    net = lib.nn.Sequential(lib.nn.Linear(4, 2), lib.nn.ReLU())
    with lib.no_grad():
        net[0].weight.copy_(lib.tensor(a[:2])), net[0].bias.zero_()
    lib.compile(net, backend=backend)(lib.tensor(a)).sum().backward()
    return seen, net[0].weight.grad.numpy()


def test_values_saved_for_the_backward_are_not_outputs_or_inputs_of_the_graph():
    a = np.random.default_rng(5).standard_normal((4, 4), dtype=np.float32)
    (want, want_grad), (got, got_grad) = _outputs(torch, a), _outputs(ember, a)
    # before: 4 placeholders (a saved constant L_const_ more) and 4 outputs (relu, relu, const, input)
    assert got[0][1:] == want[0][1:] == (3, 1)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)
