"""The C attention kernels (backends/attention.py) against each node's ``forward``: the fused
attention weights (BLAS scores per matrix + masks + softmax), batched GEMMs on strided and
broadcast stacks, and the scores' gradient. Tolerances as test_codegen's SUM_TOL (a different
summation order, ember's exp within 4 ulp); NaN and zeros land where the reference has them.
"""
import numpy as np
import pytest

from ember.compiler.backends import attention, compile_graph, toolchain
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

SUM_TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-11, atol=1e-12)}


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def _check(builder, graph, dtype):
    fn = compile_graph(graph, {})
    assert hasattr(fn, "c_source"), "the C backend was expected"
    args = [builder.values[p].copy() for p in graph.placeholders]
    with np.errstate(all="ignore"):
        outs = fn(args)
    for node, out in zip(graph.outputs, outs):
        ref = builder.values[node]
        assert out.dtype == ref.dtype == dtype and out.shape == ref.shape, node.name
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref), err_msg=node.name)
        np.testing.assert_array_equal(out == 0, ref == 0, err_msg=node.name)
        np.testing.assert_allclose(out, ref, equal_nan=True, err_msg=node.name, **SUM_TOL[dtype])
    return fn


def _heads(b, qkv, batch, length, heads, width):
    """q, k, v as GPT takes them from one projection: strided views, no copies."""
    stacked = b.call("Permute", b.call("View", qkv, shape=(batch, length, 3, heads, width)), dims=(2, 0, 3, 1, 4))
    return [b.call("Slice", stacked, index=(i,)) for i in range(3)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_forward_and_backward_on_strided_heads(dtype):
    """GPT's causal attention, forward and the backward's products, q/k/v read in place from
    the (B, T, 3C) projection; also L != S (top-left causal) and a transposed key."""
    rng = np.random.default_rng(0)
    b = Builder()
    qkv = b.input("qkv", rng.standard_normal((3, 10, 3 * 2 * 8)).astype(dtype))
    dy = b.input("dy", rng.standard_normal((3, 2, 10, 8)).astype(dtype))
    q, k, v = _heads(b, qkv, 3, 10, 2, 8)
    w = b.call("AttentionWeights", q, k, None, scale=8 ** -0.5, is_causal=True, masked_rows="zero")
    y = b.call("Matmul", w, v)
    dw = b.call("Matmul", dy, b.call("Permute", v, dims=(0, 1, 3, 2)))
    dv = b.call("Matmul", b.call("Permute", w, dims=(0, 1, 3, 2)), dy)
    ds = b.call("SoftmaxScoresGrad", dw, w, scale=8 ** -0.5)
    dq = b.call("Matmul", ds, k)
    dk = b.call("Matmul", b.call("Permute", ds, dims=(0, 1, 3, 2)), q)
    short = b.call("Slice", q, index=(slice(None), slice(None), slice(0, 4)))   # L = 4 < S = 10
    wide = b.call("AttentionWeights", short, k, None, scale=0.3, is_causal=True, masked_rows="zero")
    fn = _check(b, b.output(w, y, dv, ds, dq, dk, wide), dtype)
    source = fn.c_source
    assert source.count("attention weights softmax(scale * q @ k^T) causal") == 2
    assert source.count("batched GEMM [3, 2]") == 5 and "gradient of the scores behind softmax" in source
    for op in ("attention_weights", "matmul", "softmax_scores_grad", "slice"):
        assert f"F_{op}" not in fn.source, f"{op} ran from Python"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_masks_and_special_rows(dtype):
    """A bool mask broadcast over heads and queries (some rows with every key masked: zeros
    under SDPA's rule, NaN under softmax's), a float mask, both with the causal mask, the causal
    mask alone, NaN and infinite scores."""
    rng = np.random.default_rng(1)
    b = Builder()
    q_data = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
    q_data[0, 0, 1, 0] = np.nan
    q_data[1, 2, 3, 1] = np.inf
    q = b.input("q", q_data)
    k = b.input("k", rng.standard_normal((2, 1, 6, 4)).astype(dtype))   # heads broadcast
    keep = rng.random((2, 1, 5, 6)) < 0.6
    keep[0, 0, 2] = False                                                # a row with no key
    keep_node = b.input("keep", keep)
    add = b.input("add", rng.standard_normal((5, 6)).astype(dtype))
    outs = [b.call("AttentionWeights", q, k, keep_node, scale=0.5, is_causal=False, masked_rows=rows)
            for rows in ("zero", "nan")]
    outs.append(b.call("AttentionWeights", q, k, add, scale=1.0, is_causal=True, masked_rows="zero"))
    outs.append(b.call("AttentionWeights", q, k, keep_node, scale=2.0, is_causal=True, masked_rows="zero"))
    outs.append(b.call("AttentionWeights", q, k, None, scale=0.5, is_causal=True, masked_rows="zero"))
    fn = _check(b, b.output(*outs), dtype)
    assert "+ mask" in fn.c_source and "F_attention_weights" not in fn.source
    # the causal rows run whole, the masked keys selected (no exponential of -inf, no loop of i + 1)
    assert "j <= i ? y[j] : -INFINITY" in fn.c_source and "long keys" not in fn.c_source


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_gemm_broadcast_and_layouts(dtype):
    """Batch dims broadcast (a 2-D or 3-D left operand, size-1 dims), transposed and
    sliced operands read through their strides; a layout BLAS cannot read runs from Python."""
    rng = np.random.default_rng(2)
    b = Builder()
    a = b.input("a", rng.standard_normal((4, 1, 6, 5)).astype(dtype))
    c = b.input("c", rng.standard_normal((3, 7, 5)).astype(dtype))
    m = b.input("m", rng.standard_normal((6, 5)).astype(dtype))
    y = b.input("y", rng.standard_normal((3, 3, 7)).astype(dtype))
    ct = b.call("Permute", c, dims=(0, 2, 1))                                      # (3, 5, 7)
    every_other = b.call("Slice", a, index=(Ellipsis, slice(None, None, 2)))       # (4, 1, 6, 3)
    outs = [b.call("Matmul", a, ct), b.call("Matmul", m, ct), b.call("Matmul", every_other, y)]
    fn = _check(b, b.output(*outs), dtype)
    assert fn.c_source.count("batched GEMM") == 2  # columns 2 apart: not a layout BLAS reads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_index_gradients_and_reshapes_of_strided_values(dtype):
    """The attention backward's assembly of dq, dk, dv: IndexBackward of basic indices (ints,
    slices with steps, None, Ellipsis) as zeros plus a strided copy, and the reshape of a
    permuted value as one copy into a contiguous buffer."""
    rng = np.random.default_rng(3)
    b = Builder()
    g = b.input("g", rng.standard_normal((4, 5, 6)).astype(dtype))
    picks = [b.call("IndexBackward", g, shape=(3, 4, 5, 6), index=(1,)),
             b.call("IndexBackward", g, shape=(4, 5, 12), index=(Ellipsis, slice(None, None, 2))),
             b.call("IndexBackward", g, shape=(4, 5, 6, 2), index=(slice(None, None, -1), Ellipsis, -1)),
             b.call("IndexBackward", b.call("Slice", g, index=(0, None)), shape=(2, 5, 6), index=(-1, None))]
    total = b.call("Add", b.call("Add", picks[0], picks[0]), picks[0])
    flat = b.call("View", b.call("Permute", total, dims=(1, 3, 0, 2)), shape=(4, 18, 5))
    fn = _check(b, b.output(*picks, flat), dtype)
    assert fn.c_source.count("zeros, then g into the view") == 4 and "strided copy" in fn.c_source
    assert "F_index_backward" not in fn.source and "F_view" not in fn.source


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_of_index_gradients_write_each_into_its_view(dtype):
    """A sum of IndexBackward results (the gradient of the qkv tensor q, k and v are sliced
    from) is one kernel: views that tile the sum are copied without zeros; views that leave
    a gap zero it first; overlapping views are added to zeros (in the graph's order). A gradient that
    is also an output keeps its own kernel, and the Add its loop. A sum read through one
    Permute is laid out permuted, so GPT's reshape back to (B, T, 3C) copies nothing."""
    rng = np.random.default_rng(4)
    b = Builder()
    g = [b.input(f"g{i}", rng.standard_normal((4, 5, 6)).astype(dtype)) for i in range(3)]
    scatter = lambda x, index, shape=(3, 4, 5, 6): b.call("IndexBackward", x, shape=shape, index=index)  # noqa: E731
    qkv = b.call("Add", b.call("Add", scatter(g[2], (2,)), scatter(g[0], (0,))), scatter(g[1], (1,)))
    gap = b.call("Add", scatter(g[0], (0,)), scatter(g[1], (2,)))
    rows = b.call("Slice", g[2], index=(slice(0, 2),))
    overlap = b.call("Add", scatter(g[0], (slice(0, 4), Ellipsis), (6, 5, 6)),
                     b.call("Add", scatter(g[1], (slice(2, 6),), (6, 5, 6)), scatter(rows, (slice(1, 3),), (6, 5, 6))))
    kept = scatter(g[1], (1,))
    escaping = b.call("Add", kept, scatter(g[2], (0,)))
    flat = b.call("View", b.call("Permute", qkv, dims=(1, 2, 0, 3)), shape=(4, 5, 18))
    fn = _check(b, b.output(flat, gap, overlap, escaping, kept), dtype)
    source = fn.c_source
    assert "strided copy" not in source
    assert "sum of 3 index gradients, each into its view -> [3, 4, 5, 6]" in source
    assert "sum of 2 index gradients, each into its view, zeros first -> [3, 4, 5, 6]" in source
    assert "sum of 3 index gradients, each added into its view, zeros first -> [6, 5, 6]" in source
    assert source.count("zeros, then g into the view") == 2 and "F_index_backward" not in fn.source


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_gradient(dtype):
    """GPT's token-embedding gradient: repeated ids sum, ``padding_idx`` gets none."""
    rng = np.random.default_rng(5)
    b = Builder()
    g = b.input("g", rng.standard_normal((4, 9, 6)).astype(dtype))
    ids = b.input("ids", rng.integers(0, 7, (4, 9)))
    outs = [b.call("EmbeddingBackward", g, ids, num_weights=7, padding_idx=padding) for padding in (None, 3)]
    fn = _check(b, b.output(*outs), dtype)
    assert fn.c_source.count("embedding gradient: 36 rows of 6") == 2 and "F_embedding_backward" not in fn.source


def test_register_tiled_head_products_within_the_float32_bound():
    """Products of heads 16 to 64 wide (float32) run as register-tiled C: GPT's six per-head
    products on (B, T, 3C) projections (q, k, v read in place, the key and the scores read
    transposed), T = 64 and 32, head widths 32 and 16, plus a broadcast operand. Checked against
    float64 products of the same float32 inputs within the dot product's rounding bound,
    |out - exact| <= k * 2^-24 * (|A| @ |B|) * 1.01 (k terms; the scale a power of two), and NaN
    propagated from an operand as BLAS does."""
    rng = np.random.default_rng(6)
    b = Builder()
    exact, bounds, outs = [], [], []
    for batch, length, heads, width in ((2, 64, 2, 32), (3, 32, 2, 16)):
        qkv_data = rng.standard_normal((batch, length, 3 * heads * width)).astype(np.float32)
        qkv_data[0, 3, 5] = np.nan  # in q of head 0: row 3 of that head's scores and outputs
        dy_data = rng.standard_normal((batch, heads, length, width)).astype(np.float32)
        qkv, dy = b.input(f"qkv{length}", qkv_data), b.input(f"dy{length}", dy_data)
        q, k, v = _heads(b, qkv, batch, length, heads, width)
        kt, dyv = b.call("Permute", k, dims=(0, 1, 3, 2)), b.call("Permute", v, dims=(0, 1, 3, 2))
        w = b.call("AttentionWeights", q, k, None, scale=0.25, is_causal=False, masked_rows="zero")
        pairs = [(q, kt), (w, v), (dy, dyv), (b.call("Permute", w, dims=(0, 1, 3, 2)), dy), (w, k),
                 (b.call("Permute", w, dims=(0, 1, 3, 2)), q), (w, b.input(f"shared{length}", dy_data[0, 0]))]
        for x, y in pairs:
            outs.append(b.call("Matmul", x, y))
            x64, y64 = b.values[x].astype(np.float64), b.values[y].astype(np.float64)
            exact.append(x64 @ y64)
            bounds.append(x64.shape[-1] * 2.0 ** -24 * 1.01 * (np.abs(x64) @ np.abs(y64)))
    fn = compile_graph(b.output(*outs), {})
    assert fn.c_source.count("register-tiled") == 14 and "F_matmul" not in fn.source
    with np.errstate(all="ignore"):
        results = fn([b.values[p].copy() for p in b.graph.placeholders])
    for out, ref, bound in zip(results, exact, bounds):
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
        finite = ~np.isnan(ref)
        assert np.all(np.abs(out - ref)[finite] <= bound[finite]), np.max((np.abs(out - ref) - bound)[finite])


def test_causal_head_products_skip_the_zero_triangle_exactly():
    """The register-tiled products of a causal attention whose left operand is its weights
    (or their gradient), or one of them transposed, leave out the terms above (below) the
    diagonal, which are 0: the same values, NaN and zeros as eager. An inf in a value row (eager
    multiplies it by the weights' zeros: NaN in the rows before it) makes the kernel run every
    term, as does a gradient of the weights that is NaN there (the same inf, through dY v^T);
    the other heads take the short loops. The causal scores are computed where the softmax
    reads them (j <= i), and so is dY v^T where the scores' gradient multiplies it by nonzero
    weights (its inf column in batch 1, head 1: there every entry, NaN where eager has it)."""
    rng = np.random.default_rng(7)
    b = Builder()
    batch, length, heads, width = 2, 64, 2, 32
    qkv_data = rng.standard_normal((batch, length, 3 * heads * width)).astype(np.float32)
    qkv_data[1, 40, 2 * heads * width + width + 3] = np.inf  # v of batch 1, head 1, row 40
    qkv = b.input("qkv", qkv_data)
    dy = b.input("dy", rng.standard_normal((batch, heads, length, width)).astype(np.float32))
    q, k, v = _heads(b, qkv, batch, length, heads, width)
    w = b.call("AttentionWeights", q, k, None, scale=0.25, is_causal=True, masked_rows="zero")
    ds = b.call("SoftmaxScoresGrad", b.call("Matmul", dy, b.call("Permute", v, dims=(0, 1, 3, 2))), w, scale=0.25)
    pairs = [(w, v), (b.call("Permute", w, dims=(0, 1, 3, 2)), dy), (ds, k),
             (b.call("Permute", ds, dims=(0, 1, 3, 2)), q), (dy, b.call("Permute", v, dims=(0, 1, 3, 2)))]
    outs = [b.call("Matmul", x, y) for x, y in pairs]
    fn = _check(b, b.output(w, ds, *outs), np.float32)
    # not dY v^T; w v and dS k differ in their checks of A (session 29: none for the weights)
    assert fn.c_source.count("const int skip = !bad;") == 4 and "F_matmul" not in fn.source
    assert fn.c_source.count(" share this code") == 0
    # dY v^T read only by the scores' gradient: computed for j <= i where dY and v are finite
    assert fn.c_source.count("const int finite = !bad;") == 1
    assert np.isnan(b.values[outs[0]][1, 1, :40, 3]).all() and not np.isnan(b.values[outs[0]][0]).any()
    # the scores' tiles compute the vectors of columns their softmax reads (j <= i): 1 to 4 of 4
    # (AVX-512: tiles of 4 rows by 4 vectors of 16) or 2, 4, 6 or 8 of 8 (AVX2: 1 row by 8 vectors
    # of 8, in steps of two: four copies of the tile, not eight)
    lanes, tile = attention._tile_shape()
    rows, step = tile // length, 2 if length // lanes >= 8 else 1
    assert f"vector_size({lanes * 4})" in fn.c_source and (lanes == 16 or "vector_size(64)" not in fn.c_source)
    assert f"const long need = (i + {rows} + {lanes * step - 1}) / {lanes * step} * {step};" in fn.c_source
    assert f"if (need == {3 * step})" in fn.c_source and (step == 1 or "if (need == 3)" not in fn.c_source)
