"""Session 15 (PAR12), against torch 2.13: the wide scans' two arrangements (many scans side by
side; blocks of whole slices), bit-equal to torch's CPU scans."""
import numpy as np

import pytest
import torch

import ember


@pytest.mark.parametrize("shape", [(600, 3, 300), (2, 700, 1), (5, 0, 3), (0,), ()])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.complex64])
def test_wide_scans_equal_torch_bit_for_bit_along_every_dim(shape, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype is np.complex64 else 0)
    x = np.asarray(x).astype(dtype)
    for view in (x, x.T):  # a transposed (non-contiguous) input too
        for dim in range(max(1, view.ndim)):
            # (complex cumprod: NumPy's complex128 product rounds ac - bd otherwise than torch's:
            # 1 ulp apart after a cancellation, 1 element in 540,000 here; as before this change)
            for name in ("cumsum",) if dtype is np.complex64 else ("cumsum", "cumprod"):
                got = getattr(ember.tensor(view), name)(dim)
                want = getattr(torch.tensor(view), name)(dim)
                assert got.shape == want.shape and got.is_contiguous()
                assert np.array_equal(got.numpy(), want.numpy(), equal_nan=True), (view.shape, dim, name)


def test_float32_cumprod_through_an_overflow_side_by_side():
    # 600 columns scanned side by side: the running products stay double (inf, then 3.35e38)
    x = np.tile(np.float32([3.4e38, 1.125, 0.875, 1.5])[:, None], (1, 600))
    got, want = ember.tensor(x).cumprod(0), torch.tensor(x).cumprod(0)
    assert np.array_equal(got.numpy(), want.numpy()) and np.isinf(want.numpy()[1]).all()


def _rows_with_ties_and_nan(rng, count):
    for trial in range(count):
        n = int(rng.integers(17, 120))
        row = rng.integers(0, int(rng.integers(2, 20)), n).astype(np.float64)
        if trial % 3 == 0:
            row[rng.random(n) < 0.2] = np.nan
        yield row


@pytest.mark.parametrize("compiled", [True, False])
def test_mode_replays_std_sort_in_c_and_in_python_alike(compiled, monkeypatch):
    """mode's replay of libstdc++'s std::sort: the C one (built by the toolchain) and the Python
    one (where there is no C compiler) pick torch's index among ties and NaNs."""
    from ember._ops import stdsort
    if not compiled:
        monkeypatch.setattr(stdsort, "_c_kernel", lambda integer: None)
    rng = np.random.default_rng(2)
    rows = list(_rows_with_ties_and_nan(rng, 60))
    for row in rows:
        assert stdsort.mode_rows(row[None])[0] == stdsort.mode_of(row.tolist())[1] == torch.tensor(row).mode(0).indices
    for dtype in ("int64", "int16", "uint8", "bool", "float16", "bfloat16", "float32"):
        x = rng.integers(0, 2 if dtype == "bool" else 9, (40, 70))
        got = ember.tensor(x).to(getattr(ember, dtype)).mode(1)
        want = torch.tensor(x).to(getattr(torch, dtype)).mode(1)
        assert got.indices.tolist() == want.indices.tolist() and got.values.tolist() == want.values.tolist(), dtype


def _outcome(call):
    try:
        return str(call().tolist())
    except RuntimeError as e:
        return f"RuntimeError: {e}"


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("dtype, value", [("float16", 70000.0), ("float16", 65504.5), ("float16", -1e6),
                                          ("float16", 1e39 + 0j), ("float16", float("inf")), ("float16", 65504.0),
                                          ("bfloat16", 3.4e39), ("bfloat16", -1e300)])
def test_full_of_a_value_beyond_float16_or_bfloat16(n, dtype, value):
    """torch's fill_ converts the value checked (RuntimeError naming c10::Half) unless there is
    exactly one element, which it sets unchecked (inf); ember stored inf everywhere."""
    for name in ("full", "full_like", "new_full", "fill_"):
        results = []
        for lib in (torch, ember):
            dt, z = getattr(lib, dtype), lib.zeros(n, dtype=getattr(lib, dtype))
            call = {"full": lambda: lib.full((n,), value, dtype=dt), "full_like": lambda: lib.full_like(z, value),
                    "new_full": lambda: z.new_full((n,), value), "fill_": lambda: z.fill_(value)}[name]
            results.append(_outcome(call))
        assert results[0] == results[1], (name, results)


