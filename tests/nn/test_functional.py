"""ember.nn.functional (activations, linear, dropout, pad, distances) against torch: values,
gradients (second order for a subset), broadcasting, non-contiguous, empty and edge inputs,
and the errors torch raises."""
import os
import sys
import warnings

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ops"))
from harness import Case, I, R, S, T, V, check, inf, nan, params  # noqa: E402

EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -3.0, 6.0, 20.0, 1e4, -1e4, inf, -inf, nan]


def F(L):
    return L.nn.functional


# name: (keyword arguments, draws second-order gradients)
ACTIVATIONS = {
    "relu": ({}, False), "relu6": ({}, False), "leaky_relu": ({"negative_slope": 0.2}, True),
    "elu": ({"alpha": 0.7}, True), "selu": ({}, True), "celu": ({"alpha": 1.5}, True),
    "gelu": ({}, True), "gelu-tanh": ({"approximate": "tanh"}, True), "silu": ({}, True),
    "mish": ({}, True), "softplus": ({"beta": 2.0, "threshold": 5.0}, True), "softsign": ({}, True),
    "sigmoid": ({}, True), "tanh": ({}, True), "hardtanh": ({"min_val": -0.5, "max_val": 2.0}, False),
    "hardswish": ({}, True), "hardsigmoid": ({}, False), "logsigmoid": ({}, True),
    "tanhshrink": ({}, True), "softshrink": ({"lambd": 0.5}, False), "hardshrink": ({"lambd": 0.5}, False),
    "threshold": ({"threshold": 0.5, "value": -2.0}, False), "rrelu": ({}, False),
}
INPLACE = ("relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardtanh",
           "hardswish", "hardsigmoid", "threshold", "rrelu")
# torch's float32 kernels of these differ by CPU (its AVX-512 GELU gives gelu(inf) = nan): float32
# runs are compared with torch's float64 run rounded to float32 (harness.Case's float64_oracle).
TRANSCENDENTAL = {"gelu", "silu", "mish", "elu", "selu", "celu", "softplus", "sigmoid", "tanh",
                  "logsigmoid", "tanhshrink"}
# Edge values where torch's gradient itself is nan/inf and the formula choice is arbitrary.
EDGE_NO_GRAD = {"mish", "silu", "gelu", "gelu-tanh", "tanhshrink", "softsign", "elu", "selu", "celu"}


def _fn(name):
    base, kwargs = name.split("-")[0], ACTIVATIONS[name][0]
    return lambda L, x: getattr(F(L), base)(x, **kwargs)


def activation_cases():
    cases = []
    for name, (_, grad2) in ACTIVATIONS.items():
        fn = _fn(name)
        cases += [
            Case(f"{name}", fn, R(3, 4), grad2=grad2),
            Case(f"{name}-wide", lambda L, x, fn=fn: fn(L, x * 4), R(5, 6)),
            Case(f"{name}-transposed", fn, T(R(3, 4))),
            Case(f"{name}-stepped", fn, S(R(3, 2))),
            Case(f"{name}-0d", fn, R()),
            Case(f"{name}-empty", fn, R(0, 3)),
            Case(f"{name}-edge", fn, V(EDGE), grad=name not in EDGE_NO_GRAD),
            Case(f"{name}-edge-finite", fn, V([v for v in EDGE if abs(v) < inf])),
            Case(f"{name}-int", fn, I(2, 3), dtypes=(None,)),
        ]
        base = name.split("-")[0]
        if base in INPLACE:
            kwargs = ACTIVATIONS[name][0]
            cases.append(Case(f"{name}-inplace", lambda L, x, base=base, kwargs=kwargs:
                              getattr(F(L), base)(x * 1, inplace=True, **kwargs), R(3, 4)))
            cases.append(Case(f"{name}-inplace-int", lambda L, x, base=base, kwargs=kwargs:
                              getattr(F(L), base)(x.clone(), inplace=True, **kwargs), I(3, 4),
                              dtypes=(None,)))
    for case in cases:
        case.float64_oracle = case.name.split("-")[0] in TRANSCENDENTAL
    return cases


@pytest.mark.parametrize("case,dtype", params(activation_cases()))
def test_activation(case, dtype):
    check(case, dtype)


