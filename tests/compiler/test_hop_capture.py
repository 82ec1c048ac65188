"""Control-flow operators captured by ember.compile as single graph nodes: one graph per
function whatever branch or trip count the data picks, results and gradients equal to eager
(plain NumPy references), the fullgraph errors, and branch contracts checked while capturing."""
import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo import exc
from ember._dynamo.utils import counters
from ember.export import export, load, save
from ember._higher_order_ops import map as hop_map
from ember._higher_order_ops import scan, switch, while_loop

BACKENDS = ["inductor", "aot_eager", "eager"]


pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _graphs():
    return counters["stats"]["unique_graphs"]


def _code(compiled):
    entry = compiled._entries[-1]
    return entry.cap.graph.code


def _t(a, requires_grad=False):
    return ember.tensor(np.asarray(a, np.float32), requires_grad=requires_grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cond_data_dependent_branch_one_graph(backend):
    def f(x, y):
        z = ember.cond(x.sum() > 0, lambda a, b: (a.sin() * b,), lambda a, b: (a.cos() + b,), (x, y))[0]
        return z * 2

    compiled = ember.compile(f, backend=backend, fullgraph=True)
    rng = np.random.default_rng(0)
    y = rng.standard_normal(5).astype(np.float32)
    for sign in (1, -1, 1, -1):
        x = np.abs(rng.standard_normal(5)).astype(np.float32) * sign
        want = (np.sin(x.astype(np.float64)) * y if sign > 0 else np.cos(x.astype(np.float64)) + y) * 2
        got = compiled(_t(x), _t(y)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert _graphs() == 1
    code = _code(compiled)
    assert code.count("Cond(") == 1 and "def true_graph_0(x, y):" in code and "def false_graph_0(x, y):" in code
    assert "Sin(" in code and "Cos(" in code  # both branches, nested


def test_cond_gradient_through_taken_branch_equals_eager():
    lin = nn.Linear(3, 2)

    def f(x):  # the branches read the module's parameters: lifted into the node's args
        return ember.cond(x.sum() > 0, lambda x: lin(x).tanh(), lambda x: lin(x * x), (x,)).sum()

    compiled = ember.compile(f, fullgraph=True)
    rng = np.random.default_rng(1)
    for sign in (1, -1, 1):
        x = np.abs(rng.standard_normal((4, 3))).astype(np.float32) * sign
        grads = []
        for fn in (f, compiled):
            xt = _t(x, requires_grad=True)
            lin.zero_grad()
            loss = fn(xt)
            loss.backward()
            grads.append((loss.item(), xt.grad.numpy().copy(), lin.weight.grad.numpy().copy()))
        for want, got in zip(*grads):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert _graphs() == 1
    assert "weight" in _code(compiled).split("def true_graph_0(")[1].split(")")[0]


def test_switch_clamps_a_tensor_index_in_one_graph():
    branches = [lambda x: (x + 1, 3), lambda x: (x * 10, 3), lambda x: (x - 5, 3)]

    def f(i, x):
        return switch(i, branches, (x,))

    compiled = ember.compile(f, fullgraph=True)
    x = np.arange(4, dtype=np.float32)
    for index, want in [(1, x * 10), (-3, x + 1), (7, x - 5), (2, x - 5), (0, x + 1)]:
        got, const = compiled(ember.tensor(index), _t(x))
        np.testing.assert_array_equal(got.numpy(), want)
        assert const == 3
    assert _graphs() == 1
    code = _code(compiled)
    assert "Clamp" in code and code.count("Switch(") == 1 and "def branch_graph_2(x):" in code


def test_while_loop_data_dependent_trip_count_one_graph():
    def f(x, limit):
        return while_loop(lambda i, x: x.sum() < limit, lambda i, x: (i + 1, x * 2 + 1), (ember.zeros(()), x))

    compiled = ember.compile(f, fullgraph=True)
    for start, limit in [(1.0, 100.0), (0.5, 3000.0), (10.0, 5.0)]:
        x, i = np.full(3, start, np.float32), 0
        while x.sum() < limit:  # the plain-Python reference
            x, i = x * 2 + 1, i + 1
        n, got = compiled(_t(np.full(3, start)), ember.tensor(limit))
        np.testing.assert_array_equal(got.numpy(), x)
        assert n.item() == i
    assert _graphs() == 1
    assert _code(compiled).count("WhileLoop(") == 1


@pytest.mark.parametrize("reduce", ["all", "any"])
def test_a_loop_condition_with_all_or_any_stays_in_the_graph(reduce):
    """``(x < limit).all()`` as the stop test of a batch (was a tensor made outside the
    dispatcher: a graph break); results vs the plain-Python loop, also with a uint8 mask."""
    def f(x, limit):
        def cond_fn(i, x):
            return getattr(x < limit, reduce)() & getattr((x < limit).to(ember.uint8), reduce)(0).bool()
        return while_loop(cond_fn, lambda i, x: (i + 1, x * 2 + 1), (ember.zeros(()), x))

    compiled = ember.compile(f, fullgraph=True)
    for start in ([1.0, 5.0, 0.5], [7.0, 40.0, 2.0]):
        x, i = np.array(start, np.float32), 0
        while getattr(np, reduce)(x < 60.0):
            x, i = x * 2 + 1, i + 1
        n, got = compiled(_t(start), ember.tensor(60.0))
        np.testing.assert_array_equal(got.numpy(), x)
        assert n.item() == i
    assert _graphs() == 1


def _greedy(logits, eos, max_steps):
    """A greedy decoder counting its steps in an int carry: token k+1 = argmax(logits[token k])."""
    def body(n, token, out):
        nxt = ((ember.arange(logits.shape[0]) == token).float() @ logits).argmax()
        return n + 1, nxt, out + (ember.arange(out.shape[0]) == n).long() * nxt
    return while_loop(lambda n, token, out: (n < max_steps) & (token != eos), body,
                      (0, ember.tensor(0), ember.zeros(max_steps, dtype=ember.int64)))


def _greedy_reference(logits, eos, max_steps):
    n, token, out = 0, 0, [0] * max_steps
    while n < max_steps and token != eos:
        token = int(np.argmax(logits[token]))
        out[n], n = token, n + 1
    return n, out


def test_while_loop_int_carry_captured_in_one_graph(tmp_path):
    compiled = ember.compile(_greedy, fullgraph=True)
    rng = np.random.default_rng(3)
    steps = set()
    for _ in range(6):
        logits = rng.standard_normal((6, 6)).astype(np.float32)
        n, token, out = compiled(_t(logits), 5, 8)
        want_n, want_out = _greedy_reference(logits, 5, 8)
        assert type(n) is int and n == want_n and out.tolist() == want_out
        steps.add(n)
    assert len(steps) > 1 and _graphs() == 1  # different trip counts, one graph
    assert _code(compiled).count("WhileLoop(") == 1

    class Decoder(ember.nn.Module):
        def forward(self, logits):
            return _greedy(logits, 5, 8)
    logits = rng.standard_normal((6, 6)).astype(np.float32)
    save(export(Decoder(), (_t(logits),)), tmp_path / "greedy.pt2")
    n, _, out = load(tmp_path / "greedy.pt2").module()(_t(logits))
    assert type(n) is int and (n, out.tolist()) == _greedy_reference(logits, 5, 8)


def test_indexing_with_a_0d_tensor_is_a_graph_break_not_a_constant():
    # was: x[i] recorded Slice(x, index=(<i at the first call>,)) and replayed it for every i
    f = ember.compile(lambda x, i: x[i] * 2)
    x = ember.arange(5.0)
    assert [f(x, ember.tensor(i)).item() for i in (1, 3, 4)] == [2.0, 6.0, 8.0]
    with pytest.raises(exc.Unsupported, match="index"):
        ember.compile(lambda x, i: x[i], fullgraph=True)(x, ember.tensor(1))


def test_using_a_while_loop_int_in_python_is_a_graph_break():
    def f(x):
        i, x = while_loop(lambda i, x: x.sum() < 50, lambda i, x: (i + 1, x * 2), (0, x))
        return x[:i]
    with pytest.raises(exc.Unsupported, match="int from a while_loop's carry used in Python"):
        ember.compile(f, fullgraph=True)(ember.ones(8))
    g = ember.compile(f)
    for scale in (1.0, 2.0, 4.0):  # eager after the break: the right length every call
        assert g(ember.ones(8) * scale).tolist() == f(ember.ones(8) * scale).tolist()


def test_scan_cumulative_sum_with_gradient():
    def f(init, xs, w):
        return scan(lambda c, x: (c + x * w, (c * x).sin()), init, xs, dim=1, reverse=True)

    compiled = ember.compile(f, fullgraph=True)
    rng = np.random.default_rng(2)
    for steps in (4, 4):
        init, xs, w = (rng.standard_normal(s).astype(np.float32) for s in ((2,), (2, steps), (2,)))
        results = []
        for fn in (f, compiled):
            ts = [_t(a, requires_grad=True) for a in (init, xs, w)]
            carry, ys = fn(*ts)
            (carry.sum() + ys.pow(2).sum()).backward()
            results.append([carry.detach().numpy(), ys.detach().numpy()] + [t.grad.numpy() for t in ts])
        ref = init.astype(np.float64)
        for k in reversed(range(steps)):
            ref = ref + xs[:, k] * w
        np.testing.assert_allclose(results[0][0], ref, rtol=1e-5)
        for want, got in zip(*results):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # the joint graph: the forward's Scan, then the backward's (the carries, the reverse scan)
    assert _graphs() == 1 and _code(compiled).count("Scan(") == 3


def test_map_over_first_dimension():
    def f(xs, b):
        return hop_map(lambda x, b: {"y": x @ x + b}, xs, b)

    compiled = ember.compile(f, fullgraph=True)
    rng = np.random.default_rng(3)
    xs, b = rng.standard_normal((3, 2, 2)).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    got = compiled(_t(xs), _t(b))["y"].numpy()
    np.testing.assert_allclose(got, np.stack([x @ x + b for x in xs.astype(np.float64)]), rtol=1e-5)
    assert _code(compiled).count("Map(") == 1


def test_nested_cond_inside_while_body():
    def body(i, x):
        return i + 1, ember.cond(x.sum() > 10, lambda x: x - 3, lambda x: x + 5, (x,))

    f = ember.compile(lambda x: while_loop(lambda i, x: i < 6, body, (ember.zeros((), dtype=ember.int64), x)),
                      fullgraph=True)
    x, ref = np.zeros(2, np.float32), np.zeros(2, np.float32)
    for _ in range(6):
        ref = ref - 3 if ref.sum() > 10 else ref + 5
    np.testing.assert_array_equal(f(_t(x))[1].numpy(), ref)
    code = _code(f)
    assert code.count("WhileLoop(") == 1 and "Cond(" in code.split("def body_graph_0")[1]


def test_python_if_on_a_tensor_under_fullgraph_names_the_line():
    def f(x):
        if x.sum() > 0:  # the offending line
            return x + 1
        return x - 1

    with pytest.raises(exc.Unsupported, match=r"(?s)bool.*test_hop_capture.py:[0-9]+: if x.sum\(\) > 0:  # the offending line"):
        ember.compile(f, fullgraph=True)(ember.ones(2))
    np.testing.assert_array_equal(ember.compile(f)(-ember.ones(2)).numpy(), [-2, -2])


def test_graph_break_inside_a_branch():
    def f(x):
        return ember.cond(x.sum() > 0, lambda x: x * x.max().item(), lambda x: x, (x,))

    with pytest.raises(exc.Unsupported, match="item"):
        ember.compile(f, fullgraph=True)(ember.ones(2))
    g = ember.compile(f)  # runs eagerly: correct for either branch
    np.testing.assert_array_equal(g(_t([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(g(_t([-1.0, -2.0])).numpy(), [-1.0, -2.0])


@pytest.mark.parametrize("other, message", [
    (lambda x: x[:2] * 2, r"shape: \(3,\) vs \(2,\)"),
    (lambda x: x.double(), "dtype: torch.float32 vs torch.float64"),
    (lambda x: (x, x), "structure"),
])
def test_cond_branches_must_agree_even_when_not_taken(other, message):
    f = ember.compile(lambda x: ember.cond(x.sum() > 0, lambda x: x + 1, other, (x,)))
    with pytest.raises(exc.UncapturedHigherOrderOpError, match=message):
        f(ember.ones(3))  # true branch taken; the false one still differs
    with pytest.raises(exc.UncapturedHigherOrderOpError, match=message):  # eagerly too, as torch
        ember.cond(ember.tensor(True), lambda x: x + 1, other, (ember.ones(3),))
    assert ember.cond(True, lambda x: x + 1, other, (ember.ones(3),)).shape == (3,)


def test_captured_bodies_must_not_mutate_their_inputs():
    def body(x):
        x.add_(1)
        return (x + 0,)

    f = ember.compile(lambda x: while_loop(lambda x: x.sum() < 5, body, (x,)))
    with pytest.raises(exc.UncapturedHigherOrderOpError, match="input mutation"):
        f(ember.zeros(2))


def test_backward_through_cond_inside_the_function_is_captured():
    lin = nn.Linear(2, 2)

    def step(x):
        loss = ember.cond(x.sum() > 0, lambda x: lin(x).sum(), lambda x: (lin(x) ** 2).sum(), (x,))
        loss.backward()
        return loss.detach()

    compiled = ember.compile(step, fullgraph=True)  # the taken branch's backward: a Cond node
    for sign in (1.0, -1.0):
        x = _t([[sign, 2 * sign]])
        lin.zero_grad()
        compiled(x)
        got = lin.weight.grad.numpy().copy()
        lin.zero_grad()
        step(x)
        np.testing.assert_allclose(got, lin.weight.grad.numpy(), rtol=1e-6)


LIN = nn.Linear(2, 2)


def test_a_parameter_replaced_on_a_module_only_a_branch_names_recompiles():
    # `LIN` is a global read only inside the lambdas, not by the function's own code: its
    # parameters were not guarded, so the replaced weight was silently ignored
    def f(x):
        return ember.cond(x.sum() > 0, lambda x: LIN(x), lambda x: x, (x,))
    compiled, x = ember.compile(f), _t([[1.0, 2.0]])
    compiled(x)
    old = LIN.weight
    try:
        LIN.weight = nn.Parameter(ember.ones(2, 2))
        np.testing.assert_allclose(compiled(x).detach().numpy(), f(x).detach().numpy())
        assert _graphs() == 1  # the graph run on the new parameter (ember.compiler.rebind; torch: 2)
    finally:
        LIN.weight = old


def test_branch_structure_errors_name_tensors_and_the_constants_that_differ():
    f = ember.compile(lambda x: ember.cond(x.sum() > 0, lambda x: (x + 1, 3), lambda x: (x * 2, 4), (x,)))
    with pytest.raises(exc.UncapturedHigherOrderOpError, match=r"got \(Tensor, 3\) and \(Tensor, 4\)"):
        f(ember.ones(2))


def test_a_branch_not_taken_failing_on_the_example_values_is_a_graph_break():
    # traced on real values, the untaken cholesky of a non-positive-definite matrix raised
    # LinAlgError from compile although eager (and torch, tracing fake tensors) returns zeros
    def f(a):
        return ember.cond(a.diagonal().min() > 0, lambda a: ember.linalg.cholesky(a), ember.zeros_like, (a,))
    compiled = ember.compile(f)
    for a in (-ember.eye(3), 4 * ember.eye(3)):
        np.testing.assert_array_equal(compiled(a).numpy(), f(a).numpy())
    with pytest.raises(exc.Unsupported, match="true_fn raised LinAlgError when traced"):
        ember.compile(f, fullgraph=True)(-ember.eye(3))


def test_associative_scan_is_one_node_holding_its_combine_graph(tmp_path):
    from ember._higher_order_ops import associative_scan

    def combine(a, b):  # a linear recurrence h = a_t * h + b_t, pairs composed
        return a[0] * b[0], b[0] * a[1] + b[1]

    def f(decay, inputs, w):
        return associative_scan(combine, (decay, inputs * w), 1, reverse=True)[1]

    compiled = ember.compile(f, fullgraph=True)
    rng = np.random.default_rng(4)
    for _ in range(3):
        decay, inputs = rng.uniform(0.5, 1, (2, 7)).astype(np.float32), rng.standard_normal((2, 7)).astype(np.float32)
        want, h = np.zeros_like(inputs), np.zeros(2, np.float32)
        for t in reversed(range(7)):  # the plain-Python recurrence
            h = decay[:, t] * h + inputs[:, t] * 0.5
            want[:, t] = h
        np.testing.assert_allclose(compiled(_t(decay), _t(inputs), ember.tensor(0.5)).numpy(), want, rtol=1e-5)
    assert _graphs() == 1
    code = _code(compiled)
    assert code.count("AssociativeScan(") == 1 and "def combine_graph_0(" in code and "Cat(" not in code

    class Recurrence(ember.nn.Module):
        def forward(self, decay, inputs):
            return f(decay, inputs, ember.tensor(0.5))
    save(export(Recurrence(), (_t(decay), _t(inputs))), tmp_path / "scan.pt2")
    np.testing.assert_allclose(load(tmp_path / "scan.pt2").module()(_t(decay), _t(inputs)).numpy(), want, rtol=1e-5)


def test_associative_scan_whose_combine_depends_on_the_length_breaks():
    from ember._higher_order_ops import associative_scan

    def f(x):  # adds the slice length: not the same function on longer slices
        return associative_scan(lambda a, b: a + b + a.shape[0], x, 0)

    with pytest.raises(exc.Unsupported, match="combine_fn traced on single elements"):
        ember.compile(f, fullgraph=True)(ember.ones(5))
    g = ember.compile(f)
    for n in (5, 5, 8):
        assert g(ember.ones(n)).tolist() == f(ember.ones(n)).tolist()


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_arrays_inside_branches_and_bodies_are_captured(backend):
    """An index a branch or loop body reads as an op's attr (``x[i]``, gather) — a constant made
    in the branch, a closure's tensor, a value computed before the operator — is lifted into the
    node like any tensor: one graph, the closure's current values on each call, eager's results
    and gradients whichever branch runs."""
    rows = ember.tensor([1, 1, 0])
    picks = ember.tensor([[2, 0], [1, 1], [0, 2]])

    def f(x):
        first = x.argmax(1)
        y = ember.cond(x.sum() > 0,
                       lambda a: (a[ember.tensor([2, 0, 1])] * 2 + ember.gather(a, 1, picks).sum(),),
                       lambda a: (ember.cond(a.mean() < -0.5, lambda b: (b[rows],), lambda b: (-b[:, first],),
                                             (a,))[0],), (x,))[0]
        n, z = ember.while_loop(lambda n, z: n < 3, lambda n, z: (n + 1, z[rows].tanh() + z),
                                (ember.zeros((), dtype=ember.int64), y))
        return z

    compiled = ember.compile(f, backend=backend, fullgraph=True)
    rng = np.random.default_rng(0)
    for call, shift in enumerate([1.0, -0.3, -2.0, 1.0, -2.0]):
        x0 = (rng.standard_normal((3, 3)) + shift).astype(np.float32)
        if call == 3:
            rows.copy_(ember.tensor([2, 0, 2]))  # a closure's tensor written between calls
        x, xe = _t(x0, requires_grad=True), _t(x0, requires_grad=True)
        got, want = compiled(x), f(xe)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert _graphs() == 1
