"""The causal attention weights' softmax over whole vectors combines its lanes in registers
(backends/attention.py, ``_lane_tree``: the maxima, NaN flags and sums halved lane by lane with
``__builtin_shufflevector``), and the scalar loop over the lanes that compilers without it get
gives the same numbers: 64 keys (4 vectors of float32 and 8 of float64 with AVX-512), NaN and inf
scores, against torch's softmax of the masked scores computed in float64."""
import re

import numpy as np
import pytest
import torch

from ember.compiler.backends import attention, compile_graph, toolchain
from ember.compiler.backends.direct_gemm import vector_bytes
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

# float32: the scores' own rounding (|scale q k| up to ~10, 2**-24 each) moves exp by ~1e-6
TOL = {np.float32: dict(rtol=5e-6, atol=1e-8), np.float64: dict(rtol=1e-12, atol=1e-15)}


@pytest.mark.parametrize("shuffles", [attention.SHUFFLES, "0"], ids=["lane tree", "scalar lanes"])
def test_causal_softmax_lanes_combined_as_torch_in_float64(shuffles, monkeypatch, tmp_path_factory):
    # a cache of each variant's own: the library's key is the graph and ember's code, not SHUFFLES
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / f"cache-{shuffles == '0'}"))
    monkeypatch.setattr(attention, "SHUFFLES", shuffles)
    rng = np.random.default_rng(31)
    b, outs, inputs = Builder(), [], []
    for dtype in (np.float32, np.float64):
        q = (rng.standard_normal((2, 2, 64, 16)) * 2).astype(dtype)
        k = rng.standard_normal((2, 2, 64, 16)).astype(dtype)
        q[0, 1, 40, 3] = np.nan   # a NaN score: its row NaN through, the masked keys as well
        k[1, 0, 33, 5] = np.inf   # an inf key: NaN and 1 or 0 where its column meets the rows
        q[1, 1, 50, :] = 0        # a row of equal scores: 1 / 51 each
        inputs.append((q, k))
        outs.append(b.call("AttentionWeights", b.input(f"q{len(outs)}", q), b.input(f"k{len(outs)}", k), None,
                           scale=0.25, is_causal=True, masked_rows="zero"))
    graph = b.output(*outs)
    fn = compile_graph(graph, {})
    assert len(re.findall(rf"^ +#if {re.escape(shuffles)}$", fn.c_source, re.M)) == 4  # per dtype a max and a sum
    lanes = vector_bytes() // 4  # float32's; float64 has half as many
    assert fn.c_source.count("__builtin_shufflevector(mv, mv, ") == 2 * lanes.bit_length() - 3  # log2 of each
    with np.errstate(all="ignore"):
        got = fn([b.values[p].copy() for p in graph.placeholders])
    for out, (q, k) in zip(got, inputs):
        scores = torch.from_numpy(q).double() @ torch.from_numpy(k).double().transpose(-1, -2) * 0.25
        future = torch.ones(64, 64, dtype=torch.bool).triu(1)
        expected = torch.softmax(scores.masked_fill(future, float("-inf")), -1).numpy()
        np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
        np.testing.assert_array_equal(out == 0, expected == 0)
        np.testing.assert_allclose(out, expected, equal_nan=True, **TOL[out.dtype.type])
        assert np.isnan(out[0, 1, 40]).all() and not np.isnan(out[0, 1, 39]).any()
        np.testing.assert_allclose(out[1, 1, 50, :51], np.full(51, 1 / 51), rtol=TOL[out.dtype.type]["rtol"])
