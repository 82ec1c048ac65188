"""``ember.fft``: discrete Fourier transforms as ``torch.fft``
(https://pytorch.org/docs/stable/fft.html), computed by SciPy's pocketfft (which keeps single
precision: float32 gives complex64), or by Intel MKL along the last dim where the optional
``ember[mkl]`` extra is installed (:class:`MklFFT`).

Three op entries do the work: complex-to-complex (``fft``/``ifft`` and their n-d forms),
real-to-complex (``rfft``, one-sided) and complex-to-real (``irfft``); ``hfft`` and ``ihfft``
are those with a conjugate. ``norm`` scales the forward transform by 1 ("backward", the
default), 1/n ("forward") or 1/sqrt(n) ("ortho"), and the inverse by the reciprocal.

Gradients are the adjoints (PyTorch's convention for complex gradients): a DFT's adjoint is
the opposite-direction DFT with the other ``norm`` ("backward" <-> "forward"), the adjoint of
padding to ``n`` is trimming back and vice versa; a one-sided transform's adjoint zero-fills
the missing half, and a complex-to-real one counts the bins it mirrored twice.
"""
import functools
import threading

import numpy as np
import scipy.fft

from .. import _backend, _dtype
from .._creation import tensor, zeros
from .._tensor import _wrap_dim
from .._ops.args import with_out
from .._ops.complex import conj_physical
from .._ops.core import _NAMES, Op, apply
from .._ops.join import cat, roll

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_ADJOINT_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


class PublicFFT:
    """pocketfft's three transforms (``c2c``, ``r2c``, ``c2r``: ``forward`` picks the sign of
    the exponent, ``inorm`` scales by 1, 1/sqrt(n) or 1/n whatever the direction) through a
    library's NumPy-style ``fftn``, ``ifftn``, ``rfftn`` and ``irfftn``: ``scipy.fft``'s public
    functions are what runs if a SciPy release moves the private module."""
    _NORM = ("backward", "ortho", "forward")  # the name of a forward transform's scaling

    def __init__(self, library=scipy.fft):
        self.library = library

    def _norm(self, forward, inorm):
        return self._NORM[inorm] if forward else self._NORM[2 - inorm]

    def _run(self, transform, x, nthreads, **kwargs):
        return transform(x, workers=nthreads, **kwargs)

    def c2c(self, x, axes, forward, inorm, out=None, nthreads=1):
        transform = self.library.fftn if forward else self.library.ifftn
        return self._run(transform, x, nthreads, axes=axes, norm=self._norm(forward, inorm))

    def r2c(self, x, axes, forward, inorm, out=None, nthreads=1):
        out = self._run(self.library.rfftn, x, nthreads, axes=axes, norm=self._NORM[inorm])
        return out if forward else np.conj(out)

    def c2r(self, x, axes, lastsize, forward, inorm, out=None, nthreads=1):
        sizes = [x.shape[a] for a in axes[:-1]] + [lastsize]
        return self._run(self.library.irfftn, np.conj(x) if forward else x, nthreads, s=sizes,
                         axes=axes, norm=self._norm(False, inorm))


class MklFFT(PublicFFT):
    """The transforms over one dim (``axes`` of length 1) by Intel MKL's DFTI (what PyTorch's
    x86 wheels run) through ``mkl_fft``'s 1-d functions (its n-d ones scaled by the whole
    array's size, not the transformed dims'), MKL's threads set through ``mkl-service``: the
    optional ``ember[mkl]`` extra (about 1 GB of MKL libraries). :func:`_library` says where
    it runs."""

    def __init__(self):
        import mkl
        import mkl_fft
        super().__init__(mkl_fft)
        self.mkl, self.threads = mkl, threading.local()

    def _run(self, transform, x, nthreads, **kwargs):
        # MKL's count for the calling thread, set only when it changes: each setting costs
        # 1 us, a fifth of a 64-point transform.
        if getattr(self.threads, "count", None) != nthreads:
            self.mkl.set_num_threads_local(nthreads)
            self.threads.count = nthreads
        if 0 in x.strides:  # broadcast arrays: mkl_fft 2.3 sums the repeats, or raises
            x = x.copy()
        return transform(x, **kwargs)

    def c2c(self, x, axes, forward, inorm, out=None, nthreads=1):
        transform = self.library.fft if forward else self.library.ifft
        return self._run(transform, x, nthreads, axis=axes[0], norm=self._norm(forward, inorm))

    def r2c(self, x, axes, forward, inorm, out=None, nthreads=1):
        out = self._run(self.library.rfft, x, nthreads, axis=axes[0], norm=self._NORM[inorm])
        return out if forward else np.conj(out)

    def c2r(self, x, axes, lastsize, forward, inorm, out=None, nthreads=1):
        return self._run(self.library.irfft, np.conj(x) if forward else x, nthreads, n=lastsize,
                         axis=axes[0], norm=self._norm(False, inorm))


