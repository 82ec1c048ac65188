"""Session 17's fuzzer leftovers (issue 8), each compared with torch 2.13 as the fuzzer compares
(test_fuzz_eager.check) or with a float64 reference and a stated bound."""
import warnings

import numpy as np
import pytest
import torch

import ember
from test_fuzz_eager import Case, check


@pytest.mark.parametrize("seed", [117972])
def test_fuzzer_seed_matches_torch(seed):
    """117972: the second derivative of cumprod through a 2e-308 element: torch's divide
    gradient -g * ((a / b) / b) overflows to -inf there, where (-g * (a / b)) / b did not."""
    check(Case(seed))


def test_divide_gradient_of_the_denominator_groups_as_torch():
    grads = []
    for lib in (torch, ember):
        b = lib.tensor([2.2250738585072014e-308, 3.0, -1e-300], dtype=lib.float64, requires_grad=True)
        a = lib.tensor([-1.2272e-307, 2.0, 1e10], dtype=lib.float64)
        (g,) = lib.autograd.grad(a / b, b, lib.tensor([0.25, -1.5, 1e-20], dtype=lib.float64))
        grads.append(g.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    assert np.isinf(grads[0][0])


def test_no_numpy_warning_escapes_an_op_whatever_the_filters():
    """inf and nan are values in torch: no RuntimeWarning even with warnings as errors (a
    filter set after ``import ember`` comes before ember's own), and NumPy outside ember's ops
    keeps warning as its settings say."""
    x = ember.tensor([0.0, -1.0, 1e30])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = [x.log(), x / 0, (x * 1e30).exp(), ember.tensor([1e300], dtype=ember.float64).float(),
                   x.log1p(), x.sqrt(), ember.tensor([0.0]).pow(-1.0)]
        with pytest.raises(RuntimeWarning, match="divide by zero"):
            np.log(np.zeros(1))
    assert np.isinf(results[0].numpy()[0]) and np.isnan(results[0].numpy()[1])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("how", ["rsqrt", "pow"])
def test_16_bit_rsqrt_is_the_float32_result_rounded_once(dtype, how):
    """torch computes a 16-bit rsqrt (and ``x ** -0.5``) in float32 and rounds once; rounding
    the sqrt and then the division to 16 bits put 30% of the results one ulp off. Every finite
    positive 16-bit value is checked, exactly; signed zeros, infinities, nan and negatives as
    torch's."""
    bits = np.arange(1, 0x7C00 if dtype == "float16" else 0x7F80, dtype=np.uint16)
    x = ember.tensor(bits.view(np.int16)).view(getattr(ember, dtype))
    got = x.rsqrt() if how == "rsqrt" else x ** -0.5
    x32 = x.float().numpy()
    want = ember.tensor(np.float32(1) / np.sqrt(x32)).to(getattr(ember, dtype))
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    edges = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), -1.0, 1.0, 4.0]
    results = [(t.tensor(edges, dtype=getattr(t, dtype)).rsqrt() if how == "rsqrt"
                else t.tensor(edges, dtype=getattr(t, dtype)) ** -0.5).float().numpy() for t in (torch, ember)]
    np.testing.assert_array_equal(results[1], results[0])


@pytest.mark.parametrize("expr", ["x[:, 2]", "x[None, [0, 1]]", "x[:, [2, 0]]", "x[[0, 1]]", "x.t()[[0, 1], None]",
                                  "x[None, :, [1]]", "x[..., [0, 1]]", "x[[[0], [1]], None]"])
def test_index_fast_paths_keep_torchs_strides(expr):
    """The eager indexing paths (a list index checked, not wrapped in a tensor; ``take`` for one
    array among whole slices) give torch's values, strides and storage offset."""
    results = []
    for lib in (torch, ember):
        x = lib.arange(12.0).reshape(4, 3)
        y = eval(expr, {"x": x})
        results.append((y.numpy().tolist(), y.stride(), y.storage_offset()))
    assert results[1] == results[0]
