"""Reading ``.grad`` of a non-leaf tensor while it is None warns as torch's ``Tensor.grad``
(UserWarning, torch's words); leaves, ``retain_grad()`` tensors, and a non-leaf whose gradient
``backward(inputs=...)`` filled do not."""
import warnings

import pytest

import ember
from torchcompare import torch


def _warnings(module, read):
    x = module.randn(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read(module, x)
    return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]


def _retained(m, x):
    y = x * 2
    y.retain_grad()
    y.grad
    y.sum().backward()
    assert y.grad is not None


def _backward_into(m, x):
    y = x * 2
    (y * y).sum().backward(inputs=[y])
    assert y.grad is not None


READS = {
    "non-leaf": lambda m, x: (x * 2).grad,
    "view-of-leaf": lambda m, x: x[:2].grad,
    "leaf": lambda m, x: x.grad,
    "no-grad-tensor": lambda m, x: m.zeros(2).grad,
    "detached": lambda m, x: (x * 2).detach().grad,
    "retained": _retained,
    "backward-inputs": _backward_into,
    "after-backward": lambda m, x: ((x * 2).sum().backward(), x.grad),
}


@pytest.mark.parametrize("read", list(READS))
def test_non_leaf_grad_warns_as_torch(read):
    got, expected = _warnings(ember, READS[read]), _warnings(torch, READS[read])
    assert got == expected
    assert bool(got) == (read in ("non-leaf", "view-of-leaf"))


def test_the_warning_points_at_the_users_line():
    y = ember.randn(2, requires_grad=True) * 2
    with pytest.warns(UserWarning, match="not a leaf Tensor") as caught:
        y.grad
    assert caught[0].filename == __file__
