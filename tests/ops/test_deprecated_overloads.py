"""PyTorch's deprecated scale-first overloads, which old tutorials and hand-written optimizers
still use (``p.data.add_(-lr, p.grad.data)``, ``exp_avg.mul_(b1).add_(1 - b1, grad)``,
``exp_avg_sq.addcmul_(1 - b2, grad, grad)``, ``p.data.addcdiv_(-step, exp_avg, denom)``):
torch 2.13's values, gradients, UserWarning and TypeErrors."""
import warnings

import numpy as np
import pytest
import torch

import ember

CALLS = [
    lambda x, a, b: x.add(2, a),
    lambda x, a, b: x.add(-0.5, 3),
    lambda x, a, b: x.sub(1.5, a),
    lambda x, a, b: x.addcmul(0.1, a, b),
    lambda x, a, b: x.addcdiv(-2, a, b),
    lambda x, a, b: x.clone().add_(-0.25, a),
    lambda x, a, b: x.clone().sub_(3, a),
    lambda x, a, b: x.clone().addcmul_(0.5, a, b),
    lambda x, a, b: x.clone().addcdiv_(0.5, a, b),
]


@pytest.mark.parametrize("call", range(len(CALLS)))
def test_scale_first_overloads_give_torchs_values_gradients_and_warning(call):
    rng = np.random.default_rng(call)
    arrays = [rng.standard_normal((3, 4)) for _ in range(3)]
    results = []
    for lib in (torch, ember):
        x, a, b = (lib.tensor(v, requires_grad=True) for v in arrays)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = CALLS[call](x, a, b)
        out.sum().backward()
        messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        results.append((out.detach().numpy(), [g.grad.numpy() for g in (x, a, b) if g.grad is not None], messages))
    (t_out, t_grads, t_warn), (e_out, e_grads, e_warn) = results
    np.testing.assert_allclose(e_out, t_out, rtol=1e-15, atol=1e-15)
    assert len(e_grads) == len(t_grads)
    for e, t in zip(e_grads, t_grads):
        np.testing.assert_allclose(e, t, rtol=1e-15, atol=1e-15)
    assert len(e_warn) == 1 and e_warn[0].startswith("This overload of ") and "is deprecated:" in e_warn[0]
    assert t_warn == [] or e_warn[0].split("\n")[1] == t_warn[0].split("\n")[1].replace("_(", "(")


@pytest.mark.parametrize("call", [
    lambda L, x, o: x.add(o, o),
    lambda L, x, o: x.addcmul(2, o),
    lambda L, x, o: x.addcdiv(o, o, o),
])
def test_wrong_positional_arguments_raise_torchs_type_error(call):
    errors = []
    for lib in (torch, ember):
        with pytest.raises(TypeError) as info:
            call(lib, lib.ones(2), lib.full((2,), 3.0))
        errors.append(str(info.value))
    assert errors[1] == errors[0]


def test_an_old_style_adam_step_matches_torchs():
    def step(lib, steps=3, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
        p = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        exp_avg, exp_avg_sq = lib.zeros_like(p), lib.zeros_like(p)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t in range(1, steps + 1):
                p.grad = None
                ((p ** 3).sum() + p.sin().sum()).backward()
                grad = p.grad.data
                exp_avg.mul_(b1).add_(1 - b1, grad)
                exp_avg_sq.mul_(b2).addcmul_(1 - b2, grad, grad)
                denom = exp_avg_sq.sqrt().add_(eps)
                step_size = lr * (1 - b2 ** t) ** 0.5 / (1 - b1 ** t)
                p.data.addcdiv_(-step_size, exp_avg, denom)
        return p.detach().numpy()
    np.testing.assert_allclose(step(ember), step(torch), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("call", [
    lambda L, x, o: L.addcmul(x, o, 2),             # tensor2 a number
    lambda L, x, o: L.addcdiv(x, o, 2),
    lambda L, x, o: L.addcmul(x, 2, o, 3),          # scale first, tensor2 a number
    lambda L, x, o: L.addcmul(x, 2, o, o, value=3),  # the scale twice
    lambda L, x, o: L.add(x, 2, o, alpha=3),
    lambda L, x, o: x.sub(2, o, alpha=3),
    lambda L, x, o: x.add(L.tensor(2.0, requires_grad=True), o),
])
def test_ill_formed_scale_first_calls_raise_type_error_instead_of_computing(call):
    for lib in (torch, ember):
        with warnings.catch_warnings(), pytest.raises(TypeError):
            warnings.simplefilter("ignore")
            call(lib, lib.ones(2), lib.full((2,), 3.0))


def test_a_zero_dim_tensor_is_a_scale_and_a_complex_alpha_needs_a_complex_result():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = [lib.ones(2).add(lib.tensor(2), lib.full((2,), 3.0)).tolist() for lib in (torch, ember)]
    assert values[1] == values[0] == [7.0, 7.0]
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="alpha must not be a complex number"):
            lib.add(lib.ones(2), lib.ones(2), alpha=1j)
