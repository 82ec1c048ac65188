"""A small complex-valued network trained on the 2-d FFT of the digits, written once for a
library ``lib`` (ember or torch) and run under both from the same initial weights: the losses
of every step and the final weights agree, and it learns."""
import numpy as np
import pytest

import ember
from ember.datasets import load_digits

torch = pytest.importorskip("torch")


def train(lib, x, y, weights, steps=30):
    """fft2 of 8x8 images -> complex Linear -> modReLU-like |z| -> real Linear -> cross-entropy."""
    spectrum = lib.fft.fftshift(lib.fft.fft2(lib.tensor(x).reshape(-1, 8, 8), norm="ortho"), dim=(-2, -1))
    features = spectrum.reshape(-1, 64)
    layer1 = lib.nn.Linear(64, 32, dtype=lib.cfloat)
    layer2 = lib.nn.Linear(32, 10)
    with lib.no_grad():
        for p, w in zip([*layer1.parameters(), *layer2.parameters()], weights):
            p.copy_(lib.tensor(w))
    params = [*layer1.parameters(), *layer2.parameters()]
    # SGD, not Adam: the weights of the (real) DC bin get imaginary gradients at rounding level,
    # which Adam's normalisation would turn into full steps that differ between libraries.
    opt = lib.optim.SGD(params, lr=0.05, momentum=0.9)
    labels, losses = lib.tensor(y), []
    for _ in range(steps):
        hidden = layer1(features)
        logits = layer2(hidden.abs() * lib.sgn(hidden).real.relu())
        loss = lib.nn.functional.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().resolve_conj().numpy().copy() for p in params]


def test_complex_network_on_fft_of_digits_matches_torch():
    split = load_digits()
    x, y = split.x_train[:256], split.y_train[:256]
    rng = np.random.default_rng(0)
    weights = [(rng.standard_normal((32, 64)) + 1j * rng.standard_normal((32, 64))).astype(np.complex64) / 8,
               (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64) / 8,
               rng.standard_normal((10, 32)).astype(np.float32) / 6, np.zeros(10, np.float32)]
    e_losses, e_params = train(ember, x, y, weights)
    t_losses, t_params = train(torch, x, y, weights)
    np.testing.assert_allclose(e_losses, t_losses, rtol=2e-4, atol=2e-4)
    for e, t in zip(e_params, t_params):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, rtol=1e-3, atol=1e-3)
    assert e_losses[-1] < 0.5 * e_losses[0]


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "SGD", "Adagrad"])
def test_optimizers_treat_complex_parameters_as_real_pairs(name):
    """torch's optimizers update a complex parameter as view_as_real of it (Adam's second
    moment per part, not the complex square)."""
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((6, 4)) + 1j * rng.standard_normal((6, 4))).astype(np.complex64)
    b = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(np.complex64)
    w0 = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
    results = []
    for lib in (ember, torch):
        w = lib.tensor(w0, requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.05)
        for _ in range(5):
            loss = (lib.tensor(a) @ w - lib.tensor(b)).abs().square().sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        results.append(w.detach().resolve_conj().numpy())
    np.testing.assert_allclose(*results, rtol=1e-5, atol=1e-6)
