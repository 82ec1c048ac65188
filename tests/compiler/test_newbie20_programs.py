"""What a newcomer's ``torch.compile`` programs found (session 20, NEWBIE20), each small:

- nanoGPT's train loop under ``autocast("cpu", dtype=bfloat16)``: the attention output (bfloat16)
  met ``c_proj``'s float32 weight in ``F.linear``, which refused the pair before autocast could
  cast it (eager and compiled alike);
- the tutorial's ``opt_fn = torch.compile(lambda x, y: sin(x) + cos(y))``: compiled float32
  sin and cos were libm's scalar sinf/cosf, ten times slower than eager (NumPy's vector loops);
  they are now ember's vectorised ``em_sinf_near``/``em_cosf_near`` (runtime/ember_math.h);
- a compiled ResNet in train mode under ``no_grad`` (a batch norm straight into an average
  pool): the sum kernel inlined the Normalize and lost its affine parameters' place (KeyError);
- ``print("step")`` inside a compiled function printed once, at the recording, and never again
  (torch prints on every call: a graph break), and passed under ``fullgraph=True``.
"""
import ctypes

import numpy as np
import pytest
import torch

import ember
from ember.compiler.backends import toolchain

needs_cc = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture
def fresh_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    yield
    ember.compiler.reset()


