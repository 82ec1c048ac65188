"""Eager differences from torch 2.13 that the widened compile fuzzer
(tests/compiler/fuzz_wide_32.py, session 32) met, each reduced and compared with torch."""
import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_addcmul_of_zero_dim_tensors_is_zero_dim(dtype):
    """addcmul of 0-d tensors gave shape [1] (NumPy's ascontiguousarray makes a 0-d array 1-d),
    and ``addcmul_`` into a 0-d tensor raised "output with shape [] doesn't match the broadcast
    shape [1]" (wide seed 16)."""
    for lib in (torch, ember):
        a, b = lib.tensor(0.5).to(getattr(lib, dtype)), lib.tensor(-0.25).to(getattr(lib, dtype))
        out = lib.addcmul(a, b, b, value=0.5)
        a.addcmul_(b, b, value=0.5)
        if lib is torch:
            expected = (tuple(out.shape), out.double().item(), a.double().item())
    assert (tuple(out.shape), out.double().item(), a.double().item()) == expected == ((), 0.53125, 0.53125)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_mean_sums_in_float32(dtype):
    """torch's 16-bit mean sums and divides in float32 and rounds once: five -60000 float16
    values average -60000 (ember summed in float16: -inf, wide seed 52); bfloat16 means equal
    torch's bit for bit."""
    rng = np.random.default_rng(0)
    arrays = [np.full((5, 2), -6e4, np.float32), rng.standard_normal((300, 7)).astype(np.float32)]
    for array in arrays:
        for dim in (0, 1, None):
            results = []
            for lib in (torch, ember):
                x = lib.tensor(array).to(getattr(lib, dtype)).requires_grad_()
                m = x.mean() if dim is None else x.mean(dim)
                m.double().sum().backward()
                results.append((m.detach().double().numpy(), x.grad.double().numpy(), type(m.grad_fn).__name__))
            np.testing.assert_array_equal(results[1][0], results[0][0])
            np.testing.assert_array_equal(results[1][1], results[0][1])
            assert results[1][2] == results[0][2]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_silu_and_hardswish_compute_in_float32(dtype):
    """torch computes 16-bit silu (and its gradient) and hardswish in float32 and rounds once;
    ember rounded each step: silu's gradient at 6e4 was nan (g * x overflowed float16, wide seed
    269), at -20 zero (sigmoid underflowed), hardswish(6e4) inf. Now bit-equal to torch."""
    values = np.array([6e4, -6e4, 1e4, -20.0, -10.0, -5.0, -3.0, -0.1, 0.1, 2.99, 3.0, 15.0], np.float32)
    results = {}
    for lib in (torch, ember):
        x = lib.tensor(values).to(getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.silu(x)
        y.backward(lib.full_like(y, -1.25))
        results[lib] = [y.detach().double().numpy(), x.grad.double().numpy(),
                        lib.nn.functional.hardswish(x.detach()).double().numpy()]
    for a, e in zip(results[ember], results[torch]):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("src_shape", [(1,), (3,)])
def test_copy_of_a_value_requiring_grad_zeroes_the_old_value_gradient(src_shape):
    """``v = x.clone(); v.copy_(y)`` with x and y requiring grad: torch's CopyBackwards gives x a
    zero gradient (``x.grad`` 0, not None) and y its own (wide seed 341: ember's x.grad was None,
    the clone's history dropped)."""
    grads = {}
    for lib in (torch, ember):
        x = lib.tensor([1.5, 2.5, 3.5], requires_grad=True)
        y = lib.full(src_shape, 2.0, dtype=lib.float64, requires_grad=True)
        v = x.clone()
        v.copy_(y.to(x.dtype))
        (v * 2).sum().backward()
        grads[lib] = [x.grad.numpy(), y.grad.numpy()]
    for a, e in zip(grads[ember], grads[torch]):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_tanh_gelu_gradient_in_float32(dtype):
    """gelu(approximate='tanh')'s 16-bit gradient as torch's, in float32 rounded once: x * x
    overflowed float16 from 256 and the gradient was nan (wide seed 504); bit-equal now."""
    values = np.array([6e4, -6e4, 1e4, -1e4, 300.0, -300.0, 100.0, -20.0, 3.0, 0.1], np.float32)
    grads = {}
    for lib in (torch, ember):
        x = lib.tensor(values).to(getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.gelu(x, approximate="tanh")
        y.backward(lib.full_like(y, -1.25))
        grads[lib] = x.grad.double().numpy()
    np.testing.assert_array_equal(grads[ember], grads[torch])


@pytest.mark.parametrize("bounds", ["max", "min", "both"])
def test_in_place_clamp_by_keyword_tensor_bounds_requiring_grad(bounds):
    """``v.clamp_(max=w)`` with w requiring grad and v not: the in-place form kept no copy of v's
    old value for the backward (it looked for a tensor requiring grad among the positional
    arguments only), so backward raised "modified by an inplace operation" (wide seed 856);
    torch's gradients now."""
    grads = {}
    for lib in (torch, ember):
        w = lib.tensor([0.5, 0.5, 0.5], requires_grad=True)
        v = lib.tensor([1.0, 0.2, -3.0]).clone()
        kwargs = {"max": w * 1} if bounds == "max" else {"min": w * 1} if bounds == "min" else {"min": w - 1, "max": w * 1}
        v.clamp_(**kwargs)
        (v * 2).sum().backward()
        grads[lib] = (v.detach().numpy(), w.grad.numpy())
    for a, e in zip(grads[ember], grads[torch]):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("name", ["rsqrt", "reciprocal"])
def test_rsqrt_and_reciprocal_gradients_grouped_as_torch(name):
    """A zero gradient into rsqrt (reciprocal) of a subnormal input is nan, as torch's
    ``-0.5 * g * out.pow(3)`` (``-g * (out * out)``): the cube (square) overflows and 0 * inf is
    nan; ember multiplied the gradient in first, ((g * -0.5) * out) * out * out, and gave 0
    (wide seed 752: tanh(rsqrt(1.4e-40))'s zero gradient)."""
    values = np.array([1.44e-40, 1e-20, 3e-13, 2.0, 1e-39, 0.0, -0.0, np.inf], np.float32)
    grads = {}
    for lib in (torch, ember):
        grads[lib] = []
        for g in (0.0, 1.0, -2.5):
            x = lib.tensor(values, requires_grad=True)
            y = getattr(lib, name)(x)
            y.backward(lib.full_like(y, g))
            grads[lib].append(x.grad.numpy())
    np.testing.assert_array_equal(grads[ember], grads[torch])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_square_gradient_is_pow_two(dtype):
    """torch.square is pow(x, 2), its gradient g * (2 * x): nan where 2 * x overflows and g is 0
    (a nan_to_num'd infinite square, wide seeds 3 and 1086); ember's x * x gave g * x + g * x, 0."""
    values = np.array([3e38, -3e38, 2.0, -0.0, np.inf, np.nan, 1e-40], np.float32)
    results = {}
    for lib in (torch, ember):
        results[lib] = []
        for g in (0.0, 1.5):
            x = lib.tensor(values).to(getattr(lib, dtype)).requires_grad_()
            y = lib.square(x)
            y.backward(lib.full_like(y, g))
            results[lib] += [y.detach().double().numpy(), x.grad.double().numpy()]
    np.testing.assert_array_equal(results[ember], results[torch])
