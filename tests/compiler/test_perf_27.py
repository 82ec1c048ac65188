"""Session 27's GELU in C: ``em_normal_cdff_pdf`` (Phi and phi from one exponential, ember_math.h)
against float64 over a stride of every float32, and the graph pass that computes GELU's gradient
in its forward's loop (``backends/gelu_gradient.py``), compiled against eager and torch."""
import ctypes

import numpy as np
import pytest
from scipy import special

import ember
from ember.compiler.backends import compile_graph, toolchain
from ember.compiler.backends.gelu_gradient import gelu_gradient_in_forward
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

F32 = np.float32


@pytest.fixture(scope="module")
def lib():
    src = ['#include "ember_math.h"',
           "void t_cdf(const float* restrict x, float* restrict y, long n) "
           "{ for (long i = 0; i < n; i++) y[i] = em_normal_cdff(x[i]); }",
           "void t_grad(const float* restrict x, float* restrict y, long n) "
           "{ for (long i = 0; i < n; i++) y[i] = em_gelu_gradf(x[i]); }",
           "void t_erf_gelu(const float* restrict x, float* restrict y, long n) "  # session 26's GELU
           "{ for (long i = 0; i < n; i++) y[i] = x[i] * (0.5f * (1 + em_erff(x[i] * 0.70710678f))); }"]
    return toolchain.build("\n".join(src), toolchain.find_compiler())[0]


def _run(lib, name, x):
    y = np.empty_like(x)
    getattr(lib, f"t_{name}")(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data), ctypes.c_long(x.size))
    return y


def _ulp(ref):
    return np.maximum(np.spacing(np.abs(ref).astype(F32)), np.finfo(F32).smallest_subnormal).astype(np.float64)


def test_normal_cdf_and_gelu_gradient_sweep(lib):
    """Every 2039th float32 with |x| <= 13 (both signs, the subnormals included) and every 13th
    with |x| in [1/64, 1/32) (where u's roundings counted most), 2.4 million in all, against
    float64 (over every 13th of all |x| <= 13, once:
    Phi 3.9 ulp, x Phi(x) 4.2, Phi + x phi 3.6 ulp of |Phi| + |x phi|: the maxima ember_math.h
    states; asserted 0.1 above); GELU's relative error in the tail (x = -5, -8) below 1e-6 where session
    26's em_erff form (1 + erf cancels) had more than 1e-2."""
    top = np.float32(13).view(np.int32)
    bits = np.concatenate([np.arange(0, top, 2039, dtype=np.int32),
                           np.arange(np.float32(1 / 64).view(np.int32), np.float32(1 / 32).view(np.int32), 13, dtype=np.int32)])
    x = np.concatenate([bits.view(F32), -bits.view(F32)])
    cdf, grad = _run(lib, "cdf", x), _run(lib, "grad", x)
    xd = x.astype(np.float64)
    phi_ref = np.exp(-0.5 * xd * xd) / np.sqrt(2 * np.pi)
    cdf_ref = 0.5 * special.erfc(-xd / np.sqrt(2))
    gelu = x * cdf
    normal = np.abs(xd * cdf_ref) >= np.finfo(F32).tiny
    assert (np.abs(cdf - cdf_ref) / _ulp(cdf_ref)).max() <= 4.0
    assert (np.abs(gelu - xd * cdf_ref) / _ulp(xd * cdf_ref))[normal].max() <= 4.3
    assert (np.abs(grad - (cdf_ref + xd * phi_ref)) / _ulp(cdf_ref + np.abs(xd * phi_ref))).max() <= 3.7
    tail = np.array([-5.0, -8.0], F32)
    ref = tail * 0.5 * special.erfc(-tail.astype(np.float64) / np.sqrt(2))
    old = np.abs(_run(lib, "erf_gelu", tail) / ref - 1)
    new = np.abs(tail * _run(lib, "cdf", tail) / ref - 1)
    assert new.max() < 1e-6 and old.min() > 1e-2