def test_inplace_returns_input_and_records_history():
    for name in INPLACE:
        x = ember.randn(3, 4, requires_grad=True)
        y = x * 1
        out = getattr(ember.nn.functional, name)(y, inplace=True, **ACTIVATIONS[name][0])
        assert out is y
        out.sum().backward()
        assert x.grad is not None and tuple(x.grad.shape) == (3, 4)


def test_inplace_on_leaf_raises():
    x = ember.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ember.nn.functional.relu(x, inplace=True)


def test_rrelu_training_slopes_in_range():
    x = ember.tensor(-np.ones(2000, np.float32), requires_grad=True)
    y = ember.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)


SOFTMAXES = ("softmax", "log_softmax", "softmin")


def softmax_cases():
    cases = []
    for name in SOFTMAXES:
        for dim in (0, 1, -1):
            cases.append(Case(f"{name}-dim{dim}", lambda L, x, name=name, dim=dim: getattr(F(L), name)(x, dim),
                              R(3, 4), grad2=dim == 1))
        cases += [
            Case(f"{name}-transposed", lambda L, x, name=name: getattr(F(L), name)(x, 1), T(R(3, 4))),
            Case(f"{name}-3d", lambda L, x, name=name: getattr(F(L), name)(x, 2), R(2, 3, 4)),
            Case(f"{name}-large", lambda L, x, name=name: getattr(F(L), name)(x * 1e4, 1), R(3, 5)),
            Case(f"{name}-edge", lambda L, x, name=name: getattr(F(L), name)(x, 0),
                 V([1e4, -1e4, 0.0, 1e4]), grad=True),
            Case(f"{name}-inf", lambda L, x, name=name: getattr(F(L), name)(x, 0), V([-inf, 0.0, 1.0]),
                 grad=False),
            Case(f"{name}-empty", lambda L, x, name=name: getattr(F(L), name)(x, 1), R(0, 3)),
            Case(f"{name}-dtype", lambda L, x, name=name: getattr(F(L), name)(x, 1, dtype=L.float64),
                 R(2, 3), dtypes=("float32",)),
            Case(f"{name}-int", lambda L, x, name=name: getattr(F(L), name)(x, 1), I(2, 3), dtypes=(None,)),
        ]
    return cases


@pytest.mark.parametrize("case,dtype", params(softmax_cases()))
def test_softmax_family(case, dtype):
    check(case, dtype)


