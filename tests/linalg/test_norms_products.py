"""norm, matrix_norm (every ord), cond, cross, vecdot, multi_dot, vander, diagonal against
torch 2.13, values and gradients."""
import numpy as np
import pytest
from linalg_oracle import DTYPES, compare, torch, well_conditioned

import ember

RNG = np.random.default_rng
INF = float("inf")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, INF, -INF])
def test_matrix_norm(dtype, ord):
    a = RNG(1).standard_normal((2, 4, 3))
    compare(lambda lib, x: lib.linalg.matrix_norm(x, ord), a, dtype=dtype)
    compare(lambda lib, x: lib.linalg.matrix_norm(x, ord, dim=(0, 2), keepdim=True), a, dtype=dtype)


@pytest.mark.parametrize("kwargs", [{}, {"ord": 3, "dim": 1}, {"ord": "nuc"}, {"ord": 2, "dim": (1, 0)},
                                    {"dim": (0, 1), "keepdim": True}])
def test_norm(kwargs):
    compare(lambda lib, x: lib.linalg.norm(x, **kwargs), RNG(2).standard_normal((3, 4)))


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, INF, -INF])
def test_cond(p):
    a = well_conditioned(RNG(3), 2, 3, 3)
    # torch 2.13 cannot differentiate cond for orders other than 2/-2 (it writes into inv_ex's
    # result in place), so those compare values only.
    compare(lambda lib, x: lib.linalg.cond(x, p), a, grad=p in (None, 2, -2))


def test_cond_rectangular():
    compare(lambda lib, x: lib.linalg.cond(x), RNG(4).standard_normal((5, 3)))


def test_cross_vecdot_multi_dot():
    rng = RNG(5)
    compare(lambda lib, x, y: lib.linalg.cross(x, y), rng.standard_normal((2, 1, 3)),
            rng.standard_normal((1, 4, 3)))
    compare(lambda lib, x, y: lib.linalg.cross(x, y, dim=0), rng.standard_normal((3, 2)),
            rng.standard_normal((3, 2)))
    compare(lambda lib, x, y: lib.linalg.vecdot(x, y, dim=0), rng.standard_normal((4, 2)),
            rng.standard_normal((4, 1)))
    mats = [rng.standard_normal(s) for s in [(3,), (3, 4), (4, 2), (2,)]]
    compare(lambda lib, *xs: lib.linalg.multi_dot(list(xs)), *mats)
    mats = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 5)]]
    compare(lambda lib, *xs: lib.linalg.multi_dot(xs), *mats)
    mats = [rng.standard_normal(s) for s in [(10, 2), (2, 30), (30, 3), (3, 20), (20, 1)]]
    compare(lambda lib, *xs: lib.linalg.multi_dot(xs), *mats)
    compare(lambda lib, *xs: lib.linalg.multi_dot(xs), rng.standard_normal(4), rng.standard_normal(4))


@pytest.mark.parametrize("N", [None, 2, 5])
def test_vander(N):
    compare(lambda lib, x: lib.linalg.vander(x, N=N), RNG(6).standard_normal((2, 3)))


def test_diagonal():
    a = RNG(7).standard_normal((2, 3, 4))
    compare(lambda lib, x: lib.linalg.diagonal(x, offset=1), a)
    compare(lambda lib, x: lib.linalg.diagonal(x, dim1=0, dim2=2), a)


def test_errors_as_torch():
    cases = [lambda lib: lib.linalg.cross(lib.ones(2, 4), lib.ones(2, 4)),
             lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), ord=3),
             lambda lib: lib.linalg.cond(lib.eye(3), p="foo"),
             lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(3)),
             lambda lib: lib.linalg.vander(lib.ones(3), N=1),
             lambda lib: lib.linalg.multi_dot([lib.eye(3)])]
    for case in cases:
        with pytest.raises(RuntimeError) as e:
            case(ember)
        with pytest.raises(RuntimeError) as t:
            case(torch)
        assert str(e.value) == str(t.value)
