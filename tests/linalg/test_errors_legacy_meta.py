"""Errors as torch 2.13 raises them (class and message), the top-level legacy forms
(torch.det, svd with ``some``, cholesky_solve...), and every op entry's ``infer`` shape rule
agreeing with its kernel."""
import numpy as np
import pytest
from linalg_oracle import compare, spd, torch, well_conditioned

import ember
from ember import _linalg_legacy as legacy
from ember._ops import OPS

RNG = np.random.default_rng


def _singular_batch(lib):
    a = lib.eye(3).repeat(2, 1, 1)
    a[1, 1, 1] = 0
    return a


ERRORS = [
    lambda lib: lib.linalg.inv(_singular_batch(lib)),
    lambda lib: lib.linalg.inv(lib.zeros(3, 3)),
    # A's LU meets its zero pivot at 2, A^T's (which ember factors) at 3: torch names 2
    lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2, 3], [2, 4, 7], [0, 0, 1]])),
    lambda lib: lib.linalg.inv(lib.zeros(3, 4)),
    lambda lib: lib.linalg.inv(lib.zeros(3)),
    lambda lib: lib.linalg.inv(lib.zeros(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.inv(lib.eye(3, dtype=lib.float16)),
    lambda lib: lib.linalg.cholesky(-lib.eye(3).repeat(2, 1, 1)),
    lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib: lib.linalg.cholesky(lib.zeros(2, 3)),
    lambda lib: lib.linalg.solve(_singular_batch(lib), lib.ones(2, 3)),
    lambda lib: lib.linalg.solve(lib.eye(3).repeat(2, 1, 1), lib.ones(3, 3, 1)),
    lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(4, 1)),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3).repeat(2, 1, 1), lib.ones(3, 3, 1), upper=True),
    lambda lib: lib.linalg.lstsq(lib.eye(3).repeat(2, 1, 1), lib.ones(3, 3, 1)),
    lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(3, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.eigh(lib.eye(3), UPLO="X"),
    lambda lib: lib.linalg.eigh(lib.zeros(3, 4)),
    lambda lib: lib.linalg.det(lib.zeros(3, 4)),
    lambda lib: lib.linalg.matrix_power(lib.zeros(3, 3), -1),
    lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(5, 2), driver="foo"),
    lambda lib: lib.linalg.svd(lib.eye(3), driver="gesvd"),
    lambda lib: lib.linalg.householder_product(lib.ones(4, 3), lib.ones(4)),
    lambda lib: lib.linalg.qr(lib.eye(3), mode="foo"),
    lambda lib: lib.ormqr(lib.ones(5, 3), lib.ones(3), lib.ones(4, 2)),
    lambda lib: lib.ormqr(lib.ones(5, 3), lib.ones(3), lib.ones(2, 4), left=False),
    lambda lib: lib.ormqr(lib.ones(5, 3), lib.ones(2), lib.ones(5, 2)),
    lambda lib: lib.ormqr(lib.ones(5, 3), lib.ones(2), lib.ones(2, 5), left=False),
    lambda lib: lib.ormqr(lib.ones(2, 5, 3), lib.ones(3, 3), lib.ones(2, 5, 2)),
    lambda lib: lib.ormqr(lib.ones(5, 3), lib.ones(3), lib.ones(5, 2, dtype=lib.float64)),
    # the _ex forms and torch.cholesky name themselves (were: the function they wrap)
    lambda lib: lib.linalg.inv_ex(_singular_batch(lib), check_errors=True),
    lambda lib: lib.linalg.solve_ex(_singular_batch(lib), lib.ones(2, 3), check_errors=True),
    lambda lib: lib.linalg.cholesky_ex(-lib.eye(2), check_errors=True),
    lambda lib: lib.cholesky(-lib.eye(2)),
    lambda lib: lib.linalg.lu_factor_ex(lib.zeros(2, 3, 3), check_errors=True),  # a RuntimeError
    lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.complex64)),  # ComplexFloat
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(4, 1)),
    lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(2, 4), left=False),
    lambda lib: lib.linalg.pinv(lib.ones(3)),
    lambda lib: lib.linalg.pinv(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.cond(lib.ones(2, 3), p=1),
    lambda lib: lib.linalg.norm(lib.ones(3), ord="fro"),
    lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2, 2), dim=(0, 1, 2)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
