"""Session 16 (PAR14), against torch 2.13: the numerics rows left open in session 15 (16-bit
conversions through float32, bfloat16's integer powers, the layout of advanced indexing with
None and bools, addcmul as one fused multiply-add)."""
import numpy as np

import pytest
import torch

import ember


def _same(got, want):
    got, want = got.float().numpy() if got.dtype.is_floating_point else got.numpy(), \
        want.float().numpy() if want.dtype.is_floating_point else want.numpy()
    return got.shape == want.shape and np.array_equal(got, want, equal_nan=True)


# ---- conversions into float16 / bfloat16 go through float32, as c10's Half and BFloat16 ----
_VALUES = {"float64": [1.19677734375 - 2 ** -40, 1 + 2 ** -8 + 2 ** -40, -3.0000000001, 65519.99999, 1e-300],
           "int64": [2 ** 24 + 2 ** 16 + 1, 2049 + 2 ** 13, -(2 ** 24 + 2 ** 16 + 1), 7],
           "int32": [2 ** 24 + 2 ** 16 + 1, -5]}


@pytest.mark.parametrize("source", sorted(_VALUES))
@pytest.mark.parametrize("target", ["float16", "bfloat16"])
def test_conversions_into_16_bit_floats_round_through_float32(source, target):
    rng = np.random.default_rng(3)
    values = np.array(_VALUES[source], dtype=source)
    if source == "float64":
        values = np.concatenate([values, rng.standard_normal(4000) * np.exp(rng.uniform(-12, 12, 4000))])
    t, e = torch.tensor(values), ember.tensor(values)
    tdt, edt = getattr(torch, target), getattr(ember, target)
    assert _same(e.to(edt), t.to(tdt))
    assert _same(ember.tensor(values, dtype=edt), torch.tensor(values, dtype=tdt))
    assert _same(getattr(e, "half" if target == "float16" else "bfloat16")(), t.to(tdt))
    out = ember.zeros(values.shape, dtype=edt)
    out.copy_(e)
    assert _same(out, t.to(tdt))


def test_the_documented_float16_value():
    x = 1.19677734375 - 2 ** -40  # correctly rounded: 1.19629; torch: 1.19727
    assert ember.tensor(x, dtype=ember.float64).half().item() == torch.tensor(x, dtype=torch.float64).half().item() \
        == 1.197265625
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert ember.tensor([x], dtype=ember.float64).to(ember.complex128).to(ember.float16).item() == 1.197265625


# ---- bfloat16 powers: torch's CPU kernel multiplies for 3 and -2 -------------------------
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("exponent", [2, 3, -1, -2, 0.5, 4, -3, 2.0, 3.0, -2.0, 1.5, 1, 0, 1.1, -2.7])
def test_16_bit_powers_by_a_number_equal_torch(dtype, exponent):
    rng = np.random.default_rng(4)
    v = (rng.standard_normal(3000) * np.exp(rng.uniform(-30, 30, 3000))).astype(np.float32)
    v[:8] = [0., -0., np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38]
    got = ember.tensor(v).to(getattr(ember, dtype)) ** exponent
    want = torch.tensor(v).to(getattr(torch, dtype)) ** exponent
    assert got.dtype.name == dtype and _same(got, want)


def test_bfloat16_rsqrt_power_is_float32s_one_over_sqrt_rounded_once():
    """``x ** -0.5`` in bfloat16: torch's vector path rounds float32's ``1 / sqrt(x)`` once
    (its scalar tail, the last elements short of a vector, rounds sqrt to bfloat16 first, so its
    answer depends on the element's position and the CPU's vector width); ember rounds once
    everywhere: the float64 reference correctly rounded, but for float32's own rounding."""
    rng = np.random.default_rng(5)
    v = np.abs(rng.standard_normal(4096) * np.exp(rng.uniform(-30, 30, 4096))).astype(np.float32)
    x = ember.tensor(v).bfloat16()
    reference = 1 / np.sqrt(x.float().numpy().astype(np.float64))
    got = (x ** -0.5).float().numpy()
    want = torch.tensor(reference.astype(np.float32)).bfloat16().float().numpy()
    assert np.array_equal(got, want)
    assert (got != x.float().sqrt().bfloat16().reciprocal().float().numpy()).sum() > 100  # not rounded twice


# ---- advanced indexing with None and bools: torch's shapes and strides ---------------------
_INDEXES = [(None, [0, 1]), (None, True), ([0, 1], None), (None, [0, 1], None), (slice(None), None, [0, 2]),
            (None, slice(None), [0, 1]), ([0, 1], None, [1, 2]), (None, [[0], [1]], None, [1, 2]),
            (None, False), (True, None), (None, Ellipsis, [0, 1]), ([0, 1], slice(None), None),
            ([[0, 1]], None), (None, None, [2, 0]), (Ellipsis, [1, 0], None), ([0, 1], True)]


@pytest.mark.parametrize("index", _INDEXES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
def test_advanced_indexing_with_none_and_bools_has_torchs_strides(index, layout):
    x = np.arange(60.).reshape(3, 4, 5)
    t, e = torch.tensor(x), ember.tensor(x)
    if layout == "transposed":
        t, e = t.transpose(0, 2), e.transpose(0, 2)
    elif layout == "stepped":
        t, e = t[..., ::2], e[..., ::2]
    want, got = t[index], e[index]
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride(), (want.stride(), got.stride())
    assert np.array_equal(got.numpy(), want.numpy())
    # writing through the same index, and the gradient, are unchanged by the layout
    tw, ew = t.clone(), e.clone()
    tw[index], ew[index] = -1.0, -1.0
    assert np.array_equal(ew.numpy(), tw.numpy())
    leaf = ember.tensor(x, requires_grad=True)
    source = leaf.transpose(0, 2) if layout == "transposed" else leaf[..., ::2] if layout == "stepped" else leaf
    source[index].sum().backward()
    tleaf = torch.tensor(x, requires_grad=True)
    tsource = tleaf.transpose(0, 2) if layout == "transposed" else tleaf[..., ::2] if layout == "stepped" else tleaf
    tsource[index].sum().backward()
    assert np.array_equal(leaf.grad.numpy(), tleaf.grad.numpy())


def test_advanced_indexing_of_a_permuted_tensor_follows_its_layout():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 5, 6))
    t, e = torch.tensor(x).permute(2, 0, 1), ember.tensor(x).permute(2, 0, 1)
    for index in [(slice(None), [0, 3]), ([1, 2], slice(None), [0, 4]), (slice(None), slice(None), [[1], [2]]),
                  (ember.tensor([True, False, True, True, False, True]),)]:
        tindex = tuple(torch.tensor(i.numpy()) if isinstance(i, ember.Tensor) else i for i in index)
        got, want = e[index], t[tindex]
        assert got.stride() == want.stride() and np.array_equal(got.numpy(), want.numpy()), index
