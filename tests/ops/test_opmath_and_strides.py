"""Session 15 (PAR13), against torch 2.13: float16/bfloat16 with a Python number computed in
float32 with the number unrounded (torch's opmath), ``number / t``, the strides of size-1
dims that indexing inserts, and second derivatives at extreme values (mish, cumprod)."""
import numpy as np

import pytest
import torch

import ember

NUMBERS = [2 ** 20, 0.1, 1 / 3, 1e-8, 70000.0, 1e39, 3, -7, 2 ** -25, 1e-30, 0.5, 1e5]
VALUES = [0.0, 0.1, 1 / 3, 65504.0, 3.0, -2.5, 1e-5, 0.7, -0.0, 6e-8]

# the op, and how torch treats the number: cast to the tensor's dtype (+ -, comparisons) or
# kept in float32 (* /, rounded division, lerp's weight, number / t as reciprocal times it)
FORMS = {
    "mul": lambda L, x, s: x * s, "rmul": lambda L, x, s: s * x, "mul_": lambda L, x, s: x.clone().mul_(s),
    "div": lambda L, x, s: x / s, "rdiv": lambda L, x, s: s / x, "div_": lambda L, x, s: x.clone().div_(s),
    "floordiv": lambda L, x, s: x // s, "trunc": lambda L, x, s: L.div(x, s, rounding_mode="trunc"),
    "add": lambda L, x, s: x + s, "sub": lambda L, x, s: x - s, "rsub": lambda L, x, s: s - x,
    "lt": lambda L, x, s: x < s, "eq": lambda L, x, s: x == s, "ge": lambda L, x, s: x >= s,
    "where": lambda L, x, s: L.where(x > 0.2, x, s), "masked_fill": lambda L, x, s: x.masked_fill(x > 0.2, s),
    "lerp": lambda L, x, s: L.lerp(x, x * 0 + 1, s) if abs(s) < 1e38 else x,
    "0-d": lambda L, x, s: x * L.tensor(s) if abs(s) < 1e38 else x,
}


def _outcome(f, lib, dtype, s):
    try:
        r = f(lib, lib.tensor(VALUES, dtype=getattr(lib, dtype)), s)
    except RuntimeError as e:
        return f"RuntimeError: {e}"
    # (float64 holds every float16 and bfloat16 exactly; the sign of a zero counts)
    return str(r.dtype).split(".")[1], [repr(v) for v in r.double().tolist()]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("form", FORMS)
def test_a_16_bit_tensor_with_a_python_number_is_torchs(dtype, form):
    """ember cast the number to float16 first: ``half(0) * 2**20`` was nan (0 * inf), torch 0;
    ``half(0.1) * 0.1`` and ``0.1 / half(0.7)`` were an ulp off."""
    for s in NUMBERS:
        assert _outcome(FORMS[form], torch, dtype, s) == _outcome(FORMS[form], ember, dtype, s), (form, s)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64"])
def test_a_number_over_a_tensor_is_its_reciprocal_times_the_number(dtype):
    """torch's ``number / t`` is ``t.reciprocal() * number`` (rounded twice; a MulBackward0
    node): ember divided once, an ulp apart in a quarter of random float32 elements. (Not
    float16: torch's AVX-512 float16 reciprocal is up to 2 ulps off, 9.914 -> 0.10077.)"""
    x = np.random.default_rng(3).standard_normal(4000) * 10
    for s in (0.1, 3, 1 / 3, 7.3, 2 + 1j):
        want, got = s / torch.tensor(x).to(getattr(torch, dtype)), s / ember.tensor(x).to(getattr(ember, dtype))
        assert got.dtype.__repr__().split(".")[1] == str(want.dtype).split(".")[1]
        assert np.array_equal(got.numpy(), want.numpy(), equal_nan=True), (dtype, s)
    t = ember.tensor([2.0], requires_grad=True)
    assert type((1 / t).grad_fn).__name__ == "MulBackward0"


