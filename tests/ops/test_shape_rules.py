"""Every op entry's shape rule (``Op.infer``) against its kernel: for each registered op of the
families that have rules, the ``(shape, dtype)`` the rule gives without running the kernel
(one pair per result for multi-result ops) equals the result's, on broadcasting, 0-d, integer
and bool sample inputs."""
import ember
from ember._ops import OPS, core

# The families whose entries all carry a shape rule; the others raise NotImplementedError.
FAMILIES = {"ember._ops.pointwise_binary", "ember._ops.pointwise_unary", "ember._ops.compare",
            "ember._ops.reduce", "ember._ops.softmax", "ember._ops.special", "ember._ops.numeric",
            "ember._ops.scan", "ember._ops.statistics", "ember._ops.scatter_reduce"}
UNARY = ("neg abs sign relu exp expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan asin acos "
         "atan sinh cosh tanh sigmoid erf floor ceil trunc round frac nan_to_num isnan isinf "
         "isfinite logical_not bitwise_not asinh acosh atanh exp2 erfc erfinv logit sinc lgamma digamma "
         "i0 deg2rad rad2deg signbit isposinf isneginf").split()


class RuleChecker:
    """An observer of op dispatch that compares each op's rule with its result."""

    def __init__(self):
        self.seen, self.mismatches = set(), []

    def op_enter(self, op, inputs, attrs):
        pass

    def op_exit(self, op, inputs, attrs, output):
        if output is None or op.__module__ not in FAMILIES:
            return  # the kernel refused the inputs, or the family has no rules yet
        self.seen.add(op)
        predicted = op.infer(*inputs, **attrs)
        outputs = output if isinstance(output, tuple) else (output,)
        actual = tuple((tuple(out.shape), out.dtype) for out in outputs)
        if (predicted if isinstance(output, tuple) else (predicted,)) != actual:
            self.mismatches.append((op.name, predicted, actual))


def sample_calls():
    x, y = ember.randn(3, 1), ember.randn(4)
    d = ember.randn(2, 3, dtype=ember.float64)
    i, b = ember.tensor([[1, 2], [3, 4]]), ember.tensor([True, False])
    s = ember.tensor(2.5)
    for t in (x, i, b, s):
        for name in UNARY:
            yield lambda t=t, name=name: getattr(ember, name)(t)
    yield from (
        lambda: x + y, lambda: i + 2.5, lambda: b + b, lambda: x.add(y, alpha=2), lambda: x - d[0, :1],
        lambda: i * b, lambda: i / i, lambda: ember.div(i, 3, rounding_mode="floor"),
        lambda: ember.div(x, y, rounding_mode="trunc"), lambda: i % 3, lambda: ember.fmod(x, y),
        lambda: x ** 2, lambda: i ** 2, lambda: 2 ** x, lambda: ember.atan2(i, i),
        lambda: ember.hypot(x, y), lambda: ember.logaddexp2(d, d[0]),
        lambda: ember.maximum(x, y), lambda: ember.minimum(i, i), lambda: ember.lerp(x, y, 0.5),
        lambda: ember.where(b, 1.0, ember.zeros(2)), lambda: ember.where(b.reshape(2, 1), i, i),
        lambda: x.clamp(min=0), lambda: i.clamp(max=ember.tensor([1, 2])),
        lambda: ember.nn.functional.softplus(x),
        lambda: x == y, lambda: i < 2.5, lambda: b != b, lambda: x > y, lambda: i >= b, lambda: d <= 0,
        lambda: ember.isclose(x, y),
        lambda: ember.logical_and(i, b), lambda: ember.logical_or(x, y), lambda: ember.logical_xor(b, b),
        lambda: i & 3, lambda: b | b, lambda: i ^ i, lambda: i << 1, lambda: i >> b,
        lambda: x.sum(), lambda: i.sum(0), lambda: b.sum(), lambda: d.sum((0, 1), keepdim=True),
        lambda: x.prod(), lambda: i.prod(1, keepdim=True), lambda: d.amax(0), lambda: i.amin(),
        lambda: x.max(), lambda: i.min(), lambda: d.max(1), lambda: i.min(0, keepdim=True), lambda: x.argmin(), lambda: i.argmax(1, keepdim=True),
        lambda: i.cumsum(0), lambda: d.cumprod(1), lambda: b.cumsum(0),
        lambda: ember.logsumexp(d, 1), lambda: ember.logsumexp(i, (0, 1), keepdim=True),
        lambda: ember.softmax(d, 1), lambda: ember.log_softmax(x, 0),
        lambda: ember.polygamma(2, i), lambda: ember.special.i1(d), lambda: ember.xlogy(i, x),
        lambda: ember.xlogy(x, 2), lambda: ember.logaddexp(x, d[0, :1]), lambda: ember.copysign(i, -1),
        lambda: ember.ldexp(x, i[0]), lambda: ember.nextafter(x, y), lambda: ember.heaviside(i, i[0]),
        lambda: ember.gcd(i, i[1]), lambda: ember.lcm(i, b), lambda: ember.logit(x, 0.1),
        lambda: ember.cummax(d, 1), lambda: ember.cummin(i, 0), lambda: ember.logcumsumexp(d, 0),
        lambda: ember.mode(i, 0), lambda: ember.mode(d, 1, keepdim=True),
        lambda: ember.scatter_reduce(d, 1, ember.tensor([[0, 0], [1, 2]]), d, "amax"),
    )


def test_every_rule_matches_its_kernel():
    checker = RuleChecker()
    core.OBSERVERS.append(checker)
    try:
        for call in sample_calls():
            try:
                call()
            except (RuntimeError, NotImplementedError, TypeError):
                pass  # inputs an op refuses (the checker skips them)
    finally:
        core.OBSERVERS.remove(checker)
    assert not checker.mismatches
    registered = {op for op in OPS.values() if op.__module__ in FAMILIES}
    assert registered - checker.seen == set(), "ops without a sample call"


def test_rule_reports_broadcast_errors_like_the_kernel():
    import pytest
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\)"):
        OPS["Add"].infer(ember.ones(3), ember.ones(4))