EMPTY_VIEWS = ["x[2:2]", "x[5:]", "x[10:20]", "x[3:1]", "x[-1:-1]", "x[:, 3:3]", "x[:, -1:0]", "x[1:, 7:]",
               "x[1][6:]", "x[:, 2:2][1:]", "x[:, 2:2][3]", "x[1:1, 2]", "x[..., 2:2]", "x[2:2, ::2]",
               "x.t()[3:3]", "x.narrow(1, 6, 0)", "x.split(4, 1)[1][:, 2:]", "x[1:1].chunk(2, 1)[1]",
               "x[:, 1:1].unbind(0)[2]", "x[2:2].view(6, 0)", "x.to(lib.bfloat16)[1, 3:3]",
               # as_strided from such a view (seed 623236: ember's NumPy buffer refused the offset)
               "x[:, 6:].as_strided((0, 3), (1, 1))", "x[4:].as_strided((0,), (1,), 30)",
               "lib.empty(0, 4, 3, 4)[..., 1:].as_strided((0,), (1,))"]


@pytest.mark.parametrize("view", EMPTY_VIEWS)
def test_storage_offset_of_an_empty_view_is_torchs(view):
    """torch moves an empty slice's start by the clamped start times the stride; NumPy left the
    data pointer at the first element (ember's storage_offset() was 0 for x[2:2])."""
    results = []
    for lib in (torch, ember):
        v = eval(view, {"x": lib.arange(24.).reshape(4, 6), "lib": lib})
        results.append((v.storage_offset(), tuple(v.stride()), tuple(v.shape)))
    assert results[0] == results[1]


def _second_derivatives(lib, f, values, shape=None, dtype="float64"):
    x = lib.tensor(values, dtype=getattr(lib, dtype))
    x = (x.reshape(shape) if shape else x).requires_grad_()
    y = f(lib, x)
    w = lib.arange(y.numel()).to(y.dtype).reshape(y.shape).sin() + 0.5
    g, = lib.autograd.grad(y, x, w, create_graph=True)
    v = lib.arange(y.numel()).to(y.dtype).reshape(y.shape).cos() - 0.3
    gg, = lib.autograd.grad(g, x, v)
    return g.detach().numpy(), gg.numpy()


def _same(a, b):
    # (the last ulp: torch's double-backward formulas group their products in their own order)
    return np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True) and (np.isnan(a) == np.isnan(b)).all()


@pytest.mark.parametrize("values, shape, dim", [
    ([-float("inf"), 5e-324, -0.0, 2.5], None, 0),  # seed 615462: -inf where torch's is nan
    ([-float("inf"), 0.0, 2.0], None, 0), ([2.0, 0.0, -float("inf"), 3.0], None, 0),
    ([0.0, -float("inf")], None, 0), ([0.5, float("inf"), 0.0, -2.0, 1e300, 0.0], (2, 3), 1),
    ([0.0, 3.0, float("nan"), 2.0, -1.0, 0.0, 4.0, 0.5], (2, 4), 0)])
def test_cumprod_second_derivative_beside_a_zero_is_torchs(values, shape, dim):
    """Under create_graph torch sums, for each k, the products before k times the cumulative
    products after it; its derivative (inf, nan) is that algebra's."""
    results = [_second_derivatives(lib, lambda lib, x: x.cumprod(dim), values, shape) for lib in (torch, ember)]
    assert _same(results[0][0], results[1][0]) and _same(results[0][1], results[1][1]), results


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("eps", [0.1, 1e-6])
def test_logit_second_derivative_outside_eps_is_torchs(dtype, eps):
    """torch's derivative of logit's gradient multiplies by the in-range mask: nan outside it
    where (x (1 - x))^2 under- or overflows (seeds 102496, 619931, 620128: ember gave 0)."""
    values = [0.75, 0.25, 1.125, -0.125, 5e-324, 2.2250738585072014e-308, 1e-160, 1e-30, float("inf"), 1.0, 0.0,
              -0.0, 0.1, 0.9, 1e-7, 0.5, float("nan"), 1 - 1e-16, 0.3]
    results = [_second_derivatives(lib, lambda lib, x: lib.logit(x, eps=eps), values, dtype=dtype) for lib in (torch, ember)]
    rtol = 1e-12 if dtype == "float64" else 1e-5
    for a, b in zip(*results):
        assert np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True) and (np.isnan(a) == np.isnan(b)).all(), results
