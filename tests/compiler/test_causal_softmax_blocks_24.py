"""The causal attention weights' softmax in blocks of 16 rows, each row over the vectors that
hold a key j <= i (backends/attention.py, ``_causal_softmax_rows``): rows in three blocks (the
last one short), a key count that is no multiple of the vector, NaN and inf scores in the
second block, against the node's forward and torch's softmax of the masked scores."""
import numpy as np
import pytest
import torch

from ember.compiler.backends import compile_graph, toolchain
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

TOL = {np.float32: dict(rtol=1e-4, atol=1e-6), np.float64: dict(rtol=1e-11, atol=1e-14)}


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_causal_weights_in_row_blocks_as_torch(dtype):
    rng = np.random.default_rng(24)
    q_data = rng.standard_normal((2, 3, 37, 8)).astype(dtype)
    q_data[0, 1, 20, 3] = np.nan        # a NaN row in the second block of 16
    q_data[1, 2, 17, 0] = np.inf        # an inf score: NaN where it meets 0 * inf, as torch
    k_data = rng.standard_normal((2, 3, 37, 8)).astype(dtype)
    b = Builder()
    w = b.call("AttentionWeights", b.input("q", q_data), b.input("k", k_data), None, scale=0.35,
               is_causal=True, masked_rows="zero")
    graph = b.output(w)
    fn = compile_graph(graph, {})
    assert "mx[16], sm[16]" in fn.c_source and "F_attention_weights" not in fn.source
    with np.errstate(all="ignore"):
        out = fn([b.values[p].copy() for p in graph.placeholders])[0]
    ref = b.values[w]
    scores = torch.from_numpy(q_data) @ torch.from_numpy(k_data).transpose(-1, -2) * 0.35
    future = torch.ones(37, 37, dtype=torch.bool).triu(1)
    expected = torch.softmax(scores.masked_fill(future, float("-inf")), -1).numpy()
    for reference in (ref, expected):
        np.testing.assert_array_equal(np.isnan(out), np.isnan(reference))
        np.testing.assert_array_equal(out == 0, reference == 0)
        np.testing.assert_allclose(out, reference, equal_nan=True, **TOL[dtype])
    assert np.isnan(out[0, 1, 20]).all() and not np.isnan(out[0, 1, 19]).any()
