"""Scans, finite differences and order statistics (issue 8, item 3) against torch 2.13:
cummax/cummin, logcumsumexp, diff, gradient, trapezoid, aminmax, mode, nanmedian, quantile
and nanquantile; function and method forms, non-contiguous, empty and 0-dim inputs, ties and
NaN, integer dtypes, torch's errors, and gradients (second order where torch has them)."""
import pytest
import torch

import ember
from harness import B, Case, D, I, P, R, S, T, V, check, inf, nan, params

TIES = [1.0, 3.0, 2.0, 3.0, 0.0, 3.0]
WITH_NAN = [1.0, nan, 2.0, nan, 5.0, -1.0]


def scan_cases():
    cases = []
    for name in ("cummax", "cummin"):
        cases += [
            Case(f"{name}-dim0", lambda L, x, name=name: getattr(L, name)(x, 0), R(4, 3), grad2=True),
            Case(f"{name}-method-transposed", lambda L, x, name=name: getattr(x, name)(-1), T(R(3, 5))),
            Case(f"{name}-stepped", lambda L, x, name=name: getattr(L, name)(x, 1), S(R(2, 4))),
            Case(f"{name}-ties", lambda L, x, name=name: getattr(L, name)(x, 0), V(TIES)),
            Case(f"{name}-nan", lambda L, x, name=name: getattr(L, name)(x, 0), V(WITH_NAN)),
            Case(f"{name}-0d", lambda L, x, name=name: getattr(L, name)(x, 0), R()),
            Case(f"{name}-empty", lambda L, x, name=name: getattr(L, name)(x, 1), R(3, 0)),
            Case(f"{name}-int", lambda L, x, name=name: getattr(L, name)(x, 0), I(7, low=-2, high=3),
                 dtypes=(None,)),
            Case(f"{name}-bool", lambda L, x, name=name: getattr(L, name)(x, 0), B(6), dtypes=(None,)),
            Case(f"{name}-bad-dim", lambda L, x, name=name: getattr(L, name)(x, 2), R(3, 2)),
        ]
    cases += [
        Case("logcumsumexp", lambda L, x: [L.logcumsumexp(x, 1), x.logcumsumexp(0)], T(R(4, 3)),
             grad2=True, float64_oracle=True),
        Case("logcumsumexp-large", lambda L, x: L.logcumsumexp(x, 0), V([800.0, 1.0, -800.0, 799.0]),
             float64_oracle=True),
        Case("logcumsumexp-inf", lambda L, x: L.logcumsumexp(x, 0), V([-inf, -inf, 0.0, inf]), grad=False),
        Case("logcumsumexp-0d-empty", lambda L, x, y: [L.logcumsumexp(x, 0), L.logcumsumexp(y, 0)], R(),
             R(0, 2)),
        Case("logcumsumexp-int", lambda L, x: L.logcumsumexp(x, 0), I(3), dtypes=(None,)),
        Case("diff", lambda L, x: [L.diff(x), x.diff(dim=0), L.diff(x, n=2, dim=-1)], T(R(4, 5)), grad2=True),
        Case("diff-prepend-append", lambda L, x, p, a: L.diff(x, n=2, dim=1, prepend=p, append=a),
             R(3, 4), R(3, 1), R(3, 2)),
        Case("diff-n-too-large", lambda L, x: [L.diff(x, n=5), L.diff(x, n=0)], R(3)),
        Case("diff-int-bool", lambda L, x, b: [L.diff(x), L.diff(b)], I(6), B(6), dtypes=(None,)),
        Case("diff-0d", lambda L, x: L.diff(x), R()),
        Case("diff-empty", lambda L, x: L.diff(x, dim=0), R(0, 3)),
        Case("gradient-uniform", lambda L, x: L.gradient(x), T(R(5, 4)), grad2=True),
        Case("gradient-spacing", lambda L, x: [L.gradient(x, spacing=2.0, dim=1),
                                               L.gradient(x, spacing=[0.5, 3.0]),
                                               L.gradient(x, dim=[0], edge_order=2)], R(4, 5)),
        Case("gradient-coordinates", lambda L, x, c: L.gradient(x, spacing=(c,), dim=0, edge_order=2),
             R(5, 2), V([0.0, 0.5, 2.0, 2.5, 4.0], grad=False)),
        Case("gradient-coordinates-order1", lambda L, x, c: L.gradient(x, spacing=(c,)),
             R(5), V([0.0, 1.0, 3.0, 3.5, 6.0], grad=False)),
        Case("gradient-int", lambda L, x: L.gradient(x), I(4, 3), dtypes=(None,)),
        Case("gradient-too-short", lambda L, x: L.gradient(x, edge_order=2), R(2)),
        Case("trapezoid", lambda L, y: [L.trapezoid(y), L.trapezoid(y, dx=0.5, dim=0), L.trapz(y)],
             T(R(4, 5)), grad2=True),
        Case("trapezoid-x", lambda L, y, x: [L.trapezoid(y, x), L.trapezoid(y, x.reshape(1, 4).expand(3, 4))],
             R(3, 4), D(4)),
        Case("trapezoid-int-empty", lambda L, y, e: [L.trapezoid(y), L.trapezoid(e)], I(5), R(0),
             dtypes=(None,)),
        Case("cumulative_trapezoid", lambda L, y, x: [L.cumulative_trapezoid(y), L.cumulative_trapezoid(y, x, dim=0)],
             R(4, 3), D(4)),
    ]
    return cases