try:  # the C transforms themselves: scipy.fft's argument handling is a third of a small one
    from scipy.fft._pocketfft import pypocketfft as pocketfft
except ImportError:
    pocketfft = PublicFFT()
try:
    last_dim_fft = MklFFT()
except ImportError:
    last_dim_fft = pocketfft


def _libraries():
    """The libraries that run ember's transforms, in words (benchmarks print it)."""
    if last_dim_fft is pocketfft:
        return "pocketfft (SciPy)"
    return (f"MKL (mkl_fft {last_dim_fft.library.__version__}) over the last dim from 4096 elements "
            "if its length has no prime factor above 7, pocketfft (SciPy) otherwise")


# ---- arguments ------------------------------------------------------------------------------------
def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _ADJOINT_NORM:
        raise RuntimeError(f"Invalid normalization mode: \"{norm}\"")
    return norm


def _inexact(input, name, real_only=False, out=None):
    """``input`` in a dtype the transforms compute in: integers and bools become the default
    float; RuntimeError for half precision, where ``real_only`` for complex input, and for an
    ``out`` not complex (real, for the transforms giving real results), as torch's."""
    if real_only and input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_NAMES[input.dtype.name]}")
    if input.dtype in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_NAMES[input.dtype.name]}")
    real = name in ("irfft", "hfft", "irfftn", "hfftn")
    if out is not None and (not out.dtype.is_inexact or out.dtype.is_complex == real):
        raise RuntimeError(f"{name} expects a {'floating point' if real else 'complex'} output tensor, but got "
                           f"{_NAMES[out.dtype.name]}")
    return input if input.dtype.is_inexact else input.to(_dtype.get_default_dtype())


