"""Special functions and number-representation ops (issue 8, item 3) against torch 2.13:
function, method and in-place forms; broadcasting, non-contiguous, empty, 0-dim, integer
and bool inputs; edge values; gradients (second order where torch has them). float32 values
of transcendental functions are compared with torch's float64 run (``float64_oracle``)."""
import inspect

import pytest
import torch

import ember
from harness import B, Case, I, P, R, S, T, U, V, check, inf, nan, params

EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, inf, -inf, nan]
IN_UNIT = [0.0, 1.0, -1.0, 0.5, -0.25, 1.5, inf, nan]  # erfinv, atanh, logit

# name: (draw for random inputs, edge values, second order)
UNARY = {
    "asinh": (R, EDGE, True), "acosh": (lambda *s: P(*s), [1.0, 0.5, 2.0, inf, nan], False),
    "atanh": (U, IN_UNIT, True), "arcsinh": (R, EDGE, False), "arccosh": (P, [1.0, 2.0], False),
    "arctanh": (U, IN_UNIT, False), "exp2": (R, EDGE, True), "erfc": (R, EDGE, True),
    "erfinv": (U, IN_UNIT, True), "logit": (U, IN_UNIT, True), "sinc": (R, EDGE, True),
    "lgamma": (P, EDGE + [-1.0, -2.0], True), "digamma": (P, EDGE + [-1.0, -1.5], True),
    "i0": (R, EDGE, True), "deg2rad": (R, EDGE, True), "rad2deg": (R, EDGE, True),
}


def unary_cases():
    cases = []
    for name, (draw, edge, grad2) in UNARY.items():
        fn = lambda L, x, name=name: getattr(L, name)(x)
        cases += [
            Case(f"{name}-fn", fn, draw(2, 3), grad2=grad2),
            Case(f"{name}-method-transposed", lambda L, x, name=name: getattr(x, name)(), T(draw(3, 4))),
            Case(f"{name}-method-stepped", lambda L, x, name=name: getattr(x, name)(), S(draw(3, 2))),
            Case(f"{name}-inplace", lambda L, x, name=name: getattr(x.clone(), name + "_")(), T(draw(3, 4)),
                 grad=False),  # torch has no derivative for some in-place forms (asinh_)
            Case(f"{name}-0d", fn, draw()),
            Case(f"{name}-empty", fn, draw(2, 0, 3)),
            # digamma's slope at the negative integers is polygamma(1, x) there: the dtype's
            # rounding of pi x (1e15 in float32, 1e32 in float64), which no float64 oracle shares;
            # polygamma-poles compares those values with torch's in each dtype.
            Case(f"{name}-edge", fn, V(edge), grad=name != "digamma"),
            Case(f"{name}-int", fn, I(2, 3, low=1), dtypes=(None,)),
            Case(f"{name}-bool", fn, B(4), dtypes=(None,)),
        ]
    for case in cases:
        case.float64_oracle = True
    return cases


