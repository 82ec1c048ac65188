"""``unbind``, ``split`` and ``chunk`` give their views one autograd node, as torch's: the same
``grad_fn`` object and name, ``output_nr`` 0, 1, ..., gradients when only some views are used,
double backward, and torch's refusal of an in-place write to one of the views."""
import numpy as np
import pytest
import torch

import ember

CALLS = {
    "unbind": lambda x: x.unbind(), "unbind1": lambda x: x.unbind(1), "split": lambda x: x.split(3),
    "split_sizes": lambda x: x.split([1, 4]), "chunk": lambda x: x.chunk(2), "chunk_dim1": lambda x: x.chunk(2, 1),
    "split_with_sizes": lambda x: x.split_with_sizes([2, 3]), "chunk_empty": lambda x: x[:0].chunk(2),
    "torch_split": lambda x: type(x).split(x, 2, 1),
}
DATA = np.arange(15.0).reshape(5, 3) / 7


def _leaf(lib):
    return lib.tensor(DATA, dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize("name", CALLS)
def test_views_share_one_node_named_and_numbered_as_torchs(name):
    outs = {}
    for lib in (torch, ember):
        views = CALLS[name](_leaf(lib)) if name != "torch_split" else lib.split(_leaf(lib), 2, 1)
        nodes = {id(v.grad_fn) for v in views}
        outs[lib.__name__] = (len(views), len(nodes), type(views[0].grad_fn).__name__, [v.output_nr for v in views],
                              len(views[0].grad_fn.next_functions))
    assert outs["ember"] == outs["torch"]
    assert outs["torch"][1] == 1


@pytest.mark.parametrize("name", ["unbind", "split_sizes", "chunk_dim1"])
def test_gradients_of_some_views_and_the_second_derivative(name):
    grads = {}
    for lib in (torch, ember):
        x = _leaf(lib)
        views = CALLS[name](x)
        loss = (views[-1] ** 3).sum() * 2 + (views[0] ** 2).sum()  # the middle views unused
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        grads[lib.__name__] = (g.detach().numpy(), gg.numpy())
    np.testing.assert_allclose(grads["ember"][0], grads["torch"][0], rtol=1e-12)
    np.testing.assert_allclose(grads["ember"][1], grads["torch"][1], rtol=1e-12)


@pytest.mark.parametrize("name", ["unbind", "split", "split_sizes"])
def test_writing_a_view_in_place_is_torchs_error(name):
    messages = []
    for lib in (torch, ember):
        view = CALLS[name](_leaf(lib) * 1)[1]
        with pytest.raises(RuntimeError) as info:
            view.mul_(2)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_without_grad_the_views_have_no_node_and_are_views():
    x = ember.tensor(DATA)
    views = x.unbind()
    assert all(v.grad_fn is None and v._base is x and v.output_nr == 0 for v in views)
    views[1].mul_(0)  # (no history: torch allows the write too)
    assert x[1].sum().item() == 0


def test_views_of_a_detached_alias_refuse_in_place_writes_as_torchs():
    messages = []
    for lib in (torch, ember):
        x = lib.ones(3, 2).detach().requires_grad_()
        with pytest.raises(RuntimeError) as info:
            x.unbind(1)[0].mul_(2)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("call", [lambda x: x.unsafe_split(3), lambda x: x.unsafe_chunk(2, 1),
                                  lambda x: x.unsafe_split_with_sizes([1, 4])])
def test_unsafe_splits_share_memory_one_node_and_take_writes(call):
    seen = {}
    for lib in (torch, ember):
        leaf = _leaf(lib)
        pieces = call(leaf * 1)
        facts = [type(pieces[0].grad_fn).__name__, [p.output_nr for p in pieces], pieces[0]._base is None,
                 len({id(p.grad_fn) for p in pieces})]
        pieces[0].mul_(3)  # (not a view: allowed, recorded on the piece alone)
        (pieces[0].sum() + (pieces[-1] ** 2).sum()).backward()
        seen[lib.__name__] = facts, type(pieces[0].grad_fn).__name__, leaf.grad.numpy()
    assert seen["ember"][:2] == seen["torch"][:2]
    np.testing.assert_allclose(seen["ember"][2], seen["torch"][2], rtol=1e-12)
