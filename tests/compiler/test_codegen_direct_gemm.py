"""The register-tiled direct GEMM kernel (backends/direct_gemm.py) against float64 products.

Bound: every element within the classical bound of a K-term dot product,
``|C - C64| <= K * eps * (|A| @ |B|)`` (eps of the dtype; Higham, Accuracy and Stability of
Numerical Algorithms, 3.5), plus float64's rounding of the reference itself.
"""
import numpy as np
import pytest
from scipy import special

from ember.compiler.backends import autotune, compile_graph, toolchain
from ember.compiler.backends import direct_gemm
from ember.compiler.backends.direct_gemm import direct_lines
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_direct_kernel_every_layout_and_tail(dtype, monkeypatch):
    """Rows that do not fill a register tile (13, 9, 17, 5), columns that do not fill a vector or
    a panel (70 = a panel and 6, 10, 48, 19), B read in place, packed, transposed (Linear's
    weight; a permuted matrix), A transposed, K of 1 and 7, a bias: each equals float64's product."""
    monkeypatch.setattr(autotune, "cost_model", lambda shape, *_: (2, 0))
    rng = np.random.default_rng(3)
    b = Builder()
    arrays = {}

    def inp(name, shape):
        arrays[name] = rng.standard_normal(shape).astype(dtype)
        return b.input(name, arrays[name])
    x, w, bias = inp("x", (13, 7)), inp("w", (70, 7)), inp("bias", (70,))
    x2, w2 = inp("x2", (33, 40)), inp("w2", (128, 40))
    a, square = inp("a", (9, 64)), inp("square", (64, 64))
    at, bt = inp("at", (20, 17)), inp("bt", (20, 10))
    a5, b48 = inp("a5", (5, 16)), inp("b48", (48, 16))
    col, row = inp("col", (6, 1)), inp("row", (1, 19))
    outs = [b.call("Addmm", bias, x, b.call("Permute", w, dims=(1, 0))),
            b.call("Matmul", x2, b.call("Permute", w2, dims=(1, 0))), b.call("Matmul", a, square),
            b.call("Matmul", b.call("Permute", at, dims=(1, 0)), bt),
            b.call("Matmul", a5, b.call("Permute", b48, dims=(1, 0))), b.call("Matmul", col, row)]
    g = b.output(*outs)
    fn = compile_graph(g, {})
    assert fn.c_source.count("em_v acc[") >= 6
    assert ("em_transpose_f(" in fn.c_source) == (dtype == np.float32)
    got = fn([b.values[p].copy() for p in g.placeholders])
    v = {k: arr.astype(np.float64) for k, arr in arrays.items()}
    products = [(v["x"], v["w"].T), (v["x2"], v["w2"].T), (v["a"], v["square"]), (v["at"].T, v["bt"]),
                (v["a5"], v["b48"].T), (v["col"], v["row"])]
    eps = np.finfo(dtype).eps
    for i, ((lhs, rhs), out) in enumerate(zip(products, got)):
        ref = lhs @ rhs + (v["bias"] if i == 0 else 0)
        bound = (lhs.shape[1] + 1) * eps * (np.abs(lhs) @ np.abs(rhs) + (np.abs(v["bias"]) if i == 0 else 0))
        assert out.dtype == dtype and out.shape == ref.shape
        assert np.all(np.abs(out - ref) <= bound + 1e-300), f"product {i}: {np.max(np.abs(out - ref) - bound)}"


def test_direct_kernel_code_shape():
    """The generated statements: B read in place when its rows are whole vectors, packed (and
    transposed by em_transpose_f for float32) otherwise; each block of rows finished once."""
    finish = lambda r0, r1: f"done({r0}, {r1});"
    helpers, lines = direct_lines("float", 4, 8, 64, 32, (32, 1), (64, 1), finish)
    assert not helpers and "Bp" not in "".join(lines) and "B + q*64 + j" in "".join(lines)
    helpers, lines = direct_lines("float", 4, 21, 10, 32, (32, 1), (1, 32), finish)  # (blocks of 4 or 16 rows)
    text = "\n".join(lines)
    assert helpers and "em_transpose_f(B, 32, 10, 32, Bp, 16, 0);" in text
    assert text.count("done(") == 2  # the whole blocks' loop, then the last rows
    helpers, lines = direct_lines("double", 8, 3, 5, 4, (4, 1), (1, 4), finish)
    assert not helpers and "Bp[q*8 + j] = B[q*1 + j*4]" in "\n".join(lines)
    assert direct_lines("float", 4, 0, 5, 4, (4, 1), (5, 1), finish) == ([], [])


