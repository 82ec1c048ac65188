"""A compiled char-RNN-like step (embedding, ``nn.RNN``/``GRU``/``LSTM``, a linear head, cross
entropy, backward) over sequences whose length changes call to call (RNN27).

``RNNLayer`` kept the padded sequence's steps as its ``batch_sizes`` attribute, ``(N,) * L``:
the attribute specialised the length, so the compiled step made a graph per length (8, then
the recompile-limit warning and eager). A padded sequence now passes ``batch_sizes=None`` and
the C kernels read the step count from the input's rows at run time: after the second length
the graph is dynamic (2 graphs for 8 lengths; the bidirectional LSTM runs the reverse loop too).

torch 2.13, for the record: TorchDynamo refuses to trace these modules by default ("Attempted
to wrap RNN, GRU, or LSTM": the frame runs eagerly, 0 graphs); with
``torch._dynamo.config.allow_rnn = True`` it specialises every length (a graph per length up to
the recompile limit). Values and gradients are compared with eager ember and with torch.
"""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
from torch._dynamo.testing import CompileCounter  # noqa: E402

pytestmark = pytest.mark.usefixtures("fresh_compiler")

LENGTHS = (3, 5, 4, 7, 6, 9, 2, 11)
VOCAB, EMBED, HIDDEN, BATCH = 12, 8, 16, 3


def _model(lib, kind, bidirectional=False):
    class CharModel(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = lib.nn.Embedding(VOCAB, EMBED)
            self.rnn = getattr(lib.nn, kind)(EMBED, HIDDEN, bidirectional=bidirectional)
            self.head = lib.nn.Linear(HIDDEN * (1 + bidirectional), VOCAB)

        def forward(self, x, y):
            out, _ = self.rnn(self.emb(x))
            return lib.nn.functional.cross_entropy(self.head(out).reshape(-1, VOCAB), y.reshape(-1))
    return CharModel()


def _copy(src, dst):
    with torch.no_grad():
        for p, q in zip(src.parameters(), dst.parameters()):
            q.copy_(torch.from_numpy(np.array(p.detach().numpy())))


def _grads(model):
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    return grads


@pytest.mark.parametrize("kind, bidirectional", [("RNN", False), ("GRU", False), ("LSTM", True)])
def test_a_compiled_char_rnn_step_keeps_one_dynamic_graph_over_changing_lengths(kind, bidirectional):
    ember.manual_seed(0)
    model, reference = _model(ember, kind, bidirectional), _model(torch, kind, bidirectional)
    _copy(model, reference)
    ember._dynamo.utils.counters.clear()
    step = ember.compile(model)
    rng = np.random.default_rng(0)
    for length in LENGTHS:
        x, y = rng.integers(0, VOCAB, (2, length, BATCH))
        loss = step(ember.tensor(x), ember.tensor(y))
        loss.backward()
        got = _grads(model)
        eager = model(ember.tensor(x), ember.tensor(y))
        eager.backward()
        want = reference(torch.tensor(x), torch.tensor(y))
        want.backward()
        # float32: one GEMM order in C, another in NumPy and in torch
        np.testing.assert_allclose(loss.item(), eager.item(), rtol=1e-5, err_msg=f"length {length}")
        np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-5, err_msg=f"length {length}")
        for g, e, w in zip(got, _grads(model), _grads(reference)):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6, err_msg=f"length {length}")
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6, err_msg=f"length {length}")
    assert ember._dynamo.utils.counters["stats"]["unique_graphs"] == 2  # static, then dynamic


def test_torch_leaves_the_recurrent_modules_to_eager():
    torch._dynamo.reset()
    counter = CompileCounter()
    step = torch.compile(_model(torch, "GRU"), backend=counter)
    for length in (3, 5):
        step(torch.randint(0, VOCAB, (length, BATCH)), torch.randint(0, VOCAB, (length, BATCH))).backward()
    assert counter.frame_count == 0
