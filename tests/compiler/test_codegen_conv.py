"""The C backend's convolution kernels (Conv, ConvTranspose for the input gradient, ConvWeight
for the weight gradient), every variant (direct loops; im2col + BLAS; Winograd F(2, 3) and
F(4, 3) where they apply: 3x3, stride 1), against eager ember and torch: forward and all three
gradients of a compiled step, over strides, padding, dilation, groups, crops and dtypes; for
the direct loops stride 1 takes the padded-plane kernels, other strides the row-by-row ones.
Winograd's float32 results are held to a float64 reference with the bound stated in
WINOGRAD_BOUND."""
import json
import re
from fractions import Fraction

import numpy as np
import pytest

import torch

import ember
import ember.nn.functional as F
from ember.compiler.backends import autotune, conv_gemm, winograd

CASES = {  # name: (x shape, weight shape, bias, stride, padding, dilation, groups, dtype, weighted)
    "depthwise": ((4, 6, 9, 8), (6, 1, 3, 3), True, 1, 1, 1, 6, np.float32, True),
    "lenet_like": ((3, 1, 12, 12), (4, 1, 5, 5), True, 1, 0, 1, 1, np.float32, True),
    "strided_dilated_groups": ((2, 4, 11, 10), (6, 2, 3, 2), True, 2, (2, 1), (1, 2), 2, np.float32, True),
    "crop_tail_float64": ((2, 3, 9, 10), (5, 3, 3, 3), False, (2, 3), 0, 1, 1, np.float64, True),
    "broadcast_gradient": ((2, 3, 7, 7), (3, 1, 3, 3), True, 1, 1, 1, 3, np.float32, False),
    "batch_one_odd_sizes": ((1, 5, 7, 11), (7, 5, 2, 3), True, 1, (1, 2), 1, 1, np.float32, True),
    "pad0_odd_batch_one": ((1, 5, 7, 9), (6, 5, 3, 3), True, 1, 0, 1, 1, np.float32, True),
    "pad2_groups": ((2, 4, 11, 6), (6, 2, 3, 3), True, 1, 2, 1, 2, np.float32, True),
    "pads_2_0_float64": ((3, 3, 10, 13), (5, 3, 3, 3), False, 1, (2, 0), 1, 1, np.float64, True),
    "channels_17_to_19": ((2, 17, 12, 13), (19, 17, 3, 3), True, 1, 1, 1, 1, np.float32, True),
}
VARIANTS = autotune.CONV_NAMES  # each forced in turn through the cost model
# float32 Winograd vs a float64 reference: max |error| <= bound * max |reference| (measured on
# CASES: F(2, 3) up to 4e-7, F(4, 3) up to 3e-6; the transforms' constants, 1/6 and 8 in
# F(4, 3), amplify rounding). Direct and im2col results are held to rtol 1e-4, atol 1e-5.
WINOGRAD_BOUND = {"Winograd F(2,3)": 2e-6, "Winograd F(4,3)": 2e-5}


def _force(monkeypatch, variant):
    """The cost model picks ``variant`` wherever it applies, else im2col + BLAS (else direct)."""
    choice = VARIANTS.index(variant)
    monkeypatch.setattr(autotune, "conv_cost_model", lambda node, have_blas: next(
        c for c in (choice, 1, 0) if c in conv_gemm.applicable(node, have_blas)))


def _marker(name):
    """The comment heading a kernel of variant ``name`` in the generated C."""
    return {"direct loops": "direct", "Winograd F(2,3)": "Winograd F(2, 3)",
            "Winograd F(4,3)": "Winograd F(4, 3)"}.get(name, name)


pytestmark = pytest.mark.usefixtures("private_cache")


@pytest.mark.parametrize("m", sorted(winograd.TILES))
def test_winograd_matrices_compute_the_correlation_exactly(m):
    """A^T [(G g) * (B^T d)] = the correlation of d (m + 2 values) with g (3), in exact
    rationals: the 1-D identity both nested 2-D transforms rest on."""
    bt, g, at = winograd.TILES[m]
    rng = np.random.default_rng(m)
    for _ in range(5):
        d, k = ([Fraction(int(v)) for v in rng.integers(-9, 10, size)] for size in (m + 2, 3))
        products = [sum(gi * kj for gi, kj in zip(row, k)) * sum(bi * dj for bi, dj in zip(brow, d))
                    for row, brow in zip(g, bt)]
        assert [sum(a * p for a, p in zip(row, products)) for row in at] == \
            [sum(d[i + j] * k[j] for j in range(3)) for i in range(m)]


def _winograd_case(case):
    x_shape, w_shape, _, stride, *_ = CASES[case]
    return w_shape[2:] == (3, 3) and stride == 1


@pytest.mark.parametrize("case,variant", [(c, v) for c in CASES for v in VARIANTS
                                          if "Winograd" not in v or _winograd_case(c)])
