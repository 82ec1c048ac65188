"""``torch.signal.windows`` against torch 2.13: every window, symmetric and periodic, float32
and float64, lengths 0..9 and 64, and the parameters each takes; float32 against the float64
values within 2 ulps of 1 (the windows lie in [0, 1]), float64 within 1e-12; torch's errors."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {"tau": 2.5}), ("gaussian", {"std": 1.7}),
         ("general_cosine", {"a": [0.46, 0.23, 0.31]}), ("general_hamming", {"alpha": 0.6}), ("hamming", {}),
         ("hann", {}), ("kaiser", {"beta": 5.0}), ("nuttall", {})]


@pytest.mark.parametrize("name,kwargs", CASES)
@pytest.mark.parametrize("sym", [True, False])
def test_windows_equal_torchs(name, kwargs, sym):
    ours, theirs = getattr(ember.signal.windows, name), getattr(torch.signal.windows, name)
    for M in list(range(10)) + [64]:
        want = theirs(M, sym=sym, dtype=torch.float64, **kwargs).numpy()
        got64 = ours(M, sym=sym, dtype=ember.float64, **kwargs)
        got32 = ours(M, sym=sym, **kwargs)
        assert got64.dtype is ember.float64 and got32.dtype is ember.float32 and tuple(got32.shape) == (M,)
        np.testing.assert_allclose(got64.numpy(), want, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got32.numpy(), want, rtol=0, atol=2 * np.finfo(np.float32).eps)
    if name == "exponential" and not sym:
        np.testing.assert_allclose(ours(7, center=1.5, sym=False, dtype=ember.float64).numpy(),
                                   theirs(7, center=1.5, sym=False, dtype=torch.float64).numpy(), atol=1e-12)
    assert ours(5, requires_grad=True, **kwargs).requires_grad


@pytest.mark.parametrize("name,kwargs", CASES)
def test_errors_equal_torchs(name, kwargs):
    bad = [dict(M=-1), dict(M=3, dtype="int64"), dict(M=3, dtype="float16"), dict(M=3, layout="sparse_coo")]
    bad += {"exponential": [dict(M=3, center=1.0), dict(M=3, tau=0.0)], "gaussian": [dict(M=3, std=0.0)],
            "kaiser": [dict(M=3, beta=-1.0)], "general_cosine": [dict(M=3, a=[])]}.get(name, [])
    for case in bad:
        messages = []
        for L in (ember, torch):
            args = {**kwargs, **{k: getattr(L, v) if k in ("dtype", "layout") else v for k, v in case.items()}}
            with pytest.raises(ValueError) as error:
                getattr(L.signal.windows, name)(**args)
            messages.append(str(error.value))
        assert messages[0] == messages[1], case


def test_a_periodic_hann_is_the_stft_window():
    np.testing.assert_allclose(ember.signal.windows.hann(16, sym=False).numpy(),
                               ember.hann_window(16).numpy(), atol=1e-7)
