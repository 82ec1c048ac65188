"""Eager numbers torch converts its own way (PARITY32), against torch 2.13: a float base beyond
float32's range (``1e39 ** x``) is converted unchecked (inf; ember raised); a complex attribute
(``softplus(x, 1j)``, ``celu(x, 1j)``, ``softshrink``) is torch's RuntimeError "value cannot be
converted to type double/float without overflow" (ember: TypeError, or a result for a float64
input), its real part where the imaginary part is 0; an int attribute beyond [-2**63, 2**64)
(``hardtanh(x, -1.0, 10**400)``, ``celu(x, 10**20)``) torch's OverflowError."""
import numpy as np
import pytest
import torch

import ember

CASES = {
    "pow 1e39": lambda lib, x: 1e39 ** x,
    "pow -1e39": lambda lib, x: (-1e39) ** x,
    "pow 1e300": lambda lib, x: lib.pow(1e300, x),
    "pow 2.5": lambda lib, x: 2.5 ** x,
    "softplus 1j": lambda lib, x: lib.nn.functional.softplus(x, 1j),
    "softplus threshold 1j": lambda lib, x: lib.nn.functional.softplus(x, 1.0, 1j),
    "softplus 1+0j": lambda lib, x: lib.nn.functional.softplus(x, 1 + 0j, 20 + 0j),
    "softplus 10**20": lambda lib, x: lib.nn.functional.softplus(x, 1, 10 ** 20),
    "celu 1j": lambda lib, x: lib.nn.functional.celu(x, 1j),
    "celu 2+0j": lambda lib, x: lib.nn.functional.celu(x, 2 + 0j),
    "celu 10**400": lambda lib, x: lib.nn.functional.celu(x, 10 ** 400),
    "celu -10**400": lambda lib, x: lib.nn.functional.celu(x, -10 ** 400),
    "softshrink 1j": lambda lib, x: lib.nn.functional.softshrink(x, 1j),
    "softshrink 10**400": lambda lib, x: lib.nn.functional.softshrink(x, 10 ** 400),
    "hardshrink 1j": lambda lib, x: lib.nn.functional.hardshrink(x, 1j),
    "hardshrink 0.5+0j": lambda lib, x: lib.nn.functional.hardshrink(x, 0.5 + 0j),
    "hardshrink 10**20": lambda lib, x: lib.nn.functional.hardshrink(x, 10 ** 20),
    "hardtanh 10**400": lambda lib, x: lib.nn.functional.hardtanh(x, -1.0, 10 ** 400),
    "hardtanh -10**400": lambda lib, x: lib.nn.functional.hardtanh(x, -10 ** 400, 1),
    "hardtanh 2**63": lambda lib, x: lib.nn.functional.hardtanh(x, -1, 2 ** 63),
}


def _run(fn, lib, dtype):
    x = lib.tensor([-1.0, 0.0, 0.5, 2.0], dtype=getattr(lib, dtype))
    try:
        r = fn(lib, x)
        return str(r.dtype).split(".")[-1], np.array(r.tolist(), np.float64)
    except Exception as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_numbers_converted_as_torch_converts_them(dtype):
    for name, fn in CASES.items():
        want, got = _run(fn, torch, dtype), _run(fn, ember, dtype)
        assert got[0] == want[0], (name, got, want)
        if isinstance(want[1], str):
            assert got[1] == want[1], (name, got, want)
        else:  # (softplus and celu within 2 float32 ulps of torch's; inf, nan and signed zeros equal)
            np.testing.assert_allclose(got[1], want[1], rtol=4e-7 if dtype != "float16" else 1e-3, err_msg=name)
            assert (np.signbit(got[1]) == np.signbit(want[1])).all(), name


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_sixteen_bit_sigmoid_and_softplus_double_backward_at_float32(dtype):
    """torch computes a 16-bit sigmoid at float32 (opmath): 0 below -88.7, where exp(-x)
    overflows; ember's bfloat16 went through SciPy's double loop: sigmoid(-90) 8.3e-40, and so
    softplus's second derivative (torch's ``sigmoid_backward``) a subnormal where torch's is 0."""
    v = np.concatenate([np.linspace(-120, 120, 2401), [np.inf, -np.inf, np.nan, -0.0]])
    got, want = [], []
    for lib, out in ((torch, want), (ember, got)):
        x = lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.softplus(x).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        out += [np.array(t.float().tolist(), np.float32) for t in (x.sigmoid(), g, gg)]
    for a, b in zip(got[:2], want[:2]):
        np.testing.assert_array_equal(a, b)
    # (ember's second derivative is a composite of 16-bit ops, torch's sigmoid_backward rounds once)
    assert ((got[2] == 0) == (want[2] == 0)).all()
    np.testing.assert_allclose(got[2], want[2], rtol=2 ** -6, atol=0)