def _dims_and_sizes(input, s, dim, last_size=None, one_sided=None):
    """PyTorch's (s, dim) rule of the n-d transforms: ``dim`` defaults to the last len(s)
    dims, or all; ``s`` to the input's sizes (-1 keeps one), and ``last_size(m)`` gives the
    last dim's default (irfftn's 2(m - 1)). A one-sided transform (``one_sided``: its name)
    needs a last dim: RuntimeError for none."""
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if dim is None:
        dim = range(input.ndim - len(s), input.ndim) if s is not None else range(input.ndim)
    elif isinstance(dim, int):
        dim = (dim,)
    if input.ndim == 0 and len(dim):
        raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
    dims = tuple(_wrap_dim(d, input.ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if one_sided and not dims:
        raise RuntimeError(f"{one_sided} must transform at least one axis")
    sizes = [input.shape[d] for d in dims] if s is None else list(s)
    for i, d in enumerate(dims):
        if sizes[i] == -1 or (s is None and i == len(dims) - 1 and last_size is not None):
            sizes[i] = input.shape[d] if last_size is None else last_size(input.shape[d])
        if sizes[i] < 1:
            raise RuntimeError(f"Invalid number of data points ({sizes[i]}) specified")
    return tuple(sizes), dims


def _one_dim(input, n, dim, last_size=None):
    """A 1-d transform's ``(sizes, dims)``: ``n`` defaults to the dim's size m (``last_size(m)``
    if given); n = -1 is an error here, unlike in ``s``. The n-d rule's checks without its
    loops, which are a fifth of a small transform's time."""
    shape = input._data.shape
    ndim = len(shape)
    if not ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = dim % ndim if -ndim <= dim < ndim else _wrap_dim(dim, ndim)  # (which raises)
    if n is None:
        n = shape[d] if last_size is None else last_size(shape[d])
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return (n,), (d,)


def _fit(t, shape):
    """``t`` trimmed or zero-padded at the end of each dim to ``shape``: the adjoint of the
    padding or trimming a transform did to reach its ``n``."""
    for d, size in enumerate(shape):
        have = t.shape[d]
        if have > size:
            t = t.narrow(d, 0, size)
        elif have < size:
            pad = list(t.shape)
            pad[d] = size - have
            t = cat([t, zeros(pad, dtype=t.dtype)], d)
    return t


# ---- the op entries -------------------------------------------------------------------------------
# pocketfft's own bindings, which scipy.fft wraps (a private module of SciPy since 1.4, with the
# same signatures through 1.17): calling them directly skips scipy.fft's backend dispatch and
# argument checks, ~25 us of a 30 us call at n = 64, which the functions below already did.
# inorm 0, 1, 2 divide by 1, sqrt(n), n: (forward transform's, inverse transform's) per norm.
_INORM = {"backward": (0, 2), "ortho": (1, 1), "forward": (2, 0)}


def _threads(x):
    """pocketfft's threads for a transform of ``x``: ember's thread count (``set_num_threads``,
    as torch's FFTs use torch's) from 2**20 elements up; one below, where the pool costs more
    than it saves (wall time per call on 2 idle cores, 1 vs 2 threads: r2c 256 x 256 116 vs
    216 us, 512 x 512 333 vs 648 us, 1024 x 1024 2288 vs 1910 us, 2048 x 512 2779 vs 1239 us)."""
    return 1 if x.size < 1 << 20 else _backend.get_num_threads() or 1


def _library(x, dims, n):
    """The library for a transform of ``x`` over ``dims`` whose last dim has length ``n``: MKL
    (where installed) over the last dim alone when ``x`` has 4096 elements or more and ``n`` no
    prime factor above 7; pocketfft otherwise. Measured (1 thread, float32 batches of 2**16
    elements, MKL / pocketfft time): n = 256, 1000, 4096 0.6-0.8; n = 255, 510 (a factor 17)
    1.6-3.3; 16 x 64 signals 1.05-1.1 (mkl_fft's per-call cost); a real input's full transform
    0.9-1.1 (so those stay on pocketfft)."""
    if last_dim_fft is pocketfft or x.size < 4096 or dims != (x.ndim - 1,):
        return pocketfft
    return last_dim_fft if _smooth(n) else pocketfft


@functools.lru_cache(maxsize=256)
def _smooth(n):
    """Whether ``n``'s prime factors are all 2, 3, 5 or 7."""
    for p in (2, 3, 5, 7):
        while n % p == 0:
            n //= p
    return n == 1


def _fit_array(x, sizes, dims):
    """``x`` trimmed or zero-padded at the end of each of ``dims`` to ``sizes``."""
    if len(dims) == 1 and x.shape[dims[0]] == sizes[0]:  # the common case, quickly
        return x
    for d, n in zip(dims, sizes):
        if x.shape[d] != n:
            break
    else:
        return x
    index, widths = [slice(None)] * x.ndim, [(0, 0)] * x.ndim
    for d, n in zip(dims, sizes):
        index[d] = slice(0, n)
        widths[d] = (0, max(n - x.shape[d], 0))
    return np.pad(x[tuple(index)], widths)


def _positive_real_bins(spectrum, dims):
    """``spectrum`` (of a real signal over ``dims``) with +0 as the imaginary part of its
    purely real bins (each index 0 or n/2, n even), as torch's one-sided transform and its
    conjugate fill give them (pocketfft's own fill leaves -0 at some, which ``angle`` of a
    negative bin reads as -pi)."""
    if len(dims) == 1 and dims[0] == spectrum.ndim - 1:  # a third of the time of the general index
        n = spectrum.shape[-1]
        spectrum.imag[..., ::n // 2 if n % 2 == 0 else n] = 0
        return spectrum
    index = [slice(None)] * spectrum.ndim
    for d in dims:
        n = spectrum.shape[d]
        index[d] = slice(None, None, n // 2 if n % 2 == 0 else n)
    spectrum.imag[tuple(index)] = 0
    return spectrum


def _real_signal_spectrum(x, dims, forward, inorm, nthreads):
    """The two-sided spectrum of real ``x`` over ``dims``. From 2**14 elements, pocketfft's
    one-sided transform (r2c) writes the first n // 2 + 1 bins of the last dim and NumPy fills
    the rest by Hermitian symmetry, ``X[k] = conj(X[-k mod n])`` in every transformed dim:
    faster than pocketfft's own fill (its c2c of a real input), which loops element by element
    (float32, 1 thread, process time, loaded A/B, its c2c vs this: fft2 of 16 x 64 x 64 192 vs
    156 us, of 256 x 256 194 vs 170 us, of 1024 x 1024 6.9 vs 6.4 ms, fft of 256 x 256 rows 120
    vs 90 us; below 2**14 elements the extra NumPy passes cost more: raw fft2 of 64 x 64 12.8
    vs 14.5 us)."""
    if x.size < 1 << 14:
        return _positive_real_bins(pocketfft.c2c(x, dims, forward, inorm, None, nthreads), dims)
    last, n = dims[-1], x.shape[dims[-1]]
    kept = n // 2 + 1
    out = np.empty(x.shape, np.result_type(x.dtype, np.complex64))
    index = [slice(None)] * x.ndim
    index[last] = slice(0, kept)
    half = out[tuple(index)]
    written = pocketfft.r2c(x, dims, forward, inorm, half, nthreads)
    if written is not half:  # (scipy.fft's public functions return a new array)
        half[...] = written
    # (target, source) index pairs: bins k = kept .. n - 1 of the last dim from n - k; in each
    # other dim, bin 0 from 0 and bins 1 .. m - 1 from m - 1 .. 1 (slices: no index arrays)
    target, source = list(index), list(index)
    target[last], source[last] = slice(kept, None), slice(n - kept, 0, -1)
    pairs = [(target, source)]
    for d in dims[:-1]:
        pairs = [(t[:d] + [bins] + t[d + 1:], s[:d] + [mirrored] + s[d + 1:]) for t, s in pairs
                 for bins, mirrored in ((slice(0, 1), slice(0, 1)), (slice(1, None), slice(None, 0, -1)))]
    for t, s in pairs:
        np.conjugate(half[tuple(s)], out=out[tuple(t)])
    return _positive_real_bins(out, dims)


def _resized(shape, sizes, dims):
    """``shape`` with dimension ``dims[k]`` of size ``sizes[k]`` (the transforms' shape rules)."""
    shape = list(shape)
    for d, n in zip(dims, sizes):
        shape[d] = n
    return tuple(shape)


class FftC2C(Op):
    """The n-d DFT (``inverse``: its inverse) over ``dims``, padded or trimmed to ``sizes``."""
    promote = None
    save_inputs = False
    holomorphic = False  # the adjoint below is the conjugate transpose itself

    @staticmethod
    def forward(x, sizes, dims, norm, inverse):
        x = _fit_array(x, sizes, dims)
        if x.dtype.kind != "c":
            return _real_signal_spectrum(x, dims, not inverse, _INORM[norm][inverse], _threads(x))
        library = _library(x, dims, sizes[-1])
        return library.c2c(x, dims, not inverse, _INORM[norm][inverse], None, _threads(x))

    @classmethod
    def infer(cls, x, sizes, dims, norm, inverse):
        return _resized(x.shape, sizes, dims), x.dtype.to_complex()

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        out = apply(FftC2C, g, sizes=a["sizes"], dims=a["dims"], norm=_ADJOINT_NORM[a["norm"]],
                    inverse=not a["inverse"])
        return (_fit(out if ctx.dtypes[0].is_complex else out.real, ctx.shapes[0]),)


class FftR2C(Op):
    """The one-sided n-d DFT of a real tensor: the last of ``dims`` keeps n // 2 + 1 bins."""
    promote = None
    save_inputs = False
    holomorphic = False

    @staticmethod
    def forward(x, sizes, dims, norm):
        x = _fit_array(x, sizes, dims)
        return _library(x, dims, sizes[-1]).r2c(x, dims, True, _INORM[norm][0], None, _threads(x))

    @classmethod
    def infer(cls, x, sizes, dims, norm):
        one_sided = (*sizes[:-1], sizes[-1] // 2 + 1)
        return _resized(x.shape, one_sided, dims), x.dtype.to_complex()

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        full = list(g.shape)
        full[a["dims"][-1]] = a["sizes"][-1]
        out = apply(FftC2C, _fit(g, full), sizes=a["sizes"], dims=a["dims"],
                    norm=_ADJOINT_NORM[a["norm"]], inverse=True)
        return (_fit(out.real, ctx.shapes[0]),)


class FftC2R(Op):
    """The inverse of :class:`FftR2C`: a real tensor of ``sizes`` from one-sided spectra."""
    promote = None
    save_inputs = False
    holomorphic = False

    @staticmethod
    def forward(x, sizes, dims, norm):
        x = _fit_array(x, (*sizes[:-1], sizes[-1] // 2 + 1), dims)
        return _library(x, dims, sizes[-1]).c2r(x, dims, sizes[-1], False, _INORM[norm][1], None, _threads(x))

    @classmethod
    def infer(cls, x, sizes, dims, norm):
        return _resized(x.shape, sizes, dims), x.dtype.to_real()

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        last, n = a["dims"][-1], a["sizes"][-1]
        spectrum = apply(FftR2C, g, sizes=a["sizes"], dims=a["dims"], norm=_ADJOINT_NORM[a["norm"]])
        # Bins 1 .. n - (n//2 + 1) stand for themselves and their mirror images.
        doubled = n - (n // 2 + 1)
        if doubled > 0:
            weight = np.ones(n // 2 + 1)
            weight[1:1 + doubled] = 2
            shape = [1] * g.ndim
            shape[last] = n // 2 + 1
            spectrum = spectrum * tensor(weight.reshape(shape), dtype=g.dtype)
        return (_fit(spectrum, ctx.shapes[0]),)


# ---- one-dimensional transforms ---------------------------------------------------------------------
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The DFT along ``dim``: ``X[k] = sum_j x[j] exp(-2 pi i jk/n)`` with ``x`` padded or
    trimmed to ``n``. Real and integer inputs give complex results (float32 -> complex64)
    (https://pytorch.org/docs/stable/generated/torch.fft.fft.html)."""
    input = _inexact(input, "fft", out=out)
    return _c2c(input, *_one_dim(input, n, dim), norm, False, out, "_fft_c2c" if input.dtype.is_complex else "_fft_r2c")


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse DFT along ``dim`` (1/n-scaled by default)
    (https://pytorch.org/docs/stable/generated/torch.fft.ifft.html)."""
    input = _inexact(input, "ifft", out=out)
    if not input.dtype.is_complex:  # as torch: a real signal's is the lazy conjugate of its DFT
        return with_out(fft(input, n, dim, _ADJOINT_NORM[_norm(norm)]).conj(), out, "aten::conj_physical")
    return _c2c(input, *_one_dim(input, n, dim), norm, True, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The DFT of a real signal, its n // 2 + 1 non-negative frequencies; RuntimeError for
    complex input (https://pytorch.org/docs/stable/generated/torch.fft.rfft.html)."""
    input = _inexact(input, "rfft", real_only=True, out=out)
    return _r2c(input, *_one_dim(input, n, dim), norm, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The real signal of length ``n`` (default 2(m - 1) for m bins) whose one-sided spectrum
    is ``input`` (https://pytorch.org/docs/stable/generated/torch.fft.irfft.html)."""
    input = _inexact(input, "irfft", out=out)
    return _c2r(input, *_one_dim(input, n, dim, _hermitian_size), norm, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The real DFT of a Hermitian-symmetric signal given by its first half ``input``
    (``irfft(conj(input))`` rescaled; ``n`` defaults to 2(m - 1))
    (https://pytorch.org/docs/stable/generated/torch.fft.hfft.html)."""
    input = _inexact(input, "hfft", out=out).conj()
    return _c2r(input, *_one_dim(input, n, dim, _hermitian_size), _ADJOINT_NORM[_norm(norm)], out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`hfft`: the one-sided inverse DFT of a real signal
    (https://pytorch.org/docs/stable/generated/torch.fft.ihfft.html)."""
    input = _inexact(input, "ihfft", real_only=True, out=out)
    return _ihfft(input, *_one_dim(input, n, dim), norm, out)


# ---- n-dimensional transforms -------------------------------------------------------------------------
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The DFT over ``dim`` (default: the last len(s) dims, or all), each padded or trimmed to
    ``s`` (https://pytorch.org/docs/stable/generated/torch.fft.fftn.html)."""
    input = _inexact(input, "fftn", out=out)
    return _c2c(input, *_dims_and_sizes(input, s, dim), norm, False, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse DFT over ``dim`` (https://pytorch.org/docs/stable/generated/torch.fft.ifftn.html)."""
    input = _inexact(input, "ifftn", out=out)
    return _c2c(input, *_dims_and_sizes(input, s, dim), norm, True, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The DFT of a real tensor over ``dim``, one-sided in the last of them
    (https://pytorch.org/docs/stable/generated/torch.fft.rfftn.html)."""
    input = _inexact(input, "rfftn", real_only=True, out=out)
    return _r2c(input, *_dims_and_sizes(input, s, dim, one_sided="rfftn"), norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The real inverse of :func:`rfftn`; the last dim's size defaults to 2(m - 1)
    (https://pytorch.org/docs/stable/generated/torch.fft.irfftn.html)."""
    input = _inexact(input, "irfftn", out=out)
    return _c2r(input, *_dims_and_sizes(input, s, dim, _hermitian_size, "irfftn"), norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d :func:`hfft`: the real DFT of a Hermitian-symmetric signal, one-sided in the
    last of ``dim`` (https://pytorch.org/docs/stable/generated/torch.fft.hfftn.html)."""
    input = _inexact(input, "hfftn", out=out)
    _dims_and_sizes(input, s, dim, one_sided="hfftn")
    return irfftn(input.conj(), s, dim, _ADJOINT_NORM[_norm(norm)], out=out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d :func:`ihfft` of a real tensor
    (https://pytorch.org/docs/stable/generated/torch.fft.ihfftn.html)."""
    input = _inexact(input, "ihfftn", real_only=True, out=out)
    return _ihfft(input, *_dims_and_sizes(input, s, dim, one_sided="ihfftn"), norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """:func:`hfftn` over the last two dims."""
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """:func:`ihfftn` over the last two dims."""
    return ihfftn(input, s, dim, norm, out=out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """:func:`fftn` over the last two dims."""
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """:func:`ifftn` over the last two dims."""
    return ifftn(input, s, dim, norm, out=out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """:func:`rfftn` over the last two dims."""
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """:func:`irfftn` over the last two dims."""
    return irfftn(input, s, dim, norm, out=out)


def _hermitian_size(m):
    """The default length of a real signal from m one-sided bins."""
    return 2 * (m - 1)


# (``out`` is None in most calls: with_out is skipped, a tenth of a small transform's overhead)
def _c2c(input, sizes, dims, norm, inverse, out, name="_fft_c2c"):  # (name: torch's kernel, for out='s errors)
    # A real input goes in as it is: the kernel takes it and the gradient comes back real.
    if not dims:  # the transform over no dims (fftn(x, dim=())): a complex copy, as torch's
        _norm(norm)
        result = input.to(input.dtype.to_complex()) if not input.dtype.is_complex else input.clone()
    else:
        result = apply(FftC2C, input, sizes=sizes, dims=dims, norm=_norm(norm), inverse=inverse)
    return result if out is None else with_out(result, out, name)


def _r2c(input, sizes, dims, norm, out):
    result = apply(FftR2C, input, sizes=sizes, dims=dims, norm=_norm(norm))
    return result if out is None else with_out(result, out, "_fft_r2c")


def _c2r(input, sizes, dims, norm, out):
    x = input if input.dtype.is_complex else input.to(input.dtype.to_complex())
    result = apply(FftC2R, x, sizes=sizes, dims=dims, norm=_norm(norm))
    return result if out is None else with_out(result, out, "_fft_c2r")


def _ihfft(input, sizes, dims, norm, out):
    spectrum = apply(FftR2C, input, sizes=sizes, dims=dims, norm=_ADJOINT_NORM[_norm(norm)])
    # As torch: over one dim the result is a lazy conjugate (is_conj()), over more a computed one.
    return with_out(spectrum.conj() if len(dims) == 1 else conj_physical(spectrum), out,
                    "aten::conj_physical" if len(dims) == 1 else "_fft_c2c")


# ---- frequencies and shifts -------------------------------------------------------------------------
def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point DFT with sample spacing ``d``: [0, 1, ...,
    ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n)
    (https://pytorch.org/docs/stable/generated/torch.fft.fftfreq.html)."""
    return _freqs(np.fft.fftfreq(n, d), dtype, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of :func:`rfft`: [0, 1, ..., n // 2] / (d n)
    (https://pytorch.org/docs/stable/generated/torch.fft.rfftfreq.html)."""
    return _freqs(np.fft.rfftfreq(n, d), dtype, requires_grad)


def _freqs(values, dtype, requires_grad):
    return tensor(values, dtype=dtype or _dtype.get_default_dtype(), requires_grad=requires_grad)


def fftshift(input, dim=None):
    """Rolls the zero frequency to the centre of ``dim`` (all dims by default): by n // 2
    (https://pytorch.org/docs/stable/generated/torch.fft.fftshift.html)."""
    dims = tuple(range(input.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return roll(input, tuple(input.shape[d] // 2 for d in dims), dims) if dims else input


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: rolls by -(n // 2)
    (https://pytorch.org/docs/stable/generated/torch.fft.ifftshift.html)."""
    dims = tuple(range(input.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims) if dims else input
