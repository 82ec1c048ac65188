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


OPTIMIZERS = [("Adam", dict(amsgrad=True)), ("AdamW", {}), ("SGD", dict(momentum=0.9)),
              ("RMSprop", dict(momentum=0.5, centered=True)), ("Adagrad", dict(initial_accumulator_value=0.1)),
              ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("Adadelta", {}), ("ASGD", {}), ("Rprop", {})]


def _run(lib, name, kwargs, w0, a, b, steps, state=None):
    w = lib.tensor(w0, requires_grad=True)
    opt = getattr(lib.optim, name)([w], lr=0.05, **kwargs)
    if state is not None:
        opt.load_state_dict(state)
    for _ in range(steps):
        loss = (lib.tensor(a) @ w - lib.tensor(b)).abs().square().sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w, opt


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_complex_parameter_state_has_torch_layout_and_loads_torch_state(name, kwargs):
    """The state of a complex parameter has its complex shape and dtype, with torch's values;
    torch's state_dict loads into ember's optimizer and the steps go on as torch's do."""
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((6, 4)) + 1j * rng.standard_normal((6, 4))).astype(np.complex64)
    b = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(np.complex64)
    w0 = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
    (_, e_opt), (t_w, t_opt) = (_run(lib, name, kwargs, w0, a, b, 3) for lib in (ember, torch))
    e_state, t_state = e_opt.state_dict()["state"][0], t_opt.state_dict()["state"][0]
    assert sorted(e_state) == sorted(t_state)
    for key, t in t_state.items():
        e = e_state[key]
        if isinstance(t, torch.Tensor):
            assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype)[6:], key
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6, err_msg=key)
        else:
            assert e == pytest.approx(t), key
    saved = {"state": {0: {k: ember.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v
                           for k, v in t_state.items()}},
             "param_groups": [{**g, "params": [0]} for g in t_opt.state_dict()["param_groups"]]}
    e_w, _ = _run(ember, name, kwargs, t_w.detach().numpy(), a, b, 2, state=saved)
    t_w, _ = _run(torch, name, kwargs, t_w.detach().numpy(), a, b, 2, state=t_opt.state_dict())
    np.testing.assert_allclose(e_w.detach().numpy(), t_w.detach().numpy(), rtol=1e-5, atol=1e-6)
