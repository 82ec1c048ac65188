"""Index arrays as graph values: ops whose index is an attr (``x[i]``, gather, scatter, the
indices ``max(x, dim)`` and ``sort`` return, read by their gradients) capture into one graph.

An index made in the function is a constant of the graph; an index passed in is a placeholder
(its new values are used on each call, not the first call's); an index the forward computes
is a node the backward reads. Data-dependent checks (an index out of range, a probability
outside [0, 1]) run inside the kernels, so a replay raises PyTorch's error as eager does.
The model test compiles a training step with ``fullgraph=True`` (no break allowed) and checks
it against eager ember and against torch 2.13 on the same weights.
"""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember._dynamo.utils import counters


def _fresh():
    ember.compiler.reset()
    counters.clear()


def test_index_passed_in_is_read_on_every_call():
    """gather, x[i] and scatter_add with an index argument: each call's values, one graph."""
    _fresh()

    def fn(x, index, rows):
        picked = torch_gather(x, index)
        return picked * 2 + x[rows].sum(), x.scatter_add(1, index, picked)
    torch_gather = lambda x, index: ember.gather(x, 1, index)  # noqa: E731
    compiled = ember.compile(fn, fullgraph=True)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    for call in range(4):  # new index values each call: a constant of the first would be wrong
        index = ember.tensor(rng.integers(0, 6, (4, 3)))
        rows = ember.tensor(rng.integers(0, 4, (5,)))
        for got, want in zip(compiled(x, index, rows), fn(x, index, rows)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    assert not counters["graph_break"]
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])


def test_list_index_is_a_constant_and_a_computed_mask_breaks():
    """x[[2, 0, 2]] and a constant boolean list are constants of one graph; x[x > 0] (a mask
    the forward computes, whose count sets the result's shape) breaks the graph, so each
    call gives its own count, never the first call's."""
    _fresh()
    constant = ember.compile(lambda x: (x[[2, 0, 2]] * 2 + x[:, [1, 1, 0]].sum(), x[[True, False, True]]),
                             fullgraph=True)
    masked = ember.compile(lambda x: x[x > 0] * 2)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = ember.tensor(rng.standard_normal((3, 3)).astype(np.float32))
        for got, want in zip(constant(x), (x[[2, 0, 2]] * 2 + x[:, [1, 1, 0]].sum(), x[[True, False, True]])):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)  # (sums' order)
        np.testing.assert_array_equal(masked(x).numpy(), x.numpy()[x.numpy() > 0] * 2)
    assert list(counters["graph_break"]) == ["Index with a boolean mask that is not a constant (the "
                                             "result's shape depends on its values)"]


def test_index_held_by_a_closure_is_a_fixed_tensor():
    """An index tensor the function reads from its closure (a data batch, a lookup table) is a
    placeholder read on each call, as any fixed tensor: updated in place, the replay sees it."""
    _fresh()
    index = ember.tensor([[1], [0], [2]])
    compiled = ember.compile(lambda x: ember.gather(x, 1, index) * 2, fullgraph=True)
    x = ember.arange(12.0).reshape(3, 4)
    for column in range(4):
        index.fill_(column)
        np.testing.assert_array_equal(compiled(x).numpy(), x.numpy()[:, column:column + 1] * 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gather_and_scatter_add_in_c(dtype, monkeypatch, capsys):
    """Gather and ScatterAdd (forward, and each other's gradients) run as C kernels on strided
    operands (transposed views, an expanded source) and equal eager exactly (each element is
    one read or a sum in the same order)."""
    _fresh()
    monkeypatch.setenv("EMBER_LOGS", "output_code")

    def fn(x, src, index):
        picked = ember.gather(x, 1, index)
        return picked, x.scatter_add(1, index, src.expand(3, 5)) * 1
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((6, 3)).astype(dtype)).t().requires_grad_()
    src = ember.tensor(rng.standard_normal((1, 5)).astype(dtype)).requires_grad_()
    compiled = ember.compile(fn, fullgraph=True)
    for _ in range(3):
        index = ember.tensor(rng.integers(0, 6, (3, 5)))
        results = []
        for f in (compiled, fn):
            outs = f(x, src, index)
            sum((o * (k + 2)).sum() for k, o in enumerate(outs)).backward()
            results.append([o.detach().numpy() for o in outs] + [x.grad.numpy(), src.grad.numpy()])
            x.grad = src.grad = None
        for got, want in zip(*results):
            np.testing.assert_array_equal(got, want)
    code = capsys.readouterr().err
    assert "Gather along dim 1" in code and "ScatterAdd along dim 1" in code, code[-2000:]


