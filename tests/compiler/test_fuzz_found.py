"""Regressions found by the differential fuzzer (test_fuzz.py): each a program whose compiled
run differed from eager, or ran eagerly where it could compile, reduced to a few lines."""
import numpy as np
import pytest

import ember
from test_fuzz import run_program


pytestmark = pytest.mark.usefixtures("fresh_cache")


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
    assert out.grad_fn.name() == "CompiledFunctionBackward"
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



# Programs that -ffast-math compiled wrongly (its algebra assumed no nan, inf or -0.0; the C is
# now built with IEEE flags, toolchain.FLAGS), reduced from the fuzzer's seeds in the comments.
# Seeds 128 172 202 363 377 388 484 485 2019 2142 2239 2297 2314 2422 all failed that way; the
# gradients of a variance over one element and of atan2(x, x) and a cube under minimum (they
# need the seeds' exact inputs) run as the seeds themselves, below.
IEEE_CASES = {
    "rsqrt_minus_its_abs": (lambda x, y: ember.rsqrt(x) - ember.rsqrt(x).abs(), [-0.0, 0.0, 4.0, -1.0, np.inf]),  # 128
    "sqrt_squared": (lambda x, y: ember.sqrt(x) ** 2, [-1.0, -np.inf, 4.0, np.nan, -0.0]),  # 484
    "cancelled_difference": (lambda x, y: ember.log1p(x) - (ember.log1p(x) - y),
                             [-1.0, -2.0, np.inf, 0.5, np.nan]),  # 2239
}


@pytest.mark.parametrize("case", sorted(IEEE_CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_inf_and_signed_zero_survive_compilation(case, dtype):
    """Forward and gradient (of a weighted sum, nan_to_num'd) as eager: nan, +-inf and the
    signs of zeros at the same places, finite values within a few ulp."""
    fn, values = IEEE_CASES[case]
    x_values = np.array(values, dtype=dtype)
    y_values = np.linspace(-1.5, 2.0, x_values.size, dtype=dtype).reshape(x_values.shape)

    def run(f):
        x, y = ember.tensor(x_values, requires_grad=True), ember.tensor(y_values, requires_grad=True)
        with np.errstate(all="ignore"):
            out = f(x, y)
            w = ember.tensor(np.linspace(0.5, 1.5, out.numel(), dtype=dtype).reshape(out.shape))
            (ember.nan_to_num(out, 0.0, 0.0, 0.0) * w).sum().backward()
        return [out.detach().numpy(), x.grad.numpy(), y.grad.numpy() if y.grad is not None else None]

    expected = run(fn)
    compiled = ember.compile(fn)
    for _ in range(2):
        actual = run(compiled)
    for what, a, e in zip(("result", "grad of x", "grad of y"), actual, expected):
        if e is None:
            assert a is None, what
            continue
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg=f"{case}: {what}: nan positions")
        np.testing.assert_array_equal(a[~np.isfinite(e)], e[~np.isfinite(e)], err_msg=f"{case}: {what}: +-inf")
        np.testing.assert_array_equal(np.signbit(a[e == 0]), np.signbit(e[e == 0]), err_msg=f"{case}: {what}: zeros")
        np.testing.assert_allclose(a, e, rtol=4 * np.finfo(dtype).eps, atol=0, equal_nan=True, err_msg=f"{case}: {what}")


@pytest.mark.parametrize("seed", [388, 2297, 2422])
def test_fast_math_seeds_of_the_fuzzer(seed):
    """The gradients of x.var(-1) over one element (nan), of atan2(x0, x0) under sqrt, and of
    minimum(x1 ** 3, hardtanh(x2)) at nan/inf: the fuzzer's programs with its inputs."""
    run_program(seed, length=8)


def test_cancelling_gradient_terms_are_not_contracted():
    """EMBER_FUZZ seed 2867: atan2(x, x)'s gradient is g x/r - g x/r, two terms of 1e29 at x =
    1e-30 that eager rounds each and subtracts to 0; GCC fused one product into the
    subtraction (one fma: 7e12). The fused loops round each op's result as eager does
    (EM_NO_CONTRACT in runtime/ember_graph.h), so the gradient is eager's exactly."""
    def fn(x):
        return ember.atan2(x, x) * 1.5 + x * x - x * 0.25

    values = np.array([1e-30, -1e-30, 3e-31, 1.5, -0.7, 1e-20, 7e-25, 2.0 ** -60, 0.1, 1 / 3])
    expected = _forward_backward(fn, values)
    compiled = ember.compile(fn)
    for _ in range(2):
        out, grad = _forward_backward(compiled, values)
    np.testing.assert_array_equal(out.detach().numpy(), expected[0].detach().numpy())
    np.testing.assert_array_equal(grad.numpy(), expected[1].numpy())