@pytest.mark.parametrize("shape", [(2, 3, 8), (5, 8), (8,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_under_autocast_takes_a_bfloat16_input_and_float32_weight(shape, bias):
    """``F.linear(bf16 input, f32 weight, f32 bias)`` inside CPU autocast: bfloat16 out, the
    value and the float32 gradients of weight and bias as torch's (bfloat16 products: one
    bfloat16 rounding of outputs of size ~1, so 2^-7 relative)."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(shape).astype(np.float32)
    w0, b0 = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    results = []
    for lib in (torch, ember):
        x = lib.tensor(x0).to(lib.bfloat16)
        w = lib.tensor(w0, requires_grad=True)
        b = lib.tensor(b0, requires_grad=True) if bias else None
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = lib.nn.functional.linear(x, w, b)
        y.float().sum().backward()
        results.append((y.dtype, y.float().detach().numpy(), w.grad.dtype, w.grad.numpy(),
                        None if b is None else b.grad.numpy()))
    (td, ty, tgd, tgw, tgb), (ed, ey, egd, egw, egb) = results
    assert str(ed) == str(td) == "torch.bfloat16" and str(egd) == str(tgd) == "torch.float32"
    np.testing.assert_allclose(ey, ty, rtol=2 ** -7, atol=2 ** -7 * np.abs(ty).max())
    np.testing.assert_allclose(egw, tgw, rtol=2 ** -7, atol=2 ** -7 * np.abs(tgw).max())
    if bias:
        np.testing.assert_array_equal(egb, tgb)
    # outside autocast the mismatch is still torch's error
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        ember.nn.functional.linear(ember.tensor(x0).to(ember.bfloat16), ember.tensor(w0))


@needs_cc
def test_nanogpt_block_compiled_under_autocast(fresh_cache):
    """An attention block (bfloat16 ``att @ v`` into a float32 ``c_proj``) trains one step
    compiled under autocast: the loss and gradients equal eager ember's (same graph, same
    bfloat16 roundings, to 1e-6 relative)."""
    def run(compile_it):
        ember.manual_seed(0)
        qkv, proj = ember.nn.Linear(16, 48, bias=False), ember.nn.Linear(16, 16, bias=False)

        def step(x):
            with ember.autocast(device_type="cpu", dtype=ember.bfloat16):
                q, k, v = qkv(x).split(16, dim=2)
                att = (q @ k.transpose(-2, -1)).softmax(-1)
                loss = ember.nn.functional.mse_loss(proj(att @ v), x)
            loss.backward()
            return loss
        f = ember.compile(step) if compile_it else step
        x = ember.randn(2, 5, 16, generator=ember.Generator().manual_seed(1))
        for _ in range(2):  # (the first compiled call captures)
            qkv.weight.grad = proj.weight.grad = None
            loss = f(x)
        return loss.item(), qkv.weight.grad.numpy(), proj.weight.grad.numpy()
    eager, compiled = run(False), run(True)
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-6)
    for a, b in zip(compiled[1:], eager[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * np.abs(b).max())


@pytest.fixture(scope="module")
def trig_lib():
    src = ['#include "ember_math.h"']
    for f in ("sin", "cos"):
        src.append(f"void t_{f}(const float* restrict x, float* restrict y, long n) "
                   f"{{ for (long i = 0; i < n; i++) y[i] = em_{f}f_near(x[i]); }}")
    return toolchain.build("\n".join(src), toolchain.find_compiler())[0]


@needs_cc
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sinf_cosf_near_sweep_below_4096(trig_lib, name):
    """em_sinf_near / em_cosf_near: every 997th float32 bit pattern below 4096, both signs, and
    the float32 numbers nearest each multiple of pi/2 below it (where the reduction cancels
    most), against float64 NumPy: within 2 ulp of the result (the header's bound; measured
    over every 97th: 1.85 and 1.87), -0.0 kept by sin, NaN for NaN."""
    x = np.arange(0, 0x45800000, 997, dtype=np.uint32).view(np.float32)
    near = (np.arange(1, 2608) * (np.pi / 2)).astype(np.float32)
    x = np.concatenate([x, near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(0))])
    x = np.concatenate([x, -x, [np.nan]]).astype(np.float32)
    y = np.empty_like(x)
    getattr(trig_lib, "t_" + name)(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data),
                                   ctypes.c_long(x.size))
    ref = getattr(np, name)(x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    ok = ~np.isnan(ref)
    ulp = np.maximum(np.spacing(np.abs(ref[ok]).astype(np.float32)), np.finfo(np.float32).smallest_subnormal)
    err = np.abs(y[ok].astype(np.float64) - ref[ok]) / ulp.astype(np.float64)
    assert err.max() <= 2, (float(err.max()), x[ok][err.argmax()])
    zero = ok & (ref == 0)
    np.testing.assert_array_equal(np.signbit(y[zero]), np.signbit(ref[zero]))


@needs_cc
@pytest.mark.parametrize("scale", [3.0, 1e5])
def test_compiled_sin_cos_are_vector_loops(scale, fresh_cache, monkeypatch, capfd):
    """The tutorial's ``sin(x) + cos(y)`` compiles to em_sinf_near/em_cosf_near when a first
    pass finds every argument below 4096 (scale 3), to libm's exact sinf/cosf otherwise
    (scale 1e5); the value is within (2 + 2 + 1) ulp of float64 NumPy's (each function's
    bound, the sum's rounding) of max(|sin|, |cos|, |sum|), NaN, +-inf and -0.0 as NumPy's."""
    monkeypatch.setenv("EMBER_LOGS", "output_code")
    rng = np.random.default_rng(3)
    x0, y0 = ((rng.standard_normal((2, 33, 65)) * scale).astype(np.float32))
    x0[0, :4], y0[0, :4] = [np.nan, -0.0, np.inf, 0.0], [0.0, -0.0, 1.0, -np.inf]

    def fn(x, y):
        return ember.sin(x) + ember.cos(y)
    compiled = ember.compile(fn)
    compiled(ember.tensor(x0), ember.tensor(y0))  # (the call that captures runs eagerly)
    out = compiled(ember.tensor(x0), ember.tensor(y0)).numpy()
    source = capfd.readouterr().err
    assert "em_sinf_near(" in source and "em_cosf_near(" in source and "= F_sin" not in source
    with np.errstate(invalid="ignore"):
        s, c = np.sin(x0.astype(np.float64)), np.cos(y0.astype(np.float64))
    ref = s + c
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    ok = ~np.isnan(ref)
    scale_of = np.maximum(np.maximum(np.abs(s), np.abs(c)), np.abs(ref))[ok]
    assert (np.abs(out[ok] - ref[ok]) <= 5 * np.spacing(scale_of.astype(np.float32))).all()
    assert np.signbit(ember.compile(lambda x: ember.sin(x) * 1)(ember.tensor(x0)).numpy()[0, 1])


@needs_cc
def test_resnet_batchnorm_into_avgpool_train_mode_no_grad(fresh_cache):
    """A compiled conv -> BatchNorm2d -> AdaptiveAvgPool2d(1) in train mode under ``no_grad``
    (a forward pass to refresh the running statistics): the output and the running statistics
    as eager ember's and torch's (float32 sums in other orders: 1e-5 relative)."""
    def build(lib):
        lib.manual_seed(0)
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    x0 = np.random.default_rng(0).standard_normal((4, 3, 6, 6)).astype(np.float32)
    tnet, enet, eref = build(torch), build(ember), build(ember)
    enet.compile()
    results = []
    for lib, net in ((torch, tnet), (ember, enet), (ember, eref)):
        with lib.no_grad():
            for _ in range(2):
                out = net(lib.tensor(x0))
        results.append((out.numpy(), net[1].running_mean.numpy(), net[1].running_var.numpy()))
    for got in results[1:]:
        for a, b in zip(got, results[0]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_print_in_a_compiled_step_prints_every_call(fresh_cache, capsys):
    """``print`` in a compiled training step runs on every call, as under torch.compile (a graph
    break: the statement runs eagerly between two compiled pieces), the losses as eager's;
    ``fullgraph=True`` raises Unsupported naming print and the line, as torch does."""
    def make():
        ember.manual_seed(0)
        model = ember.nn.Linear(4, 3)
        opt = ember.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            print("step", tuple(x.shape))
            opt.step()
            return loss
        return step
    x = ember.randn(5, 4, generator=ember.Generator().manual_seed(2))
    eager, compiled = make(), ember.compile(make())
    losses = [(eager(x).item(), compiled(x).item()) for _ in range(4)]
    assert capsys.readouterr().out == "step (5, 4)\n" * 8
    for a, b in losses:
        assert abs(a - b) <= 1e-6 * abs(a)

    def shout(x):
        print("inside")
        return x * 2
    with pytest.raises(ember._dynamo.exc.Unsupported, match=r"print\(\)[^\n]*\n.*print\(\"inside\"\)"):
        ember.compile(shout, fullgraph=True)(ember.ones(2))
