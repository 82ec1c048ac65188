"""Cold compiles of repeated layers: convolution kernels (an entry ``k<i>(p, choice)`` that
starts work on its opening line) alike but for their slots share one copy of their C
(backends/shared.py), as elementwise and GEMM kernels did: a CIFAR ResNet-18 step's C halved.
(Its Winograd kernels' loops, then unrolled per shape, are shape-generic since session 30.)"""
import re

import numpy as np
import pytest
import torch

import ember
from ember.compiler.backends import autotune, shared, toolchain

CONV = """/* direct Conv [2, 4, 6, 6] -> [2, 4, 6, 6]: Conv(conv_{i}) */
static float k{i}_2_u[36];
static void k{i}_0(void** restrict p) {{
    float* restrict y = ((float*)p[{y}]);
    static float xpad[64];  /* borders stay 0 */
    for (long j = 0; j < 36; j++) y[j] = ((float*)p[{x}])[j] + k{i}_2_u[j] + xpad[j];
}}
int k{i}(void** restrict p, int choice) {{ (void)choice; em_bad_where = 0;
    k{i}_0(p);
    return em_bad_where == -1;
}}
int kernel_{i}(void** restrict p) {{
    if (k{i}(p, em_conv_choice[{c}])) return {f};
    return 0;
}}
"""


def test_convolution_twins_share_one_copy_with_their_choice_passed_on():
    texts = [CONV.format(i=3, x=1, y=4, c=0, f=4), CONV.format(i=9, x=7, y=2, c=1, f=10)]
    merged, = shared.share(texts)
    assert merged.count("__attribute__((noinline)) int kd3(void** restrict p, int choice) {") == 1
    assert merged.count("static void kd3_0(") == 1 and merged.count("static float kd3_2_u[36];") == 1
    assert "int k3(void** restrict p, int choice) {\n    void* q[2] = {p[4], p[1]};\n" \
           "    return kd3((void**)q, choice);\n}" in merged
    assert "int k9(void** restrict p, int choice) {\n    void* q[2] = {p[2], p[7]};\n" in merged
    # each entry keeps its own choice and failure code
    assert "if (k3(p, em_conv_choice[0])) return 4;" in merged and "if (k9(p, em_conv_choice[1])) return 10;" in merged
    assert "k3_0" not in merged and "k9_0" not in merged
    other = CONV.replace("36", "35")
    assert shared.share([texts[0], other.format(i=9, x=7, y=2, c=1, f=10)]) == [texts[0], other.format(i=9, x=7, y=2, c=1, f=10)]


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_two_identical_residual_blocks_share_their_convolutions_kernels(c_builds, fresh_cache, monkeypatch):
    # Winograd for all three kernels of each convolution, as on a ResNet's 4x4 planes before
    # session 30 (the cost model now takes im2col + BLAS for a forward or input gradient of so
    # few tiles, and since session 31 for a weight gradient: autotune._MIN_WINOGRAD_TILES and
    # _MIN_WINOGRAD_WEIGHT_TILES)
    monkeypatch.setattr(autotune, "_MIN_WINOGRAD_TILES", 0)
    monkeypatch.setattr(autotune, "_MIN_WINOGRAD_WEIGHT_TILES", 0)
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((2, 4, 4, 4)).astype(np.float32)
    w0 = [rng.standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.3 for _ in range(4)]

    def step(lib, x, ws):
        for t in [x] + ws:
            t.grad = None
        h = x
        for b in range(2):
            out = lib.nn.functional.relu(lib.nn.functional.conv2d(h, ws[2 * b], padding=1))
            h = lib.nn.functional.relu(lib.nn.functional.conv2d(out, ws[2 * b + 1], padding=1) + h)
        h.square().sum().backward()
        return h

    results = []
    for lib, run in ((torch, None), (ember, ember.compile)):
        x = lib.tensor(x0, requires_grad=True)
        ws = [lib.tensor(w, requires_grad=True) for w in w0]
        f = (lambda: step(lib, x, ws)) if run is None else run(lambda: step(lib, x, ws))
        for _ in range(2):  # (the first call records, the second compiles)
            h = f()
        results.append([h.detach().numpy(), x.grad.numpy()] + [w.grad.numpy() for w in ws])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    source = c_builds[0].c_source
    groups = [block.split("/* kernels ")[0] for block in source.split("share this code")[1:]]
    for kind in ("Conv(conv", "ConvTranspose(conv_transpose", "ConvWeight(conv_weight"):
        # the input gradients and weight gradients of the four convolutions: one copy each; the
        # first convolution of each block (the second adds the residual in its own way)
        members = (("", "_1", "_2", "_3") if kind != "Conv(conv" else ("", "_2"))
        assert any(all(f"{kind}{m})" in g for m in members) for g in groups), kind
    # the Winograd loops are shape-generic (one copy of each, test_winograd_generic_30.py), and
    # no convolution keeps a direct-loop variant for operands that are not finite
    assert len(re.findall(r"^void em_winograd[24]_block_float\(.*\) \{$", source, re.M)) == 1
    assert not re.findall(r"static void k\w*_0\(void\*\* restrict p\) \{", source)
