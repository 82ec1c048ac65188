"""``torch.functional``'s short-time Fourier transforms, ``stft`` and ``istft``, and the window
functions they take (``hann_window``, ``hamming_window``, ``blackman_window``,
``bartlett_window``, ``kaiser_window``).

Both transforms are composites of ember ops, so their gradients (to the signal and to the
window) come from the ops': ``stft`` frames the padded signal with ``Tensor.unfold``, weights
each frame by the window and takes ``fft.rfft`` (``fft.fft`` for complex input or window);
``istft`` inverts each frame, weights it by the window again, and overlap-adds the frames
(``index_add``, the adjoint of the framing), dividing by the overlap-added squared window
(Griffin & Lim, "Signal estimation from modified short-time Fourier transform", 1984).
"""
import math
import warnings

import numpy as np

from . import _dtype, fft
from ._creation import arange, ones, tensor, zeros
from ._ops.complex import view_as_real
from ._ops.core import _NAMES
from ._ops.pad import pad

__all__ = ["stft", "istft", "hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the DFT of ``window``-weighted frames of ``n_fft``
    samples, ``hop_length`` apart (https://pytorch.org/docs/stable/generated/torch.stft.html).

    ``X[..., f, t] = sum_k window[k] x[t * hop_length + k] exp(-2 pi i f k / n_fft)``.

    Args: ``input`` (L) or (B, L), floating or complex; ``hop_length`` defaults to
    ``n_fft // 4``; ``window`` (win_length,) (default ``win_length = n_fft``, all ones) is
    zero-padded on both sides to ``n_fft``; ``center`` pads the signal by ``n_fft // 2`` on
    both sides in ``pad_mode`` (``F.pad``'s modes) so frame t is centred at ``t * hop_length``;
    ``align_to_window`` (only with ``center=False``) starts each frame's window, not its
    ``n_fft`` samples, at ``t * hop_length``; ``normalized`` scales by ``n_fft ** -0.5``;
    ``onesided`` (default: real input and window) keeps the ``n_fft // 2 + 1`` non-negative
    frequencies.

    Returns: complex (N, T) or (B, N, T), N frequencies, ``T = 1 + (L' - n_fft) // hop_length``
    frames of the padded length L' (a transposed view, as torch's); with
    ``return_complex=False`` (deprecated) its ``view_as_real``, (..., N, T, 2).

    Raises: RuntimeError (torch's messages) when ``return_complex`` is not given for real
    input and window, for non-floating or 3-d input, ``n_fft``, ``hop_length``,
    ``win_length`` or window size out of range, ``onesided`` with complex input or window,
    and ``align_to_window`` with ``center``; F.pad's errors for a signal too short to pad.
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        dims = input.ndim
        half = n_fft // 2
        input = pad(input.view((1,) * (3 - dims) + tuple(input.shape)), (half, half), pad_mode)
        input = input.view(input.shape[-dims:] if dims else ())
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known "
                      "to cause spectral leakage. Other windows such as torch.hann_window or "
                      "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
                      "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
                      "device=<device>)`.", UserWarning, stacklevel=2)
    complex_ = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None and not complex_:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and "
                           "will further require that return_complex=True in a future PyTorch release.")
    return_complex = complex_ if return_complex is None else return_complex
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft "
                      "will return complex tensors for all inputs, and return_complex=False will raise "
                      "an error.\nNote: you can still call torch.view_as_real on the complex output to "
                      "recover the old return format.", UserWarning, stacklevel=2)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    def error(message):
        flags = (f"normalized={int(normalized)}, onesided={_flag(onesided)}, "
                 f"return_complex={int(return_complex)}, align_to_window={_flag(align_to_window)}")
        return RuntimeError(f"stft(torch.{_NAMES[input.dtype.name]}Tensor{list(input.shape)}, n_fft={n_fft}, "
                            f"hop_length={hop_length}, win_length={win_length}, window={_window_name(window)}, "
                            f"{flags}) : {message}")

    if not input.dtype.is_inexact:
        raise error("expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise error("expected a 1D or 2D tensor")
    length = input.shape[-1]
    if not 0 < n_fft <= length:
        raise error(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise error(f"expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise error(f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise error(f"expected a 1D window tensor of size equal to win_length={win_length}, but got "
                    f"window with size {list(window.shape)}")
    onesided = not complex_ if onesided is None else onesided
    if complex_ and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    left = (n_fft - win_length) // 2
    if align_to_window:  # the window, not the frame, starts at t * hop_length
        input = pad(input, (left, n_fft - win_length - left))
    frames = input.unfold(-1, n_fft, hop_length)
    if window is not None:
        frames = frames * _centred(window, n_fft)
    norm = "ortho" if normalized else "backward"
    out = (fft.rfft if onesided else fft.fft)(frames, norm=norm).transpose(-1, -2)
    return out if return_complex else view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft` by weighted overlap-add: each frame's inverse DFT times the
    window, summed at its place and divided by the summed squared window
    (https://pytorch.org/docs/stable/generated/torch.istft.html).

    Args: ``input`` complex (N, T) or (B, N, T) as ``stft`` returns it; ``n_fft``,
    ``hop_length``, ``win_length``, ``window``, ``center``, ``normalized`` as given to
    ``stft``; ``onesided`` defaults to ``N != n_fft``; ``length`` trims (or zero-pads, with a
    warning) the signal to that many samples; ``return_complex`` gives a complex signal
    (two-sided input only).

    Returns: (L) or (B, L), ``L = length`` or ``n_fft + hop_length * (T - 1)``, less
    ``2 * (n_fft // 2)`` with ``center``; real unless ``return_complex``.

    Raises: RuntimeError (torch's messages) for real, empty or wrongly ranked input, a
    frequency count that does not match ``n_fft`` and ``onesided``, ``hop_length`` or
    ``win_length`` out of range, a window of the wrong shape, a complex window with a real
    result, and a squared-window sum below 1e-11 somewhere in the kept signal ("window
    overlap add min", the nonzero overlap-add condition).
    """
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide "
                      "the same window used by stft to make the inversion lossless.To suppress this "
                      "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
                      "device=<device>)`.", UserWarning, stacklevel=2)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft "
                           "with return_complex=True.")

    def prefix():
        return (f"istft(CPU{_NAMES[input.dtype.name]}Type{list(input.shape)}, n_fft={n_fft}, "
                f"hop_length={hop_length}, win_length={win_length}, window={_window_name(window)}, "
                f"center={int(center)}, normalized={int(normalized)}, onesided={_flag(onesided)}, "
                f"length={length}, return_complex={int(return_complex)}) ")

    if input.numel() == 0:
        raise RuntimeError(prefix() + ": input tensor cannot be empty.")
    if input.ndim not in (2, 3):
        raise RuntimeError(prefix() + f": expected a tensor with 3 or 4 dimensions, but got {input.ndim + 1}")
    bins, n_frames = input.shape[-2:]
    one_sided = bins != n_fft if onesided is None else onesided
    if one_sided and bins != n_fft // 2 + 1:
        raise RuntimeError(prefix() + ": expected the frequency dimension (3rd to the last) of the input "
                           f"tensor to match n_fft / 2 + 1 when onesided=True, but got {bins}")
    if not one_sided and bins != n_fft:
        raise RuntimeError(prefix() + ": expected the frequency dimension (3rd to the last) of the input "
                           f"tensor to match n_fft when onesided=False, but got {bins}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError(prefix() + ": expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(prefix() + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(prefix() + ": Invalid window shape. window has to be 1D and length of `win_length`")
    window = _centred(ones(win_length, dtype=input.dtype.to_real()) if window is None else window, n_fft)
    frames = input.transpose(-1, -2)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = fft.ifft(frames, n_fft, norm=norm)
    else:
        if window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        frames = fft.irfft(frames if one_sided else frames.narrow(-1, 0, n_fft // 2 + 1), n_fft, norm=norm)
    full = n_fft + hop_length * (n_frames - 1)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else full
    signal = _overlap_add(frames * window, hop_length)[..., start:end]
    envelope = _overlap_add((window * window).expand(n_frames, n_fft), hop_length)[start:end]
    if bool(envelope.abs().min() < 1e-11):
        raise RuntimeError(prefix() + "window overlap add min: 1\n[ CPUBoolType{} ]")
    signal = signal / envelope
    if end > full:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded "
                      "with zeros in the tail. Please check your center and hop_length settings.",
                      UserWarning, stacklevel=2)
        signal = pad(signal, (0, end - full))
    return signal


def _overlap_add(frames, hop_length):
    """(..., T, n) frames summed into (..., n + hop_length * (T - 1)) samples, frame t at
    ``t * hop_length``: the adjoint of ``Tensor.unfold(-1, n, hop_length)``."""
    count, n = frames.shape[-2:]
    index = arange(count).unsqueeze(1) * hop_length + arange(n)
    out = zeros(*frames.shape[:-2], n + hop_length * (count - 1), dtype=frames.dtype)
    return out.index_add(-1, index.reshape(-1), frames.reshape(*frames.shape[:-2], count * n))


def _centred(window, n_fft):
    """``window`` zero-padded on both sides to ``n_fft`` samples (the left side gets the
    smaller half)."""
    left = (n_fft - window.shape[0]) // 2
    return pad(window, (left, n_fft - window.shape[0] - left))


def _flag(value):
    return value if value is None else int(value)


def _window_name(window):
    return "None" if window is None else f"torch.{_NAMES[window.dtype.name]}Tensor{{{list(window.shape)}}}"


# ---- windows ---------------------------------------------------------------------------------------
def _window(name, window_length, periodic, dtype, requires_grad, values):
    """A window of ``window_length`` samples from ``values(n, N)``: float64 values at sample
    indices ``n`` of a symmetric window of ``N`` points (``N = window_length + 1`` when
    ``periodic``, whose last sample is then dropped)."""
    dtype = dtype or _dtype.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        return ones(window_length, dtype=dtype, requires_grad=requires_grad)
    points = window_length + 1 if periodic else window_length
    return tensor(values(np.arange(window_length, dtype=np.float64), points), dtype=dtype,
                  requires_grad=requires_grad)


def _cosine_sum(*coefficients):
    """The generalised cosine window ``sum_k (-1)^k a_k cos(2 pi k n / (N - 1))``."""
    def values(n, points):
        phase = 2 * math.pi * n / (points - 1)
        return sum((-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coefficients))
    return values


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """``0.5 - 0.5 cos(2 pi n / (N - 1))`` (https://pytorch.org/docs/stable/generated/torch.hann_window.html)."""
    return _window("hann_window", window_length, periodic, dtype, requires_grad, _cosine_sum(0.5, 0.5))


def hamming_window(window_length, periodic=None, alpha=None, beta=None, *, dtype=None, layout=None,
                   device=None, requires_grad=False):
    """``alpha - beta cos(2 pi n / (N - 1))``; ``periodic`` True, ``alpha`` 0.54 and ``beta``
    0.46 when not given (https://pytorch.org/docs/stable/generated/torch.hamming_window.html).

    Raises:
        TypeError: ``alpha`` given without ``periodic``, or ``beta`` without ``alpha`` (torch's
            overloads take them only in that order).
    """
    _in_order("hamming_window", window_length, periodic=periodic, alpha=alpha, beta=beta)
    return _window("hamming_window", window_length, True if periodic is None else periodic, dtype, requires_grad,
                   _cosine_sum(0.54 if alpha is None else alpha, 0.46 if beta is None else beta))


def _in_order(name, window_length, **optional):
    """TypeError unless the optional arguments given are a leading run of ``optional``'s order."""
    given = [k for k, v in optional.items() if v is not None]
    if given != list(optional)[:len(given)]:
        got = ", ".join([type(window_length).__name__] + [f"{k}={type(optional[k]).__name__}" for k in given])
        overloads = "\n".join(f" * (int window_length{''.join(f', {k}' for k in list(optional)[:n])}, *, ...)"
                               for n in range(len(optional) + 1))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                        f"of:\n{overloads}")


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``
    (https://pytorch.org/docs/stable/generated/torch.blackman_window.html)."""
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The triangle ``1 - |2 n / (N - 1) - 1|``
    (https://pytorch.org/docs/stable/generated/torch.bartlett_window.html)."""
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda n, points: 1 - np.abs(2 * n / (points - 1) - 1))


def kaiser_window(window_length, periodic=None, beta=None, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)``, I0 the modified Bessel function
    of order 0; ``periodic`` True and ``beta`` 12 when not given
    (https://pytorch.org/docs/stable/generated/torch.kaiser_window.html).

    Raises:
        TypeError: ``beta`` given without ``periodic`` (torch's overloads take it only after).
    """
    _in_order("kaiser_window", window_length, periodic=periodic, beta=beta)
    beta = 12.0 if beta is None else beta
    return _window("kaiser_window", window_length, True if periodic is None else periodic, dtype, requires_grad,
                   lambda n, points: np.i0(beta * np.sqrt(1 - (2 * n / (points - 1) - 1) ** 2)) / np.i0(beta))
