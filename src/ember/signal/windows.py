"""``torch.signal.windows``: the window functions of spectral analysis
(https://pytorch.org/docs/stable/signal.html), each a 1-D tensor of ``M`` samples.

``sym=True`` (the default) gives the symmetric window, for filter design; ``sym=False`` the
periodic one, for spectra (``stft``): the symmetric window of ``M + 1`` samples without its last.
The values are SciPy's (``scipy.signal.windows``, whose definitions torch's follow) computed in
float64 and rounded once to ``dtype`` (float32 or float64; default: the default dtype).
ValueError, with torch's messages, for ``M < 0``, another dtype, a layout other than strided,
and the parameters each window refuses.
"""
import numpy as np
from scipy.signal import windows as _scipy

from .._dtype import float32, float64, get_default_dtype
from .._layout import strided
from .._tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _window(name, M, values, sym, dtype, layout, requires_grad):
    """Checks what every window checks (its ``name`` in the messages), then wraps
    ``values(M, sym)`` (a float64 array) as a tensor of ``dtype``."""
    if dtype is None:
        dtype = get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (float32, float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    array = np.ones(M) if M == 1 else values(M, sym) if M else np.zeros(0)
    return Tensor._make(np.asarray(array, dtype=dtype.np)).requires_grad_(requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``w[n] = sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``; ``a`` a non-empty sequence of
    numbers (ValueError when empty)."""
    if not len(a):
        raise ValueError("Coefficients cannot be empty")
    return _window("general_cosine", M, lambda m, s: _scipy.general_cosine(m, list(a), sym=s), sym, dtype, layout,
                   requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``general_cosine`` with ``a = [alpha, 1 - alpha]``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``general_hamming`` with ``alpha = 0.5``: ``0.5 - 0.5 cos(2 pi n / (M - 1))``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``general_hamming`` with ``alpha = 0.54``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


_NUTTALL = [0.3635819, 0.4891775, 0.1365995, 0.0106411]


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window: ``general_cosine`` with
    ``a = [0.3635819, 0.4891775, 0.1365995, 0.0106411]`` (Nuttall 1981)."""
    return general_cosine(M, a=_NUTTALL, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))``."""
    return _window("blackman", M, lambda m, s: _scipy.blackman(m, sym=s), sym, dtype, layout, requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The triangle ``1 - |2 n / (M - 1) - 1|``."""
    return _window("bartlett", M, lambda m, s: _scipy.bartlett(m, sym=s), sym, dtype, layout, requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``sin(pi (n + 1/2) / M)``."""
    return _window("cosine", M, lambda m, s: _scipy.cosine(m, sym=s), sym, dtype, layout, requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``exp(-|n - center| / tau)``, ``center`` by default the middle, ``(M - 1) / 2``, and only
    given for a periodic window (ValueError otherwise, and for ``tau <= 0``)."""
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    return _window("exponential", M, lambda m, s: _scipy.exponential(m, center, tau, sym=s), sym, dtype, layout,
                   requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``exp(-((n - (M - 1) / 2) / std)^2 / 2)``; ValueError for ``std <= 0``."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _window("gaussian", M, lambda m, s: _scipy.gaussian(m, std, sym=s), sym, dtype, layout, requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``I0(beta sqrt(1 - (2 n / (M - 1) - 1)^2)) / I0(beta)`` (Kaiser 1974); ValueError for
    ``beta < 0``."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", M, lambda m, s: _scipy.kaiser(m, beta, sym=s), sym, dtype, layout, requires_grad)
