"""Issue 11's "Done when", as a new user writes it: a model with a data-dependent branch
(ember.cond, then switch) and a generation loop (ember.while_loop, stopping at an end token
or a length limit) compile with fullgraph=True, one graph each, and give eager's results on
inputs taking every branch and trip count; the same model with a Python ``if`` on a tensor is
a clear graph break under fullgraph=True."""
import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.utils import counters
from ember._higher_order_ops.switch import switch


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c, self.head = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 5)

    def forward(self, x):
        h = ember.cond(x.mean() > 0, lambda x: self.a(x).relu(), lambda x: self.b(x).tanh(), (x,))
        k = (h.abs().sum() * 3).long() % 4  # 0..3; 3 is past the last branch: clamped to it
        return self.head(switch(k, [lambda h: h * 2, lambda h: self.c(h), lambda h: -h], (h,)))


def generate(model, x, end, limit):
    """Greedy: feed the first row's argmax back until it is ``end`` or ``limit`` steps ran."""
    def body(i, x, last):
        token = model(x).argmax(-1)[:1]
        return i + 1, x.roll(1, -1) + token.float(), token
    return ember.while_loop(lambda i, x, last: (i < limit) & (last[0] != end), body,
                            (ember.tensor(0), x, ember.tensor([-1])))


def test_branches_and_a_generation_loop_compile_whole_and_equal_eager():
    ember.manual_seed(0)
    model = Gate()
    ember.compiler.reset()
    compiled_model = ember.compile(model, fullgraph=True)
    compiled_generate = ember.compile(generate, fullgraph=True)
    trips, signs = set(), set()
    for seed in range(8):
        x = ember.tensor(np.random.default_rng(seed).standard_normal((2, 8)).astype(np.float32) + (-1) ** seed)
        np.testing.assert_allclose(compiled_model(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        want = generate(model, x, 3, ember.tensor(6))
        got = compiled_generate(model, x, 3, ember.tensor(6))
        assert int(got[0]) == int(want[0]) and int(got[2]) == int(want[2])
        np.testing.assert_allclose(got[1].detach().numpy(), want[1].detach().numpy(), rtol=1e-5, atol=1e-5)
        trips.add(int(want[0]))
        signs.add(bool(x.mean() > 0))
    assert len(trips) > 1 and len(signs) == 2  # the data took both branches and several trip counts
    assert counters["stats"]["unique_graphs"] == 2  # one per function: no recompile, no break
    ember.compiler.reset()


def test_a_python_if_on_a_tensor_is_a_clear_graph_break_under_fullgraph():
    class IfGate(nn.Module):
        def forward(self, x):
            if x.mean() > 0:
                return x * 2
            return x
    with pytest.raises(ember._dynamo.exc.Unsupported,
                       match=r"(?s)graph break \(fullgraph=True\): bool\(tensor\).*needs the tensor's value.*"
                             r"test_as_a_new_user.py:\d+: if x.mean\(\) > 0:"):
        ember.compile(IfGate(), fullgraph=True)(ember.randn(3))
    ember.compiler.reset()
