"""im2col + BLAS convolutions with their products written in the result's layout
(conv_gemm.gemm_kernel): the forward in NCHW (into y for a block of one sample), the input
gradient's product reading the weight in place, the weight gradient's straight into the
gradient (each was produced in another order and transposed or copied), and the cost model's
im2col for 3x3 stride-1 weight gradients with fewer than 256 output tiles of F(2, 3) in the
batch (autotune._MIN_WINOGRAD_WEIGHT_TILES). The output and both gradients of one compiled graph
against torch in float64, each element within the bound of a sum of n products in any order
(Higham, "Accuracy and Stability of Numerical Algorithms", 2002, (3.5)): n u sum |terms|, u
the unit roundoff of the kernel's dtype, the sums of |terms| being the same convolution and
gradients of |x|, |w| and |gy|."""
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
    # 3x3 stride 1, 3 x 4 tiles: im2col + BLAS (the weight gradient Winograd before), the batch
    # in one product
    "small planes": ((3, 16, 4, 4), (16, 16, 3, 3), dict(padding=1), np.float32, False),
    # 49 positions a sample: blocks of 6 samples (the last one short), 2 groups side by side
    "groups, blocks": ((8, 4, 14, 14), (8, 2, 3, 3), dict(stride=2, padding=1, groups=2), np.float32, False),
    "1x1, broadcast gradient": ((2, 6, 9, 9), (5, 6, 1, 1), dict(stride=2), np.float32, True),
    "float64, 3 groups": ((3, 6, 6, 7), (12, 2, 3, 3), dict(padding=(1, 2), groups=3), np.float64, False),
    # 400 positions a sample: blocks of one sample, the forward's product written into y
    "one sample a block": ((2, 3, 20, 20), (4, 3, 5, 5), dict(padding=2), np.float32, False),
}


def _inputs():
    rng = np.random.default_rng(31)
    out = {}
    for name, (xs, ws, geometry, dtype, summed) in CASES.items():
        x, w, b = (rng.standard_normal(s).astype(dtype) for s in (xs, ws, ws[:1]))
        y = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **geometry)
        out[name] = x, w, b, None if summed else rng.standard_normal(tuple(y.shape)).astype(dtype)
    return out


def _run(lib, data, compiled=False):
    """Each case's (output, input gradient, weight gradient) of conv2d(x, w, b), weighted by r
    (or summed), backward."""
    params = {name: [lib.tensor(a, requires_grad=i < 3) if a is not None else None for i, a in enumerate(arrays)]
              for name, arrays in data.items()}

    def step():
        total, outs = 0, []
        for name, (x, w, b, r) in params.items():
            x.grad = w.grad = b.grad = None
            y = (F if lib is ember else torch.nn.functional).conv2d(x, w, b, **CASES[name][2])
            total = total + (y.sum() if r is None else (y * r).sum()).to(lib.float64)
            outs.append(y)
        total.backward()
        return outs
    run = ember.compile(step, fullgraph=True) if compiled else step
    for _ in range(3 if compiled else 1):  # the third call runs the generated C
        outs = run()
    return {name: (y.detach().numpy(), x.grad.numpy(), w.grad.numpy())
            for y, (name, (x, w, _, _)) in zip(outs, params.items())}


def test_output_and_gradients_against_float64_and_the_variants_chosen(monkeypatch, capsys):
    data = _inputs()
    monkeypatch.setenv("EMBER_LOGS", "autotuning")
    mine = _run(ember, data, compiled=True)
    log = capsys.readouterr().err
    wide = {name: [np.float64(a) if a is not None else None for a in arrays] for name, arrays in data.items()}
    exact = _run(torch, wide)
    absolute = _run(torch, {name: [np.abs(a) if a is not None else None for a in arrays] for name, arrays in wide.items()})
    lines = log.splitlines()
    for name, (xs, ws, geometry, dtype, _) in CASES.items():
        for op in ("Conv", "ConvTranspose", "ConvWeight"):
            assert any(f" {op} [" in ln and f"{list(xs)}" in ln and ln.endswith("-> im2col + BLAS (cost model)")
                       for ln in lines), (name, op, log)
        positions = np.prod(exact[name][0].shape[2:])
        # products summed: by each output (and its bias), input element, weight element
        terms = (ws[1] * ws[2] * ws[3] + 1, ws[0] // geometry.get("groups", 1) * ws[2] * ws[3], xs[0] * positions)
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
