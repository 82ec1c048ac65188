"""The hook-based ``nn.utils.weight_norm`` and ``nn.utils.spectral_norm`` (TCN/WaveNet and GAN
programs, and their checkpoints) against torch 2.13: state_dict keys and values, the
weight each forward computes and its gradients, spectral norm's power iteration in training
and evaluation, ``remove_*``, loading torch's state_dict, warnings and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember


def build(lib, kind):
    lib.manual_seed(0)
    nn = lib.nn
    return {"linear": lambda: nn.Linear(5, 3), "conv1d": lambda: nn.Conv1d(2, 4, 3),
            "conv2d": lambda: nn.Conv2d(2, 3, 3), "tconv2d": lambda: nn.ConvTranspose2d(2, 3, 2)}[kind]()


def sample(kind):
    shape = {"linear": (4, 5), "conv1d": (2, 2, 6), "conv2d": (2, 2, 5, 5), "tconv2d": (2, 2, 3, 3)}[kind]
    return np.random.default_rng(1).standard_normal(shape).astype("float32")


def run(lib, kind, wrap, steps=3, train=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = wrap(lib, build(lib, kind))
    module.train(train)
    outputs, x = [], lib.tensor(sample(kind))
    for _ in range(steps):
        module.zero_grad()
        out = module(x)
        (out * out).sum().backward()
        outputs.append(out.detach().numpy())
    grads = {k: p.grad.numpy() for k, p in module.named_parameters()}
    return module, outputs, grads, {k: v.numpy() for k, v in module.state_dict().items()}


WRAPS = {
    "weight_norm": lambda L, m: L.nn.utils.weight_norm(m),
    "weight_norm-dim-None": lambda L, m: L.nn.utils.weight_norm(m, dim=None),
    "weight_norm-dim-1": lambda L, m: L.nn.utils.weight_norm(m, dim=1),
    "spectral_norm": lambda L, m: L.nn.utils.spectral_norm(m),
    "spectral_norm-3-iterations": lambda L, m: L.nn.utils.spectral_norm(m, n_power_iterations=3),
}


@pytest.mark.parametrize("wrap", list(WRAPS))
@pytest.mark.parametrize("kind", ["linear", "conv1d", "conv2d", "tconv2d"])
def test_outputs_gradients_and_state_equal_torchs(wrap, kind):
    results = [run(lib, kind, WRAPS[wrap]) for lib in (torch, ember)]
    (t_mod, t_outs, t_grads, t_state), (e_mod, e_outs, e_grads, e_state) = results
    assert list(e_state) == list(t_state) and list(e_grads) == list(t_grads)
    for key in t_state:
        np.testing.assert_allclose(e_state[key], t_state[key], rtol=1e-5, atol=1e-6, err_msg=key)
    for e, t in zip(e_outs, t_outs):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)
    for key in t_grads:
        np.testing.assert_allclose(e_grads[key], t_grads[key], rtol=1e-4, atol=1e-5, err_msg=key)
    assert e_mod.weight.grad_fn.name() == t_mod.weight.grad_fn.name()


def test_spectral_norm_in_eval_mode_skips_the_power_iteration_as_torch():
    for kind in ("linear", "conv2d"):
        (_, t_outs, _, t_state), (_, e_outs, _, e_state) = (run(lib, kind, WRAPS["spectral_norm"], train=False)
                                                            for lib in (torch, ember))
        np.testing.assert_allclose(e_outs[-1], t_outs[-1], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(e_state["weight_u"], t_state["weight_u"], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("wrap, remove", [("weight_norm", "remove_weight_norm"),
                                          ("spectral_norm", "remove_spectral_norm")])
def test_remove_puts_back_a_plain_parameter_as_torch(wrap, remove):
    states = []
    for lib in (torch, ember):
        module = run(lib, "conv2d", WRAPS[wrap])[0]
        getattr(lib.nn.utils, remove)(module)
        assert isinstance(module.weight, lib.nn.Parameter) and not module._forward_pre_hooks
        states.append({k: v.numpy() for k, v in module.state_dict().items()})
    assert list(states[1]) == list(states[0]) == ["weight", "bias"] or list(states[1]) == list(states[0])
    for key in states[0]:
        np.testing.assert_allclose(states[1][key], states[0][key], rtol=1e-5, atol=1e-6)


def test_a_torch_checkpoint_with_weight_g_and_v_loads():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 4, 3))
        e = ember.nn.utils.weight_norm(ember.nn.Conv1d(2, 4, 3))
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((1, 2, 7)).astype("float32")
    np.testing.assert_allclose(e(ember.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_warnings_and_errors_are_torchs():
    for lib in (torch, ember):
        utils = lib.nn.utils
        with pytest.warns(FutureWarning, match="weight_norm` is deprecated in favor of"):
            module = utils.weight_norm(lib.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"):
            utils.weight_norm(module)
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in Linear"):
            utils.remove_weight_norm(lib.nn.Linear(2, 2))
        module = utils.spectral_norm(lib.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter"):
            utils.spectral_norm(module)
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in Linear"):
            utils.remove_spectral_norm(lib.nn.Linear(2, 2))
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