def test_cost_model_picks_the_direct_kernel_only_where_it_is_generated():
    """Tiny products and Linear's (B transposed) up to 2M multiply-adds take the direct kernel,
    never one whose packed B would not fit on the stack (its code is not generated: BLAS runs)."""
    assert autotune.cost_model((8, 9, 7, 4)) == (2, 0)
    assert autotune.cost_model((32, 128, 64, 4), True) == (2, 0)
    assert autotune.cost_model((32, 128, 64, 4)) == ((2, 0) if autotune._avx2_only() else (0, 0))
    assert autotune.cost_model((32, 128, 64, 8)) == (0, 0)
    assert autotune.cost_model((1, 256, 128, 4)) == (0, 0) and not autotune.direct_candidate((1, 256, 128, 4))
    packed = direct_gemm.vector_bytes() == 64 and autotune.cpu_vendor() == "GenuineIntel"
    assert autotune.cost_model((1024, 384, 128, 4), True) == ((3, 0) if packed else (0, 0))


def test_packed_candidate_and_cost_model():
    """The packed kernel: float32 products above the direct kernel's sizes whose columns are
    whole vectors; the cost model takes it where it was measured faster
    (test_cost_model_takes_the_packed_kernel_where_measured_faster), BLAS elsewhere."""
    avx512 = direct_gemm.vector_bytes() == 64
    assert autotune.packed_candidate((1024, 512, 128, 4))
    assert not autotune.packed_candidate((1024, 512, 128, 8))  # float64: BLAS
    assert not autotune.packed_candidate((1024, 100, 128, 4))  # columns not whole vectors
    assert not autotune.packed_candidate((32, 64, 64, 4))      # small: direct kernel or BLAS
    intel = avx512 and autotune.cpu_vendor() == "GenuineIntel"
    assert autotune.cost_model((1024, 512, 128, 4)) == ((3, 0) if intel else (0, 0))


@pytest.mark.parametrize("vendor, n, k, choice", [
    ("GenuineIntel", 512, 128, 3), ("GenuineIntel", 128, 1024, 3),
    ("AuthenticAMD", 128, 512, 3), ("AuthenticAMD", 96, 128, 3), ("AuthenticAMD", 128, 1024, 3),
    ("AuthenticAMD", 144, 128, 0), ("AuthenticAMD", 384, 128, 0), ("AuthenticAMD", 512, 128, 0),
    ("", 128, 512, 0)])
def test_cost_model_takes_the_packed_kernel_where_measured_faster(vendor, n, k, choice, monkeypatch):
    """On an AVX-512 CPU (made so here, whatever this one is): Intel's every large float32
    product; AMD's (Zen 4) those of at most 128 columns, where OpenBLAS's packing of A, zeroing
    of C and separate epilogue pass cost more than the packed kernel's work; an unknown
    vendor's none."""
    for module in (direct_gemm, autotune):
        monkeypatch.setattr(module, "vector_bytes", lambda: 64)
    monkeypatch.setattr(autotune, "cpu_vendor", lambda: vendor)
    assert autotune.cost_model((1024, n, k, 4)) == (choice, 0)
    assert autotune.cost_model((1024, n, k, 8)) == (0, 0)  # float64: always BLAS


@pytest.mark.parametrize("vendor", ["AuthenticAMD", "GenuineIntel"])
def test_with_avx2_the_packed_kernel_is_a_candidate_for_max_autotune_only(vendor, monkeypatch):
    """On an AVX2 CPU (made so here): the packed kernel (6 rows by 2 vectors of 8) is a
    candidate, which max-autotune times; the cost model keeps BLAS (the GPT step with it was
    within the noise of BLAS's on an AMD EPYC)."""
    for module in (direct_gemm, autotune):
        monkeypatch.setattr(module, "vector_bytes", lambda: 32)
    monkeypatch.setattr(autotune, "cpu_vendor", lambda: vendor)
    assert autotune.packed_candidate((1024, 384, 128, 4)) and not autotune.packed_candidate((1024, 100, 128, 4))
    assert autotune.cost_model((1024, 384, 128, 4)) == autotune.cost_model((128, 512, 1024, 4)) == (0, 0)


