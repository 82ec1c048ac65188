"""Memory formats against torch 2.13: ``channels_last``/``channels_last_3d``/``contiguous_format``/
``preserve_format`` through ``contiguous``, ``clone``, ``to``, the ``*_like`` factories and
``is_contiguous`` (strides, identity of the result, values), elementwise results of a
channels-last tensor, ``Module.to(memory_format=)``, and torch's errors."""
import copy
import pickle

import numpy as np
import pytest
import torch

import ember
from torchcompare import assert_close, assert_same_error

SHAPES = [(2, 3, 4, 5), (1, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (2, 3, 4, 5, 6), (2, 1, 1, 3, 2), (3, 4), (5,)]
FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]
VIEWS = {
    "plain": lambda t: t,
    "transposed": lambda t: t.transpose(0, -1),
    "strided": lambda t: t[..., ::2],
}


def _both(shape, view, fmt=None):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    pair = [VIEWS[view](L.tensor(x)) for L in (ember, torch)]
    if fmt is not None:
        pair = [t.contiguous(memory_format=getattr(L, fmt)) for t, L in zip(pair, (ember, torch))]
    return pair


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 (the class and message are compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_contiguous_clone_to_and_is_contiguous_as_torch(shape, view):
    e, t = _both(shape, view)
    for fmt in FORMATS:
        ef, tf = getattr(ember, fmt), getattr(torch, fmt)
        assert e.is_contiguous(memory_format=ef) == t.is_contiguous(memory_format=tf), fmt
        for name, call in (("contiguous", lambda x, f: x.contiguous(memory_format=f)),
                           ("clone", lambda x, f: x.clone(memory_format=f)),
                           ("to", lambda x, f: x.to(memory_format=f)),
                           ("to-float64", lambda x, f: x.to(x.new_zeros(()).double().dtype, memory_format=f))):
            if fmt == "preserve_format" and name != "contiguous" and view != "plain" and 1 in shape:
                continue  # (a copy keeping a view's layout: the strides its size-1 dims get are NumPy's
                # "K" order, not torch's; docs/pytorch-parity.md)
            er, tr = _outcome(lambda: call(e, ef)), _outcome(lambda: call(t, tf))
            if isinstance(tr, tuple):
                assert er == tr, (fmt, name)
                continue
            assert_close(er, tr)
            assert er.stride() == tr.stride(), (fmt, name)
            assert (er is e) == (tr is t), (fmt, name)
            for check in FORMATS[:3]:
                assert er.is_contiguous(memory_format=getattr(ember, check)) == \
                    tr.is_contiguous(memory_format=getattr(torch, check)), (fmt, name, check)


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
@pytest.mark.parametrize("factory", ["empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"])
def test_like_factories_keep_or_take_the_format(factory, fmt):
    rank = 4 if fmt == "channels_last" else 5
    shape = (2, 3, 4, 5, 6)[:rank]
    for source_fmt, asked in ((fmt, "preserve_format"), ("contiguous_format", fmt), (fmt, "contiguous_format")):
        e, t = _both(shape, "plain", source_fmt)
        args = (2.0,) if factory == "full_like" else ()
        er = getattr(ember, factory)(e, *args, memory_format=getattr(ember, asked))
        tr = getattr(torch, factory)(t, *args, memory_format=getattr(torch, asked))
        assert er.stride() == tr.stride(), (source_fmt, asked)
        if factory in ("zeros_like", "ones_like", "full_like"):
            assert_close(er, tr)
    e, t = _both(shape, "plain", fmt)
    assert ember.empty_like(e[:, :, ::2]).stride() == torch.empty_like(t[:, :, ::2]).stride()  # a sliced one too


ERRORS = {
    "contiguous-rank": lambda L: L.zeros(2, 3).contiguous(memory_format=L.channels_last),
    "contiguous-rank-3d": lambda L: L.zeros(2, 3, 4, 5).contiguous(memory_format=L.channels_last_3d),
    "contiguous-preserve": lambda L: L.zeros(3, 4).t().contiguous(memory_format=L.preserve_format),
    "contiguous-type": lambda L: L.zeros(3).contiguous(memory_format="channels_last"),
    "clone-rank": lambda L: L.zeros(2, 3).clone(memory_format=L.channels_last),
    "clone-type": lambda L: L.zeros(3).clone(memory_format=1),
    "empty_like-rank": lambda L: L.empty_like(L.zeros(2, 3), memory_format=L.channels_last),
    "empty_like-type": lambda L: L.empty_like(L.zeros(2, 3), memory_format=1),
    "is_contiguous-type": lambda L: L.zeros(3).is_contiguous(memory_format=1),
    "empty-rank": lambda L: L.empty(2, 3, 4, memory_format=L.channels_last),
    "empty-preserve": lambda L: L.empty(2, 3, 4, 5, memory_format=L.preserve_format),
    "empty-type": lambda L: L.empty(2, 3, 4, 5, memory_format="channels_last"),
}


@pytest.mark.parametrize("shape, fmt", [((2, 3, 4, 5), "channels_last"), ((1, 3, 1, 1), "channels_last"),
                                        ((2, 3, 4, 5, 6), "channels_last_3d"),
                                        ((2, 3), "contiguous_format")])
def test_empty_takes_the_format(shape, fmt):
    got, want = (L.empty(*shape, memory_format=getattr(L, fmt)) for L in (ember, torch))
    assert got.stride() == want.stride() and got.shape == want.shape


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    assert_same_error(lambda: ERRORS[name](ember), lambda: ERRORS[name](torch))


def test_the_format_objects():
    for name in FORMATS:
        fmt = getattr(ember, name)
        assert repr(fmt) == str(fmt) == repr(getattr(torch, name))
        assert isinstance(fmt, ember.memory_format)
        assert pickle.loads(pickle.dumps(fmt)) is fmt and copy.deepcopy(fmt) is fmt
    assert ember.channels_last != ember.contiguous_format


def test_elementwise_results_follow_a_channels_last_operand():
    e, t = _both((2, 3, 4, 5), "plain", "channels_last")
    for fn in (lambda L, x: x + 1, lambda L, x: L.relu(x), lambda L, x: x * L.ones(5), lambda L, x: x.exp(),
               lambda L, x: L.where(x > 0, x, 0.0)):
        er, tr = fn(ember, e), fn(torch, t)
        assert_close(er, tr)
        assert er.stride() == tr.stride()


def test_module_to_channels_last_trains_as_torch():
    torch.manual_seed(0)
    t_net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 2))
    e_net = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.ReLU(), ember.nn.Flatten(), ember.nn.Linear(4 * 6 * 6, 2))
    e_net.load_state_dict({k: ember.tensor(v.numpy().copy()) for k, v in t_net.state_dict().items()})
    for net, L in ((e_net, ember), (t_net, torch)):
        assert net.to(memory_format=L.channels_last) is net
    assert e_net[0].weight.stride() == t_net[0].weight.stride() == (27, 1, 9, 3)
    assert e_net[0].bias.stride() == t_net[0].bias.stride() and e_net[3].weight.stride() == t_net[3].weight.stride()
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    e_out = e_net(ember.tensor(x).to(memory_format=ember.channels_last))
    t_out = t_net(torch.tensor(x).to(memory_format=torch.channels_last))
    assert_close(e_out, t_out, rtol=1e-5, atol=1e-6)
    e_out.sum().backward()
    t_out.sum().backward()
    assert_close(e_net[0].weight.grad, t_net[0].weight.grad, rtol=1e-5, atol=1e-5)
    assert e_net[0].weight.grad.stride() == t_net[0].weight.grad.stride()


def test_gradient_through_a_channels_last_copy():
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5))
    grads = []
    for L in (ember, torch):
        a = L.tensor(x, requires_grad=True)
        (a.contiguous(memory_format=L.channels_last) * L.arange(5.0)).sum().backward()
        grads.append(a.grad)
    assert_close(*grads)


def test_deepcopy_keeps_the_layout_as_torch():
    # a dense tensor's copy has its strides: a channels-last module's weights stay so (torch copies
    # a view's whole storage, ember a stepped view's elements only)
    for views in (lambda L, t: t.contiguous(memory_format=L.channels_last), lambda L, t: t.permute(3, 0, 2, 1),
                  lambda L, t: t):
        x = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(np.float32)
        got = [copy.deepcopy(views(L, L.tensor(x))) for L in (ember, torch)]
        assert got[0].stride() == got[1].stride()
        assert_close(*got)
    nets = [copy.deepcopy(L.nn.Conv2d(3, 4, 3).to(memory_format=L.channels_last)) for L in (ember, torch)]
    assert nets[0].weight.stride() == nets[1].weight.stride() == (27, 1, 9, 3)