def test_index_out_of_range_raises_in_a_replay():
    """An index argument out of range on a replayed call: torch's RuntimeError, not NumPy's
    IndexError or a wrapped negative index."""
    _fresh()
    compiled = ember.compile(lambda x, index: ember.gather(x, 1, index) * 2)
    x = ember.ones(3, 4)
    for _ in range(2):
        compiled(x, ember.tensor([[0], [1], [3]]))
    for bad, shown in (([[0], [4], [1]], 4), ([[0], [-1], [1]], -1)):
        with pytest.raises(RuntimeError, match=f"index {shown} is out of bounds for dimension 1 with size 4"):
            compiled(x, ember.tensor(bad))
        with pytest.raises(RuntimeError, match=f"index {shown} is out of bounds for dimension 1 with size 4"):
            torch.gather(torch.ones(3, 4), 1, torch.tensor(bad))


@pytest.mark.parametrize("backward", [False, True])
def test_embedding_id_out_of_range_raises_in_a_replay(backward):
    """An id outside [0, num_embeddings) on a replayed call (a negative one would wrap): torch's
    IndexError, under no_grad and with the backward in the graph, as eager and torch raise."""
    _fresh()
    emb = ember.nn.Embedding(4, 2)
    step = ember.compile(lambda ids: emb(ids).sum())
    with ember.set_grad_enabled(backward):
        for _ in range(2):
            loss = step(ember.tensor([0, 1]))
        for bad in ([0, -1], [4, 1]):
            for fn, lib in ((step, ember), (emb, ember), (torch.nn.Embedding(4, 2), torch)):
                with pytest.raises(IndexError, match="index out of range in self"):
                    fn(lib.tensor(bad))
    assert loss.requires_grad == backward


def test_binary_cross_entropy_checks_its_input_in_a_replay():
    _fresh()
    compiled = ember.compile(lambda p, t: F.binary_cross_entropy(p, t))
    t = ember.full((3,), 0.5)
    for _ in range(2):
        compiled(ember.tensor([0.2, 0.5, 0.9]), t)
    message = "all elements of input should be between 0 and 1"
    with pytest.raises(RuntimeError, match=message):
        compiled(ember.tensor([0.2, 1.5, 0.9]), t)
    with pytest.raises(RuntimeError, match=message):
        torch.nn.functional.binary_cross_entropy(torch.tensor([0.2, 1.5, 0.9]), torch.full((3,), 0.5))


def _model(nn):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 8)
            self.out = nn.Linear(3, 2)

        def forward(self, ids, pick):
            h = self.embed(ids)                               # [B, T, 8]
            h = nn.functional.max_pool1d(h.transpose(1, 2), 2)  # [B, 8, T/2]
            top = h.topk(3, dim=1).values                     # [B, 3, T/2]
            top = top.sort(dim=2).values.amax(2)              # [B, 3]
            h = h.gather(2, pick).squeeze(2)                  # [B, 8]
            return self.out(top) + h[:, :2]
    return Model()


