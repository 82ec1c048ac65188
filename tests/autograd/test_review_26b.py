"""Session 26's review (REVIEW26B) of the Stack op entry, split/unbind views, the engine's
gradient stealing and callable backends' fx graphs, checked against torch 2.13."""
import numpy as np
import pytest
import torch

import ember


def _both(fn):
    return fn(torch), fn(ember)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_stack_of_transposes_is_row_major(dim):
    """torch.stack / cat of transposed matrices: a row-major result (so ``view`` works)."""
    def f(m):
        x = m.arange(6.).reshape(2, 3)
        s = m.stack([x.t(), x.t()], dim)
        return s.stride(), s.is_contiguous(), s.view(-1).tolist()
    t, e = _both(f)
    assert e == t


@pytest.mark.parametrize("dim", [0, 1])
def test_cat_of_transposes_is_row_major(dim):
    def f(m):
        x = m.arange(6.).reshape(2, 3)
        c = m.cat([x.t(), x.t()], dim)
        return c.stride(), c.view(-1).tolist()
    t, e = _both(f)
    assert e == t


def test_stack_of_mixed_layouts_is_row_major():
    def f(m):
        x = m.arange(9.).reshape(3, 3)
        return [(r.stride(), r.tolist()) for r in (m.stack([x, x.t()], 1), m.stack([x.t(), x], 2),
                                                    m.cat([x.t(), x], 1), m.cat([x[:, :2], x.t()[:, :2]], 0))]
    t, e = _both(f)
    assert e == t


def test_cat_of_channels_last_keeps_it():
    def f(m):
        x = m.arange(120.).reshape(2, 3, 4, 5).to(memory_format=m.channels_last)
        return m.cat([x, x], 1).stride(), m.cat([x, x], 0).stride(), m.cat([x, x.contiguous()], 0).stride()
    t, e = _both(f)
    assert e == t


def test_stack_grad_of_transposes():
    def f(m):
        x = m.arange(6.).reshape(2, 3).requires_grad_()
        s = m.stack([x.t(), x.t() * 2], 1)
        (s * m.arange(12.).reshape(3, 2, 2)).sum().backward()
        return x.grad.tolist()
    t, e = _both(f)
    assert e == t


@pytest.mark.parametrize("case", ["add two leaves", "user gradient", "retain_grad", "inputs", "hook returns"])
def test_no_gradient_stolen_from_a_holder(case):
    """A first ``.grad`` kept without a copy only where the engine alone holds it: never an
    alias of a tensor the user, a hook or another ``.grad`` holds."""
    x = ember.ones(3, requires_grad=True)
    held = ember.full((3,), 2.)
    if case == "add two leaves":
        z = ember.ones(3, requires_grad=True)
        (x + z).backward(ember.full((3,), 2.))
        held = z.grad
    elif case == "user gradient":
        (x + 0).backward(held)
    elif case == "retain_grad":
        y = x + 0
        y.retain_grad()
        (y * 3).sum().backward()
        held = y.grad
    elif case == "inputs":
        y = x.view(3)
        y.retain_grad()
        (y * 3).sum().backward(inputs=[x, y])
        held = y.grad
    else:
        x.register_hook(lambda g: held)
        (x * 2).sum().backward()
    before = held.tolist()
    x.grad.add_(100)
    assert not np.may_share_memory(x.grad._data, held._data)
    assert held.tolist() == before
