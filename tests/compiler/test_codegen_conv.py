"""The C backend's convolution kernels (Conv, ConvTranspose for the input gradient, ConvWeight
for the weight gradient), both variants (direct loops; im2col + BLAS), against eager ember and
torch: forward and all three gradients of a compiled step, over strides, padding,
dilation, groups, crops and dtypes; for the direct loops stride 1 takes the padded-plane
kernels, other strides the row-by-row ones."""
import json
import re

import numpy as np
import pytest

import torch

import ember
import ember.nn.functional as F
from ember.compiler.backends import autotune, conv, toolchain

CASES = {  # name: (x shape, weight shape, bias, stride, padding, dilation, groups, dtype, weighted)
    "depthwise": ((4, 6, 9, 8), (6, 1, 3, 3), True, 1, 1, 1, 6, np.float32, True),
    "lenet_like": ((3, 1, 12, 12), (4, 1, 5, 5), True, 1, 0, 1, 1, np.float32, True),
    "strided_dilated_groups": ((2, 4, 11, 10), (6, 2, 3, 2), True, 2, (2, 1), (1, 2), 2, np.float32, True),
    "crop_tail_float64": ((2, 3, 9, 10), (5, 3, 3, 3), False, (2, 3), 0, 1, 1, np.float64, True),
    "broadcast_gradient": ((2, 3, 7, 7), (3, 1, 3, 3), True, 1, 1, 1, 3, np.float32, False),
    "batch_one_odd_sizes": ((1, 5, 7, 11), (7, 5, 2, 3), True, 1, (1, 2), 1, 1, np.float32, True),
}


VARIANTS = {"direct loops": 10 ** 9, "im2col + BLAS": 0}  # the cost model's threshold forcing each


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """A fresh compile cache: no autotuning record from other runs overrides the cost model."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(autotune, "_path", lambda: toolchain.cache_dir() / "autotune.json")
    ember.compiler.reset()
    yield
    ember.compiler.reset()


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("case", list(CASES))
def test_conv_kernels_equal_eager(case, variant, monkeypatch, capsys):
    monkeypatch.setattr(conv, "MIN_GEMM_CHANNELS", VARIANTS[variant])
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
    marker = "direct" if variant == "direct loops" else variant
    for name in ("Conv", "ConvTranspose", "ConvWeight"):
        assert f"/* {marker} {name} " in source, name  # the cost model's variant alone is generated
        assert f" {name} {list(x_shape) if name != 'ConvTranspose' else list(out_shape)} -> " \
            f"{list(out_shape) if name == 'Conv' else list(w_shape) if name == 'ConvWeight' else list(x_shape)} " \
            f"-> {variant} (cost model)" in source, name
    if variant == "direct loops":
        assert ("xpad[" in source) == (stride == 1), "stride 1: the padded-plane kernels; else row by row"
    tolerance = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    for mine, eager, theirs in zip(results[1], results[0], reference):
        assert mine.shape == eager.shape == theirs.shape and mine.dtype == eager.dtype == theirs.dtype
        np.testing.assert_allclose(mine, eager, **tolerance)
        np.testing.assert_allclose(mine, theirs, **tolerance)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_bias_and_relu_after_a_conv_run_per_sample_inside_it(variant, monkeypatch, capsys):
    """conv + bias + relu: the relu loop is fused behind the stride-1 forward, called on each
    sample's output while it is in cache; results equal eager's."""
    monkeypatch.setattr(conv, "MIN_GEMM_CHANNELS", VARIANTS[variant])
    rng = np.random.default_rng(1)
    x, w, b = (ember.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((5, 3, 10, 9), (4, 3, 3, 3), (4,)))
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    layer = ember.compile(lambda x: F.relu(F.conv2d(x, w, b, padding=1)), fullgraph=True)
    for _ in range(3):
        got = layer(x)
    source = capsys.readouterr().err
    assert "k0e(p, n*40, (n + 1)*40);" in source  # 4 channels x 10 rows per sample
    np.testing.assert_allclose(got.numpy(), F.relu(F.conv2d(x, w, b, padding=1)).numpy(), rtol=1e-4, atol=1e-5)


def test_max_autotune_times_both_variants_records_and_reuses_the_choice(tmp_path, monkeypatch, capfd):
    """mode="max-autotune" times each conv kernel's two variants on its real shapes and records
    the faster in autotune.json; later compilations, max-autotune or default, read the record
    (whatever it says: here rewritten to each variant in turn) and generate that variant alone,
    and both variants give eager's numbers."""
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
    timed = re.findall(r"\] \w+ (Conv\w*) .* -> ([\w +]+) \(timed: direct loops [\d.]+ us, im2col \+ BLAS [\d.]+ us\)", log)
    assert sorted(op for op, _ in timed) == ["Conv", "ConvTranspose", "ConvWeight"]
    path = tmp_path / "ember" / "compile" / "autotune.json"
    table = json.loads(path.read_text())
    assert [autotune.CONV_NAMES[table[key][0]] for key in table] == [name for _, name in timed]
    for (forced, name), mode in zip(enumerate(autotune.CONV_NAMES), ("max-autotune", None)):
        path.write_text(json.dumps({key: [forced, 0] for key in table}))
        got = run(mode or "default")
        log = capfd.readouterr().err
        assert log.count(f"-> {name} (cached)") >= 3 and "(timed" not in log
        for op in ("Conv", "ConvTranspose", "ConvWeight"):
            assert (f"/* direct {op} " in log, f"/* im2col + BLAS {op} " in log) == (forced == 0, forced == 1)
        for mine, reference in zip(got, eager):
            np.testing.assert_allclose(mine, reference, rtol=1e-4, atol=1e-5)