def test_errors_match_torch(case):
    with pytest.raises(RuntimeError) as t:
        ERRORS[case](torch)
    with pytest.raises(RuntimeError) as e:
        ERRORS[case](ember)
    assert str(e.value) == str(t.value)
    assert isinstance(e.value, ember.linalg.LinAlgError) == isinstance(t.value, torch.linalg.LinAlgError)


def test_linalg_error_is_runtime_error():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


def test_cholesky_ex_info_as_torch():
    a = np.stack([np.eye(3), -np.eye(3), np.diag([1.0, 1.0, -1.0])])
    e, t = ember.linalg.cholesky_ex(ember.tensor(a)), torch.linalg.cholesky_ex(torch.tensor(a))
    assert e.info.tolist() == t.info.tolist() and e.info.dtype == ember.int32
    np.testing.assert_allclose(e.L._data[0], np.eye(3))


def _legacy(lib):
    return legacy if lib is ember else torch


def test_legacy_forms():
    rng = RNG(1)
    a, b = well_conditioned(rng, 2, 3, 3), rng.standard_normal((2, 3, 2))
    p = spd(rng, 2, 3, 3)
    compare(lambda lib, x: _legacy(lib).det(x), a)
    compare(lambda lib, x: _legacy(lib).inverse(x), a)
    compare(lambda lib, x: _legacy(lib).logdet(x), p)
    compare(lambda lib, x: _legacy(lib).logdet(x), a, grad=False)  # nan where det < 0
    compare(lambda lib, x: tuple(_legacy(lib).slogdet(x)), a)
    compare(lambda lib, x: _legacy(lib).matrix_exp(x), a)
    compare(lambda lib, x: _legacy(lib).pinverse(x), rng.standard_normal((4, 3)))
    compare(lambda lib, x: _legacy(lib).cholesky(x, True), p)
    for upper in (False, True):
        compare(lambda lib, x, y: _legacy(lib).cholesky_solve(y, lib.linalg.cholesky(x, upper=upper),
                                                              upper), p, b)
        compare(lambda lib, x: _legacy(lib).cholesky_inverse(lib.linalg.cholesky(x, upper=upper),
                                                             upper), p)
    for upper in (False, True):
        for transpose in (False, True):
            compare(lambda lib, x, y: tuple(_legacy(lib).triangular_solve(y, x, upper, transpose)),
                    a, b)
    for some in (True, False):
        def fn(lib, x):
            u, s, v = _legacy(lib).svd(x, some=some)
            sign = lib.sign(u[..., :1, :])
            return s, (u * sign)[..., :, :3], (v * sign[..., :3])
        compare(fn, rng.standard_normal((2, 4, 3)), grad=some)
    e, t = legacy.svd(ember.ones(4, 3), compute_uv=False), torch.svd(torch.ones(4, 3), compute_uv=False)
    assert [tuple(x.shape) for x in e] == [tuple(x.shape) for x in t]
    assert repr(legacy.slogdet(ember.eye(2))).startswith("ember.return_types.slogdet(\nsign=")


