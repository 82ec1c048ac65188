"""Module 05, activations and losses: softmax and log_softmax forward and backward along any
dim, with large logits (the max must be subtracted) and -inf entries, against torch."""
import numpy as np

from . import check, differential

DIMS = (((4, 5), -1), ((4, 5), 0), ((2, 3, 4), 1), ((6,), 0))


def _large(rng, shape):
    return rng.standard_normal(shape) * 3 + 500.0  # exp(500) overflows float64 without the shift


@check("05/softmax", points=4)
def softmax():
    rng = np.random.default_rng(50)
    for shape, dim in DIMS:
        differential(f"softmax(x, dim={dim}), x of shape {shape}", lambda L, x, d=dim: L.softmax(x, d),
                     rng.standard_normal(shape), grad=False, rtol=1e-10)
    differential("softmax of logits near 500", lambda L, x: L.softmax(x, -1), _large(rng, (3, 4)), grad=False)
    differential("softmax with -inf entries", lambda L, x: L.softmax(x, -1),
                 np.array([[0.0, -np.inf, 1.0], [2.0, 0.5, -np.inf]]), grad=False)
    for shape, dim in DIMS:
        differential(f"gradient of softmax(x, dim={dim}), x of shape {shape}",
                     lambda L, x, d=dim: L.softmax(x, d), rng.standard_normal(shape), rtol=1e-9, atol=1e-12)


@check("05/log-softmax", points=4)
def log_softmax():
    rng = np.random.default_rng(52)
    for shape, dim in DIMS:
        differential(f"log_softmax(x, dim={dim}), x of shape {shape}", lambda L, x, d=dim: L.log_softmax(x, d),
                     rng.standard_normal(shape), grad=False, rtol=1e-10)
    differential("log_softmax of logits near 500", lambda L, x: L.log_softmax(x, -1), _large(rng, (3, 4)),
                 grad=False, rtol=1e-9)
    for shape, dim in DIMS:
        differential(f"gradient of log_softmax(x, dim={dim}), x of shape {shape}",
                     lambda L, x, d=dim: L.log_softmax(x, d), rng.standard_normal(shape), rtol=1e-9, atol=1e-12)
    targets = np.array([0, 2, 1])
    differential("cross_entropy(x, targets)",
                 lambda L, x: L.nn.functional.cross_entropy(x, L.tensor(targets)), rng.standard_normal((3, 4)),
                 rtol=1e-9)
