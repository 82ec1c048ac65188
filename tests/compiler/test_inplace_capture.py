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
