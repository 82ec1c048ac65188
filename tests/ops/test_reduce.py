"""Reductions, scans, norms, softmax and sorting against torch: ``dim`` as int, negative or
tuple, ``keepdim``, empty and 0-dim inputs, non-contiguous inputs, ties, zeros and extreme
values; gradients (second order for sum, mean, softmax, log_softmax)."""
import pytest

from harness import B, Case, D, I, R, S, T, V, check, inf, nan, params

DIMS = {"all": {}, "d1": {"dim": 1}, "dneg": {"dim": -1}, "d0keep": {"dim": 0, "keepdim": True},
        "tuple": {"dim": (0, 2)}, "tuplekeep": {"dim": (-1, 0), "keepdim": True}}
TIES = V([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 5.0, -1.0, 5.0]])


def dim_cases(name, fn, draw=R, dims=DIMS, grad2=False, empty=True):
    """``fn(L, x, **kw)`` over each ``dims`` entry on a (2, 3, 4) input, plus layout, 0-dim
    and empty inputs."""
    cases = [Case(f"{name}-{label}", lambda L, x, kw=kw: fn(L, x, **kw), draw(2, 3, 4), grad2=grad2 and label == "d1")
             for label, kw in dims.items()]
    cases += [
        Case(f"{name}-transposed", lambda L, x: fn(L, x, dim=0), T(draw(3, 4))),
        Case(f"{name}-stepped", lambda L, x: fn(L, x, dim=-1), S(draw(3, 4))),
        Case(f"{name}-0d", lambda L, x: fn(L, x), draw()),
        Case(f"{name}-0d-dim", lambda L, x: fn(L, x, dim=0), draw()),
        Case(f"{name}-0d-dim-keep", lambda L, x: fn(L, x, dim=-1, keepdim=True), draw()),
    ]
    if empty:
        cases += [
            Case(f"{name}-empty", lambda L, x: fn(L, x), draw(0)),
            Case(f"{name}-empty-dim", lambda L, x: fn(L, x, dim=1), draw(2, 0, 3)),
            Case(f"{name}-empty-other-dim", lambda L, x: fn(L, x, dim=2, keepdim=True), draw(2, 0, 3)),
        ]
    return cases


