"""Every op entry's shape rule (``Op.infer``) against its kernel: for every registered op, the
``(shape, dtype)`` the rule gives without running the kernel (one pair per result for
multi-result ops) equals the result's, on broadcasting, 0-d, empty, integer and bool sample
inputs, forward and backward (the backward ops are entries too).

This sweep calls every op a few times; ``pytest --check-shape-rules`` checks every op call of
any test run (e.g. ``pytest --check-shape-rules tests/ops tests/nn``) the same way."""
import importlib
import pkgutil

import pytest

import ember
import ember.nn.functional as F
from ember._ops import OPS, Op
from ember._ops.core import apply
from shape_rules import RuleChecker, watching

UNARY = ("neg abs sign relu exp expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan asin acos "
         "atan sinh cosh tanh sigmoid erf floor ceil trunc round frac nan_to_num isnan isinf "
         "isfinite logical_not bitwise_not asinh acosh atanh exp2 erfc erfinv logit sinc lgamma digamma "
         "i0 deg2rad rad2deg signbit isposinf isneginf").split()
SPECIAL = ("ndtr log_ndtr ndtri erfcx entr i0e i1e bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 "
           "modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 "
           "scaled_modified_bessel_k1 spherical_bessel_j0 airy_ai").split()
POLYNOMIALS = [f"{shifted}chebyshev_polynomial_{kind}" for shifted in ("", "shifted_") for kind in "tuvw"] + [
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


def sample_calls():
    x, y = ember.randn(3, 1), ember.randn(4)
    d = ember.randn(2, 3, dtype=ember.float64)
    i, b = ember.tensor([[1, 2], [3, 4]]), ember.tensor([True, False])
    s = ember.tensor(2.5)
    for t in (x, i, b, s):
        for name in UNARY:
            yield lambda t=t, name=name: getattr(ember, name)(t)
    yield from (
        lambda: apply(OPS["Detach"], x),  # the tracer's node for x.detach()
        lambda: ember.zeros(2).set_(ember.randn(3, requires_grad=True)),  # set_'s NotImplemented node
        lambda: apply(OPS["CofactorAdjoint"], d[:, :2], d[:, :2]),  # det's second derivative
        lambda: apply(OPS["Unbind"], d, dim=1), lambda: apply(OPS["Split"], d, dim=1, sizes=(1, 2)),  # their one node
        lambda: x + y, lambda: i + 2.5, lambda: b + b, lambda: x.add(y, alpha=2), lambda: x - d[0, :1],
        lambda: i * b, lambda: i / i, lambda: ember.div(i, 3, rounding_mode="floor"),
        lambda: ember.div(x, y, rounding_mode="trunc"), lambda: i % 3, lambda: ember.fmod(x, y),
        lambda: x ** 2, lambda: i ** 2, lambda: 2 ** x, lambda: ember.atan2(i, i),
        lambda: ember.hypot(x, y), lambda: ember.logaddexp2(d, d[0]),
        lambda: ember.maximum(x, y), lambda: ember.minimum(i, i), lambda: ember.lerp(x, y, 0.5),
        lambda: ember.addcmul(x, x, y, value=0.5), lambda: ember.addcmul(d, d[0], d[:, :1]),
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
        lambda: d[:1, :1].var(), lambda: s.double().var(keepdim=True),  # var without degrees of freedom
        lambda: x.var(1), lambda: d.nansum(0), lambda: x.nansum(), lambda: d.var((0, 1), keepdim=True),
        lambda: x.all(), lambda: b.any(0, keepdim=True), lambda: i.to(ember.uint8).all(0), lambda: d.any(()),
        lambda: ember.logsumexp(d, 1), lambda: ember.logsumexp(i, (0, 1), keepdim=True),
        lambda: ember.softmax(d, 1), lambda: ember.log_softmax(x, 0),
        lambda: ember.polygamma(2, i), lambda: ember.special.i1(d), lambda: ember.xlogy(i, x),
        lambda: ember.xlogy(x, 2), lambda: ember.special.xlog1py(x, y), lambda: ember.special.xlog1py(2, i),
        lambda: ember.igamma(x.abs(), y.abs()), lambda: ember.igammac(s, i),
        *(lambda t=t, name=name: getattr(ember.special, name)(t) for t in (x, i, b) for name in SPECIAL),
        lambda: ember.special.zeta(x.abs() + 1, y), lambda: ember.special.zeta(2, i),
        *(lambda name=name: getattr(ember.special, name)(x, i[0]) for name in POLYNOMIALS),
        lambda: ember.special.legendre_polynomial_p(2, d),
        lambda: ember._standard_gamma(x.abs().requires_grad_()).sum().backward(),
        lambda: ember.multinomial(x.abs().T, 2), lambda: ember.multinomial(y.abs(), 3, replacement=True),
        lambda: ember._sample_dirichlet(d.abs()), lambda: ember.isin(i, ember.tensor([2, 3])), lambda: ember.logaddexp(x, d[0, :1]), lambda: ember.copysign(i, -1),
        lambda: ember.frexp(d), lambda: d.unfold(1, 2, 1), lambda: s.unfold(0, 1, 1), lambda: d.as_strided((2, 2), (1, 2), 1),
        lambda: ember.ldexp(x, i[0]), lambda: ember.nextafter(x, y), lambda: ember.heaviside(i, i[0]),
        lambda: ember.gcd(i, i[1]), lambda: ember.lcm(i, b), lambda: ember.logit(x, 0.1),
        lambda: ember.cummax(d, 1), lambda: ember.cummin(i, 0), lambda: ember.logcumsumexp(d, 0),
        lambda: ember.mode(i, 0), lambda: ember.mode(d, 1, keepdim=True),
        lambda: ember.scatter_reduce(d, 1, ember.tensor([[0, 0], [1, 2]]), d, "amax"),
    )


def _backward(*outputs, create_graph=False):
    """Differentiates the sum of ``outputs`` w.r.t. whatever they depend on."""
    total = sum(o.sum() for o in outputs if o.requires_grad)
    total.backward(create_graph=create_graph)


def _grad_of_grad(fn, *inputs):
    """A second derivative of ``fn``: runs the backward ops' own backward ops."""
    inputs = [t.detach().requires_grad_() for t in inputs]
    out = fn(*inputs)
    grads = ember.autograd.grad(out.sum(), inputs, create_graph=True, allow_unused=True)
    sum(g.sum() * g.sum() for g in grads if g is not None).backward()


def layer_calls():
    """Shape, indexing, product, network and optimizer ops, with their backward ops."""
    x = ember.randn(2, 3, 4, requires_grad=True)
    m = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    idx = ember.tensor([[0, 2], [1, 0]])
    img = ember.randn(2, 4, 6, 5, requires_grad=True)
    seq = ember.randn(5, 2, 3)
    yield from (
        lambda: (x.view(ember.int16), x.detach().view(ember.float64), ember.tensor(1.0).view(ember.int32)),
        lambda: _backward(x.reshape(6, 4), x.view(-1), x.unsqueeze(1).squeeze(), x.permute(2, 0, 1),
                          x[:, :1].expand(2, 5, 4), x.clone(), x.T.contiguous(), x[0].to(ember.float64)),
        lambda: _backward(x[1, ::2], x[..., None, 1:3], x[[0, 1, 1]], x[:, ember.tensor([True, False, True])],
                          x[ember.tensor([0, 1]), :, ember.tensor([1, 2])], x[0, [1, 2]], x[:0]),
        lambda: _grad_of_grad(lambda t: (t[[0, 0]] ** 2), x),
        lambda: _backward(m.gather(1, idx[:1].repeat(3, 1)), m.scatter(1, idx[:1], m[:1, :2]),
                          m.scatter_add(0, idx[:1], m[:1, :2]), m.index_put((idx[0],), m.new_ones(())),
                          ember.cat([m, m.int()], 1), m.flip(0), m.roll(1, 0), m.tril(-1), m.triu(1),
                          m.diagonal(1), m.diagonal(-1, 1, 0), m.diagonal_scatter(m.new_ones(3), 0)),
        lambda: _backward(m @ m.T, m[0] @ m.T, m @ m[0], m[0] @ m[0], ember.randn(2, 1, 4, 3).double() @ m,
                          ember.einsum("ij,kj->ik", m, m), ember.einsum("...j,j->...", m, m[0]),
                          ember.linalg.vector_norm(m, 3, 1), m.norm(float("inf"), 0, keepdim=True),
                          ember.linalg.vector_norm(m, 0)),
        lambda: _backward(ember.sort(m, 0).values, ember.argsort(m, 0, descending=True),
                          ember.topk(m, 2, 1).values, ember.topk(m, 1, 0, largest=False).indices),
        lambda: _inplace_through_view(m),
        lambda: _backward(F.linear(x, m.float(), m.float()[:, 0]), F.linear(x[0, 0], m.float()),
                          F.leaky_relu(x), F.elu(x), F.selu(x), F.hardtanh(x), F.threshold(x, 0.1, 2.0),
                          F.hardsigmoid(x), F.hardswish(x), F.gelu(x), F.gelu(x, approximate="tanh"),
                          F.hardshrink(x), F.softshrink(x, 0.25),
                          F.logsigmoid(x), F.mish(x), F.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid(), reduction="none")),
        lambda: _grad_of_grad(F.gelu, x), lambda: _grad_of_grad(F.softplus, x), lambda: _grad_of_grad(lambda t: ember.logit(t.sigmoid(), 0.1), x),
        lambda: _losses(x),
        lambda: _grad_of_grad(lambda t: F.cross_entropy(t, ember.tensor([1, 0])), x[:, :, 0]),
        lambda: _backward(F.ctc_loss(x.log_softmax(2), ember.tensor([[1, 2], [3, 0], [1, 0]]), (2, 1, 2), (2, 1, 0),
                                     reduction="none")),
        lambda: _grad_of_grad(lambda t: F.nll_loss(t, ember.tensor([[1, 0, 2, 1], [0, 0, 1, 2]]), reduction="none"), x),
        lambda: _norms(img),
        lambda: _grad_of_grad(lambda t: F.layer_norm(t, (5,)), img),
        lambda: ember.autograd.grad(F.multi_margin_loss(x[:, :, 0], ember.tensor([1, 0])), x, create_graph=True),
        lambda: _windows(img),
        lambda: _grad_of_grad(lambda t: F.max_pool2d(t, 2) + F.avg_pool2d(t, 2, 1, 1)[..., :3, :2], img),
        lambda: _backward(F.conv2d(img, ember.randn(6, 2, 3, 2, requires_grad=True), ember.randn(6), stride=(2, 1),
                                   padding=1, groups=2),
                          F.conv1d(seq.permute(1, 2, 0), ember.randn(4, 3, 2, requires_grad=True), dilation=2),
                          F.conv_transpose2d(img, ember.randn(4, 3, 2, 2, requires_grad=True), stride=2,
                                             output_padding=1)),
        lambda: _grad_of_grad(F.conv2d, img, ember.randn(3, 4, 2, 2)),
        lambda: _backward(F.embedding(idx, m.float()), F.embedding(idx, m.float(), padding_idx=0),
                          F.embedding_bag(idx, m.float())),
        lambda: _attention(x),
        lambda: _grad_of_grad(lambda q: F.scaled_dot_product_attention(q, q, q), x),
        lambda: _recurrent(seq),
        lambda: _optimizers(),
        lambda: _sparse(),
        lambda: F.dropout(x, 0.5), lambda: F.dropout(x, 1.0), lambda: ember.rand(2, 0, 3, dtype=ember.float64),
        lambda: _grad_of_grad(lambda t: F.prelu(t, ember.tensor([0.25, 0.5, 0.1])), x),
        lambda: _complex_and_fft(x[0]),
    )


