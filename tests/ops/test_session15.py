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
               "x[:, 1:1].unbind(0)[2]", "x[2:2].view(6, 0)", "x.to(lib.bfloat16)[1, 3:3]"]


@pytest.mark.parametrize("view", EMPTY_VIEWS)
def test_storage_offset_of_an_empty_view_is_torchs(view):
    """torch moves an empty slice's start by the clamped start times the stride; NumPy left the
    data pointer at the first element (ember's storage_offset() was 0 for x[2:2])."""
    results = []
    for lib in (torch, ember):
        v = eval(view, {"x": lib.arange(24.).reshape(4, 6), "lib": lib})
        results.append((v.storage_offset(), tuple(v.stride()), tuple(v.shape)))
    assert results[0] == results[1]