def statistics_cases():
    quantile_q = [0.0, 0.3, 0.5, 0.75, 1.0]
    cases = [
        Case("aminmax", lambda L, x: [tuple(L.aminmax(x)), tuple(x.aminmax(dim=1)),
                                      tuple(L.aminmax(x, dim=0, keepdim=True)), tuple(L.aminmax(x, keepdim=True))],
             T(R(3, 4))),
        Case("aminmax-ties", lambda L, x: [tuple(L.aminmax(x)), tuple(L.aminmax(x, dim=0))], V([2.0, 2.0, 1.0, 1.0])),
        Case("aminmax-int-0d", lambda L, x, s: [tuple(L.aminmax(x, dim=0)), tuple(L.aminmax(s))], I(4, 2), I(),
             dtypes=(None,)),
        Case("aminmax-empty", lambda L, x: L.aminmax(x), R(0, 3)),
        Case("aminmax-empty-dim", lambda L, x: L.aminmax(x, dim=0), R(0, 3)),
        Case("mode", lambda L, x: [tuple(L.mode(x)), tuple(x.mode(0, keepdim=True))],
             V([[3.0, 1.0, 3.0, 1.0, 2.0], [2.0, 2.0, 5.0, 5.0, 5.0], [4.0, 0.0, 1.0, 2.0, 3.0]])),
        Case("mode-int-transposed", lambda L, x: tuple(L.mode(x, 0)), T(I(6, 3, low=0, high=3)), dtypes=(None,)),
        Case("mode-nan-0d", lambda L, x, s: [tuple(L.mode(x)), tuple(L.mode(s))], V([3.0, nan, nan, 1.0]), R()),
        Case("mode-bool", lambda L, x: tuple(L.mode(x)), B(7), dtypes=(None,)),
        Case("nanmedian", lambda L, x: [L.nanmedian(x), tuple(L.nanmedian(x, 1)), tuple(x.nanmedian(0, keepdim=True))],
             V([[1.0, nan, 3.0, 2.0], [nan, 5.0, nan, nan], [4.0, 0.0, nan, 2.0]])),
        # Which NaN's index an all-NaN slice reports is the sort kernel's choice: values only.
        Case("nanmedian-all-nan", lambda L, x: [L.nanmedian(x), L.nanmedian(x, 1).values],
             V([[nan, nan, nan], [1.0, nan, 2.0]])),
        Case("median-ties-share-the-gradient", lambda L, x: [L.median(x), L.nanmedian(x)],
             V([[2.0, 1.0], [2.0, 3.0], [0.0, 2.0]]), grad2=True),
        Case("median-empty-in-graph", lambda L, x: [L.median(x), L.nanmedian(x)], R(0, 2)),
        Case("nanmedian-random", lambda L, x: [L.nanmedian(x), tuple(L.nanmedian(x, -1))], T(D(4, 5))),
        Case("nanmedian-int-empty-0d", lambda L, x, e, s: [L.nanmedian(x), L.nanmedian(e), tuple(L.nanmedian(s, 0))],
             I(5), R(0), R(), dtypes=(None,)),
        Case("quantile", lambda L, x: [L.quantile(x, 0.4), x.quantile(0.25, dim=1),
                                       L.quantile(x, 0.5, dim=0, keepdim=True), L.quantile(x, 0.9, keepdim=True)],
             T(D(4, 5)), grad2=True),
        Case("quantile-q-tensor", lambda L, x, q: [L.quantile(x, q), L.quantile(x, q, dim=1, keepdim=True),
                                                   L.quantile(x, q[2])],
             D(3, 4), V(quantile_q, grad=False)),
        Case("quantile-nan", lambda L, x: [L.quantile(x, 0.5, dim=1), L.nanquantile(x, 0.5, dim=1),
                                           L.nanquantile(x, 0.3)],
             V([[1.0, nan, 3.0, 2.0], [nan, nan, nan, nan], [4.0, 0.0, 1.0, 2.0]])),
        Case("nanquantile-random", lambda L, x: [L.nanquantile(x, 0.7, dim=0), x.nanquantile(0.2)], D(5, 3)),
        Case("quantile-0d", lambda L, x: [L.quantile(x, 0.5), L.quantile(x, 0.5, dim=0)], R()),
    ]
    for mode in ("lower", "higher", "midpoint", "nearest"):
        cases.append(Case(f"quantile-{mode}", lambda L, x, q, mode=mode: [
            L.quantile(x, q, dim=0, interpolation=mode), L.nanquantile(x, q, interpolation=mode)],
            D(5, 2), V([0.0, 0.125, 0.25, 0.375, 0.5, 0.9], grad=False)))
    for label, fn in {"int": lambda L, x: L.quantile(x.long(), 0.5), "q-high": lambda L, x: L.quantile(x, 1.5),
                      "q-tensor-high": lambda L, x: L.quantile(x, x.new_tensor([0.5, 2.0])),
                      "q-2d": lambda L, x: L.quantile(x, x.new_tensor([[0.5]])),
                      "q-dtype": lambda L, x: L.quantile(x, L.tensor([0.5], dtype=L.float16)),
                      "interpolation": lambda L, x: L.quantile(x, 0.5, interpolation="cubic"),
                      "empty": lambda L, x: L.quantile(x[:0], 0.5),
                      "nanquantile-q": lambda L, x: L.nanquantile(x, -0.5)}.items():
        cases.append(Case(f"quantile-error-{label}", fn, R(4), grad=False))
    return cases