def reduction_cases():
    c = []
    c += dim_cases("sum", lambda L, x, **kw: L.sum(x, **kw), grad2=True)
    c += dim_cases("sum-method", lambda L, x, **kw: x.sum(**kw), empty=False)
    c += dim_cases("mean", lambda L, x, **kw: L.mean(x, **kw), grad2=True)
    c += dim_cases("nansum", lambda L, x, **kw: L.nansum(x, **kw), empty=False)
    c += dim_cases("amax", lambda L, x, **kw: L.amax(x, **kw))
    c += dim_cases("amin", lambda L, x, **kw: x.amin(**kw))
    c += dim_cases("logsumexp", lambda L, x, dim=(0, 1, 2), **kw: L.logsumexp(x, dim, **kw), grad2=True)
    c += dim_cases("count_nonzero", lambda L, x, keepdim=False, **kw: L.count_nonzero(x, **kw),
                   draw=lambda *s: I(*s, low=-1, high=2), dims={k: v for k, v in DIMS.items() if "keep" not in k})
    c += dim_cases("all", lambda L, x, **kw: L.all(x, **{k: v for k, v in kw.items()}),
                   draw=B, dims={k: v for k, v in DIMS.items() if "tuple" not in k})
    c += dim_cases("any", lambda L, x, **kw: x.any(**kw), draw=B, dims={k: v for k, v in DIMS.items() if "tuple" not in k})
    c += [
        Case("sum-int", lambda L, x: [x.sum(), x.sum(1), x.sum(dtype=L.float64)], I(3, 4), dtypes=(None,)),
        Case("sum-bool", lambda L, x: [x.sum(), x.sum(0, keepdim=True)], B(3, 4), dtypes=(None,)),
        Case("sum-int32", lambda L, x: x.sum(0), I(3, 4, dtype="int32"), dtypes=(None,)),
        Case("sum-dtype", lambda L, x: L.sum(x, 1, dtype=L.float64), R(3, 4)),
        Case("sum-dim-list", lambda L, x: x.sum([0, 1]), R(2, 3, 4)),
        Case("sum-dim-empty-tuple", lambda L, x: x.sum(()), R(2, 3)),
        Case("sum-dup-dims", lambda L, x: x.sum((0, 0)), R(2, 3)),
        Case("sum-dim-out-of-range", lambda L, x: x.sum(2), R(2, 3)),
        Case("sum-edge", lambda L, x: x.sum(1), V([[inf, 1.0], [inf, -inf], [nan, 0.0]])),
        Case("sum-out", lambda L, x: L.sum(x, 0, out=L.empty(0, dtype=x.dtype)), R(3, 4), grad=False),
        Case("mean-int", lambda L, x: x.mean(), I(3), dtypes=(None,)),
        Case("mean-int-dtype", lambda L, x: x.mean(dtype=L.float64), I(3), dtypes=(None,)),
        Case("mean-dtype", lambda L, x: x.mean(1, dtype=L.float64), R(2, 3)),
        Case("mean-edge", lambda L, x: x.mean(1), V([[inf, 1.0], [inf, -inf], [nan, 0.0]])),
        Case("nanmean", lambda L, x: [L.nanmean(x), x.nanmean(1)], V([[nan, 1.0, 2.0], [3.0, nan, nan]])),
        Case("amax-ties", lambda L, x: [L.amax(x, 1), x.amax(), x.amax((0, 1))], TIES),
        Case("amin-ties", lambda L, x: [L.amin(x, 0), x.amin()], TIES),
        Case("amax-nan", lambda L, x: x.amax(1), V([[nan, 1.0], [2.0, 3.0]])),
        Case("amax-inf", lambda L, x: x.amax(1), V([[inf, 1.0], [-inf, -inf]])),
        Case("amax-int", lambda L, x: x.amax(0), I(3, 4), dtypes=(None,)),
        Case("amax-empty-all", lambda L, x: x.amax(), R(0, 3)),
        Case("logsumexp-large", lambda L, x: L.logsumexp(x, 1), V([[1e4, 1e4, -1e4], [-1e4, -1e4, -1e4]])),
        Case("logsumexp-inf", lambda L, x: L.logsumexp(x, -1),
             V([[-inf, -inf], [inf, 1.0], [-inf, 0.0], [inf, inf], [nan, 1.0]])),
        Case("logsumexp-int", lambda L, x: L.logsumexp(x, 0), I(3), dtypes=(None,)),
        Case("logsumexp-empty-rows", lambda L, x: L.logsumexp(x, 0), R(0, 3)),
        Case("logsumexp-empty-keep", lambda L, x: L.logsumexp(x, 1, keepdim=True), R(3, 0)),
        Case("count_nonzero-float", lambda L, x: [L.count_nonzero(x), x.count_nonzero(0)],
             V([[0.0, 1.0], [nan, -0.0]])),
        Case("all-float", lambda L, x: [x.all(), x.all(1), L.any(x, 0)], V([[0.0, 1.0], [nan, 2.0]])),
        Case("all-int", lambda L, x: [x.all(), x.any(), x.all(0)], I(3, 4, low=0, high=2), dtypes=(None,)),
        Case("all-uint8", lambda L, x: [x.all(), x.any(1)], I(3, 4, low=0, high=2, dtype="uint8"), dtypes=(None,)),
    ]
    return c


