"""In-place ops on tensors with history inside a compiled function read the value the graph
computed (the op copies the old value first, for backward): found by a break-it review, where
``relu(lin(x), inplace=True)`` replayed the first call's activations on every later call."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

CASES = {
    "relu(inplace=True)": lambda h: F.relu(h, inplace=True),
    "nn.ReLU(inplace=True)": lambda h: ember.nn.ReLU(inplace=True)(h),
    "relu_": lambda h: h.relu_(),
    "add_": lambda h: h.add_(1.5),
    "mul_ then sigmoid_": lambda h: h.mul_(2).sigmoid_(),
    "leaky_relu(inplace=True)": lambda h: F.leaky_relu(h, 0.1, inplace=True),
    "hardtanh(inplace=True)": lambda h: F.hardtanh(h, inplace=True),
    "elu(inplace=True)": lambda h: F.elu(h, inplace=True),
}


@pytest.mark.parametrize("name", CASES)
def test_inplace_after_an_op_replays_the_new_value_and_gradient(name):
    ember.manual_seed(0)
    lin = ember.nn.Linear(3, 4)
    act = CASES[name]

    def step(x):
        loss = (act(lin(x)) ** 2).sum()
        loss.backward()
        return loss

    compiled = ember.compile(step, dynamic=False)
    for seed in range(4):  # the first call captures; the later ones replay
        x = ember.tensor(np.random.default_rng(seed).standard_normal((5, 3)).astype(np.float32))
        lin.zero_grad()
        expected = step(x).item()
        grads = [p.grad.clone() for p in lin.parameters()]
        lin.zero_grad()
        got = compiled(x).item()
        assert got == pytest.approx(expected, rel=1e-5), (name, seed)
        for p, g in zip(lin.parameters(), grads):
            np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


VIEW_WRITES = {
    "write through view_as_real": lambda x: (lambda y: (ember.view_as_real(y).mul_(2), y)[1])(x * 1),
    "read view_as_real after a base write": lambda x: (lambda y: (lambda r: (y.mul_(2), r)[1])(
        ember.view_as_real(y)))(x * 1),
    "write through mH": lambda x: (lambda y: (y.mH.mul_(2j), y)[1])(x * 1),
    "read mH after a base write": lambda x: (lambda y: (lambda w: (y.add_(1), w)[1])(y.mH))(x * 1),
    "write through conj": lambda x: (lambda y: (y.conj().mul_(1j), y)[1])(x * 1),
}


@pytest.mark.parametrize("name", VIEW_WRITES)
def test_writes_through_views_numpy_cannot_trace_replay_correctly(name):
    """conj and view_as_real views keep their memory in step by copies the graph cannot record:
    a graph break, so every call equals eager (from the second call on, the write was lost)."""
    fn = VIEW_WRITES[name]
    x = ember.tensor([[1 + 2j, 3 - 1j], [2j, 1 + 0j]])
    compiled = ember.compile(fn, dynamic=False)
    for _ in range(3):
        np.testing.assert_allclose(compiled(x).resolve_conj().numpy(), fn(x).resolve_conj().numpy())
