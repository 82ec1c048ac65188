"""torch.cov, torch.corrcoef, torch.cross (and Tensor methods), torch.finfo and torch.iinfo
against torch 2.13: values, gradients, dtypes, printed forms and errors."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _x(shape, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _both(fn, *arrays, grad=True):
    """fn on ember and torch tensors of ``arrays``: results and the gradients of a weighted sum."""
    out = []
    for lib in (ember, torch):
        ins = [lib.tensor(a, requires_grad=grad and np.asarray(a).dtype.kind in "fc") for a in arrays]
        r = fn(lib, *ins)
        grads = None
        if grad and r.requires_grad:
            w = lib.tensor(_x(tuple(r.shape), 9), dtype=r.dtype)
            (r * w).real.sum().backward()
            grads = [i.grad for i in ins if i.requires_grad]
        out.append((r, grads))
    (e, eg), (t, tg) = out
    assert e.dtype.name == str(t.dtype)[6:] and tuple(e.shape) == tuple(t.shape)
    tol = dict(rtol=1e-10, atol=1e-12) if e.dtype.itemsize >= 8 else dict(rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
    for a, b in zip(eg or [], tg or []):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-11)


COV_CASES = {
    "rows": (lambda lib, x: lib.cov(x), [_x((3, 7))]),
    "one_variable": (lambda lib, x: lib.cov(x), [_x(7)]),
    "correction_0": (lambda lib, x: lib.cov(x, correction=0), [_x((2, 5))]),
    "correction_3": (lambda lib, x: x.cov(correction=3), [_x((4, 6))]),
    "fweights": (lambda lib, x, f: lib.cov(x, fweights=f), [_x((3, 5)), np.array([1, 2, 0, 4, 1])]),
    "aweights": (lambda lib, x, a: lib.cov(x, aweights=a.detach()), [_x((3, 5)), np.abs(_x(5, 3))]),
    "both_weights": (lambda lib, x, f, a: lib.cov(x, fweights=f, aweights=a.detach(), correction=2),
                     [_x((2, 6)), np.array([1, 2, 1, 3, 1, 1]), np.abs(_x(6, 4))]),
    "complex": (lambda lib, x: lib.cov(x), [_x((3, 5), 1, True)]),
    "integer": (lambda lib, x: lib.cov(x), [np.array([[1, 2, 4], [2, 4, 7]])]),
    "corrcoef": (lambda lib, x: lib.corrcoef(x), [_x((4, 6))]),
    "corrcoef_method_complex": (lambda lib, x: x.corrcoef(), [_x((3, 5), 2, True)]),
    "corrcoef_one_variable": (lambda lib, x: lib.corrcoef(x), [_x(6)]),
    "cross_dim": (lambda lib, a, b: lib.cross(a, b, dim=1), [_x((4, 3)), _x((1, 3), 1)]),
    "cross_method": (lambda lib, a, b: a.cross(b, dim=0), [_x((3, 2), 2, True), _x((3, 2), 3, True)]),
}


@pytest.mark.parametrize("name", COV_CASES)
def test_values_and_gradients_as_torch(name):
    fn, arrays = COV_CASES[name]
    _both(fn, *arrays)


def test_cross_default_dim_warns_as_torch():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
            r = lib.cross(lib.tensor(_x((2, 3, 3))), lib.tensor(_x((2, 3, 3), 1)))
        np.testing.assert_allclose(r.numpy(), np.cross(_x((2, 3, 3)), _x((2, 3, 3), 1), axis=1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
                lib.cross(lib.ones(4, 2), lib.ones(4, 2))


ERRORS = [
    lambda lib: lib.cov(lib.ones(2, 2, 2)),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(3)),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(1, 3, dtype=lib.int64)),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=-lib.ones(3)),
    lambda lib: lib.finfo(lib.int32),
    lambda lib: lib.iinfo(lib.float32),
    lambda lib: lib.iinfo(lib.bool),
]


@pytest.mark.parametrize("bad", ERRORS, ids=range(len(ERRORS)))
def test_errors_as_torch(bad):
    caught = []
    for lib in (ember, torch):
        with pytest.raises((RuntimeError, TypeError)) as info:
            bad(lib)
        caught.append((info.type, str(info.value)))
    assert caught[0] == caught[1]


def test_cov_with_too_few_observations_warns_as_torch():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            r = lib.cov(lib.tensor(_x((3, 1))))
        assert np.isnan(r.numpy()).all()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_finfo_as_torch(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    assert repr(e) == repr(t)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(e, field) == getattr(t, field), field
    assert repr(ember.finfo()) == repr(torch.finfo())


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_as_torch(name):
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    assert repr(e) == repr(t)
    assert (e.bits, e.max, e.min, e.dtype) == (t.bits, t.max, t.min, t.dtype)
