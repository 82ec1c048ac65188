"""Second-order gradients and dtype corner cases against torch: Hessian-vector products
through compositions (reductions, norms, sorting, indexing, in-place chains, clamp ties)
and integer/bool arithmetic results."""
import pytest

from harness import B, Case, D, I, P, R, T, V, check, inf, params

CASES = [
    Case("int-pow-tensor", lambda L, a, b: a ** b, I(4, low=1), I(4, low=0, high=3), dtypes=(None,)),
    Case("scalar-pow-int", lambda L, b: 2 ** b, I(4, low=0, high=3), dtypes=(None,)),
    Case("bool-div", lambda L, a, b: a / b, B(4), B(4), dtypes=(None,)),
    Case("bool-pow", lambda L, a: a ** 2, B(4), dtypes=(None,)),
    Case("int-float-pow", lambda L, a: a ** 0.5, I(4, low=0), dtypes=(None,)),
    Case("pow-0d-exp", lambda L, a, b: a ** b, R(3), R()),
    Case("pow-tensor-exp-neg-base", lambda L, a, b: a ** b, V([-2.0, -1.0, 0.0]), V([2.0, 3.0, 2.0])),
    Case("mean-tuple-keep", lambda L, a: a.mean((0, 2), keepdim=True), T(R(2, 3, 4))),
    Case("sum-bool-dim-dtype", lambda L, a: a.sum(0, dtype=L.float32), B(3, 2), dtypes=(None,)),
    Case("abs-int8-min", lambda L, a: a.abs(), V([-128, 5], dtype="int8"), dtypes=(None,)),
    Case("neg-uint8", lambda L, a: -a, V([1, 5], dtype="uint8"), dtypes=(None,)),
    Case("int-div-scalar-zero", lambda L, a: a / 0, I(3), dtypes=(None,)),
    Case("uint8-sub", lambda L, a, b: a - b, V([1, 5], dtype="uint8"), V([3, 2], dtype="uint8"), dtypes=(None,)),
    Case("int8-overflow-add", lambda L, a: a + 100, V([100, -100], dtype="int8"), dtypes=(None,)),
    Case("int-float-compare", lambda L, a: a == 1.0, I(5), dtypes=(None,)),
    Case("uint8-int8", lambda L, a, b: a + b, V([200], dtype="uint8"), V([-1], dtype="int8"), dtypes=(None,)),
    Case("round-half-int-decimals", lambda L, a: a.round(decimals=1), V([0.25, 0.35, -0.45])),
    Case("sign-zero-neg", lambda L, a: a.sign(), V([-0.0, 0.0])),
    Case("sigmoid-inplace-grad", lambda L, a: (a * 1).sigmoid_(), R(3), grad2=True),
    Case("chain-inplace", lambda L, a, b: (a * 1).mul_(b).add_(b).div_(b), R(3), P(3), grad2=True),
    Case("where-grad2", lambda L, c, a, b: L.where(c, a * a, b.exp()), B(4), R(4), R(4), grad2=True),
    Case("softmax-grad2-3d", lambda L, a: a.softmax(0), R(2, 3, 2), grad2=True),
    Case("lse-grad2", lambda L, a: a.logsumexp(1), R(3, 4), grad2=True),
    Case("std-grad2", lambda L, a: a.std(1), R(3, 4), grad2=True),
    Case("norm-grad2", lambda L, a: a.norm(dim=1), R(3, 4), grad2=True),
    Case("norm3-grad2", lambda L, a: L.linalg.vector_norm(a, 3, dim=1), R(3, 4), grad2=True),
    Case("norminf-grad2", lambda L, a: L.linalg.vector_norm(a, inf, dim=1), R(3, 4), grad2=True),
    Case("amax-grad2", lambda L, a: (a * a).amax(1), R(3, 4), grad2=True),
    Case("max-dim-grad2", lambda L, a: (a * a).max(1).values, R(3, 4), grad2=True),
    Case("sort-grad2", lambda L, a: (a * a).sort(1).values, D(3, 4), grad2=True),
    Case("gather-grad2", lambda L, a: (a * a).gather(1, L.tensor([[0, 0], [1, 2], [3, 3]])), R(3, 4), grad2=True),
    Case("index_add-grad2", lambda L, a, s: (a*a).index_add(0, L.tensor([0, 0]), s * s), R(2, 3), R(2, 3), grad2=True),
    Case("clamp-grad2", lambda L, a, lo: (a * a).clamp(min=lo), R(3, 4), R(4), grad2=True),
    Case("cumsum-grad2", lambda L, a: (a * a).cumsum(1), R(3, 4), grad2=True),
    Case("div-grad2-scalar", lambda L, a: 1 / (a * a), P(3, 4), grad2=True),
    Case("atan2-grad2", lambda L, a, b: L.atan2(a, b), R(3), R(3), grad2=True),
    Case("lerp-grad2", lambda L, a, b, w: L.lerp(a, b, w), R(3), R(3), R(3), grad2=True),
    Case("einsum-grad2-trace", lambda L, a, b: L.einsum("ij,jk->", a, b), R(2, 3), R(3, 2), grad2=True),
    Case("repeat-grad2", lambda L, a: (a * a).repeat(2, 3), R(2, 2), grad2=True),
    Case("expand-grad2", lambda L, a: (a * a).expand(3, 2, 2), R(2, 2), grad2=True),
    Case("prod-all-grad2-zero", lambda L, a: a.prod(), V([2.0, 0.0, 3.0, 4.0]), grad2=True),
    Case("prod-all-grad2-two-zero", lambda L, a: a.prod(), V([2.0, 0.0, 3.0, 0.0]), grad2=True),
    Case("var-grad2", lambda L, a: a.var(), R(5), grad2=True),
    Case("maximum-grad2-ties", lambda L, a, b: L.maximum(a * a, b), V([1.0, 2.0]), V([1.0, 0.0]), grad2=True),
    Case("abs-grad2", lambda L, a: (a * a * a).abs(), R(4), grad2=True),
    Case("sqrt-grad2", lambda L, a: a.sqrt(), P(4), grad2=True),
    Case("log_softmax-grad2-large", lambda L, a: a.log_softmax(0), V([1e4, -1e4, 0.0]), grad2=True),
    Case("nll-style", lambda L, a, t: -a.log_softmax(1).gather(1, t).mean(), R(4, 5), V([[1], [0], [4], [2]]), grad2=True),
]


@pytest.mark.parametrize("case,dtype", params(CASES))
def test_second_order(case, dtype):
    check(case, dtype)
