"""More pytorch/examples programs with the line a user adds to try the compiler (session 26).

As ``test_pytorch_examples_compiled.py``: a copy of the program's folder from a checkout of
github.com/pytorch/examples (tested at commit 77f55b9) at ``$EMBER_PUBLIC_PROGRAMS/examples``
(the tests skip without one) gets ``x = torch.compile(x)`` after the line building the model,
runs under ``import ember as torch`` and prints what the unmodified program prints under torch
2.13's eager mode, with no graph break and torch's number of graphs.
"""
import pytest

import ember
from examples_harness import assert_same_output
from test_pytorch_examples_compiled import compiled_and_eager


@pytest.mark.parametrize("program, anchor, line, argv", [
    ("reinforcement_learning/reinforce.py", "policy = Policy()", "policy = torch.compile(policy)", []),
    ("reinforcement_learning/actor_critic.py", "model = Policy()", "model = torch.compile(model)", ["--seed", "6"]),
])
def test_compiled_policy_gradient_examples_print_torchs_rewards_from_one_graph(program, anchor, line, argv,
                                                                               tmp_path, monkeypatch):
    # The policy keeps the log-probabilities (and values) of every step in lists on the module,
    # appended after each call: attributes its forward never reads, so no guard (torch's dynamo:
    # one graph); ember captured again on every call until recompile_limit (8) made it eager.
    torch_out, ember_out = compiled_and_eager(program, anchor, ["--log-interval", "1"] + argv, tmp_path, monkeypatch,
                                              line)
    assert ember._dynamo.utils.counters["stats"]["unique_graphs"] == 1
    assert "Solved!" in ember_out and "Episode 3" in ember_out
    assert_same_output(ember_out, torch_out, rtol=1e-6, atol=1e-6)


def test_compiled_forward_forward_layers_print_torchs_errors(tmp_path, monkeypatch):
    # Each Layer (an nn.Linear subclass) trains itself by calling self.forward: the methods are
    # what a user compiles; Adam, log1p(exp(.)) goodness losses, argmax predictions.
    line = "for _layer in net.layers: _layer.forward = torch.compile(_layer.forward)"
    argv = ["--epochs", "5", "--train_size", "64", "--test_size", "64"]
    torch_out, ember_out = compiled_and_eager("mnist_forward_forward/main.py", "net = Net([784", argv, tmp_path,
                                              monkeypatch, line)
    assert "test error:" in ember_out
    assert_same_output(ember_out, torch_out, rtol=2e-5, atol=2e-6)