def test_float32_with_a_number_stays_on_its_own_path():
    """The opmath path is for 16-bit floats only: float32 and float64 compute with the number as
    they did (NumPy's weak scalar, the tensor's dtype), bit-equal to torch."""
    x = np.random.default_rng(4).standard_normal(1000)
    for dtype in ("float32", "float64"):
        for s in (0.1, 1 / 3, 1e39, 2.0 ** 200, 2 ** 40):
            for f in (lambda t: t * s, lambda t: t / s, lambda t: t // s):
                want, got = f(torch.tensor(x).to(getattr(torch, dtype))), f(ember.tensor(x).to(getattr(ember, dtype)))
                assert got.dtype is getattr(ember, dtype)
                assert np.array_equal(got.numpy(), want.numpy(), equal_nan=True), (dtype, s)


UNSQUEEZING = ["x[None]", "x[:, None]", "x[..., None]", "x[None, ::2]", "x[None, None]", "x[:, None, 1]",
               "x[1][None]", "x[None, :, ::2, None]", "x.t()[None]", "x[::2, None, ::3]", "x[None, 1:1]",
               "x[..., 0][..., None]", "x[0, 0][None, None]", "x[None, ..., None]", "x[:, None, 1:3]",
               "x.to(lib.bfloat16)[None]", "x[None][0]", "lib.zeros(0, 3)[None]", "lib.zeros(3, 0)[:, None]",
               "x.t()[..., None]", "x.t()[:, ::2, None]", "x.t()[None, 1:1, None]", "x[2:2, None]"]


@pytest.mark.parametrize("view", UNSQUEEZING)
def test_a_dim_that_none_inserts_has_unsqueezes_stride(view):
    """torch unsqueezes where None stands in the index: the stride is the size times the stride
    of the dim it lands before (1 at the end); NumPy gave 0 (``x[None]`` (0, 6, 1), torch's
    (24, 6, 1))."""
    results = []
    for lib in (torch, ember):
        v = eval(view, {"x": lib.arange(24.).reshape(4, 6), "lib": lib})
        results.append((tuple(v.stride()), tuple(v.shape), v.storage_offset(), v.is_contiguous(), v.tolist()))
    assert results[0] == results[1]


def test_a_view_with_an_inserted_dim_writes_through_and_differentiates():
    x = ember.arange(24.).reshape(4, 6)
    x.t()[None, :, None][0, 2, 0, 1] = 100.0
    assert x[1, 2].item() == 100.0
    a = ember.arange(6., requires_grad=True)
    (a[None, ::2, None] * ember.tensor([[[1.0]], [[2.0]], [[3.0]]]).reshape(1, 3, 1)).sum().backward()
    assert a.grad.tolist() == [1.0, 0.0, 2.0, 0.0, 3.0, 0.0]


def _first_and_second_derivatives(lib, f, values, dtype):
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    y = f(lib, x)
    g, = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
    gg, = lib.autograd.grad(g, x, lib.ones_like(g))
    return y.detach().numpy(), g.detach().numpy(), gg.numpy()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("inplace", [False, True])
def test_mish_second_derivative_at_large_x_is_torchs(dtype, inplace):
    """torch differentiates its gradient's exp(x).log1p().tanh(): nan where exp overflows
    (x of 1e300 or 800; 100 in float32); ember's composite through softplus's linear branch
    gave 0. Elsewhere equal up to the libm's last ulps (float32, against float64: ember's exp
    is an ulp off at -1, which the gradient's cancellations grow to ~1e-7)."""
    values = [1e300, 800.0, 710.0, 100.0, 30.0, 20.5, 5.0, 1.0, 0.5, 0.0, -0.0, -1.0, -5.0, -30.0, -100.0,
              -800.0, -1e300, float("inf"), -float("inf"), float("nan")]
    def f(lib, x):
        return lib.nn.functional.mish(x.clone() if inplace else x, inplace=inplace)
    results = [_first_and_second_derivatives(lib, f, values, dtype) for lib in (torch, ember)]
    # float32: torch's nans, and torch's float64 answer at the float32 inputs within 1e-6
    reference = _first_and_second_derivatives(torch, f, np.float32(values).tolist(), "float64")
    for a, b, r in zip(*results, reference):
        assert (np.isnan(a) == np.isnan(b)).all(), (a, b)
        if dtype == "float64":
            assert np.allclose(a, b, rtol=1e-12, atol=1e-13, equal_nan=True), (a, b)
        else:
            finite = np.isfinite(a)
            assert np.allclose(b[finite], r[finite], rtol=1e-5, atol=1e-6), (b, r)
    x = ember.tensor([3.0], requires_grad=True)
    assert type(ember.nn.functional.mish(x).grad_fn).__name__ == "MishBackward0"


def _cumprod_derivatives(lib, values, create_graph):
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    y = x.cumprod(0)
    w = lib.arange(y.numel()).to(y.dtype).sin() + 0.5
    g, = lib.autograd.grad(y, x, w, create_graph=create_graph)
    if not create_graph:
        return (g.numpy(),)
    gg, = lib.autograd.grad(g, x, lib.arange(y.numel()).to(y.dtype).cos() - 0.3)
    return g.detach().numpy(), gg.numpy()


INF = float("inf")


@pytest.mark.parametrize("values", [
    [1e300, 5e-324, -0.0, -INF], [5e-324, -0.0, -INF], [0.0, 0.0, INF, 1e300], [0.0, -INF, 1e300, 2.5, 0.0, -0.0],
    [0.0, 5.0, 0.0, INF], [3.0, 0.0, INF, 0.0], [1e300, 1e300, 0.0, 5.0], [5e-324, 0.0, -1e300, 1e300],
    [-INF, 1e300, -1e300, 0.0, 0.0], [2.0, 3.0, 0.0, 5.0, 0.0, 7.0]])
def test_cumprod_gradient_at_a_zero_leaves_out_the_terms_torch_leaves_out(values):
    """torch's cumprod gradient with a zero: before the first zero the sums stop before it; at
    it, the product before it times the sum up to the second zero (included) of g times the
    products after it. ember summed every term, so an inf past a zero (times the zero: nan)
    made the gradient nan where torch's is finite or inf (e.g. [5e-324, -0.0, -inf]: torch
    [1, -inf, 0] for g = 0.7), and through it the second derivative of
    [1e300, 5e-324, -0.0, -inf] (torch inf, ember nan)."""
    for create_graph in (False, True):
        want, got = (_cumprod_derivatives(lib, values, create_graph) for lib in (torch, ember))
        for a, b in zip(want, got):
            assert (np.isnan(a) == np.isnan(b)).all() and np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True), \
                (create_graph, a, b)


