"""Regressions found by the differential fuzzer (test_fuzz.py): each a program whose compiled
run differed from eager, or ran eagerly where it could compile, reduced to a few lines."""
import numpy as np
import pytest

import ember


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
    ember.compiler.reset()
    yield
    ember.compiler.reset()


def _forward_backward(fn, values):
    x = ember.tensor(values, requires_grad=True)
    out = fn(x)
    out.sum().backward()
    return out, x.grad


def test_constant_gradient_keeps_the_backward_compiled():
    """x.sign()'s gradient is zeros, a constant the backward graph does not compute: it is a
    saved value of the forward, and the compiled forward and backward run (the joint graph was
    not cut, so every call ran eagerly)."""
    def fn(x):
        return ember.log1p(ember.sign(x))

    values = np.array([np.nan, -1.0, 0.5, np.inf, -np.inf, 2.5])
    expected = _forward_backward(fn, values)
    compiled = ember.compile(fn)
    for _ in range(2):
        out, grad = _forward_backward(compiled, values)
    assert out.grad_fn.name() == "CompiledGraphBackward"
    np.testing.assert_array_equal(out.detach().numpy(), expected[0].detach().numpy())
    np.testing.assert_array_equal(grad.numpy(), expected[1].numpy())


def test_square_root_by_pow_at_minus_inf():
    """``x ** 0.5``'s gradient reads ``x ** -0.5``: rsqrt's nan at -inf in eager and in the C
    (which wrote pow(x, -0.5), 0 at -inf unless the compiler rewrote it), and -inf at -0.0."""
    def fn(x):
        return x ** 0.5 + x ** -0.5

    values = np.array([-np.inf, -0.0, 0.0, 4.0, np.inf, 2.5], dtype=np.float32)
    expected = _forward_backward(fn, values)
    compiled = ember.compile(fn)
    for _ in range(2):
        out, grad = _forward_backward(compiled, values)
    np.testing.assert_array_equal(out.detach().numpy(), expected[0].detach().numpy())
    np.testing.assert_allclose(grad.numpy(), expected[1].numpy(), rtol=1e-6)
