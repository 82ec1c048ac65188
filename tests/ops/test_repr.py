"""``repr`` of tensors equals torch's, with "torch." read as "ember."."""
import numpy as np
import pytest
import torch

import ember

inf, nan = float("inf"), float("nan")
rng = np.random.default_rng(0)

DATA = {
    "ints": [1, 2, 3], "negative-ints": [-1, 20, -300], "large-ints": [10 ** 12, -5], "int-0d": 7,
    "int-2d": [[1, -2], [30, 4]], "bool": [True, False], "bool-0d": True, "bool-2d": [[True], [False]],
    "integral-floats": [1.0, 2.0, -3.0], "decimals": [1.5, 2.25, -0.125], "float-0d": 1.5, "float-0d-integral": 3.0,
    "zeros": [0.0, -0.0], "small-decimals": [0.001, 0.01, 0.5], "sci-large-range": [1e-5, 1.0, 1e5],
    "sci-big": [1e10, 2e10], "sci-small": [1e-10, 3e-9], "sci-integral-big": [1e9, 1.0], "big-not-sci": [12345.5, 1.25],
    "ratio-999": [1.0, 999.0, 0.5], "ratio-1001": [0.1, 100.1], "nan-inf": [nan, 1.5, inf, -inf],
    "all-nan": [nan, nan], "integral-inf": [1.0, inf, -2.0], "only-inf": [inf, -inf], "float-nan-0d": nan,
    "negative-decimals": [-1.5, -0.25], "empty-1d": np.zeros(0), "empty-2d": np.zeros((2, 0)),
    "empty-3d": np.zeros((0, 3, 1)), "empty-int": np.zeros(0, dtype=np.int64), "empty-bool": np.zeros((0,), bool),
    "2d": rng.standard_normal((3, 4)), "3d": rng.standard_normal((2, 3, 2)), "wide": rng.standard_normal(20),
    "wide-2d": rng.standard_normal((2, 15)) * 100, "summarized-1d": np.arange(2000.0),
    "summarized-2d": rng.standard_normal((50, 50)), "summarized-3d": np.arange(4000).reshape(10, 20, 20),
    "summarized-int": np.arange(1001), "not-summarized": np.arange(1000), "mixed-magnitude": [123.456, 0.001],
    "one-big": [1e8], "precision-edge": [0.00015, 1.0], "max-float32": [3.4e38], "neg-zero-int": [0, -0],
}
DTYPES = ["float32", "float64", "float16", "int32", "int16", "int8", "uint8", "int64", "bool"]


def _pair(data):
    if isinstance(data, np.ndarray):
        data = data.astype(np.float32) if data.dtype == np.float64 else data
        return ember.tensor(data.copy()), torch.tensor(data.copy())
    return ember.tensor(data), torch.tensor(data)


def _expected(t):
    return repr(t)


@pytest.mark.parametrize("name", DATA)
def test_repr(name):
    e, t = _pair(DATA[name])
    assert repr(e) == _expected(t)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["ints", "decimals", "float-0d", "empty-1d", "empty-2d", "2d"])
def test_repr_dtypes(name, dtype):
    data = DATA[name]
    if isinstance(data, np.ndarray):
        data = data.tolist()
    try:
        t = torch.tensor(data, dtype=getattr(torch, dtype))
    except RuntimeError:  # negative or fractional values do not fit an unsigned dtype
        with pytest.raises(RuntimeError, match="without overflow"):
            ember.tensor(data, dtype=getattr(ember, dtype))
        return
    assert repr(ember.tensor(data, dtype=getattr(ember, dtype))) == _expected(t)


def test_repr_autograd_suffixes():
    te = torch.tensor([1.5, 2.0], requires_grad=True)
    ee = ember.tensor([1.5, 2.0], requires_grad=True)
    assert repr(ee) == _expected(te)
    assert repr(ee * 2) == _expected(te * 2)
    assert repr((ee + 1).sum()) == _expected((te + 1).sum())
    assert repr(ember.tensor(1.0, requires_grad=True)) == _expected(torch.tensor(1.0, requires_grad=True))
    d = ember.tensor([1.0], dtype=ember.float64, requires_grad=True)
    assert repr(d) == _expected(torch.tensor([1.0], dtype=torch.float64, requires_grad=True))
    assert repr(ember.zeros(0, requires_grad=True)) == _expected(torch.zeros(0, requires_grad=True))
    assert str(ee.detach()) == str(te.detach())


@pytest.mark.parametrize("opts", [{"precision": 2}, {"sci_mode": True}, {"sci_mode": False}, {"threshold": 5},
                                  {"edgeitems": 1, "threshold": 3}, {"linewidth": 30}, {"profile": "short"}],
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_set_printoptions(opts):
    try:
        for lib in (ember, torch):
            lib.set_printoptions(**opts)
        for name in ("decimals", "sci-large-range", "2d", "wide", "ints", "summarized-1d"):
            e, t = _pair(DATA[name])
            assert repr(e) == _expected(t), name
    finally:
        for lib in (ember, torch):
            lib.set_printoptions(profile="default")
            lib.set_printoptions(sci_mode=None)
