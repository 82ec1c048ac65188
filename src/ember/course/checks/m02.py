"""Module 02, elementwise ops: the derivatives of multiplication and division, with broadcasting,
against torch's gradients."""
import numpy as np

from . import check, differential

SHAPES = (((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (3,)))


@check("02/mul-backward", points=2)
def mul_backward():
    rng = np.random.default_rng(2)
    for sa, sb in SHAPES:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        differential(f"a * b with shapes {sa} and {sb}", lambda L, x, y: x * y, a, b, rtol=1e-10, atol=1e-12)
    differential("x * x (one input used twice)", lambda L, x: x * x, rng.standard_normal((2, 3)), rtol=1e-10)
    differential("float32 a * 3", lambda L, x: x * 3, rng.standard_normal(5).astype(np.float32))


@check("02/div-backward", points=2)
def div_backward():
    rng = np.random.default_rng(3)
    for sa, sb in SHAPES:
        a, b = rng.standard_normal(sa), rng.uniform(0.5, 2.0, sb) * rng.choice([-1, 1], sb)
        differential(f"a / b with shapes {sa} and {sb}", lambda L, x, y: x / y, a, b, rtol=1e-10, atol=1e-12)
    # (a tensor over x: ``1 / x`` is reciprocal times 1, as in torch, and would not reach Div)
    differential("ones / x", lambda L, x: L.ones_like(x) / x, rng.uniform(0.5, 2, (4,)), rtol=1e-10)
