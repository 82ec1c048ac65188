"""The C kernels of the fused recurrent layer (backends/rnn.py).

Kernel level: ``RNNLayer`` and ``RNNLayerBackward`` compiled alone against their NumPy
``forward`` run in float64 on the same inputs: every result and gradient, the four modes, packed
batch sizes (sequences ending early) in both directions, gradients of h_n and c_n given or not,
subsets of the gradients. float64 within 1e-12; float32 within 2e-5 relative to the largest
magnitude of each array (GEMM sums of up to 4H terms, the sigmoid/tanh of ember_math.h within a
few ulp, the error carried through 12 steps; measured maxima are below 2e-6).
Module level: nn.LSTM/GRU/RNN (two layers, bidirectional, batch_first, with and without an
initial state) compiled whole (forward and backward, fullgraph=True) against torch 2.13.
"""
import numpy as np
import pytest
import torch

import ember
from ember._ops.rnn import GATES, INPUTS, RESULTS, RNNLayer, RNNLayerBackward
from ember.compiler.backends import compile_graph, rnn, toolchain
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

MODES = ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"]
PACKED = (4, 4, 3, 3, 2, 1)  # sequences of lengths 6, 5, 5, 4, 2 (rows of a PackedSequence)
WIDE = (5, 5, 4, 2)
TALL = (13, 13, 8)  # more rows than one register tile (AVX2's 6, AVX-512's 4) of the steps' products


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def _layer_inputs(rng, mode, batch_sizes, n_in=5, hidden=6, bias=True):
    T, N, G = sum(batch_sizes), batch_sizes[0], GATES[mode] * hidden
    draw = lambda *shape: rng.standard_normal(shape) * 0.5  # noqa: E731
    return {"input": draw(T, n_in), "hx": draw(N, hidden), "cx": draw(N, hidden) if mode == "LSTM" else None,
            "weight_ih": draw(G, n_in), "weight_hh": draw(G, hidden), "bias_ih": draw(G) if bias else None,
            "bias_hh": draw(G) if bias else None, "weight_hr": None}


def _close(actual, reference, dtype, what):
    """float64: 1e-12; float32: 2e-5 of the array's largest magnitude (see the module docstring)."""
    reference = np.asarray(reference, np.float64)
    scale = max(1.0, float(np.abs(reference).max(initial=0)))
    bound = 1e-12 if dtype == np.float64 else 2e-5
    assert actual.dtype == dtype and actual.shape == reference.shape, what
    np.testing.assert_allclose(actual, reference, rtol=0, atol=bound * scale, err_msg=what)


def _run(builder, picked):
    fn = compile_graph(builder.output(*picked), {})
    assert "F_rnnlayer" not in fn.source  # no node of the layer left to Python
    return fn([builder.values[p].copy() for p in builder.graph.placeholders])


def _add_layer(b, dtype, mode, arrays, batch_sizes, reverse, backward=None):
    """The layer (and its backward when ``backward`` = (gradients given, needs)) added to the
    graph of ``b``: (picked nodes, float64 reference values of them)."""
    nodes = [None if arrays[name] is None else b.input(name, arrays[name].astype(dtype)) for name in INPUTS]
    attrs = dict(mode=mode, batch_sizes=batch_sizes, reverse=reverse)
    layer = b.call("RNNLayer", *nodes, **attrs)
    results = [None if b.values[layer][i] is None else b.call("getitem", layer, i) for i in range(len(RESULTS))]
    reference = RNNLayer.forward(*arrays.values(), **attrs)
    if backward is None:
        return [r for r in results if r is not None], [v for v in reference if v is not None]
    given, needs = backward
    grads = [None if g is None else b.input(f"g{i}", g.astype(dtype)) for i, g in enumerate(given)]
    node = b.call("RNNLayerBackward", *grads, *nodes, *results, needs=needs, **attrs)
    full = RNNLayerBackward.forward(*given, *arrays.values(), *reference, needs=needs, **attrs)
    return [b.call("getitem", node, INPUTS.index(name)) for name in needs], [full[INPUTS.index(name)] for name in needs]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