@pytest.mark.filterwarnings("ignore:torch.lu is deprecated", "ignore:torch.lu_solve is deprecated")
def test_lu_lu_solve_orgqr_ormqr_as_torch():
    """torch.lu (its deprecation warning; ``info`` instead of an error for a singular matrix),
    lu_solve, orgqr and ormqr (left and right, transposed, batched, fewer reflectors than rows)
    and their Tensor methods: values and gradients as torch's."""
    rng = RNG(5)
    a, b = well_conditioned(rng, 2, 4, 4), rng.standard_normal((2, 4, 3))
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        lu = ember.lu(ember.tensor(a))
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        ember.lu_solve(ember.tensor(b), *lu)
    singular = np.stack([a[0], np.zeros((4, 4))])
    for get_infos in (False, True):
        e, t = ember.tensor(singular).lu(get_infos=get_infos), torch.lu(torch.tensor(singular), get_infos=get_infos)
        assert len(e) == len(t) and type(e).__name__ == type(t).__name__
        for x, y in zip(e, t):
            assert x.dtype.name == str(y.dtype)[6:]
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12, atol=1e-12)
    compare(lambda lib, x, y: lib.lu_solve(y, *lib.lu(x)), a, b)
    compare(lambda lib, x, y: y.lu_solve(*x.lu()), a, b)
    geqrf = torch.geqrf(torch.tensor(rng.standard_normal((2, 5, 3))))
    reflectors, tau = geqrf.a.numpy(), geqrf.tau.numpy()
    compare(lambda lib, x, t: lib.orgqr(x, t), reflectors, tau)
    compare(lambda lib, x, t: x.orgqr(t), reflectors, tau)
    for left in (True, False):
        other = rng.standard_normal((2, 5, 2) if left else (2, 2, 5))
        for transpose in (False, True):
            compare(lambda lib, x, t, c: lib.ormqr(x, t, c, left=left, transpose=transpose), reflectors, tau, other)
    compare(lambda lib, x, t, c: x.ormqr(t, c, False, True), reflectors[..., :2, :2], tau[..., :2],
            rng.standard_normal((2, 3, 2)))


def test_infer_rules_agree_with_kernels():
    rng = RNG(2)
    square, tall = rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 5, 3))
    wide = rng.standard_normal((3, 5))
    cases = [("Inverse", [square], {}), ("Det", [square], {}), ("LogAbsDet", [square], {}),
             ("Solve", [square, tall[:1, :4]], {}),
             ("SolveTriangular", [square, tall[:, :4]], {"upper": True}),
             ("Pinv", [tall], {"atol": 0.0, "rtol": 1e-10}),
             ("Lstsq", [tall, tall[..., :2]], {"rcond": None, "driver": "gelsd"}),
             ("MatrixExp", [square], {}), ("Cholesky", [spd(rng, 2, 3, 3)], {}),
             ("Svd", [wide], {"full_matrices": True}), ("Svd", [tall], {}), ("SvdVals", [wide], {}),
             ("Eigh", [square], {}), ("EigvalsH", [square], {}), ("LuFactor", [wide], {}),
             ("Polar", [tall], {}), ("MatrixSqrth", [spd(rng, 3, 3)], {})]
    cases += [("Qr", [x], {"mode": m}) for x in (tall, wide) for m in ("reduced", "complete", "r")]
    for name, arrays, attrs in cases:
        op = OPS[name]
        outs = op.forward(*arrays, **attrs)
        rules = op.infer(*[ember.tensor(a) for a in arrays], **attrs)
        if op.num_outputs == 1:
            outs, rules = (outs,), (rules,)
        for out, rule in zip(outs, rules, strict=True):
            assert (out is None) == (rule is None), name
            if out is not None:
                assert tuple(rule[0]) == out.shape and rule[1] is ember.float64, name


def test_out_arguments():
    a = ember.tensor(spd(RNG(3), 3, 3))
    dest = ember.empty(0)
    assert ember.linalg.cholesky(a, out=dest) is dest
    np.testing.assert_allclose(dest._data, np.linalg.cholesky(a._data))
    w, q = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.float64)
    result = ember.linalg.eigh(a, out=(w, q))
    assert result.eigenvalues is w and result.eigenvectors is q
    np.testing.assert_allclose(w._data, np.linalg.eigvalsh(a._data))
    with pytest.raises(TypeError, match="tuple of 2"):
        ember.linalg.qr(a, out=dest)
