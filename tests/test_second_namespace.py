"""The backend seam holds (issue 9): training steps run on a second array namespace.

The parameters and inputs are moved onto ``counting_namespace.CountedArray`` (NumPy behind a
counter, standing in for CuPy); a step of an MLP, a CNN, an adaptive-pool CNN, an attention
block, an LSTM and a GRU, of a model reading sort, topk, cumsum and interpolate, and of one
reading padding, dropout, scatter_reduce and softmax, then runs;
each optimizer updates, and the linear-algebra ops run forward and backward.
It must give NumPy's results bit for bit, keep every tensor on the counted type, use the
namespace, and make no stray NumPy call on the counted arrays nor mix plain NumPy arrays in.
"""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from counting_namespace import LOG, CountedArray, counted


def _mlp():
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 5))
    x, y = ember.randn(8, 12), ember.randint(0, 5, (8,))
    return model, ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), lambda: F.cross_entropy(model(x), y), (x, y)


def _cnn():
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                          nn.AvgPool2d(2, stride=1),
                          nn.Conv2d(4, 6, 3, stride=2), nn.Flatten(), nn.Linear(6, 3))
    x, y = ember.randn(2, 3, 8, 8), ember.randint(0, 3, (2,))
    return model, ember.optim.SGD(model.parameters(), lr=0.05), lambda: F.cross_entropy(model(x), y), (x, y)


def _adaptive_cnn():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveMaxPool2d((3, 2)),
                          nn.Upsample(scale_factor=1.5, mode="bilinear"), nn.Conv2d(4, 5, 2),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(5, 3))
    x, y = ember.randn(2, 3, 9, 7), ember.randint(0, 3, (2,))
    return model, ember.optim.AdamW(model.parameters(), lr=0.01), lambda: F.cross_entropy(model(x), y), (x, y)


class _Recurrent(nn.Module):
    def __init__(self, kind):
        super().__init__()
        options = {"proj_size": 3} if kind == "LSTM" else {}
        self.rnn = getattr(nn, kind)(4, 5, num_layers=2, bidirectional=True, **options)
        self.head = nn.Linear(2 * self.rnn.proj_size or 10, 2)

    def forward(self, x):
        return self.head(self.rnn(x)[0][-1])


def _recurrent(kind):
    def make():
        model = _Recurrent(kind)
        x, y = ember.randn(6, 3, 4), ember.randint(0, 2, (3,))
        return model, ember.optim.Adam(model.parameters(), lr=0.01), lambda: F.cross_entropy(model(x), y), (x, y)
    return make


def _sorting():
    """A loss through sort, topk, cumsum, cumprod, logcumsumexp and a long linear interpolation
    (values and their gradients)."""
    model = nn.Linear(6, 8)
    x = ember.randn(4, 6)

    def loss():
        h = model(x)
        top, _ = h.topk(3, dim=1)
        ordered, _ = h.sort(dim=0, descending=True)
        return (top.sum() + (ordered * h.new_ones(8).cumsum(0)).cumsum(1).sum()
                + h.tanh().cumprod(0).sum() + h.logcumsumexp(1).mean()
                + F.interpolate(h.reshape(1, 1, 32), size=600, mode="linear").square().mean())
    return model, ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True), loss, (x,)


def _more_families():
    """Reflect padding, PReLU, dropout (a CPU draw put on the input's device), one_hot,
    scatter_reduce, xlogy, logit, softmax and log_softmax."""
    model = nn.Sequential(nn.Conv1d(2, 3, 3, padding=1, padding_mode="reflect"), nn.PReLU(3), nn.Dropout(0.3),
                          nn.Flatten(), nn.Linear(18, 4))
    x, y = ember.randn(5, 2, 6), ember.randint(0, 4, (5,))

    def loss():
        out = model(x)
        p = out.sigmoid()
        pooled = out.new_zeros(4).scatter_reduce(0, y, out[:, 0], "mean", include_self=False)
        return (F.cross_entropy(out, y) + (F.one_hot(y, 4) * out).sum() + pooled.sum()
                + ember.special.xlogy(p, p + 1).mean() + ember.logit(p, eps=1e-3).mean()
                + (F.softmax(out, dim=1) * out).sum() + F.log_softmax(out, dim=0).mean())
    return model, ember.optim.SGD(model.parameters(), lr=0.05), loss, (x, y)


