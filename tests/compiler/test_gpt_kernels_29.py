"""The tiny GPT step's per-head products of a causal attention (backends/attention.py, session
29): P @ v skips the weights' zero triangle with no check of P (a row of P is finite with 0 above
its diagonal, or NaN throughout); P^T @ dY, dS @ k and dS^T @ q check only their left operand's
diagonal (finite wherever the triangle is 0; else every term, as eager); B's check for inf and
NaN is taken while B is packed. Against the nodes' forward (eager ember) and torch: NaN rows
from NaN and inf scores, an inf in dY, an inf in v (the scores' gradient then inf on the
diagonal, NaN above it), and heads where every check passes."""
import numpy as np
import pytest
import torch

from ember.compiler.backends import compile_graph, toolchain
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def _torch_products(q, k, v, dy, dv):
    """P v, P^T dY, dS k, dS^T q in torch (dS: softmax's backward of dv v^T, times the scale)."""
    q, k, v, dy, dv = (torch.from_numpy(x) for x in (q, k, v, dy, dv))
    scores = (q @ k.transpose(-1, -2) * 0.25).masked_fill(torch.ones(64, 64, dtype=torch.bool).triu(1), -np.inf)
    p = torch.softmax(scores, -1)
    g = dv @ v.transpose(-1, -2)
    ds = p * (g - (g * p).sum(-1, keepdim=True)) * 0.25
    return [x.numpy() for x in (p @ v, p.transpose(-1, -2) @ dy, ds @ k, ds.transpose(-1, -2) @ q)]


def test_products_of_causal_weights_check_only_diagonals_exactly():
    rng = np.random.default_rng(29)
    shape = (2, 3, 64, 32)
    q_data, k_data, v_data, dy_data, dv_data = (rng.standard_normal(shape).astype(np.float32) for _ in range(5))
    q_data[0, 1, 20, 3] = np.nan        # row 20 of head (0, 1)'s weights NaN: every row of P^T dY there
    q_data[1, 0, 5, 0] = np.inf         # +-inf scores in row 5 of head (1, 0): NaN, as torch
    dy_data[1, 2, 40, 7] = np.inf       # dY's inf meets P^T's zeros: the full loop, NaN after row 40
    v_data[0, 2, 30, 1] = np.inf        # g = dv v^T: column 30 inf; rows > 30 of dS inf on the diagonal
    b = Builder()
    q, k, v, dy, dv = (b.input(name, x) for name, x in zip(("q", "k", "v", "dy", "dv"),
                                                           (q_data, k_data, v_data, dy_data, dv_data)))
    w = b.call("AttentionWeights", q, k, None, scale=0.25, is_causal=True, masked_rows="zero")
    ds = b.call("SoftmaxScoresGrad", b.call("Matmul", dv, b.call("Permute", v, dims=(0, 1, 3, 2))), w, scale=0.25)
    pairs = [(w, v), (b.call("Permute", w, dims=(0, 1, 3, 2)), dy), (ds, k), (b.call("Permute", ds, dims=(0, 1, 3, 2)), q)]
    graph = b.output(*[b.call("Matmul", x, y) for x, y in pairs])
    fn = compile_graph(graph, {})
    source = fn.c_source
    # the four products tiled and skipping (P^T dY and dS^T q share one copy); P v reads none of
    # A, the others A's diagonal
    assert source.count("const int skip = !bad;") == 3 and source.count(" share this code") == 1
    assert source.count("bad |= A[r*65] * 0 != 0;") == 2 and source.count("nonfinite |= x * 0.0f != 0.0f;") == 3
    assert ") & (A[" not in source and "F_matmul" not in fn.source
    with np.errstate(all="ignore"):
        outs = fn([b.values[p].copy() for p in graph.placeholders])
        refs = _torch_products(q_data, k_data, v_data, dy_data, dv_data)
    for out, node, ref in zip(outs, graph.outputs, refs):
        for expected in (b.values[node], ref):
            np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
            np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5, equal_nan=True)
    pv, pt_dy, ds_k, dst_q = outs
    # the special heads are NaN where torch has it, the others finite throughout
    assert np.isnan(pt_dy[0, 1]).all() and np.isnan(pv[0, 1, 20]).all() and not np.isnan(pv[0, 1, 21:]).any()
    assert np.isinf(pt_dy[1, 2, :41, 7]).all() and np.isnan(pt_dy[1, 2, 41:, 7]).all()
    assert np.isnan(ds_k[0, 2]).all() and np.isnan(dst_q[0, 2]).all()
    assert not np.isnan(pv[0, 0]).any() and not np.isnan(pt_dy[1, 1]).any() and not np.isnan(ds_k[1, 1]).any()
