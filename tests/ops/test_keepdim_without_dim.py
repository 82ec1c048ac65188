"""``keepdim`` without ``dim``: PyTorch's parser refuses it for the reductions whose signatures
take ``keepdim`` only after a ``dim`` (sum, mean, prod, max, min, median, nanmedian), as a
function and as a Tensor method, and accepts it where a ``dim`` may be left out (amax, std...)."""
import pytest

import ember
from torchcompare import assert_same_error, to_torch, torch

REFUSING = ["sum", "mean", "prod", "max", "min", "median", "nanmedian"]
KEYWORDS = [{"keepdim": True}, {"keepdim": False}, {"keepdims": True}, {"keepdim": True, "dtype": "float64"}]


def _call(module, x, name, kwargs, as_method):
    kwargs = {k: (getattr(module, v) if k == "dtype" else x if v == "self" else v) for k, v in kwargs.items()}
    return getattr(x, name)(**kwargs) if as_method else getattr(module, name)(x, **kwargs)


@pytest.mark.parametrize("as_method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("kwargs", KEYWORDS, ids=str)
@pytest.mark.parametrize("name", REFUSING)
def test_keepdim_without_dim_is_torchs_type_error(name, kwargs, as_method):
    if "dtype" in kwargs and name in ("max", "min", "median", "nanmedian"):
        # (max/min: as a method the signature with dim is the only one taking two arguments;
        # torch's function form adds "didn't match" lines ember leaves out, see the docs)
        kwargs = {"keepdim": True, "other": "self"} if as_method and name in ("max", "min") else {"keepdim": False}
    x = ember.randn(3, 4)
    assert_same_error(lambda: _call(ember, x, name, kwargs, as_method),
                      lambda: _call(torch, to_torch(x), name, kwargs, as_method))


@pytest.mark.parametrize("as_method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "median", "nanmedian"])
def test_keepdim_with_dim_still_reduces(name, as_method):
    x = ember.randn(3, 4)
    for dim in (1, -2):
        e = _call(ember, x, name, {"dim": dim, "keepdim": True}, as_method)
        t = _call(torch, to_torch(x), name, {"dim": dim, "keepdim": True}, as_method)
        e, t = (e[0], t[0]) if isinstance(t, tuple) else (e, t)
        assert tuple(e.shape) == tuple(t.shape)
    assert tuple(x.sum(axis=0, keepdims=True).shape) == (1, 4)


@pytest.mark.parametrize("as_method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("name", ["amax", "amin", "std", "var", "nansum", "nanmean", "argmax", "argmin",
                                  "all", "any", "norm"])
def test_reductions_taking_keepdim_alone_still_do(name, as_method):
    x = ember.randn(3, 4)
    e = _call(ember, x, name, {"keepdim": True}, as_method)
    t = _call(torch, to_torch(x), name, {"keepdim": True}, as_method)
    assert tuple(e.shape) == tuple(t.shape) == (1, 1)
