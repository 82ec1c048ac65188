"""In-place arithmetic on sparse COO tensors vs torch 2.13 (add_, sub_, mul_, div_,
floor_divide_, neg_, zero_, copy_, the augmented operators, a dense tensor updated by a sparse
one), out-of-place sparse * sparse and // and functions of uncoalesced tensors, and torch's
errors where it refuses."""
import operator

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

INDICES = [[1, 0, 1, 2, 0], [2, 0, 2, 3, 1]]  # (1, 2) twice: uncoalesced


def uncoalesced(lib, dtype="float64", scale=1.0):
    values = lib.tensor([v * scale for v in (3.0, -4.0, 5.0, 0.5, 2.0)], dtype=getattr(lib, dtype))
    return lib.sparse_coo_tensor(lib.tensor(INDICES), values, (3, 4))


def coalesced(lib, seed=0):
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5)
    return lib.tensor(dense).to_sparse()


def dense(lib, seed=1):
    return lib.tensor(np.random.default_rng(seed).standard_normal((3, 4)))


CASES = {
    "add_ sparse": lambda L: uncoalesced(L).add_(coalesced(L)),
    "add_ coalesced": lambda L: coalesced(L).add_(coalesced(L, 1)),
    "add_ alpha": lambda L: coalesced(L).add_(uncoalesced(L), alpha=-2.5),
    "sub_ sparse": lambda L: uncoalesced(L).sub_(coalesced(L)),
    "mul_ number": lambda L: uncoalesced(L).mul_(-3),
    "mul_ 0-d tensor": lambda L: uncoalesced(L).mul_(L.tensor(2.0, dtype=L.float64)),
    "mul_ sparse": lambda L: uncoalesced(L).mul_(coalesced(L)),
    "mul_ coalesced": lambda L: coalesced(L).mul_(coalesced(L, 1)),
    "mul_ uncoalesced both": lambda L: uncoalesced(L).mul_(uncoalesced(L, scale=2.0)),
    "mul_ dense": lambda L: uncoalesced(L).mul_(dense(L)),
    "div_ number": lambda L: uncoalesced(L).div_(4),
    "floor_divide_": lambda L: uncoalesced(L).floor_divide_(2),
    "neg_": lambda L: uncoalesced(L).neg_(),
    "zero_": lambda L: uncoalesced(L).zero_(),
    "copy_": lambda L: uncoalesced(L).copy_(coalesced(L)),
    "abs_ coalesced": lambda L: coalesced(L).abs_(),
    "sin_ coalesced": lambda L: coalesced(L).sin_(),
    "+=": lambda L: operator.iadd(uncoalesced(L), coalesced(L)),
    "-=": lambda L: operator.isub(uncoalesced(L), uncoalesced(L)),
    "*=": lambda L: operator.imul(uncoalesced(L), 1.5),
    "/=": lambda L: operator.itruediv(uncoalesced(L), 3),
    "dense.add_": lambda L: dense(L).add_(uncoalesced(L), alpha=2),
    "dense.sub_": lambda L: dense(L).sub_(uncoalesced(L)),
    "dense.mul_": lambda L: dense(L).mul_(uncoalesced(L)),
    "float.add_ int": lambda L: uncoalesced(L).add_(uncoalesced(L, "int64")),
    # out of place
    "sparse * sparse": lambda L: uncoalesced(L) * coalesced(L),
    "coalesced * coalesced": lambda L: coalesced(L) * coalesced(L, 1),
    "sparse // 2": lambda L: uncoalesced(L) // 2,
    "coalesced + coalesced": lambda L: coalesced(L) + coalesced(L, 1),
    "sqrt of uncoalesced": lambda L: (uncoalesced(L) * uncoalesced(L)).sqrt(),
    "sin of uncoalesced": lambda L: uncoalesced(L).sin(),
}


@pytest.mark.parametrize("name", CASES)
def test_in_place_sparse_arithmetic_equals_torchs(name):
    t, e = CASES[name](torch), CASES[name](ember)
    assert e.is_sparse == t.is_sparse and str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    if t.is_sparse:
        if t.is_coalesced():  # torch's coalesced results: those of coalesced operands and of functions
            assert e.is_coalesced() and e._nnz() == t._nnz()
        t, e = t.to_dense(), e.to_dense()
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, atol=1e-15)


def test_in_place_ops_write_into_the_same_tensor():
    s = uncoalesced(ember)
    version = s._version
    assert s.add_(coalesced(ember)) is s and s.mul_(2) is s and s.zero_() is s
    assert s._nnz() == 0 and s._version > version


ERRORS = {
    "add_ dense": lambda L: uncoalesced(L).add_(dense(L)),
    "div_ sparse": lambda L: uncoalesced(L).div_(coalesced(L)),
    "div_ dense": lambda L: uncoalesced(L).div_(dense(L)),
    "copy_ dense": lambda L: uncoalesced(L).copy_(dense(L)),
    "dense.copy_ sparse": lambda L: dense(L).copy_(uncoalesced(L)),
    "add_ sizes": lambda L: uncoalesced(L).add_(L.sparse_coo_tensor(L.tensor(INDICES), L.ones(5), (4, 4))),
    "mul_ sizes": lambda L: uncoalesced(L).mul_(L.sparse_coo_tensor(L.tensor(INDICES), L.ones(5), (4, 4))),
    "int mul_ float": lambda L: uncoalesced(L, "int64").mul_(2.5),
    "fill_": lambda L: uncoalesced(L).fill_(1.0),
}


@pytest.mark.parametrize("name", ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as want:
        ERRORS[name](torch)
    with pytest.raises(want.type) as got:
        ERRORS[name](ember)
    if name in ("div_ sparse", "div_ dense", "copy_ dense", "dense.copy_ sparse", "mul_ sizes"):
        assert str(got.value) == str(want.value)