def test_cumprod_gradient_of_random_extreme_values_is_torchs():
    """300 random slices of 0, +-inf, nan, +-1e300, 5e-324 and plain numbers: the first-order
    gradient equal to torch's (72 of 400 differed before)."""
    pool = [0.0, -0.0, INF, -INF, float("nan"), 1e300, -1e300, 5e-324, 2.5, -0.5, 1.0]
    rng = np.random.default_rng(1)
    for _ in range(300):
        values = rng.choice(pool, int(rng.integers(2, 7))).tolist()
        (a,), (b,) = (_cumprod_derivatives(lib, values, False) for lib in (torch, ember))
        assert (np.isnan(a) == np.isnan(b)).all() and np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True), values


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_a_zero_remainder_has_the_sign_of_the_dividend(dtype):
    """torch's remainder is fmod's, moved by the divisor when the signs differ: a zero keeps
    the dividend's sign (``0 % -7`` is 0.0, ``-2.5 % 0.5`` -0.0); NumPy's took the divisor's."""
    a = [0.0, -0.0, 2.0, -2.0, 7.0, -7.0, INF, 5e-324, -5e-324, float("nan"), 3.5, -3.5]
    b = [7.0, -7.0, 0.5, -0.5, INF, -INF, 1e-300]
    for other in (None, -7, 0.5, -0.5):
        results = []
        for lib in (torch, ember):
            x, y = lib.tensor(a, dtype=getattr(lib, dtype))[:, None], lib.tensor(b, dtype=getattr(lib, dtype))
            results.append([repr(v) for v in (x % (y if other is None else other)).double().flatten().tolist()])
        assert results[0] == results[1], other


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_addcdiv_groups_and_rounds_as_torchs(dtype):
    """torch's addcdiv is ``input + (value * tensor1) / tensor2``, for 16-bit floats in float32
    rounded once; ember's ``input + (tensor1 / tensor2) * value``, rounded at every step, was an
    ulp off in 1 of 10 (float32) to 1 of 3 (float16) random elements."""
    rng = np.random.default_rng(5)
    values = [rng.standard_normal(4000).astype(np.float16).astype(np.float64) for _ in range(3)]  # exact in all four
    for value in (1, 0.1, 3, 1 / 3, -2):
        want, got = (lib.addcdiv(*(lib.tensor(v, dtype=getattr(lib, dtype)) for v in values), value=value)
                     for lib in (torch, ember))
        assert str(got.dtype) == str(want.dtype)
        assert np.array_equal(got.double().numpy(), want.double().numpy()), value
    x = ember.tensor([1.0, 2.0], dtype=getattr(ember, dtype), requires_grad=True)
    assert ember.addcdiv(x, x, x + 1, value=0.5).grad_fn.name() == "AddcdivBackward0"


