"""A GEMM's epilogue kernel runs one row (or block of rows) at a time inside the blocked GEMM: it
must not open an OpenMP team for each call (a GPT forward at 47 x 215 rows opened 60 thousand,
and spent more CPU in futex than in its loops); threads only where the range it is given is
large (the whole product after a BLAS call)."""
import re

import numpy as np

import ember
from ember import nn


def test_a_row_epilogue_opens_threads_only_for_a_large_range(capfd):
    ember.compiler.reset()
    ember.manual_seed(0)
    layer = nn.Sequential(nn.Linear(8, 512), nn.ReLU())
    x = ember.randn(47 * 45, 8)  # an epilogue over 1.08 million elements
    ember._logging.set_logs(output_code=True)
    try:
        with ember.no_grad():
            out = ember.compile(layer)(x)
    finally:
        ember._logging.set_logs()
    source = capfd.readouterr().err
    with ember.no_grad():
        np.testing.assert_allclose(out.numpy(), layer(x).numpy(), rtol=1e-4, atol=1e-5)
    epilogues = re.findall(r"void (\w+e)\(void\*\* restrict p, long r0, long r1\) \{\n(.*)\n", source)
    assert epilogues, source[-2000:]
    for name, first in epilogues:
        if "omp parallel" in first:
            assert re.search(r"omp parallel for.* if \(\(r1 - r0\) \* 512L >= \d+L\)", first), (name, first)
