"""IEEE semantics of the generated C (docs/compile.md, "How close to eager"): -0.0, nan, +inf
and -inf go through every fused kernel family as eagerly, forward and gradient. Non-finite
values and the sign of every zero must be eager's exactly; finite values within float32's
reduction bound (the vectorised sums add in another order) or float64's scaled by 2**-29."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.compiler.backends import c as c_backend, toolchain
from ember.compiler.backends.plan import make_plan

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")
BOUND = {np.float32: (1e-5, 1e-6), np.float64: (1e-13, 1e-15)}  # rtol, atol (x largest magnitude)

# Each a kernel family of the C backend: elementwise loops, the sum kernel's reductions, the row
# kernels (softmax, layer norm). A row of 19 is two 8-lane vectors and a remainder.
FAMILIES = {
    "add": lambda x, y, w: x + y, "mul": lambda x, y, w: x * y,
    "where": lambda x, y, w: ember.where(x > y, x, y), "relu": lambda x, y, w: ember.relu(x),
    "gelu": lambda x, y, w: F.gelu(x), "gelu_tanh": lambda x, y, w: F.gelu(x, approximate="tanh"),
    "tanh": lambda x, y, w: ember.tanh(x), "exp": lambda x, y, w: ember.exp(x), "log": lambda x, y, w: ember.log(x),
    "softmax": lambda x, y, w: F.softmax(x, -1), "log_softmax": lambda x, y, w: F.log_softmax(x, -1),
    "layer_norm": lambda x, y, w: F.layer_norm(x, (19,), w, 0.5 * w),
    "sum": lambda x, y, w: x.sum(-1), "sum_cols": lambda x, y, w: (x * y).sum(0), "mean": lambda x, y, w: x.mean(-1),
    "amax": lambda x, y, w: x.amax(-1), "amin": lambda x, y, w: x.amin(-1),
    "max": lambda x, y, w: x[:3].max(), "min": lambda x, y, w: (x * y).min(),
    # once NumPy between the fused loops: ember_math.h's expm1/log1p/sinh/cosh/asinh/acosh/atanh
    "expm1": lambda x, y, w: ember.expm1(x), "log1p": lambda x, y, w: ember.log1p(x),
    "sinh": lambda x, y, w: ember.sinh(x), "cosh": lambda x, y, w: ember.cosh(x),
    "asinh": lambda x, y, w: ember.asinh(x), "acosh": lambda x, y, w: ember.acosh(y), "atanh": lambda x, y, w: ember.atanh(x),
    "softplus": lambda x, y, w: F.softplus(x), "softplus_beta": lambda x, y, w: F.softplus(y, beta=2.0, threshold=3.0),
    "logsigmoid": lambda x, y, w: F.logsigmoid(x), "elu": lambda x, y, w: F.elu(x), "selu": lambda x, y, w: F.selu(y),
    "celu": lambda x, y, w: F.celu(x, 0.5), "hardswish": lambda x, y, w: F.hardswish(x),
    "hardtanh": lambda x, y, w: F.hardtanh(x, -0.5, 0.25), "sign": lambda x, y, w: ember.sign(x),
    "clamp_tensor": lambda x, y, w: ember.clamp(x, y, y.abs() * 2), "clamp_max": lambda x, y, w: ember.clamp(x, max=w),
    # asin/acos/atan (NaN outside [-1, 1]), the pads, roll and indexing: NumPy calls before, C now
    "asin": lambda x, y, w: ember.asin(x), "acos": lambda x, y, w: ember.acos(y), "atan": lambda x, y, w: ember.atan(x),
    "roll": lambda x, y, w: x.roll(3, -1), "pad_reflect": lambda x, y, w: F.pad(y, (2, 3), mode="reflect"),
    "pad_replicate": lambda x, y, w: F.pad(x, (1, 2), mode="replicate"), "index": lambda x, y, w: x[:, [4, 0, 18, 4]],
}
# the C each of them becomes (float: the same names with an f)
NEW_KERNELS = ("em_expm1", "em_log1p", "em_sinh", "em_cosh", "em_asinh", "em_acosh", "em_atanh", "em_asin", "em_acos",
               "em_atan")


def _inputs(dtype):
    """x: rows of finite values with a -0.0, with a nan, with +inf, with -inf, with both
    infinities, of -0.0 only, of -inf only; y: finite but for a -0.0, an inf and a nan; w:
    layer norm's weight (half of it the bias) with a -0.0 and an inf."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 19)).astype(dtype)
    x[0, 3] = -0.0
    x[1, 17], x[2, 0], x[3, 9] = np.nan, np.inf, -np.inf
    x[4, 5], x[4, 18] = np.inf, -np.inf
    x[5], x[6] = -0.0, -np.inf
    y = rng.standard_normal((7, 19)).astype(dtype)
    y[0, 3], y[2, 2], y[6, 4] = -0.0, np.inf, np.nan
    w = rng.standard_normal(19).astype(dtype)
    w[4], w[11] = -0.0, np.inf
    return x, y, w




