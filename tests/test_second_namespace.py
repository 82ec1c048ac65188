"""The backend seam holds (issue 9): training steps run on a second array namespace.

The parameters and inputs are moved onto ``counting_namespace.CountedArray`` (NumPy behind a
counter, standing in for CuPy); a step of an MLP, a CNN and an attention block then runs.
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
    for _ in range(2):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss)
    tensors = [*losses, *model.parameters(), *model.buffers(), *(p.grad for p in model.parameters())]
    return [t._data for t in tensors]


@pytest.mark.parametrize("make", [_mlp, _cnn, _attention], ids=["mlp", "cnn", "attention"])
def test_a_training_step_runs_on_a_second_namespace(make):
    expected = _step(make, on_counted=False)
    LOG.clear()
    got = _step(make, on_counted=True)
    assert not LOG.strays, "NumPy reached the counted arrays outside the namespace:\n" + "\n".join(
        f"{n:4d} {where}" for where, n in LOG.strays.most_common())
    assert not LOG.mixed, "plain NumPy arrays mixed in:\n" + "\n".join(
        f"{n:4d} {where}" for where, n in LOG.mixed.most_common())
    assert sum(LOG.calls.values()) > 0
    assert [type(a) for a in got] == [CountedArray] * len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a.view(np.ndarray), b)


@pytest.mark.parametrize("name", ["Adadelta", "Adagrad", "Adamax", "AdamW", "NAdam", "RAdam", "RMSprop", "Rprop"])
def test_each_optimizer_updates_on_a_second_namespace(name):
    def make():
        model = nn.Linear(4, 3)
        x, y = ember.randn(5, 4), ember.randn(5, 3)
        options = {"centered": True} if name == "RMSprop" else {}
        return model, getattr(ember.optim, name)(model.parameters(), **options), lambda: F.mse_loss(model(x), y), (x, y)
    expected = _step(make, on_counted=False)
    LOG.clear()
    got = _step(make, on_counted=True)
    assert not LOG.strays and not LOG.mixed, (LOG.strays, LOG.mixed)
    assert [type(a) for a in got] == [CountedArray] * len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a.view(np.ndarray), b)
