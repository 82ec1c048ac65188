"""ember.fft against torch.fft 2.13: values, dtypes and the gradients of a real loss for every
transform with padding/trimming ``n``/``s``, ``dim`` and each ``norm``, on real and complex
inputs; adjoint gradients also against float64 central differences; torch's errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from torchcompare import assert_same_error

torch = pytest.importorskip("torch")

NORMS = [None, "ortho", "forward", "backward"]
# (function, keyword arguments, input shape, complex input?)
CASES = [
    ("fft", {}, (3, 8), False), ("fft", {"n": 5}, (3, 8), True), ("fft", {"n": 11, "dim": 0}, (3, 8), True),
    ("ifft", {}, (8,), True), ("ifft", {"n": 6}, (2, 7), False), ("ifft", {"n": 9, "dim": 0}, (4, 3), True),
    ("rfft", {}, (3, 8), False), ("rfft", {"n": 7}, (3, 8), False), ("rfft", {"n": 12, "dim": 0}, (5, 2), False),
    ("irfft", {}, (3, 5), True), ("irfft", {"n": 9}, (3, 5), True), ("irfft", {"n": 4}, (2, 6), True),
    ("irfft", {"n": 7, "dim": 0}, (3, 2), False),
    ("hfft", {}, (2, 5), True), ("hfft", {"n": 7}, (2, 5), True), ("hfft", {"n": 6}, (4,), False),
    ("ihfft", {}, (3, 8), False), ("ihfft", {"n": 5}, (3, 8), False),
    ("fft2", {}, (2, 4, 6), True), ("fft2", {"s": (3, 8)}, (4, 6), False),
    ("ifft2", {}, (4, 6), True), ("ifft2", {"s": (5, 2), "dim": (0, 2)}, (3, 4, 3), True),
    ("rfft2", {}, (2, 4, 6), False), ("rfft2", {"s": (3, 5)}, (4, 6), False),
    ("irfft2", {}, (4, 4), True), ("irfft2", {"s": (3, 7)}, (2, 4, 4), True),
    ("hfft2", {}, (3, 4), True), ("hfftn", {"s": (3, 6)}, (2, 3, 4), True),
    ("ihfft2", {}, (4, 6), False), ("ihfftn", {"s": (5, 4), "dim": (0, 2)}, (3, 2, 5), False),
    ("fftn", {}, (2, 3, 4), True), ("fftn", {"s": (4,)}, (2, 3), False), ("fftn", {"dim": (0, -1)}, (2, 3, 4), True),
    ("ifftn", {"s": (3, -1), "dim": (1, 2)}, (2, 3, 4), True),
    ("rfftn", {}, (2, 3, 4), False), ("rfftn", {"s": (5, 6), "dim": (2, 0)}, (2, 3, 4), False),
    ("irfftn", {}, (2, 3, 4), True), ("irfftn", {"s": (4, 6), "dim": (0, 1)}, (3, 3, 2), True),
]


def _array(rng, shape, complex_):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _loss(out, w):
    return (out * w).real.sum() if out.is_complex() else (out * w.real).sum()


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,kwargs,shape,complex_", CASES,
                         ids=[f"{c[0]}-{'-'.join(map(str, c[1].values()))}-{c[3]}" for c in CASES])
def test_transform_values_and_gradients_match_torch(name, kwargs, shape, complex_, norm):
    rng = np.random.default_rng(len(name) + len(shape))
    x = _array(rng, shape, complex_)
    for dtype, tol in ((np.float64, dict(rtol=1e-10, atol=1e-11)), (np.float32, dict(rtol=1e-4, atol=1e-4))):
        xd = x.astype(np.result_type(dtype, x.dtype))
        e_in, t_in = ember.tensor(xd, requires_grad=True), torch.tensor(xd, requires_grad=True)
        e = getattr(ember.fft, name)(e_in, norm=norm, **kwargs)
        t = getattr(torch.fft, name)(t_in, norm=norm, **kwargs)
        assert e.dtype.name == str(t.dtype)[6:] and tuple(e.shape) == tuple(t.shape)
        assert e.is_conj() == t.is_conj()
        np.testing.assert_allclose(e.detach().resolve_conj().numpy(), t.detach().resolve_conj().numpy(), **tol)
        w = _array(rng, tuple(t.shape), True)
        _loss(e, ember.tensor(w.astype(np.complex128 if dtype == np.float64 else np.complex64))).backward()
        _loss(t, torch.tensor(w)).backward()
        assert e_in.grad.dtype is e_in.dtype
        np.testing.assert_allclose(e_in.grad.numpy(), t_in.grad.resolve_conj().numpy(), **tol)


@pytest.mark.parametrize("name,kwargs,complex_", [
    ("fft", {"n": 5}, True), ("rfft", {"n": 6}, False), ("irfft", {"n": 5}, True),
    ("irfft", {"n": 6}, True), ("hfft", {}, True), ("ihfft", {}, False), ("rfft2", {"s": (3, 3)}, False),
    ("irfftn", {"norm": "ortho"}, True),
])
def test_gradcheck_against_central_differences(name, kwargs, complex_):
    x = ember.tensor(_array(np.random.default_rng(3), (3, 4), complex_), requires_grad=True)
    assert gradcheck(lambda t: getattr(ember.fft, name)(t, **kwargs), (x,), eps=1e-6, atol=1e-7)


def test_integer_input_promotes_and_second_derivative_flows():
    assert ember.fft.fft(ember.arange(4)).dtype is ember.complex64
    assert repr(ember.fft.fft(ember.arange(4))) == repr(torch.fft.fft(torch.arange(4)))
    x = ember.tensor(np.random.default_rng(1).standard_normal(6), requires_grad=True)
    (g,) = ember.autograd.grad(ember.fft.rfft(x).abs().square().sum(), x, create_graph=True)
    assert g.requires_grad
    # Parseval: sum |rfft(x)|^2 is quadratic in x, so its gradient is linear: H x with H fixed.
    np.testing.assert_allclose(ember.autograd.grad(g.sum(), x)[0].numpy(),
                               torch.autograd.grad(torch.autograd.grad(
                                   torch.fft.rfft(t := torch.tensor(x.detach().numpy(), requires_grad=True))
                                   .abs().square().sum(), t, create_graph=True)[0].sum(), t)[0].numpy(),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n,d", [(1, 1.0), (5, 1.0), (8, 0.25), (7, 3.0)])
def test_frequencies_and_shifts(n, d):
    for f in ("fftfreq", "rfftfreq"):
        assert repr(getattr(ember.fft, f)(n, d)) == repr(getattr(torch.fft, f)(n, d))
        assert getattr(ember.fft, f)(n, d, dtype=ember.float64).dtype is ember.float64
    x = np.arange(n * 6).reshape(n, 6)
    for dim in (None, 0, -1, (0, 1)):
        for f in ("fftshift", "ifftshift"):
            np.testing.assert_array_equal(getattr(ember.fft, f)(ember.tensor(x), dim=dim).numpy(),
                                          getattr(torch.fft, f)(torch.tensor(x), dim=dim).numpy())


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.fft.fft(x, norm="bad"), lambda lib, x: lib.fft.fft(x, n=0),
    lambda lib, x: lib.fft.rfft(x.to(lib.complex64)), lambda lib, x: lib.fft.ihfft(x.to(lib.complex64)),
    lambda lib, x: lib.fft.fft(x.half()), lambda lib, x: lib.fft.fftn(x, s=(4, 5), dim=(0,)),
    lambda lib, x: lib.fft.fft(x, dim=3), lambda lib, x: lib.fft.irfft(x[:1]),
    lambda lib, x: lib.fft.fftn(x, dim=(0, 0)), lambda lib, x: lib.fft.fft(x[0]),
    # n=-1 was taken as "keep the size" (fftn's s rule), so no error:
    lambda lib, x: lib.fft.fft(x, n=-1), lambda lib, x: lib.fft.rfft(x, n=-1),
    lambda lib, x: lib.fft.irfft(x, n=-1), lambda lib, x: lib.fft.ihfft(x, n=-1),
])
def test_errors_match_torch(call):
    assert_same_error(lambda: call(ember, ember.ones(4)), lambda: call(torch, torch.ones(4)))


def test_spectrum_of_a_real_signal_has_torchs_signed_zeros():
    """angle() reads the sign of a zero imaginary part: a negative Nyquist bin is at pi, not
    -pi, as torch fills the mirrored half with conjugates of the one-sided transform."""
    x = np.random.default_rng(0).standard_normal((4, 8))
    x[:, 0] = -np.abs(x[:, 0]) - 10  # negative DC bins along dim 1
    for name in ("fft", "ifft"):
        for dim in (0, 1):
            e = getattr(ember.fft, name)(ember.tensor(x), dim=dim).resolve_conj()
            t = getattr(torch.fft, name)(torch.tensor(x), dim=dim).resolve_conj()
            np.testing.assert_array_equal(np.signbit(e.numpy().imag), np.signbit(t.numpy().imag))
            np.testing.assert_allclose(e.angle().numpy(), t.angle().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape,dim", [((4, 6), (0, 1)), ((4, 6), (1, 0)), ((5, 7), (0, 1)),
                                       ((3, 4, 6), (1, 2)), ((4, 6, 8), None), ((9, 10, 3), (0, 2))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nd_spectrum_of_a_real_signal_has_torchs_signed_zeros(shape, dim, dtype):
    """The n-d transforms of a real signal: the same signed zeros at the purely real bins (each
    index 0 or n/2), in either order of dims (ember's earlier one-sided fill differed with dims
    (1, 0) and in 3-d)."""
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    for name in ("fftn", "ifftn"):
        e = getattr(ember.fft, name)(ember.tensor(x), dim=dim).resolve_conj().numpy()
        t = getattr(torch.fft, name)(torch.tensor(x), dim=dim).resolve_conj().numpy()
        np.testing.assert_array_equal(np.signbit(e.imag), np.signbit(t.imag))
        np.testing.assert_allclose(e, t, rtol=0, atol=20 * np.finfo(dtype).eps * np.abs(t).max())


@pytest.mark.parametrize("shape,dim", [((128, 130), (0, 1)), ((128, 130), (1, 0)), ((129, 127), None),
                                       ((8, 40, 64), None), ((65, 2, 129), (2, 0)), ((128, 130), (0,)),
                                       ((128, 129), (1,)), ((2, 16384), (1, 0))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_spectrum_of_a_real_signal_equals_the_complex_transform(shape, dim, dtype):
    """From 2**14 elements, the spectrum of a real signal is its one-sided transform with the
    other half filled by Hermitian symmetry: equal to the float64 transform of the same signal
    as complex numbers (NumPy's, no symmetry used), over one dim (the last or another), two or
    three, odd or even; +0 as the imaginary part of the purely real bins (each index 0 or n/2)."""
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    dims = tuple(range(len(shape))) if dim is None else tuple(d % len(shape) for d in dim)
    real_bins = np.ones(shape, bool)
    for d in dims:
        along = np.zeros(shape[d], bool)
        along[::shape[d] // 2 if shape[d] % 2 == 0 else shape[d]] = True
        real_bins &= along.reshape([-1 if i == d else 1 for i in range(len(shape))])
    for name in ("fftn", "ifftn"):
        e = getattr(ember.fft, name)(ember.tensor(x), dim=dim).numpy()
        expected = getattr(np.fft, name)(x.astype(np.complex128), axes=dims)
        assert e.dtype == np.result_type(dtype, np.complex64)
        assert not np.signbit(e.imag[real_bins]).any() and (e.imag[real_bins] == 0).all()
        np.testing.assert_allclose(e, expected, rtol=0, atol=20 * np.finfo(dtype).eps * np.abs(expected).max())


def _mkl_fft():
    try:
        return ember.fft.MklFFT()
    except ImportError:
        pytest.skip("the optional ember[mkl] extra (mkl_fft, mkl-service) is not installed")


@pytest.mark.parametrize("library", ["scipy.fft", "mkl"])
def test_other_libraries_equal_the_private_transforms(library):
    """If a SciPy release moves its private pocketfft module, ember.fft runs PublicFFT; with
    ember[mkl] installed, MklFFT runs the last dim's transforms: the same transforms, scalings
    and signs, within float64 rounding."""
    pocketfft = pytest.importorskip("scipy.fft._pocketfft").pypocketfft
    other = ember.fft.PublicFFT() if library == "scipy.fft" else _mkl_fft()
    all_axes = ((1,), (0,)) + ((0, 1),) * (library == "scipy.fft")  # MklFFT: one dim
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))
    r = rng.standard_normal((3, 8))
    h = pocketfft.r2c(r, (0, 1), True, 0)
    for forward in (True, False):
        for inorm in (0, 1, 2):
            for axes in all_axes:
                np.testing.assert_allclose(other.c2c(x, axes, forward, inorm), pocketfft.c2c(x, axes, forward, inorm))
                np.testing.assert_allclose(other.r2c(r, axes, forward, inorm), pocketfft.r2c(r, axes, forward, inorm))
            for spectrum, axes in [(h, (1,)), (h.T, (0,))] + [(h, (0, 1))] * (library == "scipy.fft"):
                np.testing.assert_allclose(other.c2r(spectrum, axes, 8, forward, inorm),
                                           pocketfft.c2r(spectrum, axes, 8, forward, inorm))
    for array in (np.broadcast_to(x[:1], x.shape), np.broadcast_to(r[:1], r.shape)):  # zero strides
        np.testing.assert_allclose(other.c2c(array, (1,), False, 2), pocketfft.c2c(array, (1,), False, 2))
    np.testing.assert_allclose(other.r2c(array, (1,), True, 0), pocketfft.r2c(array, (1,), True, 0))


@pytest.mark.parametrize("library", ["pocketfft", "mkl"])
def test_last_dim_transforms_match_torch_on_each_library(library, monkeypatch):
    """Transforms over the last dim of 4096 elements or more (lengths without a prime factor
    above 7) run on MKL where ember[mkl] is installed, else on pocketfft: either way values and
    gradients as torch's in float64, and float32 within 1e-5 of the float64 result's largest
    magnitude (a broadcast input, padding to n and each norm included)."""
    ran = []
    if library == "mkl":
        mkl = _mkl_fft()
        monkeypatch.setattr(mkl, "_run", lambda *args, **kwargs: ran.append(1) or ember.fft.MklFFT._run(mkl, *args, **kwargs))
        monkeypatch.setattr(ember.fft, "last_dim_fft", mkl)
    else:
        monkeypatch.setattr(ember.fft, "last_dim_fft", ember.fft.pocketfft)
    rng = np.random.default_rng(3)
    real = rng.standard_normal((16, 256))
    inputs = {False: real, True: real + 1j * rng.standard_normal((16, 256)),
              "broadcast": np.broadcast_to(real[:1] + 1j * real[1:2], (16, 256))}
    cases = [("fft", {}, True), ("ifft", {"norm": "ortho"}, True), ("fft", {"norm": "forward"}, "broadcast"),
             ("rfft", {}, False), ("rfft", {"n": 300, "norm": "ortho"}, False), ("irfft", {}, True),
             ("irfft", {"n": 500, "norm": "forward"}, True), ("hfft", {}, True), ("ihfft", {}, False)]
    for name, kwargs, kind in cases:
        x = inputs[kind]
        e_in, t_in = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        e, t = getattr(ember.fft, name)(e_in, **kwargs), getattr(torch.fft, name)(t_in, **kwargs)
        expected = t.detach().resolve_conj().numpy()
        np.testing.assert_allclose(e.detach().resolve_conj().numpy(), expected, rtol=1e-10, atol=1e-10)
        w = _array(rng, tuple(t.shape), True)
        _loss(e, ember.tensor(w)).backward()
        _loss(t, torch.tensor(w)).backward()
        np.testing.assert_allclose(e_in.grad.numpy(), t_in.grad.resolve_conj().numpy(), rtol=1e-10, atol=1e-10)
        single = getattr(ember.fft, name)(ember.tensor(x.astype(np.complex64 if x.dtype.kind == "c" else np.float32)), **kwargs)
        assert single.dtype.name == ("float32" if name in ("irfft", "hfft") else "complex64")
        np.testing.assert_allclose(single.resolve_conj().numpy(), expected, rtol=0, atol=1e-5 * np.abs(expected).max())
    assert bool(ran) == (library == "mkl")


def test_threaded_transforms_equal_single_threaded():
    """From 2**20 elements the transforms run on ember's threads (set_num_threads): each
    thread takes whole 1-d transforms, so the results are bit for bit the single thread's
    (pocketfft's, and MKL's where ember[mkl] is installed)."""
    x = np.random.default_rng(2).standard_normal((1024, 1030)).astype(np.float32)
    before = ember.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            ember.set_num_threads(threads)
            t = ember.tensor(x)
            spectrum = ember.fft.rfft(t)
            results.append([spectrum, ember.fft.fft2(t), ember.fft.irfft(spectrum, n=1030),
                            ember.fft.rfft(t[:, :1024])])  # (on MKL where installed: a smooth length)
    finally:
        ember.set_num_threads(before)
    for one, two in zip(*results):
        np.testing.assert_array_equal(one.numpy(), two.numpy())


@pytest.mark.parametrize("shape", [(3, 4), (2, 1 << 14)])
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_transform_over_no_dims_is_a_complex_copy(shape, dtype):
    """fftn / ifftn / fft2 over ``dim=()`` (or ``s=()``) return the input as a new complex
    tensor, as torch's (small and one-sided-path sizes; the gradient of a real input comes back
    real); the one-sided n-d transforms raise torch's RuntimeError."""
    x = np.random.default_rng(9).standard_normal(shape)
    x = x.astype(dtype) if dtype == "float32" else (x + 1j * x[::-1]).astype(dtype)
    for name, kwargs in (("fftn", {"dim": ()}), ("ifftn", {"dim": (), "norm": "ortho"}),
                         ("fft2", {"dim": ()}), ("fftn", {"s": ()})):
        results = []
        for lib in (ember, torch):
            t = lib.tensor(x, requires_grad=True)
            y = getattr(lib.fft, name)(t, **kwargs)
            (y.abs() ** 2).sum().backward()
            results.append((y.detach().numpy(), t.grad.numpy(), str(y.dtype).split(".")[-1]))
        assert results[0][2] == results[1][2] and results[0][0].dtype == results[1][0].dtype
        np.testing.assert_array_equal(results[0][0], results[1][0])
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
    if dtype == "float32":
        for name in ("rfftn", "irfftn", "hfftn", "ihfftn"):
            assert_same_error(lambda: getattr(ember.fft, name)(ember.tensor(x), dim=()),
                              lambda: getattr(torch.fft, name)(torch.tensor(x), dim=()))