def other_cases():
    cases = [
        Case("logit-eps", lambda L, x: [L.logit(x, eps=0.2), x.logit(0.2)],
             V([0.0, 0.1, 0.2, 0.5, 0.9, 1.0, 1.5]), grad2=True),
        Case("logit-eps-inplace", lambda L, x: x.clone().logit_(eps=0.1), U(3, 4)),
        Case("float16", lambda L, x: [L.erfc(x), L.erfinv(x.clamp(-0.9, 0.9)), L.lgamma(x.abs() + 0.5),
                                      L.i0(x), L.sinc(x), L.exp2(x)], R(5, dtype="float16"),
             dtypes=(None,), grad=False, tol=(2e-3, 2e-3)),
        Case("xlogy-random", lambda L, x, y: [L.xlogy(x, y), x.xlogy(y), x.clone().xlogy_(y)],
             R(3, 4), T(P(4, 3)), grad2=True, float64_oracle=True),
        Case("xlogy-edge", lambda L, x, y: L.xlogy(x, y),
             V([0.0, 0.0, 0.0, 1.0, 2.0, -1.0, nan, 0.0]), V([0.0, nan, -1.0, 0.0, inf, 2.0, 1.0, 3.0]),
             float64_oracle=True),
        Case("xlogy-scalars", lambda L, x: [L.xlogy(x, 3), L.xlogy(2, x), L.xlogy(0, x)], P(3, 1),
             float64_oracle=True),
        Case("xlogy-int", lambda L, x, y: L.xlogy(x, y), I(5), I(5, low=1), dtypes=(None,)),
        Case("xlogy-empty-broadcast", lambda L, x, y: L.xlogy(x, y), R(0, 1), P(3)),
        Case("xlog1py", lambda L, x, y: [L.special.xlog1py(x, y), L.special.xlog1py(x, 0.5), L.special.xlog1py(2, y)],
             R(3, 4), T(P(4, 3)), grad2=True, float64_oracle=True),
        Case("xlog1py-edge", lambda L, x, y: L.special.xlog1py(x, y),
             V([0.0, 0.0, 0.0, 1.0, 2.0, -1.0, nan, 0.0, 1.0]), V([-1.0, nan, -2.0, -1.0, inf, 2.0, 0.0, 3.0, -2.0]),
             float64_oracle=True),
        Case("xlog1py-int", lambda L, x, y: L.special.xlog1py(x, y), I(5), I(5), dtypes=(None,)),
        Case("xlog1py-numbers", lambda L: L.special.xlog1py(2.0, 3.0), dtypes=(None,)),
        Case("logaddexp", lambda L, x, y: [L.logaddexp(x, y), x.logaddexp(y)], R(3, 1), T(R(4, 3)),
             grad2=True, float64_oracle=True),
        Case("logaddexp-edge", lambda L, x, y: L.logaddexp(x, y), V([800.0, -inf, inf, 0.0, nan]),
             V([800.0, 1.0, inf, -inf, 0.0]), grad=False, float64_oracle=True),
        Case("logaddexp-int", lambda L, x, y: L.logaddexp(x, y), I(3), I(3), dtypes=(None,)),
        Case("logaddexp-scalar", lambda L, x: L.logaddexp(x, 1.0), R(3)),
        Case("copysign", lambda L, x, y: [L.copysign(x, y), x.copysign(y), x.clone().copysign_(y)],
             R(3, 4), T(R(4, 3)), grad2=True),
        Case("copysign-edge", lambda L, x, y: L.copysign(x, y), V([0.0, -0.0, 1.0, 2.0, inf, nan, 0.0]),
             V([-1.0, 1.0, -0.0, nan, -1.0, -2.0, -0.0])),
        Case("frexp", lambda L, x: list(L.frexp(x)) + list(x.frexp()), R(3, 4), grad2=True),
        Case("frexp-edge", lambda L, x: list(L.frexp(x)),
             V([0.0, -0.0, 1.0, 8.0, 0.3, inf, -inf, nan, -5.0, 1e-300, 1e-40]), grad=False),
        Case("frexp-int", lambda L, x: L.frexp(x), I(3), dtypes=(None,)),
        Case("frexp-complex", lambda L, x: L.frexp(x), V([1 + 2j]), dtypes=(None,)),
        Case("positive", lambda L, x, i: [L.positive(x), x.positive(), +x, L.positive(i)], T(R(3, 2)), I(3)),
        Case("positive-bool", lambda L, x: L.positive(x), B(3), dtypes=(None,)),
        Case("copysign-scalar-int", lambda L, x: [L.copysign(x, -1), L.copysign(x, 2.5)], I(4), dtypes=(None,)),
        Case("copysign-scalar-float", lambda L, x: L.copysign(x, -1), R(2, 3)),
        Case("copysign-first-scalar", lambda L, x: L.copysign(2, x), R(3)),
        Case("ldexp", lambda L, x, e: [L.ldexp(x, e), x.ldexp(e), x.clone().ldexp_(e)], R(3, 4), I(4),
             grad2=True),
        Case("ldexp-float-exponent", lambda L, x, e: L.ldexp(x, e), R(3, 1), R(4), grad2=True),
        Case("ldexp-int", lambda L, x, e: L.ldexp(x, e), I(4), I(4, low=0), dtypes=(None,)),
        Case("ldexp-float16", lambda L, x, e: L.ldexp(x, e), R(4, dtype="float16"), I(4), dtypes=(None,),
             tol=(2e-3, 2e-3)),
        Case("ldexp-scalar", lambda L, x: L.ldexp(2.0, x), R(3)),
        Case("nextafter", lambda L, x, y: [L.nextafter(x, y), x.nextafter(y), x.clone().nextafter_(y)],
             R(3, 4), T(R(4, 3))),
        Case("nextafter-edge", lambda L, x, y: L.nextafter(x, y), V([0.0, 0.0, 1.0, inf, nan, 1.0]),
             V([1.0, -1.0, 1.0, 0.0, 1.0, nan])),
        Case("nextafter-mixed", lambda L, x, y: L.nextafter(x, y), R(3, dtype="float32"),
             R(3, dtype="float64"), dtypes=(None,)),
        Case("nextafter-int", lambda L, x, y: L.nextafter(x, y), I(3), I(3), dtypes=(None,)),
        Case("nextafter-scalar", lambda L, x: L.nextafter(x, 2.0), R(3)),
        Case("signbit", lambda L, x: [L.signbit(x), x.signbit()], V([0.0, -0.0, 1.0, -1.0, inf, -inf, nan])),
        Case("signbit-int", lambda L, x: L.signbit(x), I(2, 3), dtypes=(None,)),
        Case("signbit-uint8-bool", lambda L, x, b: [L.signbit(x), L.signbit(b)],
             I(4, low=0, high=255, dtype="uint8"), B(3), dtypes=(None,)),
        Case("isposinf-isneginf", lambda L, x: [L.isposinf(x), L.isneginf(x), x.isposinf(), x.isneginf()],
             V([0.0, inf, -inf, nan, 1.0])),
        Case("isposinf-int-bool", lambda L, x, b: [L.isposinf(x), L.isneginf(b)], I(3), B(3), dtypes=(None,)),
        Case("heaviside", lambda L, x, v: [L.heaviside(x, v), x.heaviside(v), x.clone().heaviside_(v)],
             V([-1.5, 0.0, -0.0, 2.0, nan, inf]), V([0.5]), grad=False),
        Case("heaviside-int", lambda L, x, v: L.heaviside(x, v), I(3, 4), I(4), dtypes=(None,)),
        Case("heaviside-mixed-dtypes", lambda L, x, v: L.heaviside(x, v), R(3), I(3), grad=False),
        Case("heaviside-scalar", lambda L, x: L.heaviside(x, 0.5), R(3), grad=False),
        Case("gcd-lcm", lambda L, a, b: [L.gcd(a, b), L.lcm(a, b), a.gcd(b), a.clone().lcm_(b)],
             I(3, 4, low=-12, high=13), I(4, low=-12, high=13), dtypes=(None,)),
        Case("gcd-lcm-zeros", lambda L, a, b: [L.gcd(a, b), L.lcm(a, b)], V([0, 0, 4, -6]), V([0, 5, 0, 4]),
             dtypes=(None,)),
        Case("gcd-mixed-ints", lambda L, a, b: L.gcd(a, b), I(3, low=0, dtype="uint8"), I(3, dtype="int8"),
             dtypes=(None,)),
        Case("gcd-float", lambda L, a, b: L.gcd(a, b), R(3), R(3)),
        Case("gcd-bool", lambda L, a, b: L.lcm(a, b), B(3), B(3), dtypes=(None,)),
        Case("gcd-scalar", lambda L, a: L.gcd(a, 6), I(3), dtypes=(None,)),
        Case("polygamma", lambda L, x: [L.polygamma(1, x), L.polygamma(2, x), x.polygamma(3),
                                        x.clone().polygamma_(1), L.polygamma(0, x)], P(2, 3),
             grad2=True, float64_oracle=True),
        Case("polygamma-edge", lambda L, x: [L.polygamma(1, x), L.polygamma(2, x)],
             V([0.0, -0.0, 1.0, -1.5, 3.0, nan]), grad=False, float64_oracle=True),
        Case("polygamma-poles", lambda L, x: [L.polygamma(n, x) for n in range(1, 5)],
             V([0.0, -0.0, -1.0, -2.0, -3.0, -10.0, -100.0, -12345.0, -1e7, -inf, inf]), grad=False),
        Case("polygamma-int", lambda L, x: L.polygamma(1, x), I(3, low=1), dtypes=(None,)),
        Case("polygamma-negative-n", lambda L, x: L.polygamma(-1, x), P(3)),
    ]
    return cases


