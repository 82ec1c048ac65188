"""A view's gradient follows in-place writes made to its storage after the view was taken
(through the base or through another view), as torch regenerates a view's grad_fn when the
version counter moved. Found by the CPLX2 helper: ember kept the view's old history, so the
gradient skipped the write (x.grad [0, 1, 1] where torch gives [0, 2, 2])."""
import numpy as np
import pytest
import torch

import ember

CASES = {
    "base written": lambda lib, x: (lambda v: (v[1:], v.mul_(2))[0])(x * 1),
    "base written twice": lambda lib, x: (lambda v: (v.view(3, 1).t(), v.mul_(3), v.add_(1))[0])(x * 1),
    "sibling view written": lambda lib, x: (lambda v: (v[1:], v[:2].mul_(3))[0])(x * 1),
    "view of view, base written": lambda lib, x: (lambda v: (v[1:][::2], v.sin_())[0])(x * 1),
    "written before and after": lambda lib, x: (lambda v: (v.mul_(2), v[:2], v.pow_(2))[1])(x * 1),
}


@pytest.mark.parametrize("name", CASES)
def test_view_gradient_follows_later_writes(name):
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        w = CASES[name](lib, x)
        weights = lib.arange(1, w.numel() + 1, dtype=lib.float64).reshape(w.shape)
        (w * weights).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_conj_view_gradient_follows_writes_to_its_source():
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        t = x * 1
        c = t.conj()
        t.mul_(2j)
        (c * lib.tensor([1 - 1j, 2 + 0.5j])).real.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


@pytest.mark.parametrize("op", ["mul_(3)", "add_(1)", "abs_()", "exp_()", "relu_()", "clamp_(0, 1)",
                                "masked_fill_(lib.tensor([True, False]), 0.5)", "pow_(2)"])
def test_in_place_write_through_a_view_after_its_base_was_written(op):
    """The view's own in-place op starts from the base's later write (it read the view's old
    history: x.grad [[3, 3], [2, 2]] where torch gives [[6, 6], [2, 2]] for mul_(3))."""
    grads = []
    for lib in (ember, torch):
        x = lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64, requires_grad=True)
        y = x * 1
        v = y[0]
        y.mul_(2)
        eval("v." + op, {"v": v, "lib": lib})
        (y * lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
