"""Complex tensors against torch 2.13: dtypes and promotion, construction, printing, the
real/imag/conj views, the values and gradients (PyTorch's conjugate Wirtinger convention) of
the ops torch allows on complex inputs, and torch's errors for those it refuses."""
import warnings

import zlib

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from torchcompare import assert_same_error

torch = pytest.importorskip("torch")

NAMES = ["float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64",
         "bool", "complex64", "complex128"]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _cz(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_grid(a):
    for b in NAMES:
        expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert ember.promote_types(getattr(ember, a), getattr(ember, b)).name == str(expected)[6:], (a, b)


@pytest.mark.parametrize("a", NAMES)
def test_result_type_with_zero_dim_tensors_and_python_scalars(a):
    """A dim tensor of ``a`` with a 0-dim tensor of each dtype and with Python numbers. Pairs
    where torch answers complex32 (ComplexHalf, which ember lacks) are left out."""
    dim = lambda lib: lib.ones(2, dtype=getattr(lib, a))  # noqa: E731
    others = [(lambda lib, b=b: lib.tensor(1, dtype=getattr(lib, b))) for b in NAMES]
    others += [(lambda lib, v=v: v) for v in (2, 2.5, 1j, True)]
    for other in others:
        expected = str(torch.result_type(dim(torch), other(torch)))[6:]
        if expected == "complex32":
            continue
        assert ember.result_type(dim(ember), other(ember)).name == expected, (a, other(torch))
        assert (dim(ember) * other(ember)).dtype.name == expected


def test_dtype_attributes_and_aliases():
    for name in ("complex64", "complex128"):
        e, t = getattr(ember, name), getattr(torch, name)
        assert (e.is_complex, e.is_floating_point, e.is_signed, e.itemsize) == \
               (t.is_complex, t.is_floating_point, t.is_signed, t.itemsize)
        assert repr(e.to_real()) == repr(t.to_real())
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert repr(ember.float64.to_complex()) == repr(torch.float64.to_complex())


def test_complex32_is_absent_and_says_why():
    """torch has complex32 (chalf); ember does not (no NumPy type): an AttributeError naming the
    gap, so hasattr() answers False and getattr(ember, name, default) works."""
    for name in ("complex32", "chalf"):
        assert hasattr(torch, name) and not hasattr(ember, name)
        with pytest.raises(AttributeError, match="no complex32 .ComplexHalf. dtype.*use complex64"):
            getattr(ember, name)


@pytest.mark.parametrize("data", [1j, [1, 2j], [[1.5 + 2j, 3], [0, -1j]], [True, 1j], (2.5, 1 + 1j)])
def test_tensor_from_python_complex(data):
    e, t = ember.tensor(data), torch.tensor(data)
    assert repr(e) == repr(t)
    assert e.is_complex() and ember.is_complex(e) and t.is_complex()
    assert ember.tensor(data, dtype=ember.complex128).dtype is ember.complex128


@pytest.mark.parametrize("values", [
    [1 + 2j, 3 - 4j], [[1.5 + 2j, 3 - 4.25j]], [1e-5j, 1e6], [0j], [float("nan") + 1j, float("inf") - 2j],
    [[-0.0 - 0.0j, 1.25 + 1e-9j], [123.456 + 7j, -3j]], list(np.arange(2000) * (1 + 0.5j)),
])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_repr_matches_torch(values, dtype):
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    assert repr(ember.tensor(values, dtype=getattr(ember, dtype))) == repr(t)
    assert repr(ember.tensor(values, dtype=getattr(ember, dtype)).reshape(-1)[:0]) == repr(t.reshape(-1)[:0])


def test_complex_and_polar_build_from_parts():
    rng = _rng(1)
    re, im = rng.standard_normal((3, 1)), rng.standard_normal(4)
    for dt in ("float32", "float64"):
        e = ember.complex(ember.tensor(re, dtype=getattr(ember, dt)), ember.tensor(im, dtype=getattr(ember, dt)))
        t = torch.complex(torch.tensor(re, dtype=getattr(torch, dt)), torch.tensor(im, dtype=getattr(torch, dt)))
        assert e.dtype.name == str(t.dtype)[6:] and np.array_equal(e.numpy(), t.numpy())
    inf = ember.complex(ember.tensor([float("inf")]), ember.tensor([0.0]))
    assert inf.item() == complex(float("inf"), 0)  # not inf + nan j, as inf + 1j * 0 would give
    absolute, angle = np.abs(re), rng.uniform(-3, 3, (3, 4))
    e = ember.polar(ember.tensor(absolute), ember.tensor(angle))
    t = torch.polar(torch.tensor(absolute), torch.tensor(angle))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double tensors but got Float and Double"):
        ember.complex(ember.ones(2), ember.ones(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="but got Long and Long"):
        ember.complex(ember.ones(2, dtype=ember.int64), ember.ones(2, dtype=ember.int64))


def test_real_imag_are_views_and_writes_show_through():
    z = ember.tensor([1 + 2j, 3 - 4j, 5j])
    z.real[0] = 7
    z.imag.mul_(2)
    assert z.tolist() == [7 + 4j, 3 - 8j, 10j]
    r = ember.view_as_real(z)
    r[1, 0] = -1
    assert z[1].item() == -1 - 8j and r.shape == (3, 2) and r.dtype is ember.float32
    back = ember.view_as_complex(r)
    back[2] = 1 + 1j
    assert z[2].item() == 1 + 1j
    x = ember.ones(3)
    assert ember.real(x) is x and x.real is x
    for bad, message in ((lambda: x.imag, "imag is not implemented for tensors with non-complex dtypes."),
                         (lambda: ember.view_as_real(x), "view_as_real is only supported for complex tensors"),
                         (lambda: ember.view_as_complex(ember.ones(3, 3)), "Tensor must have a last dimension of size 2"),
                         (lambda: ember.view_as_complex(ember.ones(2, 2).t()), "Tensor must have a last dimension with stride 1"),
                         (lambda: ember.view_as_complex(ember.ones(3, 3)[:, :2]), "Tensor must have a stride divisible by 2"),
                         (lambda: ember.view_as_real(z.conj()), "view_as_real doesn't work on unresolved conjugated tensors")):
        with pytest.raises(RuntimeError, match=message):
            bad()
    with pytest.raises(RuntimeError, match="view_as_complex is only supported for float and double tensors"):
        ember.view_as_complex(ember.ones(3, 2, dtype=ember.int64))


def test_conjugate_bit_as_torch_reports_it():
    data = [1 + 2j, -3j]
    for lib in (ember, torch):
        z = lib.tensor(data)
        c = z.conj()
        assert c.is_conj() and not z.is_conj() and not c.resolve_conj().is_conj()
        assert not c.conj().is_conj() and not (c + 1).is_conj() and not c.clone().is_conj()
        assert not lib.conj_physical(z).is_conj()
        assert c.resolve_conj().tolist() == [1 - 2j, 3j] == lib.conj_physical(z).tolist()
        x = lib.ones(2)
        assert lib.conj(x) is x and not lib.conj(x).is_conj() and x.resolve_conj() is x
    m = _cz(_rng(2), 2, 3, 4)
    for view in (lambda lib: lib.tensor(m).mH, lambda lib: lib.tensor(m[0]).H,
                 lambda lib: lib.adjoint(lib.tensor(m))):
        assert view(ember).is_conj() and view(torch).is_conj()
        np.testing.assert_array_equal(view(ember).resolve_conj().numpy(), view(torch).resolve_conj().numpy())


def test_complex_numbers_into_real_tensors():
    """Only complex numbers without an imaginary part fit a real tensor; isreal finds them."""
    for lib in (ember, torch):
        t = lib.zeros(3)
        t[0] = 2 + 0j
        t.fill_(1 + 0j)
        assert t.tolist() == [1.0, 1.0, 1.0]
        for bad in (lambda: t.__setitem__(1, 1j), lambda: t.fill_(1j), lambda: lib.full_like(t, 2 - 1j)):
            with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
                bad()
        assert lib.isreal(lib.tensor([1j, 2, 0j])).tolist() == [False, True, True]
        assert lib.tensor([1.0, 2.0]).isreal().all()


def test_real_to_complex_and_back_casts():
    z = ember.tensor([1 + 2j, -3j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert z.float().tolist() == [1.0, 0.0]
    assert ember.tensor([1.5, 2]).to(ember.complex128).tolist() == [1.5 + 0j, 2 + 0j]


# Functions of complex tensors that torch allows: (name, fn(lib, *tensors), arity).
UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan",
         "sigmoid", "reciprocal", "rsqrt", "expm1", "log1p", "log2", "log10", "square", "neg", "abs",
         "angle", "sgn", "conj_physical", "real", "imag"]
CASES = [(name, (lambda lib, x, name=name: getattr(lib, name)(x)), 1) for name in UNARY] + [
    ("conj", lambda lib, x: x.conj() * 1, 1),
    ("pow_real", lambda lib, x: x ** 2.5, 1),
    ("pow_complex_scalar", lambda lib, x: x ** (1 + 1j), 1),
    ("rpow", lambda lib, x: 2 ** x, 1),
    ("sum", lambda lib, x: x.sum(0), 1),
    ("mean", lambda lib, x: x.mean(), 1),
    ("prod", lambda lib, x: x.prod(1), 1),
    ("cumsum", lambda lib, x: x.cumsum(1), 1),
    ("cumprod", lambda lib, x: x.cumprod(1), 1),
    ("logsumexp", lambda lib, x: lib.logsumexp(x, 1), 1),
    ("logcumsumexp", lambda lib, x: lib.logcumsumexp(x * 3, 1), 1),
    ("logcumsumexp_method", lambda lib, x: x.logcumsumexp(0), 1),
    ("var", lambda lib, x: x.var(1), 1),
    ("std", lambda lib, x: x.std(), 1),
    ("vector_norm", lambda lib, x: lib.linalg.vector_norm(x), 1),
    ("vector_norm_1", lambda lib, x: lib.linalg.vector_norm(x, 1, dim=1), 1),
    ("vector_norm_3", lambda lib, x: lib.linalg.vector_norm(x, 3, dim=0), 1),
    ("view_as_real", lambda lib, x: lib.view_as_real(x), 1),
    ("mH", lambda lib, x: x.mH * 1, 1),
    ("index", lambda lib, x: x[1:, ::2].flip(0), 1),
    ("where", lambda lib, x: lib.where(x.real > 0, x, 0), 1),
    ("masked_fill", lambda lib, x: x.masked_fill(x.imag > 0, 1j), 1),
    ("real_part_of_product", lambda lib, x: (x * x.conj()).real + x.imag, 1),
    ("mul_real_tensor", lambda lib, x: x * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64), 1),
    ("add_complex_alpha", lambda lib, x: lib.add(x, x.exp(), alpha=1j), 1),
    ("lerp", lambda lib, x: lib.lerp(x, x * 2, x), 1),
    ("addcdiv", lambda lib, x: lib.addcdiv(x, x, x + 3), 1),
    ("dist", lambda lib, x: lib.dist(x, x * 0.5), 1),
    ("add", lambda lib, a, b: a + b, 2),
    ("sub", lambda lib, a, b: a - b, 2),
    ("mul", lambda lib, a, b: a * b, 2),
    ("div", lambda lib, a, b: a / b, 2),
    ("pow", lambda lib, a, b: a ** b, 2),
    ("logaddexp", lambda lib, a, b: lib.logaddexp(a * 4, b), 2),
    ("matmul", lambda lib, a, b: a @ b, 2),
    ("einsum", lambda lib, a, b: lib.einsum("ij,kj->ik", a, b), 2),
    ("dot", lambda lib, a, b: lib.dot(a[0], b[0]), 2),
    ("vdot", lambda lib, a, b: lib.vdot(a[0], b[0]), 2),
    ("bmm", lambda lib, a, b: lib.bmm(a[None], b[None]), 2),
    ("addmm", lambda lib, a, b: lib.addmm(a, a, b), 2),
    ("outer", lambda lib, a, b: lib.outer(a[0], b[1]), 2),
]


def _weighted_real_loss(out, w):
    return (out * w).real.sum() if out.is_complex() else (out * w.real).sum()


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("name,fn,arity", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(name, fn, arity, dtype):
    """Values and the gradients of a real loss of the result, vs torch in complex128."""
    rng = _rng(zlib.crc32(name.encode()) % 1000)  # the same inputs in every process (str hashes vary)
    arrays = [_cz(rng, 3, 3) for _ in range(arity)]
    e_in = [ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    e_out, t_out = fn(ember, *e_in), fn(torch, *t_in)
    expected_dtype = fn(torch, *[torch.tensor(a, dtype=getattr(torch, dtype)) for a in arrays]).dtype
    assert e_out.dtype.name == str(expected_dtype)[6:] and tuple(e_out.shape) == tuple(t_out.shape)
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "complex128" else dict(rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().resolve_conj().numpy(), **tol)
    w = _cz(rng, *t_out.shape)
    _weighted_real_loss(e_out, ember.tensor(w, dtype=getattr(ember, dtype))).backward()
    _weighted_real_loss(t_out, torch.tensor(w)).backward()
    for e, t in zip(e_in, t_in):
        assert e.grad.dtype is e.dtype
        np.testing.assert_allclose(e.grad.numpy(), t.grad.resolve_conj().numpy(), **tol)


@pytest.mark.parametrize("fn", [
    lambda z: (z * z).exp(), lambda z: z.abs(), lambda z: z.angle(), lambda z: z.sgn(),
    lambda z: ember.view_as_real(z.tanh()), lambda z: z.conj() * z.real, lambda z: (z @ z.mH).sum(0),
    lambda z: ember.linalg.vector_norm(z, 3, dim=1), lambda z: z.var(0),
    lambda z: ember.view_as_complex(ember.view_as_real(z).flip(-1).contiguous()),
    lambda z: ember.logcumsumexp(z, 1), lambda z: ember.logaddexp(z, z.flip(0) * 2),
], ids=["exp", "abs", "angle", "sgn", "view_as_real", "conj", "matmul", "norm3", "var", "view_as_complex",
        "logcumsumexp", "logaddexp"])
def test_complex_gradcheck(fn):
    """Autograd against float64 central differences in the real and imaginary directions."""
    z = ember.tensor(_cz(_rng(5), 2, 3), requires_grad=True)
    assert gradcheck(fn, (z,), eps=1e-6, atol=1e-6)


def test_logaddexp_and_logcumsumexp_edge_values_as_torch():
    """Overflowing, infinite and nan parts: the larger real part is factored out as torch does."""
    inf, nan = float("inf"), float("nan")
    a = [1 + 2j, -1000 + 3j, 1000, complex(inf, 1), complex(-inf, 0), 0, complex(nan, 1), 2, complex(inf, 0)]
    b = [0.5 - 1j, -999, 999 + 2j, 1 + 1j, complex(-inf, 0), complex(-inf, 1), 3j, complex(inf, 2), complex(-inf, 0)]
    for dtype in ("complex128", "complex64"):
        e_a, e_b = (ember.tensor(v, dtype=getattr(ember, dtype)) for v in (a, b))
        t_a, t_b = (torch.tensor(v, dtype=getattr(torch, dtype)) for v in (a, b))
        for e, t in ((ember.logaddexp(e_a, e_b), torch.logaddexp(t_a, t_b)),
                     (ember.logcumsumexp(e_a, 0), torch.logcumsumexp(t_a, 0)),
                     (ember.logcumsumexp(e_b.flip(0), 0), torch.logcumsumexp(t_b.flip(0), 0))):
            assert e.dtype.name == dtype
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)
    mixed = [lib.tensor(a, dtype=lib.complex64).logaddexp(lib.tensor([1.0] * len(a), dtype=lib.float64))
             for lib in (ember, torch)]
    assert mixed[0].dtype is ember.complex128 and str(mixed[1].dtype) == "torch.complex128"
    np.testing.assert_allclose(mixed[0].numpy(), mixed[1].numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="\"logaddexp2_cpu\" not implemented for 'ComplexFloat'"):
        ember.logaddexp2(ember.tensor([1j]), ember.tensor([1j]))


def test_real_loss_through_complex_intermediates():
    """A real leaf, complex in the middle, a real loss: the gradient is real, as in torch."""
    x = _rng(6).standard_normal(5)
    grads = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        z = lib.complex(t, t.flip(0)) * (1 + 2j)
        loss = (z.exp() * z.conj()).abs().sum() + z.angle().sum()
        loss.backward()
        assert t.grad.dtype == t.dtype
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-10)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        ember.tensor(1j, requires_grad=True).exp().backward()


REFUSED = {
    "lt": lambda lib, z: z < z, "ge": lambda lib, z: z >= 1, "max": lambda lib, z: z.max(),
    "max_dim": lambda lib, z: z.max(0), "amin": lambda lib, z: z.amin(), "argmax": lambda lib, z: z.argmax(),
    "maximum": lambda lib, z: lib.maximum(z, z), "sort": lambda lib, z: z.sort(),
    "clamp": lambda lib, z: z.clamp(0, 1), "relu": lambda lib, z: z.relu(), "floor": lambda lib, z: z.floor(),
    "round": lambda lib, z: z.round(), "sign": lambda lib, z: z.sign(), "erf": lambda lib, z: z.erf(),
    "remainder": lambda lib, z: z % 2, "floor_divide": lambda lib, z: z // 2,
    "atan2": lambda lib, z: lib.atan2(z, z), "softmax": lambda lib, z: z.softmax(0),
    "abs_": lambda lib, z: z.abs_(),  # was: wrote |z| into z
    # these returned NumPy's lexicographic answers:
    "unique": lambda lib, z: lib.unique(z), "unique_consecutive": lambda lib, z: lib.unique_consecutive(z),
    "cummax": lambda lib, z: z.cummax(0), "cummin": lambda lib, z: z.cummin(0),
    "heaviside": lambda lib, z: lib.heaviside(z, z), "mode": lambda lib, z: z.mode(),
    "logit": lambda lib, z: z.logit(), "xlogy": lambda lib, z: lib.xlogy(z, z),
    "xlog1py": lambda lib, z: lib.special.xlog1py(z, z),
    "digamma": lambda lib, z: z.digamma(), "deg2rad": lambda lib, z: z.deg2rad(),
    "rad2deg": lambda lib, z: z.rad2deg(), "nansum": lambda lib, z: z.nansum(),
    "nanmean": lambda lib, z: z.nanmean(), "histc": lambda lib, z: z.histc(),
    "searchsorted": lambda lib, z: lib.searchsorted(z, z), "bucketize": lambda lib, z: lib.bucketize(z, z),
    "erfc": lambda lib, z: z.erfc(),  # was: a silent answer; the rest below raised TypeError
    "erfinv": lambda lib, z: z.erfinv(), "lgamma": lambda lib, z: z.lgamma(), "i0": lambda lib, z: z.i0(),
    "copysign": lambda lib, z: z.copysign(z), "bitwise_not": lambda lib, z: z.bitwise_not(),
    "signbit": lambda lib, z: z.signbit(), "isposinf": lambda lib, z: z.isposinf(),
    "isneginf": lambda lib, z: z.isneginf(),
    # these raised sort's RuntimeError:
    "kthvalue": lambda lib, z: z.kthvalue(1), "median": lambda lib, z: z.median(),
    "median_dim": lambda lib, z: z.median(0), "nanmedian": lambda lib, z: z.nanmedian(),
}


@pytest.mark.parametrize("name", REFUSED)
def test_ops_torch_refuses_on_complex(name):
    fn = REFUSED[name]
    assert_same_error(lambda: fn(ember, ember.tensor([1 + 2j, 3 - 1j])), lambda: fn(torch, torch.tensor([1 + 2j, 3 - 1j])),
                      lambda message: message.splitlines()[0].strip())


@pytest.mark.parametrize("dtypes", [("complex128", "float32"), ("float64", "complex128"),
                                    ("complex64", "complex128")])
def test_matmul_of_complex_and_other_dtypes_names_both(dtypes):
    # Was: KeyError 'complex128' while building the message.
    a, b = (getattr(torch, d) for d in dtypes)
    with pytest.raises(RuntimeError) as t_err:
        torch.ones(2, 3, dtype=a) @ torch.ones(3, 2, dtype=b)
    with pytest.raises(RuntimeError) as e_err:
        ember.ones(2, 3, dtype=getattr(ember, dtypes[0])) @ ember.ones(3, 2, dtype=getattr(ember, dtypes[1]))
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("args", [(0, 1 + 1j, 5), (2j, -1, 4, "complex128"), (0, 1, 3, "complex64")])
def test_linspace_with_complex_ends_or_dtype(args):
    # Was: TypeError from float(1 + 1j).
    *ends, kw = args if len(args) == 4 else (*args, None)
    e = ember.linspace(*ends, **({"dtype": getattr(ember, kw)} if kw else {}))
    t = torch.linspace(*ends, **({"dtype": getattr(torch, kw)} if kw else {}))
    assert repr(e) == repr(t)


def test_complex_to_bool_is_true_where_either_part_is_nonzero():
    # Was: the imaginary part was dropped first, so 1j became False.
    data = [0j, 1j, 2 + 0j, complex(0, -0.0), complex(float("nan"), 0)]
    for cast in (lambda z, lib: z.bool(), lambda z, lib: z.to(lib.bool)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # torch does not warn for this cast
            got = cast(ember.tensor(data), ember)
        assert got.tolist() == cast(torch.tensor(data), torch).tolist() == [False, True, True, False, True]


def test_assigning_real_and_imag_writes_through():
    # Was: AttributeError (the properties had no setter).
    out = []
    for lib in (ember, torch):
        z = lib.tensor([1j, 2 + 0j, -1 - 1j])
        z.real = 5
        z.imag = lib.tensor([[1.0], [2.0]])[1]  # broadcast from a view
        w = lib.tensor([1j, 2 + 0j])
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w.real = x * 2
        (w.abs() * lib.tensor([1.0, 3.0])).sum().backward()
        r = lib.tensor([1.0, 2.0])
        r.real = lib.tensor([3.0, 4.0])
        with pytest.raises(RuntimeError, match="imag is not implemented"):
            r.imag = lib.tensor([3.0, 4.0])
        out.append((z.tolist(), w.tolist(), x.grad.tolist(), r.tolist()))
    np.testing.assert_allclose(np.array(out[0][2]), np.array(out[1][2]), rtol=1e-6)
    assert out[0][0] == out[1][0] and out[0][1] == out[1][1] and out[0][3] == out[1][3]


@pytest.mark.parametrize("ord", [0, 1, 2, 3, 0.5, float("inf"), -float("inf")])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_vector_norm_of_complex_is_real(ord, dtype):
    # Was: ord=0 (the count of nonzeros) came back complex.
    z = np.array([[0j, 1 + 2j, -3j], [2 + 0j, 0j, 1 - 1j]])
    e = ember.linalg.vector_norm(ember.tensor(z, dtype=getattr(ember, dtype)), ord, dim=1)
    t = torch.linalg.vector_norm(torch.tensor(z, dtype=getattr(torch, dtype)), ord, dim=1)
    assert e.dtype.name == str(t.dtype)[6:]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("case", [
    lambda lib: lib.float_power(lib.tensor([1 + 2j, -1j], dtype=lib.complex64), 2),
    lambda lib: lib.float_power(lib.tensor([-8.0, 2.0]), 1 / 3 + 0j),
    lambda lib: lib.float_power(lib.tensor([-8.0, 2.0]), lib.tensor([0.5j, 2 + 0j])),
], ids=["complex_base", "complex_scalar_exponent", "complex_tensor_exponent"])
def test_float_power_with_complex_operands_is_complex128(case):
    # Was: both operands were cast to float64, dropping the imaginary parts.
    e, t = case(ember), case(torch)
    assert e.dtype is ember.complex128 and t.dtype is torch.complex128
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def test_equality_and_predicates_stay_allowed():
    data = [1 + 2j, float("nan") + 0j, 3 - 1j]
    for op in (lambda lib, z: z == z, lambda lib, z: z != 1, lambda lib, z: z.isnan(),
               lambda lib, z: lib.isclose(z, z), lambda lib, z: z.nonzero(), lambda lib, z: z.any()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_array_equal(op(ember, ember.tensor(data)).numpy(), op(torch, torch.tensor(data)).numpy())


def test_random_complex_tensors_as_torch():
    """randn draws torch's numbers for a seed; in-place fills give each part its distribution."""
    for dtype in ("complex64", "complex128"):
        ember.manual_seed(3)
        torch.manual_seed(3)
        e, t = ember.randn(2, 3, dtype=getattr(ember, dtype)), torch.randn(2, 3, dtype=getattr(torch, dtype))
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    w = ember.empty(20000, dtype=ember.cfloat)
    ember.nn.init.normal_(w, std=2.0)
    assert abs(w.abs().square().mean().item() - 4.0) < 0.2 and abs(w.imag.var().item() - 2.0) < 0.1
    ember.nn.init.uniform_(w, -1, 1)
    assert w.real.min().item() >= -1 and w.imag.max().item() < 1 and abs(w.imag.var().item() - 1 / 3) < 0.02
    z = ember.tensor([1.5, -2.0])
    assert z.cfloat().dtype is ember.complex64 and z.cdouble().tolist() == [1.5 + 0j, -2 + 0j]


def test_logsumexp_is_the_principal_value():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((200, 3)) * 3 + 1j * rng.standard_normal((200, 3)) * 3
    np.testing.assert_allclose(ember.logsumexp(ember.tensor(a), 1).numpy(),
                               torch.logsumexp(torch.tensor(a), 1).numpy(), rtol=1e-12, atol=1e-12)