def test_fullgraph_training_step_with_embedding_gather_pool_topk_sort():
    """One compiled step (forward, backward, SGD) with fullgraph=True equals eager ember's
    and torch's steps: the losses and the updated weights after three steps."""
    _fresh()
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 10, (4, 6))
    pick = rng.integers(0, 3, (4, 8, 1))
    target = rng.standard_normal((4, 2)).astype(np.float32)
    models = [_model(ember.nn), _model(ember.nn), _model(torch.nn)]
    state = {k: v.detach().numpy().copy() for k, v in models[0].state_dict().items()}
    for m in models[1:]:
        with (torch.no_grad() if isinstance(m, torch.nn.Module) else ember.no_grad()):
            for k, v in m.state_dict().items():
                v.copy_(type(v)(state[k]) if isinstance(v, torch.Tensor) else ember.tensor(state[k]))

    def stepper(lib, model):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)

        def step(ids, pick, target):
            loss = ((model(ids, pick) - target) ** 2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        return step
    compiled = ember.compile(stepper(ember, models[0]), fullgraph=True)
    eager, reference = stepper(ember, models[1]), stepper(torch, models[2])
    args = lambda lib: (lib.tensor(ids), lib.tensor(pick), lib.tensor(target))  # noqa: E731
    for _ in range(3):
        got, want, oracle = compiled(*args(ember)), eager(*args(ember)), reference(*args(torch))
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)
        np.testing.assert_allclose(got.item(), oracle.item(), rtol=1e-5)
    assert not counters["graph_break"]
    for (name, a), b, c in zip(models[0].named_parameters(), models[1].parameters(), models[2].parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_reference_backends_read_index_nodes(backend):
    """The eager (dispatcher) and aot_eager (interpreter) runners read index nodes from the
    kwargs too: gather with an argument index, max's and sort's indices in the backward, a
    constant index; forward and gradient equal eager."""
    _fresh()

    def fn(x, index):
        v = ember.gather(x, 1, index) * 2 + x.max(1, keepdim=True).values
        return (v.sort(1).values * x[ember.tensor([0, 2, 1])][:, :2]).sum()
    compiled = ember.compile(fn, backend=backend, fullgraph=True)
    rng = np.random.default_rng(4)
    for _ in range(3):
        x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
        index = ember.tensor(rng.integers(0, 4, (3, 2)))
        grads = []
        for f in (compiled, fn):
            out = f(x, index)
            out.backward()
            grads.append((out.item(), x.grad.numpy().copy()))
            x.grad = None
        np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
        np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_and_min_along_dim_in_c(dtype, monkeypatch, capsys):
    """max(x, dim) and min(x, dim) as C kernels on a transposed input, with eager's rules: the
    first extreme on ties, the first NaN wins, a row of -inf gives index 0; values, indices and
    the gradient (a scatter-add at the indices) equal eager exactly."""
    _fresh()
    monkeypatch.setenv("EMBER_LOGS", "output_code")

    def fn(x):
        top, low = x.max(1), x.min(0, keepdim=True)
        return top.values * 2, top.indices, low.values + 1, low.indices
    compiled = ember.compile(fn, fullgraph=True)
    rng = np.random.default_rng(5)
    for _ in range(3):
        a = rng.standard_normal((5, 7)).astype(dtype)
        a[1, 3], a[2, :], a[3, 2], a[3, 5], a[4, 0], a[4, 6] = np.nan, -np.inf, 9.0, 9.0, np.nan, np.nan
        x = ember.tensor(a).t().requires_grad_()  # [7, 5], strided
        results = []
        for f in (compiled, fn):
            outs = f(x)
            (outs[0].sum() + outs[2].sum()).backward()
            results.append([o.detach().numpy() for o in outs] + [x.grad.numpy()])
            x.grad = None
        for got, want in zip(*results):
            np.testing.assert_array_equal(got, want)
    code = capsys.readouterr().err
    assert "MaxAlongDim along dim 1" in code and "MinAlongDim along dim 0" in code, code[-2000:]


@pytest.mark.parametrize("wrap", [ember.from_numpy, ember.as_tensor, ember.asarray,
                                  lambda a: ember.frombuffer(a, dtype=ember.from_numpy(a[:0]).dtype).view(a.shape)])
def test_tensor_over_a_users_array_is_not_a_constant(wrap):
    """from_numpy / as_tensor / asarray / frombuffer share the user's memory: writing into the
    array between calls changes the next call's result, so the tensor is no constant (a break)."""
    _fresh()
    x = ember.arange(15.).reshape(5, 3)
    rows, cols, shift = np.array([0, 2]), np.array([[0, 2]] * 5), np.array([1., 2., 3.], np.float32)
    fns = [lambda x: x[wrap(rows)] * 2, lambda x: x.gather(1, wrap(cols)), lambda x: x + wrap(shift)]
    compiled = [ember.compile(fn) for fn in fns]
    for _ in range(2):
        for fn, c in zip(fns, compiled):
            np.testing.assert_array_equal(c(x).numpy(), fn(x).numpy())
        rows[0], cols[:] = 4, 1
        shift[0] = 100.
    _fresh()  # (else fullgraph=True shares the entries above and runs eagerly too, as torch's)
    with pytest.raises(ember.compiler.exc.Unsupported, match="shares memory with an array"):
        ember.compile(fns[0], fullgraph=True)(x)


def test_interpolate_indices_stay_constants():
    """ember's own from_numpy of arrays it computed (interpolate's indices) stays a constant."""
    _fresh()
    fn = lambda x: F.interpolate(x, scale_factor=2.5, mode="nearest") * 2  # noqa: E731
    x = ember.randn(1, 2, 3, 4)
    np.testing.assert_allclose(ember.compile(fn, fullgraph=True)(x).numpy(), fn(x).numpy())


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "eager"])
def test_an_index_written_in_place_before_the_compiled_backward_raises_as_eagerly(backend):
    """The index a replayed backward reads is the caller's tensor: writing it in place between
    the call and the backward raises torch's RuntimeError (naming its versions), on every call."""
    _fresh()

    def fn(x, rows, index):
        return (x[rows] * 2).tanh().sum() + ember.gather(x, 1, index).exp().sum()

    compiled = ember.compile(fn, backend=backend, fullgraph=True)
    for call in range(3):
        x = ember.randn(5, 3, requires_grad=True)
        rows, index = ember.tensor([0, 2, 2]), ember.tensor([[0, 1, 1], [2, 2, 0]])
        compiled(x, rows, index).backward()  # untouched: no error, eager's gradient
        want = ember.autograd.grad(fn(x, rows, index), x)[0]
        np.testing.assert_allclose(x.grad.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
        for written in (rows, index):
            loss = compiled(x, rows, index)
            written.add_(0)
            with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[torch.LongTensor "
                                                   rf"\[{', '.join(map(str, written.shape))}\]\] is at version"):
                loss.backward()
    assert counters["stats"]["unique_graphs"] == 1


def test_pooling_indices_and_unpooling_capture_into_one_graph():
    """max_pool2d's and adaptive_max_pool2d's indices are graph values (outputs, and what
    max_unpool2d scatters by): a training step with both compiles whole under fullgraph=True,
    forward and gradients equal to torch's on every call; unpooling's range check runs in the
    replay."""
    _fresh()

    def step(lib, x, w):
        F_ = lib.nn.functional
        y, idx = F_.max_pool2d(x, 2, return_indices=True)
        a, aidx = F_.adaptive_max_pool2d(x, (3, 2), return_indices=True)
        back = F_.max_unpool2d((y * w).relu(), idx, 2)
        return (back * back).sum() + a.tanh().sum(), idx, aidx

    compiled = ember.compile(lambda x, w: step(ember, x, w), fullgraph=True)
    w0 = np.random.default_rng(0).standard_normal((1, 3, 1, 1)).astype(np.float32)
    w, wt = ember.tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    for call in range(3):
        x0 = np.random.default_rng(call + 1).standard_normal((2, 3, 6, 4)).astype(np.float32)
        x, xt = ember.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
        got, want = compiled(x, w), step(torch, xt, wt)
        got[0].backward()
        want[0].backward()
        np.testing.assert_allclose(got[0].item(), want[0].item(), rtol=1e-5)
        for g, t in zip(got[1:], want[1:]):
            assert g.tolist() == t.tolist()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"]

    unpool = ember.compile(lambda y, idx: F.max_unpool2d(y, idx, 2), fullgraph=True)
    y, idx = ember.ones(1, 1, 2, 2), ember.tensor([[[[0, 3], [9, 15]]]])
    for _ in range(2):
        assert unpool(y, idx).sum().item() == 4.0
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 16 \(output volumes are of size 4x4\)"):
        unpool(y, ember.tensor([[[[0, 3], [9, 16]]]]))
