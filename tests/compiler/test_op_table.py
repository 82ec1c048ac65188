"""The op table compiled: every op entry a training step reaches, alone and inside a fused chain,
forward and gradient, compiled (the default C backend) against eager.

Each group below is ONE compiled step (a few graphs in all, not one per op: seconds, not minutes):
every op of the group reads its own inputs, and the step backpropagates
``sum_i (out_i * w_i).sum()`` so each input's gradient is its op's alone. Inputs are
non-contiguous (transposed views), binary ops' second operand broadcasts ([1, n] against
[m, n]), float64 stays float64. Alone: ``op(x)``; in a chain: ``op(x * a + b) * 1.5 + out``,
the elementwise neighbours fused into the op's loop where C lowers it.

Bounds (relative to each output's largest magnitude, and to each value): float32 3e-5 and 1e-5,
the fuzzer's ``transcendental``/``reduce`` families (tests/compiler/test_fuzz.py: ember's vector
exp/log/tanh/erf are 1-3 ulp, sums run in another order); float64 the same scaled by 2**-29
(the ratio of the two epsilons) with a floor of 1e-13 for libm's and SciPy's double functions.
Integer and boolean results exactly. Linear algebra, FFT, sparse and random ops have their
own compiled tests (test_complex_compile.py, ...); internal backward ops (GeluBackward,
ConvWeight, NllLossBackward, ...) are reached through their forward ops' gradients here.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._dynamo.utils import counters

# float32 alone and inside a chain; float64 alone (a second chained copy doubled the C to compile)
VARIANTS = (("float32", False), ("float32", True), ("float64", False))
M, N = 4, 6  # the [M, N] shape every op reads (as the transpose of an [N, M] array)

# op entry -> (expression of x (and y: [1, N], broadcast), domain of x, differentiable)
# domains: "any" normal * 2, "pos" in [0.5, 3], "unit" in [-0.8, 0.8], "big" in [1.2, 3]
UNARY = {
    "Abs": ("x.abs()", "any"), "Acos": ("torch.acos(x)", "unit"), "Acosh": ("torch.acosh(x)", "big"),
    "Asin": ("torch.asin(x)", "unit"), "Asinh": ("torch.asinh(x)", "any"), "Atan": ("torch.atan(x)", "any"),
    "Atanh": ("torch.atanh(x)", "unit"), "Ceil": ("torch.ceil(x)", "any"), "Cos": ("torch.cos(x)", "any"),
    "Cosh": ("torch.cosh(x)", "any"), "Deg2Rad": ("torch.deg2rad(x)", "any"),
    "Digamma": ("torch.digamma(x)", "pos"), "Elu": ("F.elu(x)", "any"), "Erf": ("torch.erf(x)", "any"),
    "Erfc": ("torch.erfc(x)", "any"), "Erfinv": ("torch.erfinv(x)", "unit"), "Exp": ("torch.exp(x)", "any"),
    "Exp2": ("torch.exp2(x)", "any"), "Expm1": ("torch.expm1(x)", "any"), "Floor": ("torch.floor(x)", "any"),
    "Frac": ("torch.frac(x)", "any"), "Gelu": ("F.gelu(x)", "any"),
    "GeluTanh": ("F.gelu(x, approximate='tanh')", "any"), "Hardsigmoid": ("F.hardsigmoid(x)", "any"),
    "Hardswish": ("F.hardswish(x)", "any"), "Hardtanh": ("F.hardtanh(x)", "any"), "I0": ("torch.i0(x)", "any"),
    "I1": ("torch.special.i1(x)", "any"), "LeakyRelu": ("F.leaky_relu(x, 0.2)", "any"),
    "Lgamma": ("torch.lgamma(x)", "pos"), "Log": ("torch.log(x)", "pos"), "Log10": ("torch.log10(x)", "pos"),
    "Log1p": ("torch.log1p(x)", "pos"), "Log2": ("torch.log2(x)", "pos"),
    "LogSigmoid": ("F.logsigmoid(x)", "any"), "Logit": ("torch.logit(x * 0.5 + 0.5)", "unit"),
    "NanToNum": ("torch.nan_to_num(x)", "any"), "Neg": ("-x", "any"), "Polygamma": ("torch.polygamma(1, x)", "pos"),
    "Rad2Deg": ("torch.rad2deg(x)", "any"), "Reciprocal": ("torch.reciprocal(x)", "pos"),
    "Relu": ("torch.relu(x)", "any"), "Round": ("torch.round(x)", "any"), "Rsqrt": ("torch.rsqrt(x)", "pos"),
    "Sgn": ("torch.sgn(x)", "any"), "Sigmoid": ("torch.sigmoid(x)", "any"), "Sign": ("torch.sign(x)", "any"),
    "Sin": ("torch.sin(x)", "any"), "Sinc": ("torch.sinc(x)", "any"), "Sinh": ("torch.sinh(x)", "any"),
    "Softplus": ("F.softplus(x)", "any"), "Sqrt": ("torch.sqrt(x)", "pos"), "Tan": ("torch.tan(x)", "unit"),
    "Tanh": ("torch.tanh(x)", "any"), "Threshold": ("F.threshold(x, 0.1, -2.0)", "any"),
    "Trunc": ("torch.trunc(x)", "any"), "Pow": ("x ** 3", "any"), "PowTensor": ("x.abs() ** y", "pos"),
    "Clamp": ("torch.clamp(x, -1.0, 1.5)", "any"), "ToDtype": ("(x.double() * 3).to(x.dtype)", "any"),
    "Clone": ("x.clone()", "any"), "Detach": ("x * x.detach()", "any"),
}
BINARY = {
    "Add": "x + y", "Sub": "x - 2.5 * y", "Mul": "x * y", "Div": "x / (y.abs() + 0.5)",
    "Atan2": "torch.atan2(x, y)", "Hypot": "torch.hypot(x, y)", "Maximum": "torch.maximum(x, y)",
    "Minimum": "torch.minimum(x, y)", "Copysign": "torch.copysign(x, y)", "Fmod": "torch.fmod(x, y.abs() + 0.5)",
    "Remainder": "torch.remainder(x, y.abs() + 0.5)", "LogAddExp": "torch.logaddexp(x, y)",
    "LogAddExp2": "torch.logaddexp2(x, y)", "Lerp": "torch.lerp(x, y, 0.3)", "Xlogy": "torch.xlogy(x, y.abs() + 0.1)",
    "Where": "torch.where(x > y, x, y * 2)", "Heaviside": "torch.heaviside(x, y)",
    "DivRounded": "torch.div(x, y.abs() + 0.5, rounding_mode='floor')",
}
# ops whose results are not floats, or whose gradient is zero almost everywhere: forward only
NO_GRAD = {"Ceil", "Floor", "Round", "Sign", "Sgn", "Trunc", "Heaviside", "DivRounded"}
REDUCTIONS = {
    "Sum": "x.sum(0)", "SumAll": "x.sum()", "Mean": "x.mean(1, keepdim=True)", "Amax": "x.amax(1)",
    "Amin": "x.amin(0, keepdim=True)", "Max": "x.max()", "Min": "x.min()", "Prod": "x.prod(1)",
    "Logsumexp": "torch.logsumexp(x, 1)", "Cumsum": "x.cumsum(1)", "Cumprod": "x.cumprod(0)",
    "Logcumsumexp": "torch.logcumsumexp(x, 1)", "Var": "x.var(1)", "Std": "x.std(0, keepdim=True)",
    "VectorNorm": "torch.linalg.vector_norm(x, dim=1)", "Softmax": "F.softmax(x, 1)",
    "LogSoftmax": "F.log_softmax(x, 0)", "Normalize": "F.normalize(x, dim=1)", "LayerNorm": "F.layer_norm(x, (N,))",
    # two results, the indices a graph value that the gradient scatters with
    "MaxAlongDim": "x.max(1).values", "MinAlongDim": "x.min(0).values", "Cummax": "x.cummax(1).values",
    "Cummin": "x.cummin(0).values", "Sort": "x.sort(1).values", "Mode": "x.round().mode(1).values",
    "Topk": "x.topk(3, 1).values",
}
INDEX_RESULTS = {  # integer or boolean results: compared exactly, no gradient
    "Argmax": "x.argmax(1)", "Argmin": "x.argmin(0)", "Argsort": "x.argsort(1)", "SortIndices": "x.sort(0).indices",
    "All": "(x > 0).all(1)", "Any": "(x > 1).any(0)", "Eq": "x == y", "Ne": "x != y", "Lt": "x < y", "Le": "x <= y",
    "Gt": "x > y", "Ge": "x >= y", "IsClose": "torch.isclose(x, y)", "IsFinite": "torch.isfinite(x / y)",
    "IsInf": "torch.isinf(x / y)", "IsNan": "torch.isnan(x / y)", "IsNegInf": "torch.isneginf(x / y)",
    "IsPosInf": "torch.isposinf(x / y)", "Signbit": "torch.signbit(x)", "LogicalAnd": "(x > 0) & (y > 0)",
    "LogicalOr": "torch.logical_or(x > 0, y > 0)", "LogicalXor": "torch.logical_xor(x > 0, y > 0)",
    "LogicalNot": "torch.logical_not(x > 0)", "IsIn": "torch.isin(x.round(), y.round())",
}
SHAPES = {  # views, copies and indexing; each gradient scatters back into x
    "View": "x.reshape(N, M) * 1", "Permute": "x.permute(1, 0) * 1", "Unsqueeze": "x.unsqueeze(0) * 1",
    "Squeeze": "x[:1].squeeze(0) * 1", "Expand": "x[:, :1].expand(M, N) * 1", "Slice": "x[1:, ::2] * 1",
    "Cat": "torch.cat([x, x * 2], 1)", "Flip": "torch.flip(x, [1])", "Roll": "torch.roll(x, 2, 1)",
    "Tril": "torch.tril(x)", "Triu": "torch.triu(x, 1)", "Diagonal": "torch.diagonal(x) * 1",
    "Pad": "F.pad(x, (1, 2))", "PadReflect": "F.pad(x.unsqueeze(0), (1, 1), mode='reflect')",
    "DiagonalScatter": "torch.diagonal_scatter(x, y[0, :M] * 1)", "Einsum": "torch.einsum('ij,kj->ik', x, y)", "Matmul": "x @ x.t()", "Addmm": "F.linear(x, x[:3], y[0, :3])",
    "Embedding": "F.embedding(torch.tensor([[1, 3], [0, 1]]), x)",
    # index arrays made in the function: constants of the graph
    "Index": "x[torch.tensor([2, 0, 2])]", "IndexPut": "x.index_put((torch.tensor([1, 3]),), y[0, :1] * 3)",
    "Gather": "torch.gather(x, 1, torch.tensor([[0, 5], [1, 1], [2, 3], [5, 4]]))",
    "Scatter": "x.scatter(1, torch.tensor([[0], [2], [4], [1]]), 9.0)",
    "ScatterAdd": "x.scatter_add(1, torch.tensor([[0, 0], [2, 1], [4, 4], [1, 5]]), x[:, :2] * 2)",
    "ScatterReduce": "x.scatter_reduce(1, torch.tensor([[0, 0], [2, 1], [4, 4], [1, 5]]), x[:, :2], 'amax')",
    "ScatterMean": "x.scatter_reduce(1, torch.tensor([[0, 0], [2, 2], [4, 4], [1, 5]]), x[:, :2], 'mean')",
    "AsStrided": "x.contiguous().as_strided((3, 2), (2, 1)) * 1", "Unfold": "x.unfold(1, 3, 2) * 1",
    "CopySlices": "x.clone().index_fill(1, torch.tensor([1]), 0.5)",
}
NN = {  # nn ops over [batch, channels, ...] made from x
    "Conv": "F.conv1d(x.unsqueeze(0), x[:2, :3].unsqueeze(1).expand(2, M, 3).contiguous() * 1, padding=1)",
    "ConvTranspose": "F.conv_transpose1d(x.unsqueeze(0), x[:, :3].unsqueeze(1) * 1)",
    "MaxPool": "F.max_pool1d(x.unsqueeze(0), 2)", "AvgPool": "F.avg_pool1d(x.unsqueeze(0), 3, 1, 1)",
    "Im2Col": "F.unfold(x.reshape(1, 1, M, N), 2)", "Col2Im": "F.fold(x.reshape(1, 4, N), (3, 4), 2)",
    "CrossEntropy": "F.cross_entropy(x, torch.tensor([0, 5, 2, 1]))",
    "NllLoss": "F.nll_loss(F.log_softmax(x, 1), torch.tensor([1, 1, 3, 0]), reduction='sum')",
    "MseLoss": "F.mse_loss(x, y.expand(M, N))",
    
    "AttentionWeights": "F.scaled_dot_product_attention(x.unsqueeze(0), x.unsqueeze(0), x.unsqueeze(0) * 2, is_causal=True)",
    "BatchNormStats": "F.batch_norm(x, None, None, training=True)",
    "AdaptiveMaxPool": "F.adaptive_max_pool1d(x.unsqueeze(0), 4)",
    "Resample": "F.interpolate(x.unsqueeze(0), scale_factor=2, mode='linear')",
    "BinaryCrossEntropy": "F.binary_cross_entropy(torch.sigmoid(x), torch.sigmoid(y).expand(M, N))",
}
def _domain(rng, domain, shape, dtype):
    low, high = {"pos": (0.5, 3.0), "unit": (-0.8, 0.8), "big": (1.2, 3.0)}.get(domain, (None, None))
    a = rng.standard_normal(shape) * 2 if low is None else rng.uniform(low, high, shape)
    return a.astype(dtype)


def _group(table, kind):
    """[(label, expression, domain, differentiable, dtype, chained)]: each op of a table in each
    dtype, alone and chained."""
    rows = []
    for name, entry in table.items():
        expression, domain = entry if isinstance(entry, tuple) else (entry, "any")
        for dtype, chained in VARIANTS:
            label = f"{name} ({dtype}, {'chained' if chained else 'alone'})"
            rows.append((label, expression, domain, kind != "index" and name not in NO_GRAD, dtype, chained))
    return rows


GROUPS = {"unary": _group(UNARY, "float"), "binary": _group(BINARY, "float"),
          "reductions": _group(REDUCTIONS, "float"), "index": _group(INDEX_RESULTS, "index"),
          "shapes": _group(SHAPES, "float"), "nn": _group(NN, "float")}


def _step(rows):
    """The group's forward: every op on its own (x, y); returns the results and
    sum (out * w) over the differentiable ones (its backward runs the compiled backward)."""
    namespace = {"torch": ember, "F": F, "M": M, "N": N}
    ops = [eval(f"lambda x, y: {row[1]}", namespace) for row in rows]

    def step(xs, ys, ws):
        outs, loss = [], 0
        for op, x, y, w, (_, _, _, grad, _, chained) in zip(ops, xs, ys, ws, rows):
            out = op(x * 1.0625 + 0.0625, y) if chained else op(x, y)
            if chained and out.dtype.is_floating_point:
                out = out * 1.5 + out
            outs.append(out)
            if grad:
                loss = loss + (out * w).sum()
        return outs, loss
    return step


def _run(step, xs, ys, ws):
    """Results and input gradients of one forward and backward."""
    outs, loss = step(xs, ys, ws)
    if isinstance(loss, ember.Tensor):
        loss.backward()
    grads = [None if t.grad is None else t.grad.clone() for t in xs + ys]
    for t in xs + ys:
        t.grad = None
    return outs, grads


def _inputs(rows, rng):
    xs, ys = [], []
    for _, _, domain, grad, dtype, _ in rows:
        x = ember.tensor(_domain(rng, domain, (N, M), dtype)).t()  # non-contiguous [M, N]
        xs.append(x.requires_grad_(grad))
        ys.append(ember.tensor(_domain(rng, domain, (1, N), dtype)).requires_grad_(grad))
    return xs, ys


def _check(actual, expected, what):
    actual, expected = actual.detach().numpy(), expected.detach().numpy()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, what
    if actual.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    scale = float(np.abs(expected).max(initial=1.0))
    atol, rtol = (3e-5, 1e-5) if actual.dtype == np.float32 else (1e-13, 1e-13)  # the result's dtype
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale, err_msg=what)


@pytest.mark.parametrize("group", list(GROUPS))
def test_op_table_compiled_equals_eager(group):
    """Forward results and the input gradients of every op in the group (each dtype, alone and
    chained: one compiled graph), compiled vs eager."""
    ember.compiler.reset()
    counters.clear()
    rows = GROUPS[group]
    step = _step(rows)
    rng = np.random.default_rng(0)
    xs, ys = _inputs(rows, rng)
    with ember.no_grad():  # the weights, shaped as each op's result
        ws = [ember.tensor(rng.standard_normal(tuple(out.shape)).astype(row[4]))
              for row, out in zip(rows, step(xs, ys, [ember.ones(())] * len(rows))[0])]
    expected, expected_grads = _run(step, xs, ys, ws)
    compiled = ember.compile(step)
    for call in range(3):  # the first calls capture; the last replays the compiled code
        actual, grads = _run(compiled, xs, ys, ws)
    # one graph, forward and backward, in C (index arrays are graph values, not breaks)
    assert not counters["graph_break"], dict(counters["graph_break"])
    for row, a, e in zip(rows, actual, expected):
        _check(a, e, f"{group} {row[0]}: forward")
    labels = [f"{row[0]} x" for row in rows] + [f"{row[0]} y" for row in rows]
    for label, a, e in zip(labels, grads, expected_grads):
        assert (a is None) == (e is None), f"{label}: gradient present in one run only"
        if a is not None:
            _check(a, e, f"{group} {label}: gradient")
    ember.compiler.reset()