def _complex_and_fft(r):
    z = ember.complex(r, r.flip(0))
    _backward(z.real, z.imag, z.conj().imag, z.angle(), z.sgn().real, ember.view_as_real(z),
              ember.view_as_complex(ember.view_as_real(z)).abs(), ember.fft.fft(z).real,
              ember.fft.rfft(r).abs(), ember.fft.irfft(ember.fft.rfft(r)))


def _inplace_through_view(m):
    base = m * 1
    base[1:, 0].mul_(2)
    base.sum().backward()


def _losses(x):
    logits, t = x[:, :, 0], ember.tensor([1, 2])
    probs = x[:, :, 0].detach().softmax(1)
    _backward(F.cross_entropy(logits, t), F.cross_entropy(logits, probs, reduction="none"),
              F.cross_entropy(x, ember.tensor([[1, 0, 2, 2], [0, 0, 1, 2]]), reduction="none",
                              label_smoothing=0.1),
              F.nll_loss(logits, t, weight=ember.ones(3), reduction="sum"),
              F.mse_loss(logits, probs), F.mse_loss(x, x.detach() * 2, reduction="none"))


def _norms(img):
    bn = ember.nn.BatchNorm2d(4)
    _backward(bn(img), F.layer_norm(img, (5,), ember.ones(5), ember.zeros(5)), F.group_norm(img, 2),
              F.instance_norm(img), F.rms_norm(img, (6, 5)), F.layer_norm(img, (6, 5)))