@pytest.mark.parametrize("avx2, choice", [(True, 2), (False, 0)])
def test_with_avx2_the_direct_kernel_takes_every_small_float32_product(avx2, choice, monkeypatch):
    """With 256-bit vectors (made so here) the direct kernel takes the plain and weight-gradient
    products it is generated for (timed faster than OpenBLAS on an AMD EPYC with AVX2); with
    AVX-512 those stay BLAS's; float64 and products whose packed B would not fit, BLAS's."""
    for module in (direct_gemm, autotune):
        monkeypatch.setattr(module, "vector_bytes", lambda: 32 if avx2 else 64)
    monkeypatch.setattr(autotune.toolchain, "cpu_identity", lambda: "x86_64 x86_64 fpu sse2 avx avx2 fma")
    assert autotune.cost_model((64, 128, 32, 4)) == autotune.cost_model((120, 400, 32, 4)) == (choice, 0)
    assert autotune.cost_model((64, 128, 32, 8)) == autotune.cost_model((32, 120, 400, 4)) == (0, 0)


def test_packed_kernel_every_layout_and_tail(monkeypatch):
    """The packed kernel (choice 3) on products that cut every block short: rows that do not
    fill a tile (100 = 16 tiles of 6 and 4; the second block of 96 rows), columns past the last
    whole panel (with AVX-512's panels of 64: 80 = 64 + 16, 112 = 64 + 48; AVX2's are 16 wide), K in two blocks (300 = 256 + 44), B transposed
    (Linear's weight), A transposed (packed; a weight gradient's ``X^T @ dY``, through the 8x8
    shuffles: also in three blocks of rows, 200 = 96 + 96 + 8), a 3-D A folded into rows, a
    bias and a GELU epilogue: each equals float64's within the dot-product bound."""
    monkeypatch.setattr(autotune, "cost_model", lambda shape, *_: (3, 0))
    rng = np.random.default_rng(5)
    b = Builder()
    arrays = {}

    def inp(name, shape):
        arrays[name] = rng.standard_normal(shape).astype(np.float32)
        return b.input(name, arrays[name])
    x, w, bias = inp("x", (100, 300)), inp("w", (80, 300)), inp("bias", (80,))
    at, bt = inp("at", (600, 50)), inp("bt", (600, 112))
    x3, sq = inp("x3", (4, 50, 160)), inp("sq", (160, 128))
    xt, dy = inp("xt", (300, 200)), inp("dy", (300, 64))
    outs = [b.call("Addmm", bias, x, b.call("Permute", w, dims=(1, 0))),
            b.call("Gelu", b.call("Matmul", b.call("Permute", at, dims=(1, 0)), bt)),
            b.call("Matmul", b.call("View", x3, shape=(200, 160)), sq),
            b.call("Matmul", b.call("Permute", xt, dims=(1, 0)), dy)]
    g = b.output(*outs)
    fn = compile_graph(g, {})
    assert fn.c_source.count("_bp[") >= 3 and "_ap[" in fn.c_source and "em_pack_b(B, 1, 300, " in fn.c_source
    got = fn([b.values[p].copy() for p in g.placeholders])
    v = {k: arr.astype(np.float64) for k, arr in arrays.items()}
    eps = np.finfo(np.float32).eps
    products = [(v["x"], v["w"].T), (v["at"].T, v["bt"]), (v["x3"].reshape(200, 160), v["sq"]), (v["xt"].T, v["dy"])]
    for i, (lhs, rhs) in enumerate(products):
        ref = lhs @ rhs + (v["bias"] if i == 0 else 0)
        bound = (lhs.shape[1] + 1) * eps * (np.abs(lhs) @ np.abs(rhs) + (np.abs(v["bias"]) if i == 0 else 0))
        if i == 1:  # GELU's slope is at most 1.13; its own float32 rounding a few eps
            ref, bound = ref * 0.5 * (1 + special.erf(ref / np.sqrt(2))), 1.13 * bound + 4 * eps * np.abs(ref) + 1e-30
        assert got[i].dtype == np.float32 and got[i].shape == ref.shape
        assert np.all(np.abs(got[i] - ref) <= bound), f"product {i}: {np.max(np.abs(got[i] - ref) - bound)}"


