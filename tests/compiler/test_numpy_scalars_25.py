"""A NumPy scalar in a compiled function is the Python number it holds, as in eager and torch
(session 25, found by FLOAT25): the ``aot_eager`` replay ran the node's kernel on the NumPy
scalar itself, and NumPy promotes float32 with a float64 scalar to float64."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_numpy_scalars_promote_as_python_numbers_on_every_replay(backend):
    def f(lib):
        return lambda t: (t * np.float64(0.5) + np.int64(3)) / np.float32(2.0)
    want = f(torch)(torch.tensor([1.0, -2.0]))
    compiled = ember.compile(f(ember), backend=backend)
    for _ in range(3):
        got = compiled(ember.tensor([1.0, -2.0]))
        assert str(got.dtype) == str(want.dtype) == "torch.float32"
        assert got.tolist() == want.tolist()