def _same(actual, expected, dtype, what):
    a, e = actual.detach().numpy(), expected.detach().numpy()
    assert a.shape == e.shape and a.dtype == e.dtype, what
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg=f"{what}: nan positions")
    inf = np.isinf(e)
    np.testing.assert_array_equal(a[inf], e[inf], err_msg=f"{what}: +-inf")
    np.testing.assert_array_equal(np.isinf(a), inf, err_msg=f"{what}: +-inf positions")
    zero = e == 0
    np.testing.assert_array_equal(a[zero], e[zero], err_msg=f"{what}: zeros")
    np.testing.assert_array_equal(np.signbit(a[zero]), np.signbit(e[zero]), err_msg=f"{what}: signs of zeros")
    finite = np.isfinite(e)
    rtol, atol = BOUND[dtype]
    scale = max(1.0, float(np.abs(e[finite]).max(initial=0.0)))
    np.testing.assert_allclose(a[finite], e[finite], rtol=rtol, atol=atol * scale, err_msg=what)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_specials_through_every_kernel_family(dtype, tmp_path, monkeypatch):
    """All families in one compiled program (one build), forward and the gradients of a
    weighted sum of the outputs (nan_to_num'd, so each family's gradient has its own masks)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ember.compiler.reset()
    names = list(FAMILIES)

    def program(x, y, w):
        return tuple(FAMILIES[name](x, y, w) for name in names)

    def run(fn):
        x, y, w = (ember.tensor(v, requires_grad=True) for v in _inputs(dtype))
        with np.errstate(all="ignore"):
            outs = fn(x, y, w)
            weights = np.random.default_rng(1)
            loss = sum((ember.nan_to_num(o, 0.0, 0.0, 0.0)
                        * ember.tensor(weights.standard_normal(o.shape).astype(dtype))).sum() for o in outs)
            loss.backward()
        return outs, x.grad, y.grad, w.grad

    expected = run(program)
    plans = []
    monkeypatch.setattr(c_backend, "make_plan", lambda *a, **k: plans.append(make_plan(*a, **k)) or plans[-1])
    compiled = ember.compile(program)
    try:
        for _ in range(2):  # the recording call, then the replay of the compiled graph
            actual = run(compiled)
        entry = compiled._entries[-1]  # one graph, forward and backward generated C
        source = entry.run_forward.c_source + entry.run_backward.c_source
        for kernel in ("softmax over the last dim", "mean and variance", "sum over dims", "amax over dims",
                       "amin over dims", "em_tanh", "em_exp", "em_log",
                       "em_normal_cdff" if dtype == np.float32 else "em_erf"):  # (GELU's)
            assert kernel in source, kernel
        for kernel in NEW_KERNELS:
            assert kernel + ("f(" if dtype == np.float32 else "(") in source, kernel
        assert not [k for plan in plans for k in plan.kernels if k.kind == "python"], "NumPy between the loops"
        for name, a, e in zip(names, actual[0], expected[0]):
            _same(a, e, dtype, name)
        _same(actual[1], expected[1], dtype, "grad of x")
        _same(actual[2], expected[2], dtype, "grad of y")
        _same(actual[3], expected[3], dtype, "grad of w")
    finally:
        ember.compiler.reset()