def test_conv_kernels_equal_eager(case, variant, monkeypatch, capsys):
    _force(monkeypatch, variant)
    x_shape, w_shape, has_bias, stride, padding, dilation, groups, dtype, weighted = CASES[case]
    rng = np.random.default_rng(0)
    x0, w0, b0 = (rng.standard_normal(s).astype(dtype) for s in (x_shape, w_shape, w_shape[:1]))
    geometry = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    out_shape = F.conv2d(ember.tensor(x0), ember.tensor(w0), None, **geometry).shape
    r = ember.tensor(rng.standard_normal(tuple(out_shape)).astype(dtype)) if weighted else None
    xt, wt = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    bt = torch.tensor(b0, requires_grad=True) if has_bias else None
    yt = torch.nn.functional.conv2d(xt, wt, bt, **geometry)
    (yt * torch.tensor(r.numpy()) if weighted else yt).sum().backward()
    reference = [yt.detach().numpy()] + [t.grad.numpy() for t in (xt, wt, bt) if t is not None]
    exact = [t.double().detach().requires_grad_() for t in (xt, wt, bt) if t is not None]
    yd = torch.nn.functional.conv2d(*exact[:2], exact[2] if has_bias else None, **geometry)
    (yd * torch.tensor(r.numpy()).double() if weighted else yd).sum().backward()
    reference64 = [yd.detach().numpy()] + [t.grad.numpy() for t in exact]
    results = []
    for compiled in (False, True):
        x, w = ember.tensor(x0, requires_grad=True), ember.tensor(w0, requires_grad=True)
        b = ember.tensor(b0, requires_grad=True) if has_bias else None

        def step():
            for t in (x, w, b):
                if t is not None:
                    t.grad = None
            y = F.conv2d(x, w, b, **geometry)
            (y * r if weighted else y).sum().backward()
            return y
        if compiled:
            monkeypatch.setenv("EMBER_LOGS", "output_code,autotuning")
            step = ember.compile(step, fullgraph=True)
        for _ in range(4):  # the third and fourth calls run the generated C (no state kept between)
            y = step()
        results.append([y.detach().numpy()] + [t.grad.numpy() for t in (x, w, b) if t is not None])
    source = capsys.readouterr().err
    for name in ("Conv", "ConvTranspose", "ConvWeight"):
        chosen = variant
        assert f"/* {_marker(chosen)} {name} " in source, name  # the cost model's variant alone is generated
        assert f" {name} {list(x_shape) if name != 'ConvTranspose' else list(out_shape)} -> " \
            f"{list(out_shape) if name == 'Conv' else list(w_shape) if name == 'ConvWeight' else list(x_shape)} " \
            f"-> {chosen} (cost model)" in source, name
    if variant == "direct loops":
        assert ("xpad[" in source) == (stride == 1), "stride 1: the padded-plane kernels; else row by row"
    tolerance = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    for k, (mine, eager, theirs, exact) in enumerate(zip(results[1], results[0], reference, reference64)):
        assert mine.shape == eager.shape == theirs.shape and mine.dtype == eager.dtype == theirs.dtype
        if "Winograd" in variant and k < 3 and dtype == np.float32:  # output, input and weight gradients
            assert np.abs(mine - exact).max() <= WINOGRAD_BOUND[variant] * np.abs(exact).max()
            continue
        np.testing.assert_allclose(mine, eager, **tolerance)
        np.testing.assert_allclose(mine, theirs, **tolerance)


@pytest.mark.parametrize("vendor, chosen", [("GenuineIntel", "Winograd F(4,3)"), ("AuthenticAMD", "Winograd F(2,3)")])
def test_cost_model_picks_the_winograd_measured_faster_on_the_cpu(vendor, chosen, monkeypatch, capsys):
    """F(4, 3) on Intel (faster there for each of Conv2d(16, 32, 3)'s three kernels), F(2, 3)
    elsewhere (autotune.winograd_choice); the result equals eager either way."""
    monkeypatch.setattr(autotune, "cpu_vendor", lambda: vendor)
    monkeypatch.setenv("EMBER_LOGS", "autotuning")
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((1, 16, 16, 16)).astype(np.float32))  # 64 tiles: see test_small_planes_take_im2col
    w = ember.tensor(rng.standard_normal((32, 16, 3, 3)).astype(np.float32))
    conv = ember.compile(lambda x, w: F.conv2d(x, w, padding=1), fullgraph=True)
    y = conv(x, w)
    assert f"-> {chosen} (cost model)" in capsys.readouterr().err
    np.testing.assert_allclose(y.numpy(), F.conv2d(x, w, padding=1).numpy(), rtol=1e-4,
                               atol=WINOGRAD_BOUND[chosen] * float(np.abs(y.numpy()).max()))


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_bias_and_relu_after_a_conv_run_per_sample_inside_it(variant, monkeypatch, capsys):
    """conv + bias + relu: the relu loop is fused behind the stride-1 forward, called on each
    sample's output (Winograd and im2col + BLAS: each block of samples) while it is in cache;
    results equal eager's."""
    _force(monkeypatch, variant)
    rng = np.random.default_rng(1)
    x, w, b = (ember.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((5, 3, 10, 9), (4, 3, 3, 3), (4,)))
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    layer = ember.compile(lambda x: F.relu(F.conv2d(x, w, b, padding=1)), fullgraph=True)
    for _ in range(3):
        got = layer(x)
    source = capsys.readouterr().err
    per_sample = "k0e(p, n*40, (n + 1)*40);" in source  # 4 channels x 10 rows per sample
    assert per_sample or variant != "direct loops" and "k0e(p, n0*40, (n0 + ns)*40);" in source
    np.testing.assert_allclose(got.numpy(), F.relu(F.conv2d(x, w, b, padding=1)).numpy(), rtol=1e-4, atol=1e-5)


