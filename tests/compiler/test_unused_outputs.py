"""A compiled forward with several outputs, some of which the loss does not use: eager autograd
never runs their branch of the backward, so the compiled backward must not either (feeding zeros
would make 0 * inf = nan in a gradient the user does use). torch 2.13 (torch.compile and eager)
is the reference."""
import numpy as np
import pytest
import torch

import ember

BACKENDS = ["inductor", "aot_eager"]


pytestmark = pytest.mark.usefixtures("fresh_compiler")


def _grads(lib, fn, loss_of, *arrays, calls=3):
    for _ in range(calls):  # the first call records; the later ones replay the compiled graphs
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        loss_of(fn(*xs)).backward()
    return [None if x.grad is None else np.asarray(x.grad.detach().numpy()) for x in xs]


def _check(f, loss_of, *arrays, backend):
    compiled = ember.compile(f, backend=backend)
    got = _grads(ember, compiled, loss_of, *arrays)
    want = _grads(torch, f, loss_of, *arrays)
    assert [g is None for g in got] == [w is None for w in want]
    for g, w in zip(got, want):
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unused_output_with_a_non_finite_derivative_leaves_the_used_gradient_finite(backend):
    # x's gradient from the second output is 0 * (g / 0) = nan when g is zeros
    _check(lambda x: (x * 2, x * 0 / 0 * 3), lambda out: out[0].sum(), np.ones(3, np.float32), backend=backend)
    # both branches reach x: the addition keeps the used term alone
    _check(lambda x: (x.exp(), (x - 1).log() * 0), lambda out: out[0].sum(),
           np.array([0.5, 1.0, 2.0], np.float32), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_input_reached_only_through_an_unused_output_gets_no_gradient(backend):
    _check(lambda x, y: (x * 2, y * 3), lambda out: out[0].sum(), np.ones(3), np.ones(2), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unused_piece_of_a_split_is_fed_zeros_where_its_gradient_is_concatenated(backend):
    def f(x):
        a, b = (x * 3).split(2)
        return a, b.log()  # b's branch: g / b, nan at b = 0 when g were zeros
    _check(f, lambda out: (out[0] ** 2).sum(), np.array([1.0, 2.0, 0.0, 4.0]), backend=backend)


def test_every_output_used_still_runs_the_whole_compiled_backward():
    f = lambda x: (x * 2, x.sin())  # noqa: E731
    _check(f, lambda out: out[0].sum() + out[1].sum(), np.linspace(-1, 1, 5), backend="inductor")
