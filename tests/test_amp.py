"""ember.amp, ember.cuda.amp, ember.backends.cuda and ember.onnx against torch 2.13 (CPU build)."""
import warnings

import numpy as np
import pytest

import ember
import ember.amp
import ember.backends.cuda
import ember.cuda.amp
import ember.onnx
from ember import optim
from ember._dtype import bfloat16
from ember._ops import core
from ember.amp import autocast_mode
from ember.amp.autocast_mode import autocast_inputs
from torchcompare import assert_close

torch = pytest.importorskip("torch")
import torch.backends.cuda  # noqa: E402


def run_scaled_training(lib, amp, steps, inf_at, **scaler_kwargs):
    """A linear model trained with a CPU GradScaler; at the steps in ``inf_at`` one gradient
    is made inf, so that step must be skipped and the scale backed off."""
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
    opt = (optim if lib is ember else torch.optim).SGD([w], lr=0.1)
    scaler = amp.GradScaler("cpu", **scaler_kwargs)
    scales, losses = [], []
    for step in range(steps):
        x = lib.tensor(rng.standard_normal((4, 3)).astype(np.float32))
        opt.zero_grad()
        loss = ((x @ w) ** 2).mean()
        scaler.scale(loss).backward()
        if step in inf_at:
            w.grad[0, 0] = float("inf")
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        losses.append(float(loss.detach()))
    return w, scales, losses, scaler.state_dict()


@pytest.mark.parametrize("kwargs", [dict(), dict(init_scale=8.0, growth_interval=3, growth_factor=4.0, backoff_factor=0.25)])
def test_grad_scaler_matches_torch(kwargs):
    e_w, e_scales, e_losses, e_sd = run_scaled_training(ember, ember.amp, 12, {2, 3, 9}, **kwargs)
    t_w, t_scales, t_losses, t_sd = run_scaled_training(torch, torch.amp, 12, {2, 3, 9}, **kwargs)
    assert e_scales == t_scales
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-6)
    assert_close(e_w, t_w, rtol=1e-6, atol=1e-7)
    assert e_sd == t_sd


def test_grad_scaler_unscale_then_clip_and_errors_as_torch():
    for lib, amp in ((ember, ember.amp), (torch, torch.amp)):
        w = lib.ones(2, requires_grad=True)
        opt = (optim if lib is ember else torch.optim).SGD([w], lr=1.0)
        scaler = amp.GradScaler("cpu", init_scale=4.0)
        scaler.scale((w * 3).sum()).backward()
        assert w.grad.tolist() == [12.0, 12.0]
        scaler.unscale_(opt)
        assert w.grad.tolist() == [3.0, 3.0]
        with pytest.raises(RuntimeError, match="already been called on this optimizer"):
            scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            scaler.step(opt, closure=lambda: None)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
            scaler.unscale_(opt)
        scaler.update()
        fresh = amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="Attempted update but _scale is None"):
            fresh.update()
        fresh.scale(w.sum())
        with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
            fresh.update()


def test_disabled_scalers_pass_through_as_torch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scalers = [ember.amp.GradScaler(), ember.cuda.amp.GradScaler(), ember.amp.GradScaler("cpu", enabled=False)]
    messages = [str(w.message) for w in caught]
    assert sum("CUDA is not available.  Disabling." in m for m in messages) == 2
    assert any(w.category is FutureWarning and "deprecated" in str(w.message) for w in caught)
    w = ember.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=1.0)
    for scaler in scalers:
        loss = (w * 2).sum()
        assert scaler.scale(loss) is loss and not scaler.is_enabled()
        assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}
        opt.zero_grad()
        loss.backward()
        scaler.step(opt)
        scaler.update()
    assert w.tolist() == [-5.0, -5.0]