def _windows(img):
    pooled, where = F.max_pool2d(img, 2, return_indices=True)
    _backward(pooled, F.max_pool2d(img, (3, 2), stride=2, padding=1, dilation=(1, 2), ceil_mode=True),
              F.max_pool1d(img[0], 2), F.avg_pool2d(img, 3, 2, 1, ceil_mode=True),
              F.avg_pool2d(img.int().float(), 2, divisor_override=3), F.adaptive_max_pool2d(img, (4, 3)),
              F.adaptive_avg_pool2d(img, 3), F.max_unpool2d(pooled, where, 2, output_size=(6, 5)), F.unfold(img, 2, padding=1),
              F.fold(F.unfold(img, (2, 3)), (6, 5), (2, 3)), F.pad(img, (1, 2, 0, -1)),
              F.pad(img, (2, 1, 1, 0), mode="reflect"), F.pad(img[0], (1, 1), mode="circular"),
              F.pad(img, (1, 0, 2, 1), mode="replicate"), F.interpolate(img, scale_factor=2),
              F.interpolate(img, size=(3, 7), mode="bilinear"),
              F.interpolate(ember.randn(1, 1, 130, requires_grad=True), scale_factor=2, mode="linear"),
              F.pixel_shuffle(img, 2), F.pixel_unshuffle(img[..., :4], 2))
    F.avg_pool2d(ember.arange(16).reshape(1, 4, 4), 2)
    F.max_pool2d(ember.randn(1, 20, 20), 17, return_indices=True)


