"""Matrix products against torch: matmul's 1-D/2-D/batched/broadcast rules, mm, bmm, addmm,
outer, dot, einsum (traces, diagonals, batches, ellipsis), tensordot; gradients (second order
for matmul and einsum) and the shape/dtype errors torch raises."""
import operator

import pytest

from harness import Case, I, R, S, T, check, params

import ember

torch = pytest.importorskip("torch")

MATMUL_SHAPES = {
    "1d-1d": ((4,), (4,)), "1d-2d": ((3,), (3, 5)), "2d-1d": ((2, 3), (3,)), "2d-2d": ((2, 3), (3, 4)),
    "batched": ((2, 3, 4), (2, 4, 5)), "bcast-batch": ((2, 1, 3, 4), (5, 4, 2)), "2d-batched": ((3, 4), (2, 4, 5)),
    "1d-batched": ((4,), (2, 4, 3)), "batched-1d": ((2, 3, 4), (4,)), "empty-k": ((2, 0), (0, 3)),
    "empty-batch": ((0, 2, 3), (3, 4)), "empty-rows": ((0, 3), (3, 2)),
}


def matmul_cases():
    c = []
    for label, (sa, sb) in MATMUL_SHAPES.items():
        c.append(Case(f"matmul-{label}", lambda L, a, b: L.matmul(a, b), R(*sa), R(*sb),
                      grad2=label in ("2d-2d", "bcast-batch", "1d-2d")))
    c += [
        Case("matmul-operator", lambda L, a, b: a @ b, T(R(3, 2)), S(R(3, 4))),
        Case("matmul-method", lambda L, a, b: a.matmul(b), R(2, 3), T(R(4, 3))),
        Case("matmul-int", lambda L, a, b: a @ b, I(2, 3), I(3, 2), dtypes=(None,)),
        Case("matmul-dtype-mismatch", lambda L, a, b: a @ b, R(2, 3), I(3, 2)),
        Case("matmul-float-mismatch", lambda L, a, b: a @ b, R(2, 3, dtype="float32"), R(3, 2, dtype="float64"),
             dtypes=(None,)),
        Case("matmul-shape-mismatch", lambda L, a, b: a @ b, R(2, 3), R(4, 5)),
        Case("matmul-1d-mismatch", lambda L, a, b: a @ b, R(3), R(4)),
        Case("matmul-batch-mismatch", lambda L, a, b: a @ b, R(2, 3, 4), R(3, 4, 5)),
        Case("matmul-0d", lambda L, a, b: a @ b, R(), R(3)),
        Case("mm", lambda L, a, b: [L.mm(a, b), a.mm(b)], R(2, 3), R(3, 4)),
        Case("mm-1d", lambda L, a, b: L.mm(a, b), R(3), R(3, 4)),
        Case("mm-mismatch", lambda L, a, b: L.mm(a, b), R(2, 3), R(2, 3)),
        Case("bmm", lambda L, a, b: [L.bmm(a, b), a.bmm(b)], R(2, 3, 4), T(R(2, 5, 4))),
        Case("bmm-batch-mismatch", lambda L, a, b: L.bmm(a, b), R(2, 3, 4), R(3, 4, 5)),
        Case("bmm-2d", lambda L, a, b: L.bmm(a, b), R(3, 4), R(4, 5)),
        Case("mv", lambda L, a, b: [L.mv(a, b), a.mv(b)], R(2, 3), R(3)),
        Case("addmm", lambda L, x, a, b: [L.addmm(x, a, b), x.addmm(a, b, beta=0.5, alpha=2)], R(2, 4), R(2, 3),
             R(3, 4)),
        Case("addmm-bcast-input", lambda L, x, a, b: L.addmm(x, a, b, beta=-1), R(4), R(2, 3), R(3, 4)),
        Case("addmm-beta0", lambda L, x, a, b: L.addmm(x, a, b, beta=0), R(2, 4), R(2, 3), R(3, 4)),
        Case("baddbmm", lambda L, x, a, b: L.baddbmm(x, a, b, alpha=0.5), R(1, 4), R(2, 3, 5), R(2, 5, 4)),
        Case("outer", lambda L, a, b: [L.outer(a, b), a.outer(b), L.ger(a, b)], R(3), S(R(4))),
        Case("outer-2d", lambda L, a, b: L.outer(a, b), R(2, 2), R(3)),
        Case("outer-int", lambda L, a, b: L.outer(a, b), I(3), I(2), dtypes=(None,)),
        Case("dot", lambda L, a, b: [L.dot(a, b), a.dot(b)], R(4), S(R(4))),
        Case("dot-2d", lambda L, a, b: L.dot(a, b), R(2, 2), R(2, 2)),
        Case("dot-mismatch", lambda L, a, b: L.dot(a, b), R(3), R(4)),
        Case("inner", lambda L, a, b: L.inner(a, b), R(4), R(4)),
        Case("tensordot", lambda L, a, b: [L.tensordot(a, b), L.tensordot(a, b, dims=([1, 2], [0, 1])),
                                          L.tensordot(a, b, dims=1)], R(2, 3, 4), R(3, 4, 5)),
        Case("rmatmul-list", lambda L, a: operator.matmul(a, a.t()), R(2, 3)),
    ]
    return c


