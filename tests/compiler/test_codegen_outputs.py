"""Outputs of the C backend are handed out without a copy (backends/c.py, ``_Handout``): each
is the array over its planned buffer, and a call never writes into memory a caller still
holds, whether it holds the array itself, a NumPy view of it, or a tensor of it saved for a
backward that runs later."""
import numpy as np
import pytest
import torch

import ember
from ember.compiler.backends import compile_graph, compile_python, toolchain
from ember.compiler.backends.plan import make_plan
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def _graph(rng):
    """tanh(x @ w + 1) and its row sums: a GEMM with an epilogue, then a reduction (outputs in
    two planned buffers; the dead intermediate's memory is shared with a later value)."""
    b = Builder()
    x = b.input("x", rng.standard_normal((24, 16)).astype(np.float32))
    w = b.input("w", rng.standard_normal((16, 8)).astype(np.float32))
    h = b.call("Tanh", b.call("Add", b.call("Matmul", x, w), 1.0))
    return b, b.output(h, b.call("Sum", h, dim=(1,), keepdim=False))


def test_outputs_are_not_copied_and_held_ones_are_never_overwritten():
    rng = np.random.default_rng(0)
    b, g = _graph(rng)
    fn, ref = compile_graph(g, {}), compile_python(g)
    assert hasattr(fn, "c_source")
    calls = [[rng.standard_normal(a.shape).astype(np.float32) for a in (b.values[p] for p in g.placeholders)]
             for _ in range(6)]
    first = fn(calls[0])
    assert all(o.base is not None for o in first)  # arrays over the pool's memory: no copy made
    view = first[0][::2]  # a NumPy view keeps the memory held after the array itself is gone
    held = [first[1], view]
    expected = [ref(c) for c in calls]
    del first
    outs = [fn(c) for c in calls[1:]]
    for k, out in enumerate(outs, 1):  # every call's results, all held at once, are its own
        for o, e in zip(out, expected[k]):
            np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(held[0], expected[0][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(held[1], expected[0][0][::2], rtol=1e-5, atol=1e-6)
    # results nobody holds any more give their memory back: no new memory per call
    del outs, held, view
    addresses = {fn(calls[0])[0].ctypes.data for _ in range(4)}
    assert len(addresses) == 1


def test_saved_activations_survive_later_forwards_until_a_delayed_backward():
    """A compiled forward (its graph returns the activations the backward reads) called three
    times before any backward: each backward gives eager's gradients (torch as the oracle)."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.GELU(), torch.nn.Linear(32, 5))
    model = ember.nn.Sequential(ember.nn.Linear(12, 32), ember.nn.GELU(), ember.nn.Linear(32, 5))
    model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in net.state_dict().items()})
    compiled = ember.compile(model)
    xs = [np.random.default_rng(i).standard_normal((8, 12)).astype(np.float32) for i in range(3)]
    losses = [(compiled(ember.tensor(x)) ** 2).mean() for x in xs]
    outs = [compiled(ember.tensor(x)) for x in xs]  # more forwards while the first are held
    for x, loss, out in zip(xs, losses, outs):
        model.zero_grad()
        net.zero_grad()
        loss.backward()
        expected = (net(torch.tensor(x)) ** 2).mean()
        expected.backward()
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-5)
        np.testing.assert_allclose(out.detach().numpy(), net(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
        for (name, p), q in zip(model.named_parameters(), net.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


def test_clones_of_gradients_are_written_by_their_kernels_without_a_copy():
    """The autograd engine clones each leaf's first gradient: the GEMM (read through two
    transposes, as a weight gradient is), the sum and the embedding backward write straight
    into the Clone's memory (plan.elide_clones) and no copy loop remains; a Clone of a loop's
    value read again in that loop keeps its copy (the loop stores after it loads). Each call's
    outputs, all held at once, are its own."""
    rng = np.random.default_rng(3)
    b = Builder()
    x = b.input("x", rng.standard_normal((64, 32)).astype(np.float32))
    g = b.input("g", rng.standard_normal((64, 48)).astype(np.float32))
    ids = b.input("ids", rng.integers(0, 10, (64,)))
    dw = b.call("Matmul", b.call("Permute", g, dims=(1, 0)), x)                      # (48, 32)
    w_grad = b.call("Clone", b.call("Permute", b.call("Permute", dw, dims=(1, 0)), dims=(1, 0)))
    b_grad = b.call("Clone", b.call("Sum", g, dim=(0,), keepdim=False))
    e_grad = b.call("Clone", b.call("EmbeddingBackward", x, ids, num_weights=10))
    kept = b.call("Clone", b.call("Mul", g, 2.0))
    graph = b.output(w_grad, b_grad, e_grad, kept, b.call("Add", kept, 1.0))
    fn, ref = compile_graph(graph, {}), compile_python(graph)
    copies = [line for line in fn.c_source.splitlines() if line.startswith("/* loop") and "Clone" in line]
    assert len(copies) == 1 and "Mul" in copies[0], copies
    calls = [[rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((64, 48)).astype(np.float32),
              rng.integers(0, 10, (64,))] for _ in range(4)]
    outs = [fn(c) for c in calls]
    for out, c in zip(outs, calls):
        for o, e in zip(out, ref(c)):
            np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-5)


def test_a_loop_overwrites_a_product_nothing_reads_later():
    """plan.overwrite_operands: the epilogue of ``g @ w`` (GELU's gradient, over a free view of
    the product) stores over the product, which nothing reads after it; a product read again
    later (``q``, summed after its epilogue) keeps its memory. Values: the Python backend's."""
    rng = np.random.default_rng(4)
    b = Builder()
    g = b.input("g", rng.standard_normal((48, 32)).astype(np.float32))
    w = b.input("w", rng.standard_normal((32, 64)).astype(np.float32))
    x = b.input("x", rng.standard_normal((6, 8, 64)).astype(np.float32))
    p = b.call("Matmul", g, w)
    dead = b.call("GeluBackward", b.call("View", p, shape=(6, 8, 64)), x, b.call("Gelu", x))
    q = b.call("Matmul", g, w)
    live = b.call("Tanh", q)
    back = b.call("Matmul", b.call("View", dead, shape=(48, 64)), b.call("Permute", w, dims=(1, 0)))
    graph = b.output(back, live, b.call("Sum", q, dim=(1,), keepdim=False))
    plan = make_plan(graph, have_blas=True)
    memory = lambda node: plan.loc[node].storage.resolve()
    assert memory(dead) is memory(p) and memory(live) is not memory(q)
    fn, ref = compile_graph(graph, {}), compile_python(graph)
    for _ in range(2):
        args = [rng.standard_normal(s).astype(np.float32) for s in ((48, 32), (32, 64), (6, 8, 64))]
        for o, e in zip(fn(args), ref(args)):
            np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-5)