def _attention(x):
    q = x.reshape(2, 4, 3)
    _backward(F.scaled_dot_product_attention(q, q[:1, :3], q[:1, :3], is_causal=True),
              F.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(4, 4, dtype=ember.bool)),
              ember.nn.MultiheadAttention(3, 1)(q, q, q)[0])


def _recurrent(seq):
    packed = ember.nn.utils.rnn.pack_padded_sequence(seq, [5, 3])
    for layer in (ember.nn.RNN(3, 4), ember.nn.LSTM(3, 4, proj_size=2, bidirectional=True),
                  ember.nn.GRU(3, 4, bias=False)):
        out, _ = layer(packed)
        padded, _ = ember.nn.utils.rnn.pad_packed_sequence(out)
        padded.sum().backward()
    _grad_of_grad(lambda s: ember.nn.GRU(3, 2)(s)[0], seq)


def _optimizers():
    p = ember.nn.Parameter(ember.randn(3))
    for opt in (ember.optim.SGD([p], lr=0.1), ember.optim.SGD([p], lr=0.1, momentum=0.9),
                ember.optim.Adam([p]), ember.optim.Adam([p], amsgrad=True),
                ember.optim.RMSprop([p], momentum=0.9, centered=True), ember.optim.Adagrad([p])):
        for _ in range(2):
            p.grad = ember.randn(3)
            opt.step()


def _sparse():
    values = ember.randn(3, requires_grad=True)
    s = ember.sparse_coo_tensor([[0, 1, 0], [2, 0, 2]], values, (2, 3))
    dense = ember.randn(2, 3, requires_grad=True)
    _backward(s.coalesce().values(), s.to_dense(), dense.to_sparse().to_dense(), s._values(),
              ember.sparse.mm(s, ember.ones(3, 2)))


def _run():
    checker = RuleChecker()
    with watching(checker):
        for call in sample_calls():
            try:
                call()
            except (RuntimeError, NotImplementedError, TypeError):
                pass  # inputs an op refuses (the checker skips them)
        for call in layer_calls():
            call()
    return checker


def _all_ops():
    """Every registered op: each module of ember imported (some ops register on import)."""
    for module in pkgutil.walk_packages(ember.__path__, "ember."):
        if not module.name.startswith(("ember.cli", "ember.__main__")):
            importlib.import_module(module.name)
    return set(OPS.values())


def test_every_op_has_a_shape_rule():
    inherited_from_op = [op.name for op in _all_ops()
                         if next(k for k in op.__mro__ if "infer" in k.__dict__) is Op]
    assert inherited_from_op == []


def test_every_rule_matches_its_kernel():
    checker = _run()
    assert not checker.mismatches
    # The linear-algebra rules are checked in tests/linalg/test_errors_legacy_meta.py.
    missing = {op.name for op in _all_ops() - checker.seen
               if op.__module__ not in ("ember._ops.decompositions", "ember._ops.solvers")}
    assert missing == set(), "ops without a sample call"


def test_rule_reports_broadcast_errors_like_the_kernel():
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\)"):
        OPS["Add"].infer(ember.ones(3), ember.ones(4))


def test_no_op_class_shares_its_name_with_an_nn_module():
    modules = {name for name in dir(ember.nn) if isinstance(getattr(ember.nn, name), type)}
    assert sorted(op.__name__ for op in _all_ops() if op.__name__ in modules) == []
    # the names users see stay PyTorch's
    x = ember.randn(2, 3, requires_grad=True)
    assert [t.grad_fn.name() for t in (F.linear(x, x), x.tanh(), F.hardtanh(x), x.softmax(1),
                                       F.fold(x.reshape(1, 1, 6), (2, 3), 1))] == \
        ["MmBackward0", "TanhBackward0", "HardtanhBackward0", "SoftmaxBackward0", "Col2ImBackward0"]