def test_layer_forward_matches_numpy_float64(dtype, mode):
    """Equal batch sizes, packed (sequences ending early), packed in reverse, and hidden size 64
    (float32's direct kernel for the steps' products, with row tails of 1 and 2, and rows over
    several tiles): one graph."""
    b, picked, reference = Builder(), [], []
    for batch_sizes, reverse, hidden in [((3,) * 5, False, 6), (PACKED, False, 6), (PACKED, True, 6), (WIDE, True, 64),
                                         (TALL, False, 64)]:
        arrays = _layer_inputs(np.random.default_rng(0), mode, batch_sizes, hidden=hidden)
        nodes, values = _add_layer(b, dtype, mode, arrays, batch_sizes, reverse)
        picked += nodes
        reference += values
    for node, out, ref in zip(picked, _run(b, picked), reference):
        _close(out, ref, dtype, f"{mode} {node.name}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
def test_layer_backward_matches_numpy_float64(dtype, mode):
    """Six cases in one graph: the output's gradient alone; packed in reverse with the final
    states' gradients too; the final states' alone; the weights' gradients only; no biases;
    hidden size 64 (float32's direct kernel for the steps' products)."""
    rng = np.random.default_rng(1)
    b, picked, reference = Builder(), [], []
    for case in ["uniform", "packed_reverse", "final_state_grads", "weights_only", "no_bias", "wide"]:
        batch_sizes, reverse = {"packed_reverse": (PACKED, True), "wide": (WIDE, False)}.get(case, ((3,) * 5, False))
        arrays = _layer_inputs(rng, mode, batch_sizes, hidden=64 if case == "wide" else 6, bias=case != "no_bias")
        T, N, H = sum(batch_sizes), batch_sizes[0], arrays["hx"].shape[1]
        g_out = None if case == "final_state_grads" else rng.standard_normal((T, H))
        g_h = rng.standard_normal((N, H)) if case != "uniform" else None
        g_c = rng.standard_normal((N, H)) if mode == "LSTM" and case != "uniform" else None
        needs = [name for name in INPUTS if arrays[name] is not None and name != "weight_hr"]
        if case == "weights_only":
            needs = [name for name in needs if name.startswith(("weight", "bias"))]
        nodes, values = _add_layer(b, dtype, mode, arrays, batch_sizes, reverse, ((g_out, g_h, g_c), tuple(needs)))
        picked += [(case, n) for n in nodes]
        reference += values
    outs = _run(b, [n for _, n in picked])
    for (case, node), out, ref in zip(picked, outs, reference):
        _close(out, ref, dtype, f"{mode} {case} {node.name}")


def test_projection_stays_on_numpy():
    """An LSTM with proj_size runs the layer's NumPy forward (the kernels have no projection)."""
    arrays = _layer_inputs(np.random.default_rng(2), "LSTM", (2, 2))
    arrays["weight_hh"] = arrays["weight_hh"][:, :3]
    arrays["hx"] = arrays["hx"][:, :3]
    arrays["weight_hr"] = np.random.default_rng(3).standard_normal((3, 6))
    b = Builder()
    picked, reference = _add_layer(b, np.float64, "LSTM", arrays, (2, 2), False)
    fn = compile_graph(b.output(*picked), {})
    assert "layer forward" not in fn.c_source
    for out, ref in zip(fn([b.values[p].copy() for p in b.graph.placeholders]), reference):
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


def _module_pair(kind, batch_first, bidirectional, **kwargs):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(5, 6, num_layers=2, batch_first=batch_first, bidirectional=bidirectional, **kwargs)
    mine = getattr(ember.nn, kind)(5, 6, num_layers=2, batch_first=batch_first, bidirectional=bidirectional, **kwargs)
    mine.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


@pytest.mark.parametrize("kind,extra,batch_first,bidirectional,initial", [
    ("LSTM", {}, False, False, False), ("LSTM", {}, True, True, True), ("GRU", {}, True, True, True),
    ("RNN", {"nonlinearity": "relu"}, False, True, False)])
def test_compiled_module_step_matches_torch(monkeypatch, kind, extra, batch_first, bidirectional, initial):
    """The whole step (forward, a loss of output, h_n and c_n, backward) compiled with
    fullgraph=True, against torch 2.13 in float32: outputs, final states and every gradient."""
    made = []
    kernel = rnn.rnn_kernel
    monkeypatch.setattr(rnn, "rnn_kernel", lambda src, node, *a: made.append(node.target.name) or kernel(src, node, *a))
    ember.compiler.reset()
    mine, theirs = _module_pair(kind, batch_first, bidirectional, **extra)
    rng = np.random.default_rng(5)
    shape = (3, 4, 5) if batch_first else (4, 3, 5)
    x = rng.standard_normal(shape).astype(np.float32)
    states = 2 * (2 if bidirectional else 1)
    h0 = rng.standard_normal((states, 3, 6)).astype(np.float32)
    c0 = rng.standard_normal((states, 3, 6)).astype(np.float32)

    def step(lib, module, inp, *state):
        module.zero_grad()
        for t in (inp, *state):
            t.grad = None
        initial_state = (state if kind == "LSTM" else state[0]) if state else None
        out, final = module(inp, initial_state)
        finals = final if kind == "LSTM" else (final,)
        loss = (out * out).sum() + sum((f * lib.arange(f.numel()).reshape(f.shape).sin()).sum() for f in finals)
        loss.backward()
        return out, finals

    def run(lib, module, compile_=False):
        inp = lib.tensor(x, requires_grad=True)
        state = [lib.tensor(a, requires_grad=True) for a in ((h0, c0) if kind == "LSTM" else (h0,))] if initial else []
        fn = lib.compile(lambda: step(lib, module, inp, *state), fullgraph=True) if compile_ else \
            (lambda: step(lib, module, inp, *state))
        for _ in range(3 if compile_ else 1):  # capture, then the compiled code
            out, finals = fn()
        grads = [inp.grad] + [s.grad for s in state] + [p.grad for p in module.parameters()]
        return [out, *finals], grads

    (outs_t, grads_t), (outs_m, grads_m) = run(torch, theirs), run(ember, mine, compile_=True)
    assert "RNNLayer" in made and "RNNLayerBackward" in made
    for a, e in zip(outs_m + grads_m, outs_t + grads_t):
        expected = e.detach().numpy()
        scale = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(a.detach().numpy(), expected, rtol=0, atol=2e-5 * scale)
