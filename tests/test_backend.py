"""ember._backend: process-level settings made when ember loads."""
import os
import resource
import sys

import numpy as np
import pytest

import ember  # noqa: F401  (importing ember applies the allocator settings)


@pytest.mark.skipif(not sys.platform.startswith("linux")
                    or "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ,
                    reason="glibc's malloc settings, applied only when the environment leaves them")
def test_freed_arrays_are_reused_without_page_faults():
    def churn():
        for n in range(1, 9):
            # 1 MiB .. 8 MiB, each larger than the last one freed: with glibc's default,
            # growing thresholds every one is mapped afresh and faulted in (thousands of faults).
            a = np.ones(n << 18, np.float32)
            del a
    churn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    churn()
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 100


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int16, np.int32, np.int64, np.float16,
                                   np.float32, np.float64])
def test_where_with_bit_masks_matches_numpy_bit_for_bit(dtype):
    from ember import _backend
    rng = np.random.default_rng(0)
    shape = (3, 64, 80)  # above the size where the bit masks take over
    values = rng.standard_normal((2,) + shape) * 100
    if np.dtype(dtype).kind == "f":  # NaN, infinities and -0.0 keep their bits
        values.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, -0.0]
    a, b = values.astype(dtype)
    condition = rng.random(shape) < 0.5
    cases = [(condition, a, b), (condition, np.concatenate([b, a], 1)[:, 1::2], b),  # a strided view
             (condition, np.zeros((), dtype), b),  # a broadcast scalar, as in relu's derivative
             (condition, a, np.zeros((), dtype)), (condition, np.zeros((), dtype), b[0]),
             (condition, np.array(-0.0 if np.dtype(dtype).kind == "f" else 1, dtype), b),  # bits set
             (condition[:, :, :1].repeat(80, 2), a, b[0])]  # broadcasting both ways
    for cond, x, y in cases:
        got, expected = _backend.where(cond, x, y), np.where(cond, x, y)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes()


def test_in_place_on_an_empty_copy_is_allowed():
    """NumPy copies an empty array with zero strides; writing in place to it is no overlap (it
    raised; found by tests/compiler/test_fuzz.py). torch allows it too."""
    import torch
    for lib in (torch, ember):
        x = lib.zeros(1, 0, 5).transpose(-1, -2).clone()
        assert x.neg_().shape == (1, 5, 0)
    with pytest.raises(RuntimeError, match="single memory location"):
        ember.zeros(1, 3).expand(2, 3).neg_()
