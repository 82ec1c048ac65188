"""The C kernel of layer norm's backward (backends/norm.py) against NormalizeBackward's
``forward``: layer norm with weight and bias, without them, RMS norm, two normalised axes, any
subset of the gradients asked for. Tolerances as test_codegen's SUM_TOL (the weight and bias
gradients sum over every row, in another order)."""
import numpy as np
import pytest

from ember.compiler.backends import compile_graph, toolchain
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

SUM_TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-11, atol=1e-12)}


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["layer_norm", "no_affine", "rms_norm", "two_axes", "x_only"])
def test_norm_backward_matches_reference(dtype, case):
    rng = np.random.default_rng(4)
    shape, axes = ((3, 4, 8, 6), (2, 3)) if case == "two_axes" else ((5, 7, 24), (2,))
    trailing = shape[len(shape) - len(axes):]
    b = Builder()
    x = b.input("x", (rng.standard_normal(shape) * 2 + 0.5).astype(dtype))
    g = b.input("g", rng.standard_normal(shape).astype(dtype))
    weight = None if case == "no_affine" else b.input("weight", rng.standard_normal(trailing).astype(dtype))
    bias = None if case in ("no_affine", "rms_norm") else b.input("bias", rng.standard_normal(trailing).astype(dtype))
    centered = case != "rms_norm"
    stats = b.call("NormStats", x, axes=axes, centered=centered)
    mean, var = b.call("getitem", stats, 0), b.call("getitem", stats, 1)
    needs = (True, False, False, weight is not None and case != "x_only", bias is not None and case != "x_only")
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    grads = b.call("NormalizeBackward", g, x, mean, var, weight, bias, axes=axes, eps=1e-5, centered=centered,
                   needs=needs, affine_shape=None, shapes=(shape, kept, kept, trailing, trailing))
    picked = [b.call("getitem", grads, i) for i, need in enumerate(needs) if need]
    fn = compile_graph(b.output(*picked), {})
    outs = fn([b.values[p].copy() for p in b.graph.placeholders])
    for node, out in zip(picked, outs):
        ref = b.values[node]
        assert out.dtype == ref.dtype == dtype and out.shape == ref.shape
        np.testing.assert_allclose(out, ref, err_msg=node.name, **SUM_TOL[dtype])
    assert "layer norm backward over rows of" in fn.c_source
    assert "F_normalize_backward" not in fn.source and "F_getitem" not in fn.source
