"""The tiny GPT step's per-head products of a causal attention's weights (backends/attention.py,
session 29): P @ v skips the weights' zero triangle with no check of P (a row of P is finite with
0 above its diagonal, or NaN throughout), P^T @ dY checks P's diagonal for NaN only (a NaN row of
P, a column of P^T, makes every row of the product NaN, as eager and torch), and B's check for
inf and NaN is taken while B is packed. Against the nodes' forward (eager ember) and torch:
NaN rows from NaN and inf scores, an inf in dY, and heads where every check passes."""
import numpy as np
import pytest
import torch

from ember.compiler.backends import compile_graph, toolchain
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def test_products_of_causal_weights_skip_their_checks_exactly():
    rng = np.random.default_rng(29)
    shape = (2, 3, 64, 32)
    q_data, k_data, v_data, dy_data = (rng.standard_normal(shape).astype(np.float32) for _ in range(4))
    q_data[0, 1, 20, 3] = np.nan        # row 20 of head (0, 1)'s weights NaN: every row of P^T dY there
    q_data[1, 0, 5, 0] = np.inf         # +-inf scores in row 5 of head (1, 0): NaN, as torch
    dy_data[1, 2, 40, 7] = np.inf       # dY's inf meets P^T's zeros: the full loop, NaN after row 40
    b = Builder()
    q, k, v, dy = (b.input(name, x) for name, x in zip("qkvd", (q_data, k_data, v_data, dy_data)))
    w = b.call("AttentionWeights", q, k, None, scale=0.25, is_causal=True, masked_rows="zero")
    pv = b.call("Matmul", w, v)
    pt_dy = b.call("Matmul", b.call("Permute", w, dims=(0, 1, 3, 2)), dy)
    graph = b.output(pv, pt_dy)
    fn = compile_graph(graph, {})
    source = fn.c_source
    # both products tiled and skipping; neither scans P's triangle; P^T's reads P's diagonal
    assert source.count("const int skip = !bad;") == 2 and ") & (A[" not in source
    assert source.count("!= A[") == 1 and source.count("nonfinite |= x * 0 != 0;") == 2
    with np.errstate(all="ignore"):
        outs = fn([b.values[p].copy() for p in graph.placeholders])
    tq, tk, tv, tdy = (torch.from_numpy(x) for x in (q_data, k_data, v_data, dy_data))
    scores = (tq @ tk.transpose(-1, -2) * 0.25).masked_fill(torch.ones(64, 64, dtype=torch.bool).triu(1), -np.inf)
    p = torch.softmax(scores, -1)
    refs = [(p @ tv).numpy(), (p.transpose(-1, -2) @ tdy).numpy()]
    for out, node, ref in zip(outs, graph.outputs, refs):
        for expected in (b.values[node], ref):
            np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
            np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5, equal_nan=True)
    # the special heads are NaN where torch has it, the others finite throughout
    assert np.isnan(outs[1][0, 1]).all() and np.isnan(outs[0][0, 1, 20]).all()
    assert np.isinf(outs[1][1, 2, :41, 7]).all() and np.isnan(outs[1][1, 2, 41:, 7]).all()
    assert not np.isnan(outs[0][0, 0]).any() and not np.isnan(outs[1][1, 1]).any()
