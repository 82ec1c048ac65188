"""torch.stft / torch.istft and the window functions against torch 2.13: values, dtypes,
shapes and strides, gradients to the signal and the window, the round trip
istft(stft(x)) == x, torch's errors and warnings."""
import warnings

import numpy as np
import pytest

import ember
from torchcompare import assert_same_error

torch = pytest.importorskip("torch")

# (n_fft, keyword arguments of both transforms; "window" is a window length or None)
CONFIGS = [
    (8, {"window": 8}),
    (8, {"window": 8, "hop_length": 3}),
    (8, {"window": 5, "win_length": 5, "hop_length": 1}),
    (7, {"window": 7, "normalized": True}),
    (8, {"window": 8, "center": False, "hop_length": 2}),
    (6, {"window": None, "hop_length": 2}),
    (8, {"window": 8, "onesided": False}),
    (8, {"window": 8, "pad_mode": "constant"}),
    (8, {"window": 8, "pad_mode": "replicate", "hop_length": 4}),
    (8, {"window": 8, "pad_mode": "circular"}),
    (8, {"window": 6, "win_length": 6, "center": False, "align_to_window": True, "hop_length": 2}),
]
ISTFT_KEYS = ("hop_length", "win_length", "center", "normalized", "onesided")


def _both(n_fft, kwargs, rng, complex_window=False):
    """The keyword arguments for ember and for torch, with the same random positive window."""
    kwargs = dict(kwargs)
    size = kwargs.pop("window")
    if size is None:
        return kwargs, dict(kwargs), None
    w = rng.uniform(0.5, 1.5, size) + (1j * rng.uniform(-0.5, 0.5, size) if complex_window else 0)
    return dict(kwargs, window=ember.tensor(w, requires_grad=True)), dict(kwargs, window=torch.tensor(w, requires_grad=True)), w


