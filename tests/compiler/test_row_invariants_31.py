"""A fused elementwise loop computes the values its innermost loop does not change (a row's
mean and ``1 / sqrt(var + eps)`` in layer norm: loads that loop does not index, and the math on
them alone) once per row, before that loop (backends/toolchain.py, ``row_invariant``): GCC
hoists neither past the loop's stores, which may alias them. Checked on the text and, compiled,
against torch computed in float64."""
import re

import numpy as np
import pytest
import torch

import ember
from ember.compiler.backends import toolchain

BODY = ["float t0 = ((float*)p[1])[i0*128 + i1];",
        "float t1 = ((float*)p[0])[i0];",
        "float t2 = ((float*)p[0])[1024 + i0];",
        "float t3 = (1 / sqrtf(t2 + 0x1.4f8b580000000p-17f));",
        "float t4 = ((t0 - t1) * t3);",
        "float t5 = (t3 * 2.0f);",
        "((float*)p[4])[i0*128 + i1] = t4;",
        "float t6 = ((float*)p[0])[i0 + 1];"]


def test_loads_the_innermost_loop_does_not_index_and_their_math_go_before_it():
    hoisted, rest = toolchain.row_invariant(BODY, "i1")
    assert hoisted == BODY[1:4] + BODY[5:6]  # t6 follows a store: it stays
    assert rest == [BODY[0], BODY[4], BODY[6], BODY[7]]
    assert toolchain.row_invariant(BODY, "i0") == ([], BODY)  # every load is indexed by i0
    lines = toolchain.row_loops([1024, 128], ["i0", "i1"], BODY[:5], False, hoist=True)
    assert lines.index("        float t3 = (1 / sqrtf(t2 + 0x1.4f8b580000000p-17f));") < lines.index("        #pragma GCC ivdep")
    one = toolchain.row_loops([128], ["i0"], BODY[:5], False, hoist=True)  # one loop: nothing moves
    assert one == toolchain.row_loops([128], ["i0"], BODY[:5], False)


def _normalise(lib, x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / lib.sqrt(var + 1e-5) * w + b


@pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
def test_layer_norm_loop_computes_each_rows_statistics_once_and_matches_torch(c_builds):
    rng = np.random.default_rng(31)
    x = (rng.standard_normal((3, 20, 48)) * 3 + 1).astype(np.float32)[:, ::2]  # not contiguous
    w, b = rng.standard_normal(48).astype(np.float32), rng.standard_normal(48).astype(np.float32)
    x[1, 4, 7] = np.nan
    fn = ember.compile(lambda x, w, b: _normalise(ember, x, w, b), fullgraph=True)
    args = [ember.tensor(np.ascontiguousarray(v)) if v.ndim == 1 else ember.tensor(x)[:, :] for v in (x, w, b)]
    for _ in range(3):
        got = fn(*args).numpy()
    source = "".join(f.c_source for f in c_builds if hasattr(f, "c_source"))
    rows = re.findall(r"for \(long i0 = r0; i0 < r1; i0\+\+\) \{\n((?:\s+\w[^\n]*\n)+?)\s+#pragma GCC ivdep\n", source)
    assert any("sqrtf" in block or "[i0]" in block for block in rows), source
    expected = _normalise(torch, *(torch.from_numpy(np.ascontiguousarray(v)).double() for v in (x, w, b))).numpy()
    assert np.isnan(got[1, 4]).all() and np.isnan(got).sum() == 48
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-6)