def prod_cases():
    z1 = V([[1.5, 0.0, 2.0, -3.0], [0.0, 0.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
    return dim_cases("prod", lambda L, x, dim=None, **kw: L.prod(x, dim, **kw) if dim is not None else L.prod(x),
                     dims={"all": {}, "d1": {"dim": 1}, "dneg": {"dim": -1}, "d0keep": {"dim": 0, "keepdim": True}},
                     grad2=True) + [
        Case("prod-zeros-dim", lambda L, x: x.prod(1), z1, grad2=True),
        Case("prod-zeros-dim0", lambda L, x: x.prod(0, keepdim=True), z1),
        Case("prod-one-zero-all", lambda L, x: x.prod(), V([1.5, 0.0, 2.0, -3.0]), grad2=True),
        Case("prod-two-zeros-all", lambda L, x: x.prod(), V([1.5, 0.0, 2.0, 0.0])),
        Case("prod-zeros-2d-all", lambda L, x: x.prod(), z1),
        Case("prod-int", lambda L, x: [x.prod(), x.prod(0)], I(3, 4), dtypes=(None,)),
        Case("prod-bool", lambda L, x: x.prod(1), B(3, 4), dtypes=(None,)),
        Case("prod-dtype", lambda L, x: x.prod(dtype=L.float64), R(3)),
        Case("prod-edge", lambda L, x: x.prod(1), V([[inf, 0.0], [nan, 1.0], [inf, -2.0]])),
    ]


def var_cases():
    c = []
    for name in ("var", "std"):
        c += dim_cases(name, lambda L, x, name=name, **kw: getattr(L, name)(x, **kw), grad2=name == "var")
        c += [
            Case(f"{name}-correction0", lambda L, x, name=name: getattr(L, name)(x, 1, correction=0), R(3, 4)),
            Case(f"{name}-correction2", lambda L, x, name=name: getattr(x, name)((0, 1), correction=2), R(3, 4)),
            Case(f"{name}-unbiased-false", lambda L, x, name=name: getattr(L, name)(x, 0, unbiased=False), R(3, 4)),
            Case(f"{name}-unbiased-positional", lambda L, x, name=name: getattr(L, name)(x, False), R(3, 4)),
            Case(f"{name}-single", lambda L, x, name=name: getattr(x, name)(1), R(3, 1)),
            Case(f"{name}-single-nocorrection", lambda L, x, name=name: getattr(x, name)(1, correction=0), R(3, 1)),
            Case(f"{name}-constant", lambda L, x, name=name: getattr(x, name)(1), V([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])),
            Case(f"{name}-int", lambda L, x, name=name: getattr(x, name)(), I(4), dtypes=(None,)),
            Case(f"{name}_mean", lambda L, x, name=name: getattr(L, name + "_mean")(x, 1, keepdim=True), R(3, 4)),
            Case(f"{name}_mean-all", lambda L, x, name=name: getattr(L, name + "_mean")(x, correction=0), R(3, 4)),
            Case(f"{name}_mean-unbiased", lambda L, x, name=name: getattr(L, name + "_mean")(x, 0, False), R(3, 4)),
        ]
    return c


def extreme_cases():
    c = []
    for name in ("max", "min"):
        f = lambda L, x, name=name, **kw: getattr(L, name)(x, **kw)
        c += [
            Case(f"{name}-all", lambda L, x, f=f: f(L, x), R(3, 4)),
            Case(f"{name}-all-ties", lambda L, x, f=f: f(L, x), TIES),
            Case(f"{name}-dim", lambda L, x, f=f: f(L, x, dim=1), R(2, 3, 4), grad2=True),
            Case(f"{name}-dim-keep", lambda L, x, f=f: f(L, x, dim=-1, keepdim=True), T(R(3, 4))),
            Case(f"{name}-dim-ties", lambda L, x, f=f: f(L, x, dim=1), TIES),
            Case(f"{name}-dim0-ties", lambda L, x, f=f: f(L, x, dim=0), TIES),
            Case(f"{name}-method-named", lambda L, x, name=name: [getattr(x, name)(0).values, getattr(x, name)(0).indices],
                 R(3, 4)),
            Case(f"{name}-nan", lambda L, x, f=f: [f(L, x), f(L, x, dim=1)], V([[1.0, nan, 3.0], [1.0, 2.0, 3.0]])),
            Case(f"{name}-0d", lambda L, x, f=f: [f(L, x), f(L, x, dim=0)], R()),
            Case(f"{name}-int", lambda L, x, f=f: [f(L, x), f(L, x, dim=0)], I(3, 4), dtypes=(None,)),
            Case(f"{name}-bool", lambda L, x, f=f: [f(L, x), f(L, x, dim=1)], B(3, 4), dtypes=(None,)),
            Case(f"{name}-empty", lambda L, x, f=f: f(L, x), R(0)),
            Case(f"{name}-empty-dim", lambda L, x, f=f: f(L, x, dim=1), R(2, 0)),
            Case(f"{name}-empty-other-dim", lambda L, x, f=f: f(L, x, dim=0), R(2, 0)),
        ]
    for name in ("argmax", "argmin"):
        f = lambda L, x, name=name, **kw: getattr(L, name)(x, **kw)
        c += [
            Case(f"{name}", lambda L, x, f=f: [f(L, x), f(L, x, dim=1), f(L, x, dim=0, keepdim=True),
                                               f(L, x, keepdim=True)], R(3, 4)),
            Case(f"{name}-ties", lambda L, x, f=f: [f(L, x), f(L, x, dim=1), f(L, x, dim=0)], TIES),
            Case(f"{name}-nan", lambda L, x, f=f: [f(L, x), f(L, x, dim=1)], V([[1.0, nan, nan], [1.0, 2.0, 3.0]])),
            Case(f"{name}-0d", lambda L, x, f=f: [f(L, x), f(L, x, dim=0), f(L, x, dim=0, keepdim=True)], R()),
            Case(f"{name}-int", lambda L, x, f=f: [f(L, x), f(L, x, dim=0)], I(3, 4), dtypes=(None,)),
            Case(f"{name}-bool", lambda L, x, f=f: f(L, x, dim=1), B(3, 4), dtypes=(None,)),
            Case(f"{name}-empty", lambda L, x, f=f: f(L, x), R(0)),
            Case(f"{name}-empty-dim", lambda L, x, f=f: f(L, x, dim=0), R(2, 0)),
        ]
    return c


def scan_cases():
    c = []
    for name in ("cumsum", "cumprod"):
        f = lambda L, x, d, name=name: getattr(L, name)(x, d)
        c += [
            Case(f"{name}-d1", lambda L, x, f=f: f(L, x, 1), R(2, 3, 4), grad2=True),
            Case(f"{name}-dneg", lambda L, x, f=f: f(L, x, -1), T(R(3, 4))),
            Case(f"{name}-d0", lambda L, x, f=f: f(L, x, 0), S(R(3, 4))),
            Case(f"{name}-method", lambda L, x, name=name: getattr(x, name)(dim=0), R(4)),
            Case(f"{name}-0d", lambda L, x, f=f: f(L, x, 0), R()),
            Case(f"{name}-empty", lambda L, x, f=f: f(L, x, 1), R(2, 0, 3)),
            Case(f"{name}-int", lambda L, x, f=f: f(L, x, 1), I(3, 4), dtypes=(None,)),
            Case(f"{name}-bool", lambda L, x, f=f: f(L, x, 0), B(5), dtypes=(None,)),
            Case(f"{name}-dtype", lambda L, x, name=name: getattr(L, name)(x, 0, dtype=L.float64), I(4), dtypes=(None,)),
            Case(f"{name}-inplace", lambda L, x, name=name: getattr(x.clone(), name + "_")(1), R(3, 4)),
        ]
    c += [
        Case("cumprod-one-zero", lambda L, x: x.cumprod(0), V([2.0, 0.0, 3.0, -1.5]), grad2=True),
        Case("cumprod-two-zeros", lambda L, x: x.cumprod(-1), V([[2.0, 0.0, 3.0, 0.0, 4.0], [0.0, 1.0, 2.0, 3.0, 0.0]])),
        Case("cumprod-leading-zero", lambda L, x: x.cumprod(0), V([0.0, 2.0, 3.0])),
        Case("cumsum-edge", lambda L, x: x.cumsum(0), V([1.0, inf, -inf, 2.0])),
    ]
    return c


def norm_cases():
    c = []
    for p in (1, 2, inf, -inf, 0, 3, 0.5, -1):
        f = lambda L, x, p=p, **kw: L.linalg.vector_norm(x, p, **kw)
        c += [
            Case(f"vector_norm-{p}", lambda L, x, f=f: f(L, x), R(3, 4)),
            Case(f"vector_norm-{p}-dim", lambda L, x, f=f: f(L, x, dim=1, keepdim=True), T(R(3, 4))),
            Case(f"vector_norm-{p}-tuple", lambda L, x, f=f: f(L, x, dim=(0, 2)), R(2, 3, 4)),
            Case(f"vector_norm-{p}-zeros", lambda L, x, f=f: f(L, x, dim=1), V([[0.0, 0.0, 0.0], [0.0, 3.0, -4.0]])),
            Case(f"vector_norm-{p}-empty", lambda L, x, f=f: f(L, x), R(0)),
            Case(f"vector_norm-{p}-0d", lambda L, x, f=f: f(L, x), R()),
        ]
    c += [
        Case("vector_norm-int", lambda L, x: L.linalg.vector_norm(x), I(3), dtypes=(None,)),
        Case("vector_norm-dtype", lambda L, x: L.linalg.vector_norm(x, dtype=L.float64), R(3), dtypes=("float32",)),
        Case("vector_norm-edge", lambda L, x: [L.linalg.vector_norm(x, 2, dim=1), L.linalg.vector_norm(x, 1, dim=1)],
             V([[inf, 1.0], [nan, 1.0], [1e30, 1e30]])),
        Case("norm-default", lambda L, x: [L.norm(x), x.norm()], R(3, 4)),
        Case("norm-p", lambda L, x: [x.norm(1), x.norm(p=3, dim=0), L.norm(x, inf, dim=1, keepdim=True)], R(3, 4)),
        Case("norm-fro-dim", lambda L, x: L.norm(x, "fro", dim=(0, 1)), R(3, 4, 2)),
        Case("norm-zero", lambda L, x: x.norm(), V([0.0, 0.0])),
        Case("linalg-norm", lambda L, x: [L.linalg.norm(x), L.linalg.norm(x, dim=1), L.linalg.norm(x, 1, dim=0)],
             R(3, 4)),
        Case("linalg-matrix_norm", lambda L, x: [L.linalg.matrix_norm(x), L.linalg.matrix_norm(x, 1),
                                                L.linalg.matrix_norm(x, -inf)], R(2, 3, 4)),
        Case("dist", lambda L, x, y: [L.dist(x, y), L.dist(x, y, 1)], R(3, 4), R(4)),
    ]
    return c


def softmax_cases():
    c = []
    for name in ("softmax", "log_softmax"):
        f = lambda L, x, d, name=name, **kw: getattr(L, name)(x, d, **kw)
        c += [
            Case(f"{name}-d1", lambda L, x, f=f: f(L, x, 1), R(2, 3, 4), grad2=True),
            Case(f"{name}-dneg", lambda L, x, f=f: f(L, x, -1), T(R(3, 4)), grad2=True),
            Case(f"{name}-d0", lambda L, x, f=f: f(L, x, 0), S(R(3, 4))),
            Case(f"{name}-method", lambda L, x, name=name: getattr(x, name)(dim=-1), R(3, 4)),
            Case(f"{name}-functional", lambda L, x, name=name: getattr(L.nn.functional, name)(x, dim=1), R(3, 4)),
            Case(f"{name}-large", lambda L, x, f=f: f(L, x, 1),
                 V([[1e4, -1e4, 0.0], [1e4, 1e4, 1e4], [-1e4, -1e4, -1e4]]), grad2=True),
            Case(f"{name}-inf", lambda L, x, f=f: f(L, x, 1), V([[-inf, 0.0, 1.0], [-inf, -inf, 2.0]])),
            Case(f"{name}-all-neg-inf", lambda L, x, f=f: f(L, x, 1), V([[-inf, -inf]]), grad=False),
            Case(f"{name}-nan", lambda L, x, f=f: f(L, x, 0), V([nan, 1.0])),
            Case(f"{name}-0d", lambda L, x, f=f: f(L, x, 0), R()),
            Case(f"{name}-empty", lambda L, x, f=f: f(L, x, 1), R(0, 3)),
            Case(f"{name}-empty-dim", lambda L, x, f=f: f(L, x, 1), R(3, 0)),
            Case(f"{name}-dtype", lambda L, x, f=f: f(L, x, 1, dtype=L.float64), R(3, 4), dtypes=("float32",)),
            Case(f"{name}-int", lambda L, x, f=f: f(L, x, 0), I(4), dtypes=(None,)),
        ]
    return c


def sort_cases():
    c = []
    for desc in (False, True):
        c += [
            Case(f"sort-{desc}", lambda L, x, desc=desc: L.sort(x, 1, descending=desc), D(2, 5, 3), grad2=True),
            Case(f"sort-{desc}-dneg", lambda L, x, desc=desc: x.sort(descending=desc), T(D(4, 3))),
            Case(f"sort-{desc}-stable-ties", lambda L, x, desc=desc: L.sort(x, dim=1, descending=desc, stable=True), TIES),
            Case(f"sort-{desc}-ties-values", lambda L, x, desc=desc: x.sort(0, descending=desc).values, TIES, grad=False),
            Case(f"sort-{desc}-nan", lambda L, x, desc=desc: L.sort(x, descending=desc, stable=True),
                 V([3.0, nan, -inf, 1.0, inf, nan])),
            Case(f"argsort-{desc}", lambda L, x, desc=desc: L.argsort(x, 0, descending=desc), D(5, 3)),
            Case(f"argsort-{desc}-stable-ties", lambda L, x, desc=desc: x.argsort(dim=1, descending=desc, stable=True),
                 TIES),
            Case(f"topk-{desc}", lambda L, x, desc=desc: L.topk(x, 2, largest=not desc), D(3, 5)),
            Case(f"topk-{desc}-dim0", lambda L, x, desc=desc: x.topk(3, 0, largest=not desc), S(D(4, 3))),
        ]
    c += [
        Case("sort-0d", lambda L, x: L.sort(x), R()),
        Case("sort-empty", lambda L, x: L.sort(x), R(0)),
        Case("sort-int", lambda L, x: L.sort(x, stable=True), I(3, 5), dtypes=(None,)),
        Case("sort-bool", lambda L, x: x.sort(stable=True), B(6), dtypes=(None,)),
        Case("topk-k0", lambda L, x: L.topk(x, 0), R(4)),
        Case("topk-kall", lambda L, x: L.topk(x, 4), D(4)),
        Case("topk-too-large", lambda L, x: L.topk(x, 5), R(4)),
        # Which of several tied elements topk picks is unspecified, so gradients are not compared.
        Case("topk-ties-values", lambda L, x: L.topk(x, 2, dim=1).values, TIES, grad=False),
        Case("topk-0d", lambda L, x: L.topk(x, 1), R()),
        Case("msort", lambda L, x: L.msort(x), D(4, 3)),
        Case("kthvalue", lambda L, x: [L.kthvalue(x, 2, 1), x.kthvalue(1, 0, keepdim=True)], D(3, 4)),
        Case("median", lambda L, x: [L.median(x), x.median(1)], D(3, 4)),
        Case("median-even", lambda L, x: L.median(x), D(4)),
        Case("unique", lambda L, x: L.unique(x), I(10, low=0, high=4), dtypes=(None,)),
        Case("unique-inverse-counts", lambda L, x: L.unique(x, return_inverse=True, return_counts=True),
             I(3, 4, low=0, high=4), dtypes=(None,)),
        Case("unique-inverse", lambda L, x: x.unique(return_inverse=True), V([2.0, -1.0, 2.0, 0.5]), grad=False),
        Case("unique-counts", lambda L, x: L.unique(x, return_counts=True), V([True, False, True]), dtypes=(None,)),
        Case("unique-empty", lambda L, x: L.unique(x, return_inverse=True, return_counts=True), R(0), grad=False),
        Case("unique-dim", lambda L, x: L.unique(x, dim=0, return_inverse=True),
             V([[1, 2], [0, 1], [1, 2]]), dtypes=(None,)),
        Case("unique_consecutive", lambda L, x: L.unique_consecutive(x, return_inverse=True, return_counts=True),
             V([1, 1, 2, 2, 3, 1, 1]), dtypes=(None,)),
    ]
    return c


CASES = (reduction_cases() + prod_cases() + var_cases() + extreme_cases() + scan_cases() + norm_cases()
         + softmax_cases() + sort_cases())


@pytest.mark.parametrize("case,dtype", params(CASES))
def test_reduce(case, dtype):
    check(case, dtype)
