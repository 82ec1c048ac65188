"""Tensors a module holds in attributes its code never reads are no guards (session 26).

pytorch/examples' reinforcement_learning programs keep ``self.saved_log_probs`` and
``self.rewards`` lists on the policy module and append to them after every call of the
compiled policy. torch's dynamo guards the attributes it traced a read of: one graph. ember
guarded every tensor the modules hold, so each call missed (a longer list) and captured again,
until ``recompile_limit`` made the policy run eagerly with a warning. An attribute that some
code the guards did not look into reads (a helper reached through an imported module) is found
by the recording: that call is a graph break and the attribute is guarded from then on.
"""
import types
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
import torch._dynamo.testing  # noqa: E402


def _policy(lib):
    class Policy(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.affine = lib.nn.Linear(4, 2)
            self.saved_log_probs, self.rewards = [], []

        def forward(self, x):
            return lib.nn.functional.softmax(self.affine(x), dim=1)
    lib.manual_seed(0)
    return Policy()


def _episode(lib, policy, step):
    """Ten steps of a policy-gradient episode: the compiled ``step`` gives the probabilities,
    their log is kept on the module, then the loss of the kept ones is back-propagated."""
    lib.manual_seed(1)
    for _ in range(10):
        probs = step(lib.randn(1, 4))
        policy.saved_log_probs.append(probs.log()[0, 0])
        policy.rewards.append(1.0)
    loss = -lib.stack(policy.saved_log_probs).sum()
    loss.backward()
    return loss.item(), policy.affine.weight.grad.numpy().copy()


def test_a_growing_list_of_saved_tensors_on_the_policy_is_one_graph_as_torchs():
    ember.compiler.reset()
    policy = _policy(ember)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile_limit warning
        ours = _episode(ember, policy, ember.compile(policy))
    assert ember._dynamo.utils.counters["stats"]["unique_graphs"] == 1
    policy = _policy(ember)
    eager = _episode(ember, policy, policy)
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    policy = _policy(torch)
    theirs = _episode(torch, policy, torch.compile(policy, backend=counter))
    assert counter.frame_count == 1
    for got in (ours, eager):
        assert got[0] == pytest.approx(theirs[0], rel=1e-6)
        np.testing.assert_allclose(got[1], theirs[1], rtol=1e-5, atol=1e-6)


def test_a_new_unread_tensor_attribute_is_no_recompile_and_a_read_one_is_seen():
    ember.compiler.reset()
    policy, x = _policy(ember), ember.randn(3, 4)
    step = ember.compile(policy)
    step(x), step(x)
    policy.extra = ember.ones(2)  # named by no code of the module: torch 2.13 does not recompile either
    np.testing.assert_allclose(step(x).detach().numpy(), policy(x).detach().numpy(), rtol=1e-6)
    assert ember._dynamo.utils.counters["stats"]["unique_graphs"] == 1
    type(policy).forward = lambda self, x: ember.nn.functional.softmax(self.affine(x), dim=1) * self.extra
    ember.compiler.reset()
    step = ember.compile(policy)
    for scale in (1.0, 2.0, 5.0):  # a tensor the forward reads: each new one is the graph's input
        policy.extra = ember.full((2,), scale)
        np.testing.assert_allclose(step(x).detach().numpy(), policy(x).detach().numpy(), rtol=1e-6)


def test_an_attribute_read_where_the_guards_did_not_look_breaks_once_then_is_guarded():
    # forward calls a helper through an imported module object (not followed before the call):
    # the recording sees the helper read ``self.shift``; the results follow every new shift
    helpers = types.ModuleType("helpers_26")
    exec("def shifted(module, y):\n    return y + module.shift\n", helpers.__dict__)

    class Shifted(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.shift = ember.nn.Linear(3, 3), ember.zeros(3)

        def forward(self, y):
            return helpers.shifted(self, self.lin(y))
    ember.compiler.reset()
    ember.manual_seed(0)
    model, x = Shifted(), ember.randn(2, 3)
    step = ember.compile(model)
    for k in range(4):
        model.shift = ember.full((3,), float(k))
        with ember.no_grad():
            np.testing.assert_allclose(step(x).numpy(), model(x).numpy(), rtol=1e-6)
    counters = ember._dynamo.utils.counters
    assert sum(counters["graph_break"].values()) == 1 and counters["stats"]["unique_graphs"] >= 1