@pytest.mark.parametrize("case,dtype", params(scan_cases() + statistics_cases()))
def test_against_torch(case, dtype):
    check(case, dtype)


def test_cummax_backward_reaches_the_running_maximum():
    import ember
    x = ember.tensor([1.0, 3.0, 2.0, 3.0], requires_grad=True)
    ember.cummax(x, 0).values.sum().backward()
    t = torch.tensor([1.0, 3.0, 2.0, 3.0], requires_grad=True)
    torch.cummax(t, 0).values.sum().backward()
    assert x.grad.tolist() == t.grad.tolist() == [1.0, 2.0, 0.0, 1.0]


@pytest.mark.parametrize("fn", [
    lambda L, x: L.cummax(x, 0)[0], lambda L, x: L.cummin(x, 0)[1], lambda L, x: L.softmax(x, 1),
    lambda L, x: L.log_softmax(x, 0), lambda L, x: L.nn.functional.softmax(x, -1),
])
def test_scans_and_softmax_of_a_transposed_input_are_contiguous_as_torchs(fn):
    # torch allocates these results contiguous: .view(-1) of them works
    results = [fn(lib, lib.arange(12.0).reshape(3, 4).t()) for lib in (torch, ember)]
    assert [tuple(r.stride()) for r in results] == [(3, 1), (3, 1)]
    assert results[1].view(-1).double().tolist() == pytest.approx(results[0].view(-1).double().tolist(), rel=1e-6)
