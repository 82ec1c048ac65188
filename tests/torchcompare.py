"""Helpers comparing ember with real torch (the oracle): ``from torchcompare import ...``."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def to_torch(t, requires_grad=None):
    """An ember Tensor as a torch tensor with the same values and dtype."""
    out = torch.from_numpy(np.array(t._data, copy=True))
    if requires_grad if requires_grad is not None else t.requires_grad:
        out.requires_grad_(True)
    return out


def to_ember(t, requires_grad=None):
    out = ember.tensor(t.detach().numpy().copy())
    if requires_grad if requires_grad is not None else t.requires_grad:
        out.requires_grad_(True)
    return out


def assert_close(e, t, rtol=1e-5, atol=1e-6, check_dtype=True):
    """ember tensor ``e`` equals torch tensor ``t`` in shape, dtype and values (nan == nan)."""
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    if check_dtype:
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"dtype {e.dtype} != {t.dtype}"
    np.testing.assert_allclose(np.asarray(e._data, dtype=np.float64),
                               t.detach().numpy().astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)


def assert_same_error(ember_call, torch_call, normalize=lambda message: message):
    """``ember_call()`` raises the exception class ``torch_call()`` raises, with the same message
    once ``normalize`` has been applied to both; returns (ember's error, torch's error)."""
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        ember_call()
    assert normalize(str(got.value)) == normalize(str(expected.value))
    return got.value, expected.value


def overriding_subclass(lib):
    """A fresh Tensor subclass of ``lib`` (``torch`` or ``ember``) whose ``__torch_function__``
    overrides the default by calling it (the plainest subclass torch hands every call to)."""
    class Overriding(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})
    return Overriding
