"""``checkpoint(use_reentrant=True)`` under ``autograd.grad`` / ``backward(inputs=)``: torch's
RuntimeError; a plain ``backward()``, nested reentrant checkpoints and ``use_reentrant=False``
still differentiate, with torch's gradients."""
import numpy as np
import pytest
import torch

import ember

MESSAGE = "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad()"


def _segment(lib, reentrant, x, w):
    def inner(a):
        return (a * w).sin()

    def outer(a):
        return lib.utils.checkpoint.checkpoint(inner, a, use_reentrant=reentrant) * 2
    return lib.utils.checkpoint.checkpoint(outer, x, use_reentrant=reentrant).sum()


def _leaves(lib):
    x = lib.tensor(np.linspace(-1, 1, 5), requires_grad=True)
    return x, lib.tensor(np.linspace(0.5, 2, 5), requires_grad=True)


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
@pytest.mark.parametrize("how", ["grad", "backward-inputs"])
def test_reentrant_checkpoint_refuses_selective_backward(lib, how):
    x, w = _leaves(lib)
    y = _segment(lib, True, x, w)
    with pytest.raises(RuntimeError, match=MESSAGE.replace("(", r"\(").replace(")", r"\)")):
        lib.autograd.grad(y, x) if how == "grad" else y.backward(inputs=[x])
    assert lib.autograd._is_checkpoint_valid()  # valid again outside the backward


@pytest.mark.parametrize("reentrant", [True, False])
def test_nested_checkpoints_give_torchs_gradients(reentrant):
    grads = []
    for lib in (torch, ember):
        x, w = _leaves(lib)
        _segment(lib, reentrant, x, w).backward()
        grads.append([x.grad.numpy(), w.grad.numpy()])
    for got, expected in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_non_reentrant_checkpoint_takes_autograd_grad():
    x, w = _leaves(ember)
    gx, = ember.autograd.grad(_segment(ember, False, x, w), x)
    tx, tw = _leaves(torch)
    expected, = torch.autograd.grad(_segment(torch, False, tx, tw), tx)
    np.testing.assert_allclose(gx.numpy(), expected.numpy(), rtol=1e-12)