def test_softmax_implicit_dim_warns_and_picks_torch_dim():
    for shape in ((4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)):
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            e = ember.nn.functional.softmax(ember.tensor(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = torch.nn.functional.softmax(torch.tensor(x))
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


OTHER = [
    Case("prelu-scalar", lambda L, x, w: F(L).prelu(x, w), R(3, 4), V([0.25])),
    Case("prelu-channels", lambda L, x, w: F(L).prelu(x, w), R(2, 3, 4), R(3), grad2=True),
    Case("prelu-1d", lambda L, x, w: F(L).prelu(x, w), R(5), V([0.1])),
    Case("prelu-edge", lambda L, x, w: F(L).prelu(x, w), V([0.0, -1.0, 2.0, -1e4]), V([0.3])),
    Case("prelu-mismatch", lambda L, x, w: F(L).prelu(x, w), R(3, 4), R(3)),
    Case("prelu-int", lambda L, x, w: F(L).prelu(x, w), I(3, 4), I(1), dtypes=(None,)),
    Case("glu", lambda L, x: F(L).glu(x), R(3, 4), grad2=True),
    Case("glu-dim0", lambda L, x: F(L).glu(x, 0), R(4, 3)),
    Case("glu-odd", lambda L, x: F(L).glu(x), R(3, 5)),
    Case("glu-0d", lambda L, x: F(L).glu(x), R()),
    Case("normalize", lambda L, x: F(L).normalize(x), R(3, 4), grad2=True),
    Case("normalize-p1-dim0", lambda L, x: F(L).normalize(x, 1.0, 0), R(3, 4)),
    Case("normalize-zero-row", lambda L, x: F(L).normalize(x, dim=1), V([[0.0, 0.0], [3.0, 4.0]])),
    Case("cosine_similarity", lambda L, a, b: F(L).cosine_similarity(a, b), R(3, 4), R(3, 4), grad2=True),
    Case("cosine_similarity-bcast", lambda L, a, b: F(L).cosine_similarity(a, b, dim=-1), R(3, 1, 4), R(2, 4)),
    Case("cosine_similarity-zero", lambda L, a, b: F(L).cosine_similarity(a, b),
         V([[0.0, 0.0], [1.0, 2.0]]), V([[1.0, 1.0], [0.0, 0.0]])),
    Case("cosine_similarity-mismatch", lambda L, a, b: F(L).cosine_similarity(a, b), R(3, 4), R(2, 4)),
    Case("cosine_similarity-int", lambda L, a, b: F(L).cosine_similarity(a, b), I(3, 4), I(3, 4), dtypes=(None,)),
    Case("pairwise_distance", lambda L, a, b: F(L).pairwise_distance(a, b), R(3, 4), R(3, 4), grad2=True),
    Case("pairwise_distance-p1-keepdim", lambda L, a, b: F(L).pairwise_distance(a, b, 1.0, keepdim=True),
         R(3, 4), R(3, 4)),
    Case("pairwise_distance-bcast", lambda L, a, b: F(L).pairwise_distance(a, b), R(3, 4), R(4)),
    Case("pairwise_distance-1d", lambda L, a, b: F(L).pairwise_distance(a, b, 3.0), R(4), R(4)),
    Case("pairwise_distance-mismatch", lambda L, a, b: F(L).pairwise_distance(a, b), R(3, 4), R(2, 4)),
    Case("pdist", lambda L, x: F(L).pdist(x), R(5, 3)),
    Case("pdist-p1", lambda L, x: F(L).pdist(x, 1.0), R(4, 3)),
    Case("pdist-inf", lambda L, x: F(L).pdist(x, float("inf")), R(4, 3)),
    Case("pdist-duplicate-rows", lambda L, x: F(L).pdist(x), V([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])),
    Case("pdist-one-row", lambda L, x: F(L).pdist(x), R(1, 3)),
    Case("pdist-1d", lambda L, x: F(L).pdist(x), R(3)),
]


@pytest.mark.parametrize("case,dtype", params(OTHER))
def test_other(case, dtype):
    check(case, dtype)


LINEAR = [
    Case("linear", lambda L, x, w, b: F(L).linear(x, w, b), R(4, 3), R(5, 3), R(5), grad2=True),
    Case("linear-nobias", lambda L, x, w: F(L).linear(x, w), R(4, 3), R(5, 3), grad2=True),
    Case("linear-3d", lambda L, x, w, b: F(L).linear(x, w, b), R(2, 4, 3), R(5, 3), R(5)),
    Case("linear-1d", lambda L, x, w, b: F(L).linear(x, w, b), R(3), R(5, 3), R(5), grad2=True),
    Case("linear-transposed", lambda L, x, w, b: F(L).linear(x, w, b), T(R(4, 3)), T(R(5, 3)), R(5)),
    Case("linear-stepped", lambda L, x, w, b: F(L).linear(x, w, b), S(R(4, 3)), R(5, 3), R(5)),
    Case("linear-empty-batch", lambda L, x, w, b: F(L).linear(x, w, b), R(0, 3), R(5, 3), R(5)),
    Case("linear-zero-features", lambda L, x, w, b: F(L).linear(x, w, b), R(4, 0), R(5, 0), R(5)),
    Case("linear-1d-weight", lambda L, x, w: F(L).linear(x, w), R(4, 3), R(3)),
    Case("linear-bias-bcast", lambda L, x, w, b: F(L).linear(x, w, b), R(4, 3), R(5, 3), R(4, 5)),
    Case("linear-bias-0d", lambda L, x, w, b: F(L).linear(x, w, b), R(4, 3), R(5, 3), R()),
    Case("linear-shape-mismatch", lambda L, x, w: F(L).linear(x, w), R(2, 4, 3), R(5, 4)),
    Case("linear-1d-mismatch", lambda L, x, w: F(L).linear(x, w), R(4), R(5, 3)),
    Case("linear-bias-mismatch", lambda L, x, w, b: F(L).linear(x, w, b), R(4, 3), R(5, 3), R(2, 5)),
    Case("linear-dtype-mismatch", lambda L, x, w: F(L).linear(x, w.double()), R(4, 3), R(5, 3),
         dtypes=("float32",)),
    Case("linear-int", lambda L, x, w: F(L).linear(x, w), I(4, 3), I(5, 3), dtypes=(None,)),
    Case("bilinear", lambda L, a, b, w, bias: F(L).bilinear(a, b, w, bias), R(4, 3), R(4, 2), R(5, 3, 2), R(5),
         grad2=True),
    Case("bilinear-3d", lambda L, a, b, w: F(L).bilinear(a, b, w), R(2, 4, 3), R(2, 4, 2), R(5, 3, 2)),
    Case("bilinear-mismatch1", lambda L, a, b, w: F(L).bilinear(a, b, w), R(4, 4), R(4, 2), R(5, 3, 2)),
    Case("bilinear-mismatch2", lambda L, a, b, w: F(L).bilinear(a, b, w), R(4, 3), R(4, 5), R(5, 3, 2)),
    Case("bilinear-batch", lambda L, a, b, w: F(L).bilinear(a, b, w), R(4, 3), R(3, 2), R(5, 3, 2)),
]


@pytest.mark.parametrize("case,dtype", params(LINEAR))
def test_linear(case, dtype):
    check(case, dtype)


def test_linear_error_messages():
    f = ember.nn.functional
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 3x5\)"):
        f.linear(ember.zeros(2, 3, 4), ember.zeros(5, 3))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(1x4 and 3x5\)"):
        f.linear(ember.zeros(4), ember.zeros(5, 3))
    with pytest.raises(RuntimeError, match=r"Target sizes: \[3, 5\].  Tensor sizes: \[2, 5\]"):
        f.linear(ember.zeros(3, 4), ember.zeros(5, 4), ember.zeros(2, 5))
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 5 but expected 4"):
        f.bilinear(ember.zeros(3, 4), ember.zeros(3, 5), ember.zeros(6, 4, 4))


PAD = [
    Case("pad-1", lambda L, x: F(L).pad(x, (1, 2)), R(2, 3), grad2=True),
    Case("pad-2d-value", lambda L, x: F(L).pad(x, (1, 0, 2, 1), value=-1.5), R(2, 3, 4)),
    Case("pad-negative", lambda L, x: F(L).pad(x, (-1, 2, 1, -1)), R(3, 4)),
    Case("pad-zero", lambda L, x: F(L).pad(x, (0, 0)), R(3, 4)),
    Case("pad-all-dims", lambda L, x: F(L).pad(x, (1, 1, 1, 1)), R(2, 3)),
    Case("pad-transposed", lambda L, x: F(L).pad(x, (1, 1)), T(R(3, 4))),
    Case("pad-empty", lambda L, x: F(L).pad(x, (1, 1)), R(0, 3)),
    Case("pad-int", lambda L, x: F(L).pad(x, (1, 1), value=2), I(2, 3), dtypes=(None,)),
    Case("pad-odd", lambda L, x: F(L).pad(x, (1,)), R(3, 4)),
    Case("pad-too-long", lambda L, x: F(L).pad(x, (1, 1, 1, 1, 1, 1)), R(3, 4)),
    Case("pad-bad-mode", lambda L, x: F(L).pad(x, (1, 1), mode="foo"), R(3, 4)),
    Case("pad-negative-size", lambda L, x: F(L).pad(x, (-3, -2)), R(3, 4)),
]
for _mode in ("reflect", "replicate", "circular"):
    PAD += [
        Case(f"pad-{_mode}-1d", lambda L, x, m=_mode: F(L).pad(x, (2, 1), mode=m), R(2, 3, 4), grad2=True),
        Case(f"pad-{_mode}-1d-unbatched", lambda L, x, m=_mode: F(L).pad(x, (3, 0), mode=m), R(3, 5)),
        Case(f"pad-{_mode}-2d", lambda L, x, m=_mode: F(L).pad(x, (1, 2, 2, 1), mode=m), R(1, 2, 3, 4)),
        Case(f"pad-{_mode}-3d", lambda L, x, m=_mode: F(L).pad(x, (1, 1, 1, 0, 0, 1), mode=m), R(1, 2, 3, 3, 3)),
        Case(f"pad-{_mode}-unsupported", lambda L, x, m=_mode: F(L).pad(x, (1, 1, 1, 1), mode=m), R(3, 4)),
        Case(f"pad-{_mode}-too-wide", lambda L, x, m=_mode: F(L).pad(x, (4, 4), mode=m), R(1, 2, 3)),
    ]


@pytest.mark.parametrize("case,dtype", params(PAD))
def test_pad(case, dtype):
    check(case, dtype)


def test_one_hot_is_ember_one_hot():
    assert ember.nn.functional.one_hot is ember.one_hot
    np.testing.assert_array_equal(ember.nn.functional.one_hot(ember.tensor([0, 2]), 3).numpy(),
                                  [[1, 0, 0], [0, 0, 1]])


def test_gumbel_softmax_samples():
    ember.manual_seed(0)
    logits = ember.tensor(np.log(np.array([[0.7, 0.2, 0.1]] * 4000, np.float32)), requires_grad=True)
    soft = ember.nn.functional.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), 1, rtol=1e-5)
    hard = ember.nn.functional.gumbel_softmax(logits, hard=True)
    picks = hard.detach().numpy()
    assert set(np.unique(picks)) == {0.0, 1.0} and (picks.sum(1) == 1).all()
    np.testing.assert_allclose(picks.mean(0), [0.7, 0.2, 0.1], atol=0.03)  # Gumbel-max samples the softmax
    (hard * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0


# ---- dropout: random, so compared with its defining properties rather than torch's stream --------
DROPOUTS = {"dropout": (4, 5, 6), "dropout1d": (4, 5, 6), "dropout2d": (4, 5, 6, 7), "dropout3d": (2, 5, 3, 4, 6)}


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_masks_and_scales(name):
    ember.manual_seed(0)
    shape = DROPOUTS[name]
    x = ember.tensor(np.random.default_rng(0).uniform(1, 2, shape).astype(np.float32), requires_grad=True)
    y = getattr(ember.nn.functional, name)(x, p=0.3)
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(y.detach().numpy()[kept], x.detach().numpy()[kept] / 0.7, rtol=1e-6)
    # Units are elements, or whole channels for dropout1d/2d/3d: the kept fraction is a
    # binomial proportion, within 4 standard deviations of 0.7.
    units = kept.size if name == "dropout" else kept.shape[0] * kept.shape[1]
    assert abs(kept.mean() - 0.7) < 4 * (0.21 / units) ** 0.5
    if name != "dropout":  # whole channels are kept or dropped together
        per_channel = kept.reshape(shape[0] * shape[1], -1)
        assert (per_channel.all(1) | ~per_channel.any(1)).all()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.7, rtol=1e-6)


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_identity_cases_and_errors(name):
    f = getattr(ember.nn.functional, name)
    x = ember.randn(*DROPOUTS[name])
    assert f(x, 0.5, training=False) is x
    assert f(x, 0.0) is x
    assert not f(x, 1.0).numpy().any()
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"dropout probability has to be between 0 and 1, but got {p}"):
            f(x, p)
    y = x.clone()
    assert f(y, 0.5, inplace=True) is y
    assert ((y.numpy() == 0) | np.isclose(y.numpy(), 2 * x.numpy())).all()


def test_dropout_unbatched_and_rank_errors():
    f = ember.nn.functional
    y = f.dropout1d(ember.ones(50, 20), 0.5)
    assert ((y.numpy() == 0).all(1) | (y.numpy() == 2).all(1)).all()
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        f.dropout1d(ember.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input"):
        f.dropout2d(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        f.dropout(ember.ones(3, dtype=ember.int64))


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_keeps_mean_and_variance(name):
    ember.manual_seed(1)
    x = ember.randn(400, 50, 4)
    f = getattr(ember.nn.functional, name)
    assert f(x, 0.2) is x  # training defaults to False
    y = f(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.1 and abs(y.std() - 1) < 0.1
    dropped = np.isclose(y, -1.7580993408473766 * (1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8))
                         + 1.7580993408473766 * (1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)) * 0.2)
    assert 0.15 < dropped.mean() < 0.25