NARROW_NUMBERS = {
    "clamp_min": lambda L, x, s: x.clamp(min=-s), "clamp_max": lambda L, x, s: x.clamp(max=s),
    "clamp_": lambda L, x, s: x.clone().clamp_(-s, s), "clamp_min_fn": lambda L, x, s: L.clamp_min(x, s),
    "pow": lambda L, x, s: x ** s, "pow_": lambda L, x, s: x.clone().pow_(s),
    "add_alpha": lambda L, x, s: L.add(x, x, alpha=s), "sub_alpha": lambda L, x, s: L.sub(x, 1, alpha=-s),
    "threshold": lambda L, x, s: L.nn.functional.threshold(x, 1.5, s),
    "threshold_at": lambda L, x, s: L.nn.functional.threshold(x, s, 1.0),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("form", NARROW_NUMBERS)
def test_a_number_beyond_a_16_bit_result_is_refused_where_torch_checks_it(dtype, form):
    """torch converts clamp's bounds, pow's exponent, alpha and threshold's value checked:
    RuntimeError "value cannot be converted to type c10::Half without overflow" past the
    largest finite (inf passes); ember computed with inf."""
    for s in (70000.0, 65504.0, 65504.5, 1e5, 3.4e38, 3.39e38, 1e39, INF, 2 ** 20, 0.5):
        results = []
        for lib in (torch, ember):
            x = lib.tensor([1.0, 2.0, -3.0], dtype=getattr(lib, dtype))
            try:
                results.append([repr(v) for v in NARROW_NUMBERS[form](lib, x, s).double().tolist()])
            except RuntimeError as e:
                results.append(f"RuntimeError: {e}")
        assert results[0] == results[1], (form, s)


@pytest.mark.parametrize("call", [
    "lib.add(u8, 1, alpha=-1)", "lib.add(u8, 1, alpha=300)", "lib.add(u8, 1, alpha=-300)",
    "lib.add(u8.long(), 1, alpha=2 ** 63)", "lib.add(u8.to(lib.int8), 1, alpha=200)",
    "lib.add(u8.to(lib.int8), 1, alpha=-129)", "lib.add(u8.float(), u8.float(), alpha=1e39)",
    "lib.add(u8.double(), 1, alpha=1e300)", "u8.float().clamp(1e39)", "u8.float().clamp(max=-1e39)",
    "u8.float().clamp(1e38)", "u8.float() ** 1e39", "u8.double().clamp(1e39)",
    "lib.nn.functional.threshold(u8.float(), 1e39, 1.0)", "lib.nn.functional.threshold(u8.double(), 1e39, 1.0)"])
def test_alpha_and_bounds_beyond_the_result_dtype_are_refused_as_torchs(call):
    """alpha is converted checked to the result's dtype (int8 and 200 raised nothing: ember
    added 1 + 200 wrapped); clamp's bounds and threshold's threshold to float32's range."""
    results = []
    for lib in (torch, ember):
        try:
            results.append(eval(call, {"lib": lib, "u8": lib.tensor([1, 2], dtype=lib.uint8)}).tolist())
        except RuntimeError as e:
            results.append(f"RuntimeError: {e}")
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_lerp_and_addc_numbers_beyond_float32_are_refused_as_torchs(dtype):
    """torch's float32 and 16-bit kernels take lerp's weight and addcmul's/addcdiv's value as a
    float, converted checked ("value cannot be converted to type float without overflow");
    float64 computes with it. ember computed with inf."""
    calls = ["lib.lerp(y, y * 0 + 1, s)", "lib.addcmul(y, y, y, value=s)", "lib.addcdiv(y, y, y, value=s)",
             "y.clone().lerp_(y * 0 + 1, s)"]
    for call in calls:
        for s in (1e39, -1e39, 1e5, 3.4e38, float("inf")):
            results = []
            for lib in (torch, ember):
                y = lib.tensor([1.0, 2.0], dtype=getattr(lib, dtype))
                try:
                    results.append([repr(v) for v in eval(call, {"lib": lib, "y": y, "s": s}).double().tolist()])
                except RuntimeError as e:
                    results.append(f"RuntimeError: {e}")
            assert results[0] == results[1], (call, s)