def test_max_autotune_times_every_variant_records_and_reuses_the_choice(tmp_path, monkeypatch, capfd):
    """mode="max-autotune" times each conv kernel's variants on its real shapes and records
    the fastest in autotune.json; later compilations, max-autotune or default, read the record
    (whatever it says: here rewritten to each variant in turn) and generate that variant
    alone, and every variant gives eager's numbers (Winograd's within its bound)."""
    monkeypatch.setenv("EMBER_LOGS", "autotuning,output_code")
    rng = np.random.default_rng(2)
    x0, w0, r0 = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 9, 7), (8, 3, 3, 3), (2, 8, 9, 7)))

    def run(mode):
        x, w, r = ember.tensor(x0, requires_grad=True), ember.tensor(w0, requires_grad=True), ember.tensor(r0)

        def step():
            x.grad = w.grad = None
            y = F.conv2d(x, w, padding=1)
            (y * r).sum().backward()
            return y
        if mode is not None:
            ember.compiler.reset()
            step = ember.compile(step, fullgraph=True, mode=mode)
        for _ in range(3):
            y = step()
        return [y.detach().numpy(), x.grad.numpy(), w.grad.numpy()]

    eager = run(None)
    run("max-autotune")
    log = capfd.readouterr().err
    timed = dict(re.findall(r"\] \w+ (Conv\w*) .* -> [\w +(),]+ \(timed: (direct loops .*)\)", log))
    assert sorted(timed) == ["Conv", "ConvTranspose", "ConvWeight"]
    for op, times in timed.items():
        names = re.findall(r"([\w +(),]+?) [\d.]+ us(?:, |$)", times)
        assert names == list(VARIANTS), times
    path = tmp_path / "ember" / "compile" / "autotune.json"
    table = json.loads(path.read_text())
    assert len(table) == 3
    for forced, name in enumerate(VARIANTS):
        path.write_text(json.dumps({key: [forced, 0] for key in table}))
        got = run(("max-autotune", "default")[forced % 2])
        log = capfd.readouterr().err
        assert log.count("(cached)") >= 3 and "(timed" not in log
        for op in ("Conv", "ConvTranspose", "ConvWeight"):
            made = {v for v in VARIANTS if f"/* {_marker(v)} {op} " in log}
            assert made == {name}  # (Winograd's direct sums for inf and NaN: shape-generic, in winograd.support)
        for mine, reference in zip(got, eager):
            scale = 10 if forced == 3 else 1  # F(4, 3): see WINOGRAD_BOUND
            np.testing.assert_allclose(mine, reference, rtol=1e-4 * scale, atol=1e-5 * scale)


@pytest.mark.parametrize("variant", ["Winograd F(2,3)", "Winograd F(4,3)"])
def test_winograd_keeps_torchs_inf_and_nan_masks(variant, monkeypatch):
    """A tile transform mixes a tile's values (one inf would make NaN of neighbours the direct
    sum leaves finite): with an inf or NaN in an operand, the direct loops run instead, so the
    output and gradients have torch's inf/NaN masks and its finite values."""
    _force(monkeypatch, variant)
    rng = np.random.default_rng(3)
    x0, w0 = (rng.standard_normal(s).astype(np.float32) for s in ((2, 4, 9, 10), (5, 4, 3, 3)))
    x0[0, 1, 4, 4], x0[1, 2, 0, 7] = np.inf, np.nan
    xt, wt = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    yt = torch.nn.functional.conv2d(xt, wt, padding=1)
    yt.sum().backward()
    x, w = ember.tensor(x0, requires_grad=True), ember.tensor(w0, requires_grad=True)

    def step():
        x.grad = w.grad = None
        y = F.conv2d(x, w, padding=1)
        y.sum().backward()
        return y
    step = ember.compile(step, fullgraph=True)
    for _ in range(3):
        y = step()
    assert np.isnan(yt.detach().numpy()).sum() == 5 * 6 and np.isinf(yt.detach().numpy()).sum() == 5 * 9
    for mine, theirs in zip((y.detach(), x.grad, w.grad), (yt.detach(), xt.grad, wt.grad)):
        mine, theirs = mine.numpy(), theirs.numpy()
        np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs))
        np.testing.assert_array_equal(np.isinf(mine), np.isinf(theirs))
        finite = np.isfinite(theirs)
        np.testing.assert_allclose(mine[finite], theirs[finite], rtol=1e-4, atol=1e-4)
