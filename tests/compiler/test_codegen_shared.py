"""Kernels alike but for their slots share one copy of their C (backends/shared.py): the
generated text, and compiled graphs whose twin kernels give each node's own results."""
import numpy as np
import pytest

from ember.compiler.backends import compile_graph, shared, toolchain
from graph_builder import Builder

SUM_TOL = dict(rtol=1e-5, atol=1e-6)

KERNEL = """/* sum of [{n}]: Sum(sum_{i}) */
static float k{i}_acc[{n}];
static void k{i}(void** restrict p, long r0, long r1) {{
    const float* x = ((float*)p[{a}]);
    float* y = ((float*)p[{b}]);
    k{i}_acc[0] = 0;
    for (long j = r0; j < r1; j++) k{i}_acc[0] += x[j];
    y[0] = k{i}_acc[0] + ((float*)p[{a}])[0];
}}
int kernel_{i}(void** restrict p) {{
    k{i}(p, 0, {n});
    return 0;
}}
"""


def test_twins_share_one_copy_and_keep_their_entry_points():
    texts = [KERNEL.format(i=0, n=8, a=3, b=5), KERNEL.format(i=1, n=8, a=7, b=2), KERNEL.format(i=2, n=9, a=3, b=5)]
    out = shared.share(texts)
    assert len(out) == 2 and out[1] == texts[2]  # n=9 differs in code: left as generated
    merged = out[0]
    assert merged.count("static void kd0(") == 0 and merged.count("__attribute__((noinline)) void kd0(") == 1
    assert merged.count("static float kd0_acc[8];") == 1 and "k0_acc" not in merged and "k1_acc" not in merged
    # each member: its comment once, a k<i> of the old signature gathering its slots in first-use order
    assert merged.count("Sum(sum_0)") == 1 and merged.count("Sum(sum_1)") == 1
    assert "static void k0(void** restrict p, long r0, long r1) {\n    void* q[2] = {p[3], p[5]};\n" \
           "    kd0((void**)q, r0, r1);\n}" in merged
    assert "void* q[2] = {p[7], p[2]};" in merged
    assert "int kernel_0(" in merged and "int kernel_1(" in merged
    assert "((float*)p[0])" in merged and "((float*)p[1])" in merged and "p[3]" not in merged.split("static void k0(")[0]


def test_twins_alike_but_for_a_pointers_offset_share_it_passed_in_their_tables():
    """A pointer at a constant offset into a slot's buffer (attention's products reading q, k,
    v out of one buffer) is its own table entry: the offset moves to each member's k<i>."""
    at = KERNEL.replace("x = ((float*)p[{a}]);", "x = ((float*)p[{a}]) + {o};")
    texts = [at.format(i=0, n=8, a=3, b=5, o=128), at.format(i=1, n=8, a=7, b=2, o=256)]
    merged, = shared.share(texts)
    assert "x = ((float*)p[0]);" in merged and "+ 128" not in merged.split("static void k0(")[0]
    assert "void* q[3] = {((float*)p[3] + 128), p[5], p[3]};" in merged
    assert "void* q[3] = {((float*)p[7] + 256), p[2], p[7]};" in merged


def test_kernels_that_use_the_table_otherwise_stay_apart():
    computed = KERNEL.replace("((float*)p[{a}])[0]", "((float*)p[j0])[0]")
    helper = KERNEL.replace("y[0] = k{i}_acc[0]", "y[0] = em_helper(p)")
    for text in (computed, helper):
        texts = [text.format(i=0, n=8, a=3, b=5), text.format(i=1, n=8, a=7, b=2)]
        assert shared.share(texts) == texts
    lonely = [KERNEL.format(i=4, n=8, a=3, b=5)]
    assert shared.share(lonely) == lonely


def test_twin_kernels_compiled_give_each_nodes_results():
    """Two reductions and two products alike but for their operands: the C shares their code and
    each output equals its node's forward (the twins read and write their own slots)."""
    if toolchain.find_compiler() is None:
        pytest.skip("no C compiler")
    rng = np.random.default_rng(3)
    b = Builder()
    xs = [b.input(f"x{i}", rng.standard_normal((6, 40)).astype(np.float32)) for i in range(2)]
    ws = [b.input(f"w{i}", rng.standard_normal((40, 24)).astype(np.float32)) for i in range(2)]
    outs = [b.call("Sum", x, dim=(1,)) for x in xs] + [b.call("Matmul", x, w) for x, w in zip(xs, ws)]
    graph = b.output(*outs)
    fn = compile_graph(graph, {})
    assert "share this code" in fn.c_source
    with np.errstate(all="ignore"):
        got = fn([b.values[p].copy() for p in graph.placeholders])
    for node, out in zip(graph.outputs, got):
        np.testing.assert_allclose(out, b.values[node], err_msg=node.name, **SUM_TOL)


def _packed_product(m, k, n, seed):
    """A graph of one packed float32 product [m x k] @ [k x n] + a ReLU, and its float64 result."""
    rng = np.random.default_rng(seed)
    b = Builder()
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    graph = b.output(b.call("Relu", b.call("Matmul", b.input("x", x), b.input("w", w))))
    return graph, [x, w], np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)


def test_the_packed_products_helper_unit_compiles_once_and_a_tampered_one_is_rebuilt(tmp_path, monkeypatch):
    """The packed products' tiles and packing functions are a unit of their own, the same text
    in every graph calling the same tiles: a second graph links the first one's cached object
    (its compiler never runs on it); a helper object whose bytes no longer match its record is
    compiled again, never linked, and the results stay right."""
    from ember.compiler.backends import autotune, direct_gemm
    if toolchain.find_compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(direct_gemm, "vector_bytes", lambda: 64)  # the packed kernel on any x86 (GCC vectors)
    monkeypatch.setattr(autotune, "cost_model", lambda shape, *_: (3, 0))
    compiled = []
    run = toolchain._run
    monkeypatch.setattr(toolchain, "_run", lambda cmd: compiled.append(" ".join(cmd)) or run(cmd))
    root = tmp_path / "ember" / "compile"

    def check(m, k, seed):  # rows of 100 and columns of 80: the same tiles (6 and 4 rows, 4 and 1 vectors)
        graph, arrays, ref = _packed_product(m, k, 80, seed)
        compiled.clear()
        fn = compile_graph(graph, {})
        out = fn([a.copy() for a in arrays])[0]
        bound = (k + 1) * np.finfo(np.float32).eps * (np.abs(arrays[0]).astype(np.float64) @ np.abs(arrays[1]))
        assert np.all(np.abs(out - ref) <= bound)
        return [c for c in compiled if " -c " in c]

    first = check(100, 300, 0)
    (helper,) = [o for o in root.glob("o-*.o") if "int kernel_" not in o.with_suffix(".c").read_text()]
    assert "em_packed_6x4" in helper.with_suffix(".c").read_text()
    assert any(str(helper.with_suffix(".c")) in c for c in first) and len(first) >= 2
    second = check(100, 400, 1)
    assert second and not any(str(helper.with_suffix(".c")) in c for c in second)  # linked as cached
    data = helper.read_bytes()
    helper.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    third = check(100, 280, 2)
    assert any(str(helper.with_suffix(".c")) in c for c in third)
    assert toolchain._verified(helper)