@pytest.mark.parametrize("mode", ["cost model 0", "cost model 2", "cost model 3", "max_autotune"])
def test_only_the_variant_that_can_be_picked_is_generated(mode, monkeypatch, tmp_path):
    """Outside max-autotune each product's C holds the variant the cost model picks and no
    other (autotune.planned: the packed products' BLAS branches were a tenth of gcc's time on
    the GPT step); under max-autotune every candidate, to be timed. A small product (a direct
    kernel candidate) and a large float32 one (a packed kernel candidate), each
    equal to float64's product within the dot-product bound."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the cache key does not hold the patched model
    packs = autotune.packed_candidate((256, 128, 128, 4))
    options = {"max_autotune": True} if mode == "max_autotune" else {}
    if not options:
        monkeypatch.setattr(autotune, "cost_model", lambda shape, *_: (int(mode[-1]), 0))
    rng = np.random.default_rng(7)
    b = Builder()
    arrays = {name: rng.standard_normal(shape).astype(np.float32)
              for name, shape in [("a", (48, 64)), ("b", (64, 32)), ("c", (256, 128)), ("d", (128, 128))]}
    nodes = {name: b.input(name, value) for name, value in arrays.items()}
    g = b.output(b.call("Matmul", nodes["a"], nodes["b"]), b.call("Matmul", nodes["c"], nodes["d"]))
    fn = compile_graph(g, options)
    source = fn.c_source
    direct, packed = {"cost model 0": (0, 0), "cost model 2": (1, 0), "cost model 3": (0, packs),
                      "max_autotune": (1, packs)}[mode]
    assert source.count("if (choice == 2)") == direct and source.count("if (choice == 3)") == packed
    # BLAS: on every product under max-autotune, else on those whose chosen kernel was not made
    assert source.count("em_sgemm_any(") == (2 if options else 2 - direct - packed)
    got = fn([b.values[p].copy() for p in g.placeholders])
    v = {k: arr.astype(np.float64) for k, arr in arrays.items()}
    for out, (lhs, rhs) in zip(got, [(v["a"], v["b"]), (v["c"], v["d"])]):
        bound = (lhs.shape[1] + 1) * np.finfo(np.float32).eps * (np.abs(lhs) @ np.abs(rhs))
        assert np.all(np.abs(out - lhs @ rhs) <= bound)


@pytest.mark.parametrize("choice", [0, 3])
def test_bias_gradient_sum_folded_into_the_weight_gradient(choice, monkeypatch, tmp_path):
    """``dY.sum(0)`` beside ``dY^T @ X`` (a Linear's bias and weight gradients) is computed by
    the product's kernel (plan.fold_bias_sums; no sum kernel of its own): by the packed kernel
    while it transposes dY's blocks (choice 3: rows in three blocks of 96, 96 and 8, K in two,
    256 and 44, so the 8x8 shuffles and the scalar edges both add), by a loop before BLAS's
    product (choice 0). Either adds dY's rows in order, as the sum kernel did: the same bits
    as a float32 left fold over the rows; the product within the dot-product bound. A sum of
    the B operand stays a sum kernel."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(autotune, "cost_model", lambda shape, *_: (choice, 0))
    rng = np.random.default_rng(11)
    arrays = {"dy": rng.standard_normal((300, 200)).astype(np.float32),
              "x": rng.standard_normal((300, 64)).astype(np.float32)}
    b = Builder()
    dy, x = b.input("dy", arrays["dy"]), b.input("x", arrays["x"])
    g = b.output(b.call("Matmul", b.call("Permute", dy, dims=(1, 0)), x), b.call("Sum", dy, dim=(0,)),
                 b.call("Sum", x, dim=(0,)))  # B's column sums: a sum kernel of its own
    fn = compile_graph(g, {})
    assert fn.c_source.count("A's row sums") == 1 and fn.c_source.count("sum over dims") == 1
    weight, bias, columns = fn([b.values[p].copy() for p in g.placeholders])
    np.testing.assert_allclose(columns, arrays["x"].astype(np.float64).sum(0), rtol=0, atol=1e-4)
    fold = np.zeros(200, np.float32)
    for row in arrays["dy"]:
        fold += row
    assert bias.dtype == np.float32 and np.array_equal(bias, fold)
    lhs, rhs = arrays["dy"].T.astype(np.float64), arrays["x"].astype(np.float64)
    bound = 301 * np.finfo(np.float32).eps * (np.abs(lhs) @ np.abs(rhs))
    assert np.all(np.abs(weight - lhs @ rhs) <= bound)
