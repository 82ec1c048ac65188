"""The causal attention weights' softmax over whole vectors (backends/attention.py,
``_vector_parts``: rows of keys a multiple of the vector's lanes, the maxima in vector
registers, one partial sum per lane): 32 keys with as many queries, fewer (L < S) and more
(L > S: the rows past the keys keep them all), NaN and inf scores, float32 (the register tile's
scores) and float64 (BLAS's), against the node's forward and torch's softmax of the masked
scores."""
import numpy as np
import pytest
import torch

from ember.compiler.backends import compile_graph, toolchain
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

TOL = {np.float32: dict(rtol=1e-5, atol=1e-7), np.float64: dict(rtol=1e-12, atol=1e-15)}


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_causal_weights_over_whole_vectors_as_torch(dtype):
    rng = np.random.default_rng(28)
    k_data = rng.standard_normal((2, 2, 32, 8)).astype(dtype)
    queries = {}
    for rows in (32, 6, 40):
        q_data = (rng.standard_normal((2, 2, rows, 8)) * 3).astype(dtype)
        queries[rows] = q_data
    queries[32][0, 1, 20, 3] = np.nan       # a NaN row: NaN through, the masked keys as well
    queries[32][1, 0, 17, 0] = np.inf       # an inf score: NaN where it meets 0 * inf, as torch
    queries[40][1, 1, 35, 2] = -np.inf
    b = Builder()
    k = b.input("k", k_data)
    outs = [b.call("AttentionWeights", b.input(f"q{rows}", q), k, None, scale=0.35, is_causal=True,
                   masked_rows="zero") for rows, q in queries.items()]
    graph = b.output(*outs)
    fn = compile_graph(graph, {})
    assert fn.c_source.count("vt mv = lowest") == 3 and "F_attention_weights" not in fn.source
    with np.errstate(all="ignore"):
        got = fn([b.values[p].copy() for p in graph.placeholders])
    for out, node, q_data in zip(got, outs, queries.values()):
        scores = torch.from_numpy(q_data) @ torch.from_numpy(k_data).transpose(-1, -2) * 0.35
        future = torch.ones(q_data.shape[2], 32, dtype=torch.bool).triu(1)
        expected = torch.softmax(scores.masked_fill(future, float("-inf")), -1).numpy()
        for reference in (b.values[node], expected):
            np.testing.assert_array_equal(np.isnan(out), np.isnan(reference))
            np.testing.assert_array_equal(out == 0, reference == 0)
            np.testing.assert_allclose(out, reference, equal_nan=True, **TOL[dtype])
    assert np.isnan(got[0][0, 1, 20]).all() and not np.isnan(got[0][0, 1, 19]).any()
    assert np.isnan(got[2][1, 1, 35]).any() and not np.isnan(got[2][1, 1, 34]).any()