def test_autocast_state_and_nesting_as_torch():
    for lib, is_enabled, get_dtype in ((ember, autocast_mode.is_autocast_enabled, autocast_mode.get_autocast_dtype),
                                       (torch, torch.is_autocast_enabled, torch.get_autocast_dtype)):
        assert not is_enabled("cpu") and str(get_dtype("cpu")).endswith(".bfloat16")
        with lib.amp.autocast("cpu", dtype=lib.float16):
            assert is_enabled("cpu") and str(get_dtype("cpu")).endswith(".float16")
            with lib.amp.autocast("cpu", enabled=False):
                assert not is_enabled("cpu")
            assert is_enabled("cpu")
        assert not is_enabled("cpu") and str(get_dtype("cpu")).endswith(".bfloat16")
        assert lib.amp.is_autocast_available("cpu")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ember.amp.autocast(ember.device("cpu"))
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        region = ember.amp.autocast("cpu", dtype=ember.float64)
    with region:
        assert not autocast_mode.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning), pytest.warns(UserWarning, match="CUDA is not available"):
        region = ember.cuda.amp.autocast()
    with region:
        assert not autocast_mode.is_autocast_enabled("cuda")


def test_autocast_casts_matrix_products_down_and_losses_up():
    a, b = ember.ones(2, 3), ember.ones(3, 2, dtype=ember.float64)
    with ember.amp.autocast("cpu"):
        cast = autocast_inputs(core.OPS["Matmul"], (a, a.to(bfloat16), 2.0))
        assert [cast[0].dtype, cast[1].dtype, cast[2]] == [bfloat16, bfloat16, 2.0]
        assert autocast_inputs(core.OPS["Matmul"], (b,))[0].dtype is ember.float64  # float64 is not eligible
        assert autocast_inputs(core.OPS["NllLoss"], (a.to(bfloat16),))[0].dtype is ember.float32
        assert autocast_inputs(core.OPS["Add"], (a.to(bfloat16),))[0].dtype is bfloat16


def test_autocast_in_a_model_gives_torchs_dtypes():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    target = np.array([0, 1, 1, 0])
    dtypes = []
    for lib in (ember, torch):
        xw, ww = lib.tensor(x), lib.tensor(w, requires_grad=True)
        with lib.amp.autocast("cpu", dtype=lib.bfloat16 if lib is torch else bfloat16):
            logits = lib.nn.functional.linear(xw, ww)
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(target))
            relu = lib.relu(logits)
            mse = lib.nn.functional.mse_loss(logits, logits.detach() * 2)  # float32 under torch too
        loss.backward()
        dtypes.append([str(t.dtype).split(".")[1] for t in (logits, loss, relu, mse, ww.grad)])
    assert dtypes[0] == dtypes[1]


def test_backends_cuda_flags_hold_torchs_values():
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        assert getattr(ember.backends.cuda.matmul, name) == getattr(torch.backends.cuda.matmul, name)
    ember.backends.cuda.matmul.allow_tf32 = True  # nanoGPT's line
    assert ember.backends.cuda.matmul.allow_tf32 is True
    ember.backends.cuda.matmul.allow_tf32 = False
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf33"):
        ember.backends.cuda.matmul.allow_tf33 = True
    assert ember.backends.cuda.is_built() == torch.backends.cuda.is_built()
    for kernel in ("flash", "mem_efficient", "math", "cudnn"):
        assert getattr(ember.backends.cuda, f"{kernel}_sdp_enabled")() == getattr(torch.backends.cuda, f"{kernel}_sdp_enabled")()
    ember.backends.cuda.enable_flash_sdp(False)
    assert not ember.backends.cuda.flash_sdp_enabled()
    with ember.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):
        assert ember.backends.cuda.flash_sdp_enabled() and not ember.backends.cuda.math_sdp_enabled()
    assert not ember.backends.cuda.flash_sdp_enabled() and ember.backends.cuda.math_sdp_enabled()
    ember.backends.cuda.enable_flash_sdp(True)
    for name in ("enabled", "allow_tf32", "benchmark", "deterministic"):
        assert getattr(ember.backends.cudnn, name) == getattr(torch.backends.cudnn, name)
    assert ember.backends.cudnn.is_available() == torch.backends.cudnn.is_available()


def test_onnx_imports_and_export_raises_only_when_called():
    assert ember.onnx.is_in_onnx_export() is False
    model = ember.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="ember.onnx.export is not supported.*Linear"):
        ember.onnx.export(model, (ember.ones(1, 2),), "model.onnx")
