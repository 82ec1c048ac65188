"""Module 10, normalization: the mean and biased variance behind layer norm, batch norm, group
norm and RMS norm, values and gradients against torch."""
import numpy as np

from . import check, differential


@check("10/moments", points=3)
def moments():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((4, 3, 5)) * 2 + 1
    differential("layer_norm(x (4, 3, 5), (5,)) with weight and bias",
                 lambda L, x, w, b: L.nn.functional.layer_norm(x, (5,), w, b), x,
                 rng.standard_normal(5), rng.standard_normal(5), rtol=1e-8, atol=1e-10)
    differential("layer_norm(x (4, 3, 5), (3, 5))", lambda L, x: L.nn.functional.layer_norm(x, (3, 5)), x,
                 rtol=1e-8, atol=1e-10)
    differential("batch_norm(x (4, 3, 5), training=True)",
                 lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True), x, rtol=1e-8, atol=1e-10)
    differential("group_norm(x (4, 6, 5), 3 groups)", lambda L, x: L.nn.functional.group_norm(x, 3),
                 rng.standard_normal((4, 6, 5)), rtol=1e-8, atol=1e-10)
    differential("rms_norm(x (4, 3, 5), (5,))", lambda L, x: L.nn.functional.rms_norm(x, (5,)), x,
                 rtol=1e-8, atol=1e-10)