EINSUM = {
    "matmul": ("ij,jk->ik", ((2, 3), (3, 4))), "implicit": ("ij,jk", ((2, 3), (3, 4))),
    "trace": ("ii->", ((3, 3),)), "trace-implicit": ("ii", ((3, 3),)), "diagonal": ("ii->i", ((3, 3),)),
    "batch": ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))), "ellipsis": ("...ij,...jk->...ik", ((2, 3, 4), (2, 4, 5))),
    "ellipsis-bcast": ("...ij,...jk", ((2, 1, 3, 4), (5, 4, 2))), "ellipsis-mid": ("i...j->j...i", ((2, 3, 4, 5),)),
    "outer": ("i,j->ij", ((3,), (4,))), "sum": ("ij->", ((3, 4),)), "transpose": ("ij->ji", ((3, 4),)),
    "three": ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 5))), "bilinear": ("bi,oij,bj->bo", ((2, 3), (4, 3, 5), (2, 5))),
    "dot": ("i,i->", ((4,), (4,))), "hadamard": ("ij,ij->ij", ((2, 3), (2, 3))),
    "batch-diag": ("bii->bi", ((2, 3, 3),)), "repeated-out": ("iij->ij", ((3, 3, 2),)),
    "sum-dims": ("ijk->j", ((2, 3, 4),)), "broadcast-1": ("ij,kj->ikj", ((2, 3), (4, 3))),
    "spaces": ("ij, jk -> ik", ((2, 3), (3, 4))),
}


def einsum_cases():
    c = [Case(f"einsum-{label}", lambda L, *ops, eq=eq: L.einsum(eq, *ops), *[R(*s) for s in shapes],
              grad2=label in ("matmul", "trace", "diagonal", "bilinear"))
         for label, (eq, shapes) in EINSUM.items()]
    c += [
        Case("einsum-list", lambda L, a, b: L.einsum("ij,jk->ik", [a, b]), R(2, 3), R(3, 4)),
        Case("einsum-transposed", lambda L, a, b: L.einsum("ij,jk->ik", a, b), T(R(3, 2)), S(R(3, 4))),
        Case("einsum-int", lambda L, a, b: L.einsum("ij,jk->ik", a, b), I(2, 3), I(3, 4), dtypes=(None,)),
        Case("einsum-empty", lambda L, a, b: L.einsum("ij,jk->ik", a, b), R(2, 0), R(0, 3)),
        Case("einsum-mismatch", lambda L, a, b: L.einsum("ij,jk->ik", a, b), R(2, 3), R(4, 5)),
        Case("einsum-wrong-operand-count", lambda L, a: L.einsum("ij,jk->ik", a), R(2, 3)),
    ]
    return c


@pytest.mark.parametrize("case,dtype", params(matmul_cases() + einsum_cases()))
def test_linalg(case, dtype):
    check(case, dtype)


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", ((2, 3), (4, 2))), ("ij,jk->ik", ((2, 3, 1), (3, 2))), ("ii->i", ((2, 3),)),
    ("bixy,ioxy->boxy", ((2, 1, 6, 5), (1, 4, 6, 4))),
])
def test_einsum_shape_errors_name_the_subscript_as_torch(equation, shapes):
    """Was: NumPy's broadcast message (or its own) instead of torch's naming the subscript."""
    with pytest.raises(RuntimeError) as t:
        torch.einsum(equation, *[torch.ones(s) for s in shapes])
    with pytest.raises(RuntimeError) as e:
        ember.einsum(equation, *[ember.ones(s) for s in shapes])
    assert str(e.value) == str(t.value)
