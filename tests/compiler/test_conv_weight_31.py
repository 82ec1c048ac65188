"""The weight gradient (``ConvWeight``) as im2col + BLAS with its product written straight into
the gradient's layout (conv_gemm.gemm_kernel; it was produced transposed, then transposed back),
and the cost model's im2col for 3x3 stride-1 weight gradients with fewer than 256 output tiles
of F(2, 3) in the batch (autotune._MIN_WINOGRAD_WEIGHT_TILES). Every gradient of one compiled
graph against torch in float64, within the bound of a sum of n products in any order (Higham,
"Accuracy and Stability of Numerical Algorithms", 2002, (3.5)): n u sum |x gy|, u the unit
roundoff of the kernel's dtype."""
import types

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember.compiler.backends import autotune

pytestmark = pytest.mark.usefixtures("private_cache")

# name -> (x shape, w shape, conv2d's keywords, dtype, whether the loss is out.sum(): a
# broadcast output gradient, stride 0, copied into the product's rows)
CASES = {
    # 3x3 stride 1, 3 x 4 tiles: im2col + BLAS (Winograd before), the batch in one product
    "small planes": ((3, 16, 4, 4), (16, 16, 3, 3), dict(padding=1), np.float32, False),
    # 49 positions a sample: blocks of 6 samples accumulated (the last one short), 2 groups
    # written side by side into the gradient
    "groups, blocks": ((8, 4, 14, 14), (8, 2, 3, 3), dict(stride=2, padding=1, groups=2), np.float32, False),
    "1x1, broadcast gradient": ((2, 6, 9, 9), (5, 6, 1, 1), dict(stride=2), np.float32, True),
    "float64, 3 groups": ((5, 6, 6, 7), (12, 2, 3, 3), dict(padding=(1, 2), groups=3), np.float64, False),
}


def _inputs():
    rng = np.random.default_rng(31)
    out = {}
    for name, (xs, ws, geometry, dtype, summed) in CASES.items():
        x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
        y = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **geometry)
        out[name] = x, w, None if summed else rng.standard_normal(tuple(y.shape)).astype(dtype)
    return out


def _gradients(lib, data, compiled=False):
    """Each case's (input gradient, weight gradient) from conv2d(x, w) weighted by r (or
    summed), backward."""
    params = {name: (lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True),
                     None if r is None else lib.tensor(r)) for name, (x, w, r) in data.items()}

    def step():
        total = 0
        for name, (x, w, r) in params.items():
            x.grad = w.grad = None
            y = (F if lib is ember else torch.nn.functional).conv2d(x, w, **CASES[name][2])
            total = total + (y.sum() if r is None else (y * r).sum()).to(lib.float64)
        total.backward()
        return total
    run = ember.compile(step, fullgraph=True) if compiled else step
    for _ in range(3 if compiled else 1):  # the third call runs the generated C
        run()
    return {name: (x.grad.numpy(), w.grad.numpy()) for name, (x, w, _) in params.items()}


def test_gradients_against_float64_and_the_variants_chosen(monkeypatch, capsys):
    """Both gradients as im2col + BLAS (the input gradient's product reads the weight in place,
    its windows ordered as the weight's), each element within n u sum |terms| of torch's
    float64: the weight gradient's n the batch's output positions, the input gradient's the
    products an input element takes part in (C_out / groups * kh * kw)."""
    data = _inputs()
    monkeypatch.setenv("EMBER_LOGS", "autotuning")
    mine = _gradients(ember, data, compiled=True)
    log = capsys.readouterr().err
    wide = {name: tuple(np.float64(a) if a is not None else None for a in arrays) for name, arrays in data.items()}
    exact = _gradients(torch, wide)
    # sum |x gy| for each weight element and sum |w gy| for each input element: the gradients
    # of the same sums of |x|, |w| and |gy|
    absolute = _gradients(torch, {name: (np.abs(x), np.abs(w), None if r is None else np.abs(r))
                                  for name, (x, w, r) in wide.items()})
    for name, (xs, ws, geometry, dtype, _) in CASES.items():
        assert f"ConvWeight {list(xs)} -> {list(ws)} -> im2col + BLAS (cost model)" in log, (name, log)
        assert any(" ConvTranspose " in ln and ln.endswith(f"-> {list(xs)} -> im2col + BLAS (cost model)")
                   for ln in log.splitlines()), (name, log)
        positions = np.prod(torch.nn.functional.conv2d(torch.zeros(xs), torch.zeros(ws), **geometry).shape[2:])
        terms = (ws[0] // geometry.get("groups", 1) * ws[2] * ws[3], xs[0] * positions)
        for got, want, scale, n in zip(mine[name], exact[name], absolute[name], terms):
            assert got.dtype == dtype and got.shape == want.shape
            error = np.abs(got.astype(np.float64) - want)
            bound = n * np.finfo(dtype).eps / 2 * scale
            assert (error <= bound).all(), (name, float((error / np.maximum(bound, 1e-300)).max()))
            assert error.max() > 0 or dtype == np.float64, name  # rounded in dtype, not float64


def _node(name, x, gy, w, stride=1):
    """A stand-in for a 2-D convolution node (``gy``: a ConvWeight's output gradient, a Conv's
    output) with the attributes the cost model reads."""
    meta = lambda shape: types.SimpleNamespace(meta={"shape": shape, "dtype": np.float32})  # noqa: E731
    second = gy if name == "ConvWeight" else w  # (a Conv's second operand is its weight)
    return types.SimpleNamespace(target=types.SimpleNamespace(name=name), args=[meta(x), meta(second)],
                                 kwargs=dict(stride=(stride, stride), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=1),
                                 meta={"shape": w if name == "ConvWeight" else gy, "dtype": np.float32})


def test_the_cost_model_keeps_winograd_for_weight_gradients_of_many_tiles():
    """The threshold in F(2, 3) tiles of the output gradient over the batch: 16 x 16 tiles (a
    32x32 plane) take Winograd, 15 x 16 im2col + BLAS; the forward's threshold is unchanged."""
    winograd = autotune.winograd_choice()
    assert autotune.conv_cost_model(_node("ConvWeight", (1, 4, 32, 32), (1, 4, 32, 32), (4, 4, 3, 3)), True) == winograd
    assert autotune.conv_cost_model(_node("ConvWeight", (1, 4, 30, 32), (1, 4, 30, 32), (4, 4, 3, 3)), True) == 1
    assert autotune.conv_cost_model(_node("ConvWeight", (8, 512, 4, 4), (8, 512, 4, 4), (512, 512, 3, 3)), True) == 1
    assert autotune.conv_cost_model(_node("ConvWeight", (8, 256, 8, 8), (8, 256, 8, 8), (256, 256, 3, 3)), True) == 1
    assert autotune.conv_cost_model(_node("ConvWeight", (8, 128, 16, 16), (8, 128, 16, 16), (128, 128, 3, 3)), True) == winograd
    assert autotune.conv_cost_model(_node("Conv", (8, 256, 8, 8), (8, 256, 8, 8), (256, 256, 3, 3)), True) == winograd
    assert autotune.conv_cost_model(_node("ConvWeight", (8, 256, 8, 8), (8, 256, 8, 8), (256, 256, 3, 3)), False) == 0
