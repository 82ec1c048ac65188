"""Module 12, attention: scaled dot-product attention weights with masks (bool and float),
causal masking and fully masked rows, values and gradients against torch."""
import numpy as np

from . import check, differential


@check("12/attention-weights", points=3)
def attention_weights():
    rng = np.random.default_rng(12)
    q, k, v = (rng.standard_normal((2, 3, 4, 8)) for _ in range(3))
    sdpa = "scaled_dot_product_attention"

    def call(**kw):
        return lambda L, q, k, v: getattr(L.nn.functional, sdpa)(q, k, v, **kw)
    differential("SDPA(q, k, v)", call(), q, k, v, rtol=1e-9, atol=1e-10)
    differential("SDPA(is_causal=True)", call(is_causal=True), q, k, v, rtol=1e-9, atol=1e-10)
    differential("SDPA(scale=0.3)", call(scale=0.3), q, k, v, rtol=1e-9, atol=1e-10)
    mask = rng.random((4, 4)) < 0.7
    mask[:, 0] = True
    differential("SDPA with a bool mask", lambda L, q, k, v: getattr(L.nn.functional, sdpa)(
        q, k, v, attn_mask=L.tensor(mask)), q, k, v, rtol=1e-9, atol=1e-10)
    bias = rng.standard_normal((4, 4))
    differential("SDPA with a float mask", lambda L, q, k, v: getattr(L.nn.functional, sdpa)(
        q, k, v, attn_mask=L.tensor(bias)), q, k, v, rtol=1e-9, atol=1e-10)
    empty_row = np.ones((4, 4), bool)
    empty_row[2] = False
    differential("SDPA with a fully masked row (zeros there)", lambda L, q, k, v: getattr(L.nn.functional, sdpa)(
        q, k, v, attn_mask=L.tensor(empty_row)), q, k, v, rtol=1e-9, atol=1e-10)
