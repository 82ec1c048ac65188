"""Dynamic shapes on the C backend: a graph with size symbols compiles to one shared library whose
loops, GEMM calls and buffers take the sizes at run time, so every size in range runs with one
compilation. Compared with eager ember (outputs and gradients) over every size of the range."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo.utils import counters
from ember.compiler import backends
from ember.compiler.backends import toolchain
from ember.fx.experimental.dynamic_spec import STATIC, ShapeVar, TensorSpec, dynamic_spec

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture
def c_builds(monkeypatch):
    """The callables the C backend made (each with its .c_source), in order."""
    ember.compiler.reset()
    made, compile_c = [], backends.compile_c

    def spy(graph, options, compiler):
        made.append(compile_c(graph, options, compiler))
        return made[-1]
    monkeypatch.setattr(backends, "compile_c", spy)
    yield made
    ember.compiler.reset()


def _step(model, *inputs):
    """(loss, gradients) of one step of ``model``."""
    model.zero_grad()
    loss = model(*inputs)
    loss.backward()
    return loss.detach().numpy(), [p.grad.numpy().copy() for p in model.parameters()]


def _assert_steps_equal(compiled, model, *inputs):
    (loss, grads), (want, want_grads) = _step(compiled, *inputs), _step(model, *inputs)
    np.testing.assert_allclose(loss, want, rtol=1e-5, atol=1e-6)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


B = ShapeVar("B", max=64)


class _MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))

    @dynamic_spec({"x": TensorSpec([B, STATIC]), "y": TensorSpec([B])})
    def forward(self, x, y):
        return F.cross_entropy(self.net(x), y)


def test_shapevar_mlp_runs_every_batch_in_one_c_build(c_builds):
    ember.manual_seed(0)
    model = _MLP()
    compiled = ember.compile(model)
    rng = np.random.default_rng(0)
    for b in range(65):
        x = ember.tensor(rng.standard_normal((b, 6)).astype(np.float32))
        y = ember.tensor(rng.integers(0, 3, b))
        _assert_steps_equal(compiled, model, x, y)
    assert counters["stats"]["unique_graphs"] == 1
    assert len(c_builds) == 2  # the forward and the backward graph, each built once, in C
    assert all("static long em_S0;  /* B */" in f.c_source for f in c_builds)
    assert all("int region_0(void** restrict p, const int64_t* restrict sz)" in f.c_source for f in c_builds)
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        compiled(ember.ones(5, 6), ember.tensor([0, 1, 3, 0, 1]))  # C's check, at a symbolic size


class _Sequence(nn.Module):
    """Next-token logits over a sequence: token and position embeddings, an MLP, a head."""

    def __init__(self, vocab=11, block=12, width=8):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
        self.head = nn.Linear(width, vocab)

    def forward(self, ids, targets):
        h = self.tok(ids) + self.pos(ember.arange(ids.shape[1]))
        logits = self.head(h + self.mlp(h))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def test_dynamic_true_sequence_model_runs_every_length_in_c(c_builds):
    ember.manual_seed(1)
    model = _Sequence()
    compiled = ember.compile(model, dynamic=True)
    rng = np.random.default_rng(1)
    for t in range(1, 13):
        ids, targets = (ember.tensor(rng.integers(0, 11, (3, t))) for _ in range(2))
        _assert_steps_equal(compiled, model, ids, targets)
    # as torch: the first call's sizes are static (T = 1 here behaves apart), the first change
    # makes a graph dynamic in every dim (batch and length), which runs every later length
    assert counters["stats"]["unique_graphs"] == 2 and len(c_builds) == 4
    assert all("static long em_S1;  /* s1 */" in f.c_source for f in c_builds[2:])
    assert "GEMM [(em_S0 * em_S1)x8] @ [8x32]: Addmm(addmm) with epilogue Gelu(gelu)" in c_builds[2].c_source
