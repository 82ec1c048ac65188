"""Dynamic shapes on the C backend: a graph with size symbols compiles to one shared library whose
loops, GEMM calls and buffers take the sizes at run time, so every size in range runs with one
compilation. Compared with eager ember (outputs and gradients) over every size of the range."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo import mark_dynamic
from ember._dynamo.utils import counters
from ember.compiler.backends import toolchain
from ember.fx.experimental.dynamic_spec import STATIC, ShapeVar, TensorSpec, dynamic_spec

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


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
    # the embeddings' gradients: rows summed by id in C, however many ids there are
    assert "embedding gradient: (em_S0 * em_S1) rows of 8 summed into [11, 8]" in c_builds[3].c_source


class _Block(nn.Module):
    """A GPT block's kernels: layer norm, a fused qkv projection split by slicing, causal
    attention, GELU MLP, each with its gradient."""

    def __init__(self, width=16, heads=2):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        # no qkv bias: the keys' bias has a gradient of 0 but for rounding, which Adam's
        # normalised step would turn into steps of size lr in whichever direction the noise has
        self.qkv, self.proj = nn.Linear(width, 3 * width, bias=False), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.qkv(self.ln1(x)).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


def _block_step(model, optimizer, x):
    optimizer.zero_grad()
    loss = model(x).square().sum()
    loss.backward()
    optimizer.step()
    return loss


def test_dynamic_block_runs_norm_attention_and_updates_in_c(c_builds):
    # One graph for every batch and length >= 2: layer norm, attention, the batched products
    # and the optimizer's updates run as C kernels at sizes given at run time, and every step
    # (loss, updated parameters) equals eager's. Sizes 0 and 1 (torch's 0/1 specialisation:
    # their programs differ) get graphs of their own, equal to eager's too.
    ember.manual_seed(3)
    model = _Block()
    twin = _Block()
    twin.load_state_dict(model.state_dict())
    opt, twin_opt = (ember.optim.AdamW(m.parameters(), lr=1e-2) for m in (model, twin))

    @ember.compile
    def step(x):
        return _block_step(model, opt, x)
    rng = np.random.default_rng(3)
    sizes = [(3, 5), (2, 7), (3, 9), (2, 2), (5, 16), (8, 3), (4, 11)]
    for b, t in sizes + [(1, 1), (4, 0), (0, 3), (2, 1), (1, 2), (3, 9)]:
        x = ember.tensor(rng.standard_normal((b, t, 16)).astype(np.float32))
        mark_dynamic(x, 0, min=0, max=8)
        mark_dynamic(x, 1, min=0, max=16)
        loss, want = step(x), _block_step(twin, twin_opt, x)
        np.testing.assert_allclose(loss.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=f"{(b, t)}")
        for p, w in zip(model.parameters(), twin.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{(b, t)}")
        if (b, t) == sizes[-1]:  # one graph, built once, for every size >= 2
            assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 1
            assert sum(counters["recompiles"].values()) == 0
    c = c_builds[0].c_source
    for kernel in ("mean and variance over the last 1 dims of [em_S0, em_S1, 16]",
                   "layer norm backward over rows of 16 of [em_S0, em_S1, 16]",
                   "attention weights softmax(scale * q @ k^T) causal over [em_S0, 2, em_S1, em_S1]",
                   "gradient of the scores behind softmax weights, rows of [em_S0, 2, em_S1, em_S1]",
                   "batched GEMM [em_S0, 2] x [em_S1x8]", "AdamUpdate[",
                   # the qkv slices' gradients: each copied into its third of one array, no zeros
                   "sum of 3 index gradients, each into its view -> [3, em_S0, 2, em_S1, 8]"):
        assert kernel in c, kernel


def test_dynamic_embedding_lookup_runs_in_c_and_raises_as_eager(c_builds):
    # The lookup of ids of symbolic batch and length (token and position embeddings) is the C
    # gather, with its gradient: one graph for every size >= 2 (no recompiles), 0 and 1 (their
    # own graphs, as torch specialises them) equal to eager's too; a bad id raises eager's
    # IndexError, its position counted in the call's sizes.
    ember.manual_seed(5)
    tokens, positions = nn.Embedding(11, 8), nn.Embedding(16, 8)

    def loss(ids):
        pos = positions(ember.arange(ids.shape[1]))
        return ((tokens(ids) + pos) ** 2).sum()

    compiled = ember.compile(loss)
    rng = np.random.default_rng(5)
    sizes = [(3, 5), (2, 7), (4, 2), (2, 16), (5, 3)]
    for b, t in sizes + [(1, 1), (4, 0), (0, 3), (2, 1), (1, 4)]:
        ids = ember.tensor(rng.integers(0, 11, (b, t)))
        mark_dynamic(ids, 0, min=0, max=8)
        mark_dynamic(ids, 1, min=0, max=16)
        got = []
        for fn in (compiled, loss):
            for p in (tokens.weight, positions.weight):
                p.grad = None
            value = fn(ids)
            value.backward()
            got.append([value.detach().numpy(), tokens.weight.grad.numpy().copy(), positions.weight.grad.numpy().copy()])
        for a, e in zip(*got):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6, err_msg=f"{(b, t)}")
        if (b, t) == sizes[-1]:
            assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 2  # forward, backward
            assert sum(counters["recompiles"].values()) == 0
            assert "embedding of [em_S0, em_S1] ids in [11, 8]" in c_builds[0].c_source
    ids = ember.tensor(rng.integers(0, 11, (3, 6)))
    ids[2, 4] = 11
    with pytest.raises(IndexError) as eager:
        loss(ids)
    with pytest.raises(IndexError) as ours:
        compiled(ids)
    assert str(ours.value) == str(eager.value) and "position (2, 4)" in str(ours.value)


def test_dynamic_slice_of_symbolic_length_runs_in_c(c_builds, plans):
    # pos[1:T + 1] (a GPT's position table cut to the sequence's length) and its gradient (the rows
    # copied into a zeroed table) are views and copies with symbolic bounds in C: one graph for
    # every length >= 2 with nothing left to NumPy; 1 and the largest equal eager's too.
    ember.manual_seed(6)
    tokens, positions = nn.Embedding(11, 8), nn.Parameter(ember.randn(16, 8))

    def loss(ids):
        return ((tokens(ids) + positions[1:ids.shape[1] + 1]) ** 2).sum()

    compiled = ember.compile(loss)
    rng = np.random.default_rng(6)
    sizes = [(3, 5), (2, 7), (4, 3), (2, 15), (5, 4)]
    for b, t in sizes + [(1, 2), (3, 2), (2, 1), (4, 15)]:
        ids = ember.tensor(rng.integers(0, 11, (b, t)))
        mark_dynamic(ids, 0, min=0, max=8)
        mark_dynamic(ids, 1, min=0, max=15)
        got = []
        for fn in (compiled, loss):
            tokens.weight.grad = positions.grad = None
            value = fn(ids)
            value.backward()
            got.append([value.detach().numpy(), tokens.weight.grad.numpy().copy(), positions.grad.numpy().copy()])
        for a, e in zip(*got):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5, err_msg=f"{(b, t)}")
        if (b, t) == sizes[-1]:
            assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 2  # forward, backward
            assert sum(counters["recompiles"].values()) == 0
            assert plans.numpy_nodes() == []
            assert "zeros, then g into the view -> [16, 8]" in c_builds[1].c_source


def test_dynamic_slices_from_the_end_and_at_symbolic_starts_run_in_c(c_builds, plans):
    # w[-T:] (a bound negative at every size: it counts from the end, as Python's) and
    # w[T:2*T] (a symbolic start; the length 2*T - T is T only at the sizes, not as written)
    # are views of the table in C, their gradients copies into a zeroed table; so is x[-1], an
    # int index into a dim of symbolic length (in range at the least length): one graph for
    # every length in [1, 20] with nothing left to NumPy (on the base all three ran from the driver).
    ember.manual_seed(11)
    w = nn.Parameter(ember.randn(40, 3))

    def loss(x):
        T = x.shape[0]
        return (x * w[-T:]).square().sum() + (x * w[T:2 * T]).sum() + (x[-1] * w[0]).exp().sum()

    compiled = ember.compile(loss)
    rng = np.random.default_rng(11)
    sizes = [5, 7, 3, 20, 9]
    for t in sizes + [1, 2, 20]:
        x = ember.tensor(rng.standard_normal((t, 3)).astype(np.float32), requires_grad=True)
        mark_dynamic(x, 0, min=1, max=20)
        got = []
        for fn in (compiled, loss):
            x.grad = w.grad = None
            value = fn(x)
            value.backward()
            got.append([value.detach().numpy(), x.grad.numpy().copy(), w.grad.numpy().copy()])
        for a, e in zip(*got):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5, err_msg=f"{t}")
    assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 2  # forward, backward
    assert sum(counters["recompiles"].values()) == 0
    assert plans.numpy_nodes() == []
    assert "sum of 3 index gradients, each added into its view, zeros first -> [40, 3]" in c_builds[1].c_source
    assert "zeros, then g into the view -> [em_S0, 3]: IndexBackward" in c_builds[1].c_source  # x[-1]'s


def test_slice_bounds_whose_sign_changes_over_the_range_stay_in_the_driver():
    # w[T - 20:T - 10] over T in [2, 30]: its bounds are negative below 20 (then they count from
    # the end) and not above, so no one offset expression is right at every size; its length,
    # 10 either way, cannot tell. Within a range where the sign holds, the bound is a view.
    from ember.compiler.backends import locs
    from ember.compiler.symbolic import symbol
    T = symbol("s0")
    index = (slice(T - 20, T - 10),)
    table = locs.Loc(None, (40, 3), (3, 1), None)
    assert locs._slice_loc(index, table, {"s0": (2, 30)}) is None
    assert locs._slice_loc(index, table, {"s0": (20, 30)}).offset == 3 * (T - 20)
    below = locs._slice_loc(index, table, {"s0": (2, 9)})
    assert [locs.evaluate(below.offset, {"s0": t}) for t in (2, 9)] == [3 * 22, 3 * 29]
    assert locs.same_sizes(below.shape, (10, 3), {"s0": (2, 9)})
    assert not locs.same_sizes((T - 1, 3), (10, 3), {"s0": (2, 9)})
    last4 = locs._slice_loc((slice(T - 4, T),), locs.Loc(None, (T, 3), (3, 1), None), {"s0": (4, 20)})
    assert last4.offset == 3 * (T - 4) and locs.same_sizes(last4.shape, (4, 3), {"s0": (4, 20)})
    assert locs._slice_loc((slice(T - 4, T),), locs.Loc(None, (T, 3), (3, 1), None), {"s0": (2, 20)}) is None
    # int bounds and indices into a dim of symbolic length: views where the range says they fit
    rows = locs.Loc(None, (T, 3), (3, 1), None)
    assert locs.same_sizes(locs._slice_loc((slice(None, 4),), rows, {"s0": (4, 20)}).shape, (4, 3), {"s0": (4, 20)})
    assert locs._slice_loc((-4,), rows, {"s0": (4, 20)}).offset == 3 * (T - 4)
    assert locs._slice_loc((-5,), rows, {"s0": (4, 20)}) is None and locs._slice_loc((-1,), rows, None) is None
    # the gradient of x[:4] into a zeroed (T, 3): covered once at T = 4, a gap from T = 5 on
    view = locs._slice_loc((slice(None, 4),), rows, {"s0": (4, 20)})
    assert locs.coverage(rows, [(view, view.offset, view.strides)], {"s0": (4, 20)}) == (1, 0)


def test_dynamic_advanced_indexing_runs_in_c_and_raises_as_eager(c_builds, plans):
    # x[arange(B), y] (a row's pick) and w[ids] of symbolic length, with their gradients (sums
    # at the index), are the C index kernels at sizes given at run time: one graph for every
    # size >= 2, nothing left to NumPy; 0, 1 and the largest equal eager's too, and a bad index
    # raises eager's IndexError from the C.
    ember.manual_seed(7)
    w = nn.Parameter(ember.randn(10, 8))

    def loss(x, ids, y):
        return (x[ember.arange(x.shape[0]), y] ** 2).sum() + (w[ids] ** 2).sum()

    compiled = ember.compile(loss)
    rng = np.random.default_rng(7)

    def inputs(n):
        x = ember.tensor(rng.standard_normal((n, 6)).astype(np.float32), requires_grad=True)
        tensors = x, ember.tensor(rng.integers(-10, 10, n + 1)), ember.tensor(rng.integers(0, 6, n))
        for t in tensors:
            mark_dynamic(t, 0, min=0, max=17)
        return tensors
    sizes = [3, 5, 2, 16, 4]
    for n in sizes + [1, 0, 16]:
        x, ids, y = inputs(n)
        got = []
        for fn in (compiled, loss):
            x.grad = w.grad = None
            value = fn(x, ids, y)
            value.backward()
            got.append([value.detach().numpy(), x.grad.numpy().copy(), w.grad.numpy().copy()])
        for a, e in zip(*got):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5, err_msg=f"{n}")
        if n == sizes[-1]:
            assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 2  # forward, backward
            assert plans.numpy_nodes() == []
            assert "Index [const, y] (indices broadcast to [em_S0]) -> [em_S0]" in c_builds[0].c_source
            assert "IndexBackward [ids, :] (indices broadcast to [em_S1]) -> [10, 8]" in c_builds[1].c_source
    x, ids, y = inputs(7)
    ids[3] = 10
    with pytest.raises(IndexError) as eager:
        loss(x, ids, y)
    with pytest.raises(IndexError) as ours:
        compiled(x, ids, y)
    assert str(ours.value) == str(eager.value)


def test_dynamic_batch_cnn_runs_convolutions_and_pooling_in_c(c_builds, plans):
    # A CNN's step with a dynamic batch (the last batch of an epoch is smaller): convolutions
    # narrow enough for the direct loops (stride 1 and 2, depthwise, 1x1, with their input and
    # weight gradients) and max pooling (argmax, maximum, gradient) loop over a symbolic batch
    # in C; loss and every gradient equal eager's at each batch size, 1 and the largest too.
    ember.manual_seed(8)
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(3, 3, 3, groups=3),
                          nn.MaxPool2d(3, stride=2, padding=1), nn.Conv2d(3, 6, 1, stride=2, bias=False),
                          nn.Flatten(), nn.Linear(6, 3))

    def loss(x, y):
        return F.cross_entropy(model(x), y)
    compiled = ember.compile(loss)
    rng = np.random.default_rng(8)
    sizes = [3, 5, 2, 8, 4]
    for n in sizes + [1, 8]:
        x = ember.tensor(rng.standard_normal((n, 2, 8, 8)).astype(np.float32), requires_grad=True)
        y = ember.tensor(rng.integers(0, 3, n))
        mark_dynamic(x, 0, max=8)
        mark_dynamic(y, 0, max=8)
        got = []
        for fn in (compiled, loss):
            model.zero_grad()
            x.grad = None
            value = fn(x, y)
            value.backward()
            got.append([value.detach().numpy(), x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()])
        for a, e in zip(*got):
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5, err_msg=f"{n}")
        if n == sizes[-1]:
            assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 2  # forward, backward
            assert plans.numpy_nodes() == []
            assert "direct Conv [em_S0, 2, 8, 8] -> [em_S0, 3, 8, 8], weight [3, 2, 3, 3]" in c_builds[0].c_source
            assert "direct ConvTranspose [em_S0, 3, 2, 2] -> [em_S0, 3, 4, 4]" in c_builds[1].c_source
            assert "max-pool maximum [em_S0, 3, 8, 8] -> [em_S0, 3, 4, 4], kernel (2, 2)" in c_builds[0].c_source
            assert "max-pool gradient [em_S0, 3, 4, 4] -> [em_S0, 3, 8, 8]" in c_builds[1].c_source


def _lenet():
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 5 * 5, 10))


def _sgd_step(net):
    optimizer = ember.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return step


def test_dynamic_batch_lenet_step_runs_im2col_blas_convolutions_in_c(c_builds, plans, monkeypatch, capfd):
    # LeNet's training step (conv 5x5 with 6 and 16 channels, max pooling, linear, cross
    # entropy, SGD) over a symbolic batch: its convolutions are too wide for the direct loops,
    # so the forward, input and weight gradients run im2col + BLAS with the batch read at run
    # time (on the base they ran as NumPy from the driver). Loss and parameters after each step
    # equal eager's at every batch size of the range, 1, 0 and the largest too, in one graph.
    monkeypatch.setenv("EMBER_LOGS", "autotuning")
    ember.manual_seed(10)
    model, reference = _lenet(), _lenet()
    reference.load_state_dict(model.state_dict())
    steps = [_sgd_step(net) for net in (model, reference)]
    compiled = ember.compile(steps[0])
    rng = np.random.default_rng(10)
    sizes = [3, 5, 2, 9, 4]
    for n in sizes + [1, 16, 0, 7]:
        x = ember.tensor(rng.standard_normal((n, 1, 28, 28)).astype(np.float32))
        y = ember.tensor(rng.integers(0, 10, n))
        mark_dynamic(x, 0, min=0, max=16)
        mark_dynamic(y, 0, min=0, max=16)
        got, want = compiled(x, y), steps[1](x, y)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=f"{n}")
        for p, q in zip(model.parameters(), reference.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-6, err_msg=f"{n}")
        if n == sizes[-1]:
            assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 1  # the whole step
            assert plans.numpy_nodes() == []
            source = c_builds[0].c_source
            assert "im2col + BLAS Conv [em_S0, 1, 28, 28] -> [em_S0, 6, 28, 28], weight [6, 1, 5, 5]" in source
            assert "im2col + BLAS ConvTranspose [em_S0, 16, 10, 10] -> [em_S0, 6, 14, 14]" in source
            assert "im2col + BLAS ConvWeight [em_S0, 6, 14, 14] -> [16, 6, 5, 5]" in source
            err = capfd.readouterr().err
            assert err.count("-> im2col + BLAS (cost model)") == 5, err  # 2 forward, 2 weight, 1 input gradient
    assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 1
    assert sum(counters["recompiles"].values()) == 0


class _MaskedAttention(nn.Module):
    """nanoGPT's causal mask: a (1, 1, block, block) buffer cut to the length, bias[:, :, :T, :T];
    minGPT's position table pos[:, :T, :]; q, k, v split from one projection and unsqueezed."""

    def __init__(self, width=8, block=16):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.register_buffer("bias", ember.tril(ember.ones(block, block)).view(1, 1, block, block))
        self.pos = nn.Parameter(ember.randn(1, block, width) * 0.1)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x + self.pos[:, :T, :]).split(C, dim=2)
        att = (q.unsqueeze(1) @ k.unsqueeze(1).transpose(-2, -1)) * C ** -0.5
        att = F.softmax(att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf")), dim=-1)
        return (att @ v.unsqueeze(1)).square().sum()


def test_dynamic_causal_mask_and_position_slices_run_in_c(c_builds, plans):
    # Two symbolic bounds in one slice of a buffer, and unsqueezes of strided splits (a view
    # with a stride-0 dim of 1, not a copy): nothing left to NumPy; equal to eager at every length.
    ember.manual_seed(9)
    model = _MaskedAttention()
    compiled = ember.compile(model)
    rng = np.random.default_rng(9)
    sizes = [(2, 5), (3, 7), (2, 3), (4, 16), (2, 9)]
    for b, t in sizes + [(1, 1), (3, 16)]:
        x = ember.tensor(rng.standard_normal((b, t, 8)).astype(np.float32), requires_grad=True)
        mark_dynamic(x, 0, max=4)
        mark_dynamic(x, 1, max=16)
        got = []
        for fn in (compiled, model):
            model.zero_grad()
            x.grad = None
            value = fn(x)
            value.backward()
            got.append([value.detach().numpy(), x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()])
        for a, e in zip(*got):
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5, err_msg=f"{(b, t)}")
        if (b, t) == sizes[-1]:
            assert counters["stats"]["unique_graphs"] == 1 and len(c_builds) == 2
            assert plans.numpy_nodes() == []
