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
