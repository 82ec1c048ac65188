"""torch.linalg on complex inputs against torch 2.13: values and the gradients of a real loss,
through gauge-invariant quantities where a factor is only unique up to phases (singular and
eigen-vectors); eig/eigvals (complex results of real inputs too); a complex gradcheck of
the decompositions; and saving/loading complex tensors in torch's file format."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

torch = pytest.importorskip("torch")


def _cz(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _inputs(seed):
    rng = np.random.default_rng(seed)
    a, b = _cz(rng, 2, 3, 3), _cz(rng, 2, 3, 2)
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + 3 * np.eye(3)  # Hermitian positive-definite
    tall = _cz(rng, 2, 4, 3)
    return a, b, h, tall


def _svd_product(lib, a):
    u, s, vh = lib.linalg.svd(a, full_matrices=False)
    return (u * s.to(u.dtype).unsqueeze(-2)) @ vh + u @ vh


CASES = {
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), "ab"),
    "inv": (lambda lib, a: lib.linalg.inv(a), "a"),
    "det": (lambda lib, a: lib.linalg.det(a), "a"),
    "logdet": (lambda lib, a: lib.logdet(a), "a"),  # was: NotImplementedError from sign < 0
    "slogdet": (lambda lib, a: lib.linalg.slogdet(a)[0] * lib.linalg.slogdet(a)[1], "a"),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), "t"),
    "svd": (_svd_product, "t"),
    "eigvalsh": (lambda lib, h: lib.linalg.eigvalsh(h), "h"),
    "eigh": (lambda lib, h: (lambda w, v: (v * w.to(v.dtype).unsqueeze(-2)) @ v.mH + v.abs())(*lib.linalg.eigh(h)), "h"),
    "qr": (lambda lib, a: (lambda q, r: q @ (r.mH @ r) + q)(*lib.linalg.qr(a)), "t"),
    "qr_square": (lambda lib, a: (lambda q, r: q @ r.exp() + r)(*lib.linalg.qr(a)), "a"),
    "cholesky": (lambda lib, h: lib.linalg.cholesky(h), "h"),
    "cholesky_upper": (lambda lib, h: lib.linalg.cholesky(h, upper=True), "h"),
    "eig": (lambda lib, a: (lambda w, v: w.unsqueeze(-2) * v.abs())(*lib.linalg.eig(a)), "a"),
    "eigvals": (lambda lib, a: lib.linalg.eigvals(a), "a"),
    "pinv": (lambda lib, t: lib.linalg.pinv(t), "t"),
    "lstsq": (lambda lib, t, b: lib.linalg.lstsq(t, lib.cat([b, b[:, :1]], -2)).solution, "tb"),
    "matrix_norm": (lambda lib, a: lib.linalg.matrix_norm(a, "nuc") + lib.linalg.matrix_norm(a), "a"),
    "matrix_exp": (lambda lib, a: lib.linalg.matrix_exp(a), "a"),
    "matrix_power": (lambda lib, a: lib.linalg.matrix_power(a, -2), "a"),
    "solve_triangular": (lambda lib, a, b: lib.linalg.solve_triangular(a.triu() + 3 * lib.eye(3), b, upper=True), "ab"),
    "cholesky_solve": (lambda lib, h, b: lib.cholesky_solve(b, lib.linalg.cholesky(h)), "hb"),
    "lu": (lambda lib, a: (lambda p, l, u: p @ l @ u + l + u)(*lib.linalg.lu(a)), "a"),
    "vecdot": (lambda lib, a, b: lib.linalg.vecdot(a, b[..., :1]), "ab"),
    "householder_product": (lambda lib, t, b: lib.linalg.householder_product(t, b[..., 0]), "tb"),
}


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("name", CASES)
def test_complex_values_and_gradients_match_torch(name, dtype):
    fn, args = CASES[name]
    arrays = dict(zip("abht", _inputs(len(name))))
    e_in = [ember.tensor(arrays[k], dtype=getattr(ember, dtype), requires_grad=True) for k in args]
    t_in = [torch.tensor(arrays[k], requires_grad=True) for k in args]
    e, t = fn(ember, *e_in), fn(torch, *t_in)
    expected = fn(torch, *[torch.tensor(arrays[k], dtype=getattr(torch, dtype)) for k in args]).dtype
    assert e.dtype.name == str(expected)[6:] and tuple(e.shape) == tuple(t.shape)
    tol = dict(rtol=1e-9, atol=1e-9) if dtype == "complex128" else dict(rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().resolve_conj().numpy(), **tol)
    w = _cz(np.random.default_rng(1), *t.shape)
    loss = (lambda out, w: (out * w).real.sum() if out.is_complex() else (out * w.real).sum())
    loss(e, ember.tensor(w, dtype=getattr(ember, dtype))).backward()
    loss(t, torch.tensor(w)).backward()
    for x, y in zip(e_in, t_in):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.resolve_conj().numpy(), **tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_eig_of_real_matrices_is_complex(dtype):
    a = np.random.default_rng(2).standard_normal((2, 4, 4))
    e_in = ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=True)
    t_in = torch.tensor(a, requires_grad=True)
    (ew, ev), (tw, tv) = ember.linalg.eig(e_in), torch.linalg.eig(t_in)
    assert ew.dtype is getattr(ember, dtype).to_complex() and ev.dtype is ew.dtype
    tol = dict(rtol=1e-9, atol=1e-9) if dtype == "float64" else dict(rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ew.detach().numpy(), tw.detach().numpy(), **tol)
    np.testing.assert_allclose(ev.detach().abs().numpy(), tv.detach().abs().numpy(), **tol)
    (ew.abs().sum() + ev.abs().sum()).backward()
    (tw.abs().sum() + tv.abs().sum()).backward()
    assert e_in.grad.dtype is e_in.dtype
    np.testing.assert_allclose(e_in.grad.numpy(), t_in.grad.numpy(), **tol)
    assert ember.linalg.eig(ember.zeros(0, 3, 3)).eigenvalues.shape == (0, 3)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("hermitian", [True, False])
def test_ldl_solve_of_complex_hermitian_and_symmetric_matrices(hermitian, dtype):
    # Was: the complex input went to the real LAPACK routine, its imaginary part dropped.
    a, b, h, _ = _inputs(7)
    m = h if hermitian else a + np.swapaxes(a, -1, -2)  # Hermitian / complex symmetric
    tol = dict(rtol=1e-9, atol=1e-9) if dtype == "complex128" else dict(rtol=1e-3, atol=1e-3)
    dt = getattr(ember, dtype)
    x = ember.linalg.ldl_solve(*ember.linalg.ldl_factor(ember.tensor(m, dtype=dt), hermitian=hermitian),
                               ember.tensor(b, dtype=dt), hermitian=hermitian)
    assert x.dtype is dt
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(m, b), **tol)
    t = torch.linalg.ldl_factor(torch.tensor(m), hermitian=hermitian)
    np.testing.assert_allclose(x.numpy(), torch.linalg.ldl_solve(*t, torch.tensor(b), hermitian=hermitian).numpy(), **tol)


@pytest.mark.parametrize("fn", [
    lambda a: ember.linalg.cholesky(a @ a.mH + 3 * ember.eye(3)),
    lambda a: _svd_product(ember, a),
    lambda a: (lambda w, v: v.abs() + w)(*ember.linalg.eigh(a + a.mH)),
    lambda a: (lambda w, v: v.abs() + w)(*ember.linalg.eig(a)),
    lambda a: (lambda q, r: q @ r.exp() + r)(*ember.linalg.qr(a)),
    lambda a: ember.linalg.slogdet(a).sign, lambda a: ember.linalg.inv(a) + ember.linalg.det(a),
], ids=["cholesky", "svd", "eigh", "eig", "qr", "slogdet_sign", "inv_det"])
def test_complex_gradcheck(fn):
    a = ember.tensor(_cz(np.random.default_rng(4), 3, 3), requires_grad=True)
    assert gradcheck(fn, (a,), eps=1e-6, atol=1e-6)


def test_save_and_load_complex_tensors_in_torch_format(tmp_path):
    z = ember.tensor([[1 + 2j, 3 - 1j]], dtype=ember.complex128)
    w = ember.tensor([1j], dtype=ember.complex64).expand(3)
    ember.save({"z": z, "w": w}, tmp_path / "e.pt")
    from_torch = torch.load(tmp_path / "e.pt")
    assert repr(from_torch["z"]) == repr(z) and repr(from_torch["w"]) == repr(w)
    torch.save({"a": torch.tensor([1 + 1j, 2j]), "b": torch.tensor([[1j, 2]], dtype=torch.complex128).t()},
               tmp_path / "t.pt")
    loaded = ember.load(tmp_path / "t.pt")
    assert loaded["a"].dtype is ember.complex64 and loaded["a"].tolist() == [1 + 1j, 2j]
    assert loaded["b"].dtype is ember.complex128 and loaded["b"].tolist() == [[1j], [2 + 0j]]