def _close(e, t, **tol):
    np.testing.assert_allclose(e.detach().resolve_conj().numpy(), t.detach().resolve_conj().numpy(), **tol)


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("n_fft,kwargs", CONFIGS, ids=[str(i) for i in range(len(CONFIGS))])
@pytest.mark.parametrize("shape", [(23,), (2, 19)])
def test_stft_values_strides_and_gradients_match_torch(n_fft, kwargs, shape):
    rng = np.random.default_rng(n_fft + len(shape))
    x = rng.standard_normal(shape)
    e_kw, t_kw, _ = _both(n_fft, kwargs, rng)
    e_x, t_x = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    e, t = ember.stft(e_x, n_fft, return_complex=True, **e_kw), torch.stft(t_x, n_fft, return_complex=True, **t_kw)
    assert e.dtype is ember.complex128 and tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    _close(e, t, rtol=1e-12, atol=1e-12)
    w = rng.standard_normal(tuple(t.shape)) + 1j * rng.standard_normal(tuple(t.shape))
    (e * ember.tensor(w)).real.sum().backward()
    (t * torch.tensor(w)).real.sum().backward()
    _close(e_x.grad, t_x.grad, rtol=1e-12, atol=1e-12)
    if "window" in e_kw:
        _close(e_kw["window"].grad, t_kw["window"].grad, rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("n_fft,kwargs", [c for c in CONFIGS if "pad_mode" not in c[1] and "align_to_window" not in c[1]])
@pytest.mark.parametrize("shape", [(24,), (2, 21)])
def test_istft_inverts_stft_and_matches_torch_with_gradients(n_fft, kwargs, shape):
    rng = np.random.default_rng(n_fft + len(shape) + 7)
    x = rng.standard_normal(shape)
    e_kw, t_kw, _ = _both(n_fft, kwargs, rng)
    inverse = {k: v for k, v in e_kw.items() if k in ISTFT_KEYS + ("window",)}
    t_inverse = {k: v for k, v in t_kw.items() if k in ISTFT_KEYS + ("window",)}
    center = kwargs.get("center", True)
    spectrum = ember.stft(ember.tensor(x), n_fft, return_complex=True, **e_kw).detach()
    length = shape[-1] if center else None
    try:
        torch.istft(torch.stft(torch.tensor(x), n_fft, return_complex=True, **t_kw), n_fft, length=length, **t_inverse)
    except RuntimeError as err:  # center=False with a window that is zero at the edges
        with pytest.raises(RuntimeError, match="window overlap add min") as info:
            ember.istft(spectrum, n_fft, length=length, **inverse)
        assert str(info.value) == str(err)
        return
    e_s = spectrum.requires_grad_()
    t_s = torch.tensor(e_s.detach().numpy(), requires_grad=True)
    e, t = ember.istft(e_s, n_fft, length=length, **inverse), torch.istft(t_s, n_fft, length=length, **t_inverse)
    assert e.dtype is ember.float64 and tuple(e.shape) == tuple(t.shape)
    _close(e, t, rtol=1e-10, atol=1e-12)
    if center:  # the round trip
        np.testing.assert_allclose(e.detach().numpy(), x, rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(t.shape))
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    _close(e_s.grad, t_s.grad, rtol=1e-9, atol=1e-11)
    if "window" in inverse:
        _close(inverse["window"].grad, t_inverse["window"].grad, rtol=1e-9, atol=1e-11)


def test_complex_signal_and_window_are_two_sided_and_round_trip():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 30)) + 1j * rng.standard_normal((2, 30))
    e_kw, t_kw, w = _both(8, {"window": 8, "hop_length": 2}, rng, complex_window=True)
    e = ember.stft(ember.tensor(x), 8, **e_kw)
    t = torch.stft(torch.tensor(x), 8, **t_kw)
    assert e.shape == (2, 8, 16) and e.dtype is ember.complex128
    _close(e, t, rtol=1e-12, atol=1e-12)
    back = ember.istft(e, 8, return_complex=True, length=30, **e_kw)
    _close(back, torch.istft(t, 8, return_complex=True, length=30, **t_kw), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(back.detach().numpy(), x, rtol=1e-10, atol=1e-12)
    # float32 signal with a float64 window: promoted as torch, checked against float64 values
    x32 = rng.standard_normal(40).astype(np.float32)
    win = ember.hann_window(16, dtype=ember.float64)
    s = ember.stft(ember.tensor(x32), 16, window=win, return_complex=True)
    assert s.dtype is ember.complex128
    ref = torch.stft(torch.tensor(x32, dtype=torch.float64), 16, window=torch.hann_window(16, dtype=torch.float64),
                     return_complex=True)
    _close(s, ref, rtol=1e-12, atol=1e-12)
    s32 = ember.tensor(x32).stft(16, window=ember.hann_window(16), return_complex=True)
    assert s32.dtype is ember.complex64
    _close(s32, ref, rtol=1e-5, atol=1e-5)  # float32 against float64: |err| < 1e-5
    y = s32.istft(16, window=ember.hann_window(16), length=40)
    assert y.dtype is ember.float32
    np.testing.assert_allclose(y.numpy(), x32, rtol=1e-5, atol=1e-5)


def test_return_complex_false_is_view_as_real_with_a_warning_and_length_pads_with_a_warning():
    x = np.random.default_rng(2).standard_normal(20)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        e = ember.stft(ember.tensor(x), 8, window=ember.ones(8, dtype=ember.float64), return_complex=False)
    t = torch.stft(torch.tensor(x), 8, window=torch.ones(8, dtype=torch.float64), return_complex=False)
    assert e.shape == t.shape and e.stride() == t.stride()
    _close(e, t, rtol=1e-12, atol=1e-12)
    with pytest.warns(UserWarning, match="A window was not provided"):
        ember.stft(ember.tensor(x), 8, return_complex=True)
    spectrum = ember.stft(ember.tensor(x), 8, window=ember.hann_window(8, dtype=ember.float64), return_complex=True)
    with pytest.warns(UserWarning, match="shorter than the length parameter"):
        y = ember.istft(spectrum, 8, window=ember.hann_window(8, dtype=ember.float64), length=25)
    ref = torch.istft(torch.tensor(spectrum.numpy()), 8, window=torch.hann_window(8, dtype=torch.float64), length=25)
    _close(y, ref, rtol=1e-10, atol=1e-12)


STFT_ERRORS = [
    ((20,), {"n_fft": 8}),  # return_complex missing
    ((20,), {"n_fft": 0, "return_complex": True}),
    ((20,), {"n_fft": 30, "center": False, "return_complex": True}),
    ((20,), {"n_fft": 8, "hop_length": 0, "return_complex": True}),
    ((20,), {"n_fft": 8, "win_length": 9, "return_complex": True}),
    ((20,), {"n_fft": 8, "window": (5,), "return_complex": True}),
    ((20,), {"n_fft": 8, "window": (2, 8), "return_complex": True}),
    ((2, 2, 5), {"n_fft": 4, "return_complex": True}),
    ((4,), {"n_fft": 8, "return_complex": True}),  # too short to reflect-pad
    ((20,), {"n_fft": 8, "pad_mode": "bogus", "return_complex": True}),
    ((20,), {"n_fft": 8, "align_to_window": False, "return_complex": True}),
    ((20,), {"n_fft": 8, "onesided": True, "window": (8,), "complex": True}),
]


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("shape,kwargs", STFT_ERRORS, ids=[str(i) for i in range(len(STFT_ERRORS))])
def test_stft_errors_match_torch(shape, kwargs):
    kwargs = dict(kwargs)
    x = np.random.default_rng(0).standard_normal(shape) + (1j if kwargs.pop("complex", False) else 0)
    window = kwargs.pop("window", None)
    assert_same_error(
        lambda: ember.stft(ember.tensor(x), window=None if window is None else ember.ones(window, dtype=ember.float64),
                           **kwargs),
        lambda: torch.stft(torch.tensor(x), window=None if window is None else torch.ones(window, dtype=torch.float64),
                           **kwargs))


ISTFT_ERRORS = [
    {"real": True}, {"empty": True}, {"extra_dims": True}, {"n_fft": 10}, {"onesided": False},
    {"hop_length": 0}, {"hop_length": 9}, {"win_length": 9}, {"window": 5}, {"center": False},
    {"return_complex": True}, {"complex_window": True},
]


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("case", ISTFT_ERRORS, ids=[str(i) for i in range(len(ISTFT_ERRORS))])
def test_istft_errors_match_torch(case):
    x = np.random.default_rng(1).standard_normal(20)
    s = torch.stft(torch.tensor(x), 8, window=torch.hann_window(8, dtype=torch.float64), return_complex=True).numpy()
    case = dict(case)
    if case.pop("real", False):
        s = s.real
    if case.pop("empty", False):
        s = s[:, :0]
    if case.pop("extra_dims", False):
        s = s[None, None]
    n_fft = case.pop("n_fft", 8)
    size = case.pop("window", 8)
    scale = 1j if case.pop("complex_window", False) else 1
    assert_same_error(
        lambda: ember.istft(ember.tensor(s), n_fft, window=ember.hann_window(size, dtype=ember.float64) * scale, **case),
        lambda: torch.istft(torch.tensor(s), n_fft, window=torch.hann_window(size, dtype=torch.float64) * scale, **case))


@pytest.mark.parametrize("name,extra", [("hann_window", {}), ("hamming_window", {}), ("hamming_window", {"alpha": 0.5, "beta": 0.3}),
                                        ("blackman_window", {}), ("bartlett_window", {}), ("kaiser_window", {}),
                                        ("kaiser_window", {"beta": 3.0})])
def test_windows_match_torch(name, extra):
    for length in (0, 1, 2, 7, 16):
        for periodic in (True, False):
            e = getattr(ember, name)(length, periodic, dtype=ember.float64, **extra)
            t = getattr(torch, name)(length, periodic, dtype=torch.float64, **extra)
            assert e.shape == t.shape
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, atol=1e-14)
    default = getattr(ember, name)(5, requires_grad=True)
    assert default.dtype is ember.float32 and default.requires_grad
    with pytest.raises(RuntimeError, match="expects floating point dtypes"):
        getattr(ember, name)(4, dtype=ember.int64)