def test_special_values(lib):
    """NaN stays NaN; GELU(inf) = inf, GELU(-inf) = NaN (-inf * 0, as eager and torch), -0.0
    keeps its sign; Phi is 0 below -13.2 and 1 above 5.5; the gradient at +-inf NaN (inf * 0, as
    torch's), 0 beyond -13.2 and 1 above 5.5."""
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -14.0, -1e30, 6.0, 1e30], F32)
    cdf, grad = _run(lib, "cdf", x), _run(lib, "grad", x)
    with np.errstate(invalid="ignore"):
        gelu = x * cdf
    np.testing.assert_array_equal(gelu[:3], [np.nan, np.inf, np.nan])
    assert np.signbit(gelu[3]) and not np.signbit(gelu[4]) and cdf[3] == cdf[4] == 0.5
    np.testing.assert_array_equal(cdf[5:], [0, 0, 1, 1])
    np.testing.assert_array_equal(grad, [np.nan, np.nan, np.nan, 0.5, 0.5, 0, 0, 1, 1])


def _gelu_graph(dtype):
    """h = x @ w1 (a GEMM), y = GELU(h), z = y @ w2; g = dz @ w2^T, dh = GeluBackward(g, h, y)."""
    rng = np.random.default_rng(0)
    b = Builder()
    x, w1, w2, dz = (b.input(n, rng.standard_normal(s).astype(dtype) * 2)
                     for n, s in (("x", (64, 32)), ("w1", (32, 48)), ("w2", (48, 8)), ("dz", (64, 8))))
    h = b.call("Matmul", x, w1)
    y = b.call("Gelu", h)
    z = b.call("Matmul", y, w2)
    dh = b.call("GeluBackward", b.call("Matmul", dz, b.call("Permute", w2, dims=(1, 0))), h, y)
    return b, b.output(z, dh)


def test_gradient_moves_into_the_forward_loop():
    """float32: GeluBackward(g, h, y) becomes g * GeluBackward(1.0, h, None), the latter in the
    forward's loop (the first product's epilogue, with Gelu), the backward's epilogue a product;
    the gradient against float64 within float32 rounding of the sums; float64 graphs unchanged."""
    b, graph = _gelu_graph(F32)
    moved = gelu_gradient_in_forward(graph)
    names = [getattr(n.target, "name", None) for n in moved.nodes]
    assert names.index("GeluBackward") == names.index("Gelu") + 1 and names.count("Mul") == 1
    fn = compile_graph(graph)
    assert "Gelu(gelu), GeluBackward(gelu_backward)" in fn.c_source and "Mul(mul)" in fn.c_source
    args = [b.values[p] for p in graph.placeholders]
    z, dh = fn([a.copy() for a in args])
    x, w1, w2, dz = (a.astype(np.float64) for a in args)
    h = x @ w1
    cdf = 0.5 * special.erfc(-h / np.sqrt(2))
    ref = (dz @ w2.T) * (cdf + h * np.exp(-0.5 * h * h) / np.sqrt(2 * np.pi))
    np.testing.assert_allclose(dh, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    np.testing.assert_allclose(z, (h * cdf) @ w2, rtol=1e-4, atol=1e-4 * np.abs(z).max())
    g64 = _gelu_graph(np.float64)[1]
    assert gelu_gradient_in_forward(g64) is g64


def test_compiled_gelu_training_matches_torch():
    """Three AdamW steps of Linear-GELU-Linear, compiled as one graph (forward, backward,
    optimizer), against torch eager: the losses and the weights after within float32 bounds."""
    import torch
    rng = np.random.default_rng(3)
    data = [rng.standard_normal(s).astype(F32) for s in ((32, 16), (16, 64), (64,), (64, 8), (8,), (32, 8))]

    def build(lib):
        model = lib.nn.Sequential(lib.nn.Linear(16, 64), lib.nn.GELU(), lib.nn.Linear(64, 8))
        with lib.no_grad():
            for p, v in zip(model.parameters(), (data[1].T, data[2], data[3].T, data[4])):
                p.copy_(lib.tensor(np.ascontiguousarray(v)))
        opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
        x, t = lib.tensor(data[0]), lib.tensor(data[5])

        def step():
            opt.zero_grad()
            loss = ((model(x) - t) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return model, step

    tm, tstep = build(torch)
    em, estep = build(ember)
    compiled = ember.compile(estep, fullgraph=True)
    for _ in range(3):
        np.testing.assert_allclose(compiled().item(), tstep().item(), rtol=2e-5)
    for p, q in zip(em.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-5)