@pytest.mark.parametrize("case,dtype", params(unary_cases() + other_cases()))
def test_against_torch(case, dtype):
    check(case, dtype)


def test_heaviside_has_no_derivative():
    x = ember.tensor([1.0, 0.0], requires_grad=True)
    y = ember.heaviside(x, ember.tensor([0.5]))
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="heaviside"):
        y.sum().backward()


def test_i0_second_derivative_at_zero_is_i1_slope():
    # I0''(0) = I1'(0) = 1/2 (the limit the derivative writes in by hand).
    x = ember.zeros(3, dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(ember.i0(x).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    assert h.tolist() == [0.5, 0.5, 0.5]
    t = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.i0(t).sum(), t, create_graph=True)
    assert torch.autograd.grad(tg.sum(), t)[0].tolist() == h.tolist()


def _required_arguments(fn):
    return sum(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in inspect.signature(fn).parameters.values())


def test_special_namespace_matches_torch_special():
    """Every one-input function of ``ember.special`` against torch.special's on a few values
    (those of two inputs have their own cases above)."""
    x = ember.tensor([0.0, 0.5, -1.5, 3.0], dtype=ember.float64, requires_grad=True)
    t = torch.tensor([0.0, 0.5, -1.5, 3.0], dtype=torch.float64, requires_grad=True)
    unary = [name for name in ember.special.__all__ if _required_arguments(getattr(ember.special, name)) == 1]
    assert {"erfc", "gammaln", "expit", "psi"} <= set(unary)  # (the filter leaves the one-input functions)
    for name in unary:
        e, r = getattr(ember.special, name)(x), getattr(torch.special, name)(t)
        assert torch.allclose(torch.tensor(e.tolist(), dtype=torch.float64), r.detach(), equal_nan=True), name
    e, r = ember.special.i1(x), torch.special.i1(t)
    (ge,) = ember.autograd.grad(e.sum(), x)
    (gt,) = torch.autograd.grad(r.sum(), t)
    assert torch.allclose(torch.tensor(ge.tolist(), dtype=torch.float64), gt)


def test_softmax_functions_require_dim_as_torchs():
    """torch.softmax, torch.log_softmax, their torch.special forms and the Tensor methods take
    ``dim`` as a required argument (TypeError without it); only ``F.softmax`` guesses it."""
    for L in (ember, torch):
        x = L.ones(2, 3)
        for call in (lambda: L.softmax(x), lambda: L.log_softmax(x), lambda: L.special.softmax(x),
                     lambda: L.special.log_softmax(x), lambda: x.softmax(), lambda: x.log_softmax()):
            with pytest.raises(TypeError):
                call()
        assert (L.softmax(x, 1).sum().item(), L.special.softmax(x, dim=0).sum().item()) == (2, 3)
