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