@pytest.mark.parametrize("call", [
    lambda lib: lib.hamming_window(6, alpha=0.5, beta=0.4), lambda lib: lib.hamming_window(6, alpha=0.5),
    lambda lib: lib.hamming_window(6, False, beta=0.4), lambda lib: lib.kaiser_window(7, beta=3.0),
    lambda lib: lib.hamming_window(6, periodic=False, alpha=0.5), lambda lib: lib.hamming_window(6, False, 0.5, beta=0.3),
    lambda lib: lib.kaiser_window(7, periodic=False, beta=3.0), lambda lib: lib.kaiser_window(7, periodic=False),
])
def test_window_coefficients_are_taken_only_after_periodic_as_in_torch(call):
    try:
        expected = call(torch)
    except TypeError:
        with pytest.raises(TypeError, match="received an invalid combination of arguments"):
            call(ember)
        return
    np.testing.assert_allclose(call(ember).numpy(), expected.numpy(), rtol=1e-6)


def test_stft_of_a_window_less_call_warns_and_matches_a_ones_window():
    x = ember.tensor(np.random.default_rng(4).standard_normal(16))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = ember.stft(x, 4, return_complex=True)
    _close(plain, ember.stft(x, 4, window=ember.ones(4, dtype=ember.float64), return_complex=True), rtol=0, atol=0)