class _Block(nn.Module):
    def __init__(self, vocab=11, dim=8, heads=2):
        super().__init__()
        self.embed, self.heads = nn.Embedding(vocab, dim), heads
        self.norm, self.qkv, self.out = nn.LayerNorm(dim), nn.Linear(dim, 3 * dim), nn.Linear(2 * dim, vocab)

    def forward(self, tokens):
        h = self.embed(tokens)
        b, t, d = h.shape
        q, k, v = self.qkv(self.norm(h)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        return self.out(F.gelu(ember.cat([h, a], dim=-1)))


def _attention():
    model = _Block()
    tokens = ember.randint(0, 11, (2, 5))
    return (model, ember.optim.Adam(model.parameters(), lr=0.01),
            lambda: F.cross_entropy(model(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten()), (tokens,))


def _step(make, on_counted):
    """Two training steps; the loss of each and the parameters after, as NumPy arrays."""
    ember.manual_seed(0)
    model, opt, loss_fn, inputs = make()
    if on_counted:  # (Adagrad makes its state when it is made: it moves too)
        state = [t for s in opt.state.values() for t in s.values() if isinstance(t, ember.Tensor)]
        for t in [*model.parameters(), *model.buffers(), *inputs, *state]:
            t._data = counted(t._data)
    losses = []

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    for _ in range(2):
        if isinstance(opt, ember.optim.LBFGS):  # it evaluates the loss itself, several times
            losses.append(opt.step(closure))
        else:
            losses.append(closure())
            opt.step()
    tensors = [*losses, *model.parameters(), *model.buffers(), *(p.grad for p in model.parameters())]
    return [t._data for t in tensors]


@pytest.mark.parametrize("make", [_mlp, _cnn, _adaptive_cnn, _attention, _recurrent("LSTM"), _recurrent("GRU"),
                                  _sorting, _more_families],
                         ids=["mlp", "cnn", "adaptive_cnn", "attention", "lstm", "gru", "sort_scan",
                              "pad_prelu_dropout"])
def test_a_training_step_runs_on_a_second_namespace(make):
    expected = _step(make, on_counted=False)
    LOG.clear()
    got = _step(make, on_counted=True)
    assert not LOG.strays, "NumPy reached the counted arrays outside the namespace:\n" + "\n".join(
        f"{n:4d} {where}" for where, n in LOG.strays.most_common())
    assert not LOG.mixed, "plain NumPy arrays mixed in:\n" + "\n".join(
        f"{n:4d} {where}" for where, n in LOG.mixed.most_common())
    assert sum(LOG.calls.values()) > 0
    if make is _more_families:  # dropout's mask, drawn on the CPU, enters through the seam's one copy
        assert LOG.transfers
    assert [type(a) for a in got] == [CountedArray] * len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a.view(np.ndarray), b)


@pytest.mark.parametrize("name", ["Adadelta", "Adagrad", "Adamax", "AdamW", "NAdam", "RAdam", "RMSprop", "Rprop",
                                  "ASGD", "SGD", "LBFGS", "SparseAdam"])
def test_each_optimizer_updates_on_a_second_namespace(name):
    def make():
        if name == "SparseAdam":
            model = nn.Embedding(7, 3, sparse=True)
            x, y = ember.tensor([[1, 4], [4, 6]]), ember.randn(2, 2, 3)
            return model, ember.optim.SparseAdam(model.parameters()), lambda: F.mse_loss(model(x), y), (x, y)
        model = nn.Linear(4, 3)
        x, y = ember.randn(5, 4), ember.randn(5, 3)
        options = {"RMSprop": {"centered": True}, "SGD": {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01},
                   "AdamW": {"amsgrad": True}, "LBFGS": {"line_search_fn": "strong_wolfe"}}.get(name, {})
        return model, getattr(ember.optim, name)(model.parameters(), **options), lambda: F.mse_loss(model(x), y), (x, y)
    expected = _step(make, on_counted=False)
    LOG.clear()
    got = _step(make, on_counted=True)
    assert not LOG.strays and not LOG.mixed, (LOG.strays, LOG.mixed)
    assert [type(a) for a in got] == [CountedArray] * len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a.view(np.ndarray), b)



def _linalg_loss(a, b, spd):
    """A loss through the linear-algebra ops (factorizations and solvers, forward and backward)."""
    la = ember.linalg
    q, r = la.qr(a)
    u, s, vh = la.svd(a, full_matrices=False)
    w, v = la.eigh(spd)
    lower = la.cholesky(spd)
    lu, pivots = la.lu_factor(a)
    parts = [q.sum() + (r * r).sum(), s.sum() + (u[..., 0] * vh[..., 0, :]).sum(), w.sum() + v.abs().sum(),
             lower.sum(), lu.sum(), la.solve(a, b).sum(), la.inv(a).sum(), la.det(a).sum(),
             la.slogdet(a)[1].sum(), la.solve_triangular(lower, b, upper=False).sum(), la.pinv(a).sum(),
             la.matrix_exp(0.1 * a).sum(), la.svdvals(a).sum(), la.eigvalsh(spd).sum(),
             la.lstsq(a, b).solution.sum(), la.matrix_norm(a, "nuc").sum()]
    return sum(parts[1:], parts[0])


@pytest.mark.parametrize("batch", [(), (3,)], ids=["one", "batched"])
def test_linear_algebra_runs_on_a_second_namespace(batch):
    """Factorizations and solvers, their values and gradients, on the counted arrays (the
    namespace's ``linalg`` and the registered ``scipy.linalg``), equal NumPy's to rounding: a
    single NumPy matrix is factored by SciPy's LAPACK, another library's by its ``xp.linalg``."""
    def run(on_counted):
        ember.manual_seed(0)
        a = ember.randn(*batch, 4, 4, dtype=ember.float64)
        b = ember.randn(*batch, 4, 2, dtype=ember.float64)
        m = ember.randn(*batch, 4, 4, dtype=ember.float64)
        spd = m @ m.mT + 4 * ember.eye(4, dtype=ember.float64)
        leaves = [a, b, spd]
        if on_counted:
            for t in leaves:
                t._data = counted(t._data)
        for t in leaves:
            t.requires_grad_()
        loss = _linalg_loss(a, b, spd)
        loss.backward()
        return [t._data for t in (loss, *(t.grad for t in leaves))]
    expected = run(False)
    LOG.clear()
    got = run(True)
    assert not LOG.strays, "NumPy reached the counted arrays outside the namespace:\n" + "\n".join(
        f"{n:4d} {where}" for where, n in LOG.strays.most_common())
    assert not LOG.mixed, "plain NumPy arrays mixed in:\n" + "\n".join(
        f"{n:4d} {where}" for where, n in LOG.mixed.most_common())
    assert [type(x) for x in got] == [CountedArray] * len(expected)
    for x, y in zip(got, expected):
        np.testing.assert_allclose(x.view(np.ndarray), y, rtol=1e-12, atol=1e-12)
