"""Module 09, convolutions: im2col behind conv1d/conv2d (stride, padding, dilation, groups),
values and gradients against torch."""
import numpy as np

from . import check, differential

CASES = [dict(), dict(stride=2), dict(padding=1), dict(dilation=2, padding=2), dict(stride=(2, 1), padding=(0, 1)),
         dict(groups=2)]


@check("09/im2col", points=3)
def im2col():
    rng = np.random.default_rng(9)
    for kw in CASES:
        x = rng.standard_normal((2, 4, 7, 6))
        w = rng.standard_normal((6, 4 // kw.get("groups", 1), 3, 3))
        b = rng.standard_normal(6)
        differential(f"conv2d(x (2, 4, 7, 6), w {w.shape}, {kw})",
                     lambda L, x, w, b, kw=kw: L.nn.functional.conv2d(x, w, b, **kw), x, w, b, rtol=1e-9, atol=1e-10)
    differential("conv1d(x (2, 3, 9), w (5, 3, 4), stride=2)",
                 lambda L, x, w: L.nn.functional.conv1d(x, w, stride=2),
                 rng.standard_normal((2, 3, 9)), rng.standard_normal((5, 3, 4)), rtol=1e-9, atol=1e-10)
