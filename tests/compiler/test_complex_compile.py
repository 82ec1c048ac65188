"""Compiled complex graphs: ember.compile computes complex values as real and imaginary parts
(ember.compiler.complex_decompose) and equals eager ember and torch, forward and gradients."""
import numpy as np
import pytest
import torch

import ember
from ember._dynamo.utils import counters
from ember.compiler.backends import compile_python
from ember.compiler.complex_decompose import decompose_complex

DTYPES = {"complex64": (ember.complex64, torch.complex64), "complex128": (ember.complex128, torch.complex128)}
# complex64 results against torch's complex128 on the same inputs (float32 rounding of ~20 ops
# and a 5-term product); complex128 against complex128
RTOL = {"complex64": 2e-4, "complex128": 1e-10}


def _random(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def loss_fn(lib):
    def loss(a, b, w):
        z = a * b + a / (b + 1) - a.conj() + 0.5j * b.real
        z = z @ w
        e = lib.exp(z * 0.1)
        return (e.abs() ** 2).sum() + lib.angle(z).sum() + z.real.sum() * z.imag.mean() + (z / 3).sgn().real.sum()
    return loss


@pytest.mark.parametrize("name", DTYPES)
def test_complex_training_graph_compiles_whole_and_matches_eager_and_torch(name):
    dtype, _ = DTYPES[name]
    rng = np.random.default_rng(1)
    arrays = [_random(rng, (4, 5)), _random(rng, (1, 5)), _random(rng, (5, 3))]
    arrays[1] = arrays[1].T.copy().T  # a broadcast operand
    ember.compiler.reset()
    compiled = ember.compile(loss_fn(ember), fullgraph=True)
    t_args = [torch.tensor(a, dtype=torch.complex128, requires_grad=True) for a in arrays]
    expected = loss_fn(torch)(*t_args)
    expected.backward()
    for _ in range(3):  # the first call records; later ones run the compiled graphs
        args = [ember.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
        got = compiled(*args)
        got.backward()
        np.testing.assert_allclose(got.item(), expected.item(), rtol=RTOL[name])
        for a, t in zip(args, t_args):
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=RTOL[name], atol=RTOL[name])
    eager_args = [ember.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    eager = loss_fn(ember)(*eager_args)
    eager.backward()
    np.testing.assert_allclose(got.item(), eager.item(), rtol=RTOL[name] / 10)
    # one graph, no break, every complex op decomposed (none ran on complex arrays)
    assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"]
    assert counters["complex"]["decomposed"] > 40
    assert not [k for k in counters["complex"] if k.startswith("fallback")], counters["complex"]


OPS = {
    "add": lambda a, b: a + b, "sub alpha": lambda a, b: ember.sub(a, b, alpha=2), "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "div by a complex number": lambda a, b: a / (2 - 3j), "neg": lambda a, b: -a,
    "conj": lambda a, b: a.conj() * b, "conj_physical": lambda a, b: a.conj_physical(), "real": lambda a, b: a.real,
    "imag": lambda a, b: b.imag, "exp": lambda a, b: a.exp(), "abs": lambda a, b: a.abs(),
    "angle": lambda a, b: a.angle(), "sgn": lambda a, b: a.sgn(), "matmul": lambda a, b: a @ b.mT,
    "sum": lambda a, b: a.sum(0), "views": lambda a, b: a.mT.reshape(-1)[2:9].unsqueeze(0),
    "real times complex": lambda a, b: a.real * b, "times 1j": lambda a, b: a * 1j,
    "cat": lambda a, b: ember.cat([a, b]), "where": lambda a, b: ember.where(a.real > 0, a, b),
    "to complex128": lambda a, b: a.to(ember.complex128),
    "linear": lambda a, b: ember.nn.functional.linear(a, b, b[:, 1]),
    "reciprocal": lambda a, b: b.reciprocal(), "complex": lambda a, b: ember.complex(a.real, b.imag[:1]),
    "polar": lambda a, b: ember.polar(a.abs(), b.real),
}


@pytest.mark.filterwarnings("ignore:divide by zero", "ignore:invalid value")
def test_each_decomposed_op_equals_eager_on_strided_and_extreme_inputs():
    """One compiled graph of every rule, complex64, on a transposed operand with divisors whose
    squared magnitude overflows float32 (Smith's division does not) and zeros (sgn, angle)."""
    rng = np.random.default_rng(2)
    a = ember.tensor(_random(rng, (3, 4)).T.copy(), dtype=ember.complex64).mT  # non-contiguous
    b = _random(rng, (3, 4))
    b[0, :2] = [3e30 + 1e30j, 1e-30 - 4e30j]
    b[1, 1] = 0
    b = ember.tensor(b, dtype=ember.complex64)

    def every(a, b):
        return [op(a, b) for op in OPS.values()]
    ember.compiler.reset()
    compiled = ember.compile(every, fullgraph=True)
    for _ in range(2):
        got = compiled(a, b)
    assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"]
    assert not [k for k in counters["complex"] if k.startswith("fallback")], counters["complex"]
    for name, g, e in zip(OPS, got, every(a, b)):
        assert g.dtype == e.dtype and g.shape == e.shape, name
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=2e-6, atol=1e-37, err_msg=name)


def test_other_complex_ops_run_whole_and_are_counted():
    """An op without a rule (sin; pow by a non-finite number) runs on the complex array, built
    from its parts: counted."""
    x = ember.tensor(_random(np.random.default_rng(3), (5,)), dtype=ember.complex128)
    fn = lambda x: ((x * 2).sin() + x.conj(), x ** float("nan"), x ** float("inf"))  # noqa: E731
    ember.compiler.reset()
    compiled = ember.compile(fn, fullgraph=True)
    for _ in range(2):
        got = compiled(x)
    np.testing.assert_allclose(got[0].numpy(), np.sin(x.numpy() * 2) + x.numpy().conj(), rtol=1e-14)
    for g, e in zip(got[1:], fn(x)[1:]):
        np.testing.assert_array_equal(g.numpy(), e.numpy())
    assert counters["complex"]["fallback:Sin"] == 1 and counters["complex"]["decomposed"] >= 2
    assert counters["complex"]["fallback:Pow"] == 2


def test_decomposed_graph_holds_no_complex_arithmetic_and_runs_as_python():
    """Only the complex inputs' parts (Real, Imag) and the output's assembly (Complex) touch
    complex arrays; the Python backend runs the same decomposed graph."""
    rng = np.random.default_rng(4)
    arrays = [_random(rng, (2, 3)), _random(rng, (2, 3)), _random(rng, (3, 2))]
    ember.compiler.reset()
    compiled = ember.compile(lambda a, b, w: loss_fn(ember)(a, b, w), fullgraph=True)
    args = [ember.tensor(a) for a in arrays]
    compiled(*args)
    compiled(*args)
    graph = decompose_complex(compiled._entries[0].cap.graph)
    touching = {n.target.name for n in graph.nodes if n.op == "call_op" and (
        n.meta["dtype"].is_complex or any(getattr(a, "meta", {}).get("dtype", ember.float32).is_complex for a in n.args))}
    assert touching == {"Real", "Imag"}, touching  # a real loss: nothing complex comes out
    out = compile_python(graph)([a.numpy() for a in args])[0]
    np.testing.assert_allclose(out, loss_fn(ember)(*args).numpy(), rtol=1e-12)


def test_complex_parameters_train_under_compile_as_eagerly():
    """A complex nn.Linear's whole SGD step (momentum) in one graph: the optimizer updates
    view_as_real views of the complex weight, bias and momentum buffers, written back as
    mutations."""
    rng = np.random.default_rng(5)
    x = ember.tensor(_random(rng, (8, 4)), dtype=ember.complex64)
    y = ember.tensor(rng.standard_normal((8, 2)), dtype=ember.float32)
    results = []
    for compile_it in (False, True):
        ember.manual_seed(0)
        layer = ember.nn.Linear(4, 2, dtype=ember.complex64)
        opt = ember.optim.SGD(layer.parameters(), lr=0.05, momentum=0.9)

        def step():
            loss = (layer(x).abs() - y).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        ember.compiler.reset()
        run = ember.compile(step, fullgraph=True) if compile_it else step
        results.append(([run().item() for _ in range(5)], [p.detach().numpy().copy() for p in layer.parameters()]))
    (eager_losses, eager_params), (losses, params) = results
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for p, e in zip(params, eager_params):
        np.testing.assert_allclose(p, e, rtol=1e-5, atol=1e-6)
    # the first call makes the momentum buffers (run eagerly, unrecorded, as for real parameters); then one graph
    assert not counters["graph_break"]
    assert counters["stats"]["unique_graphs"] == 1 and counters["complex"]["decomposed"] >= 10
    assert not [k for k in counters["complex"] if k.startswith("fallback")], counters["complex"]


POWERS_ROOTS_LOGS = {
    "sqrt": lambda z: z.sqrt(), "log": lambda z: z.log(), "square": lambda z: z ** 2, "cube": lambda z: z.pow(3),
    "pow 7": lambda z: z ** 7, "pow -1": lambda z: z ** -1, "pow -2": lambda z: z ** -2,
    "pow 2.5": lambda z: z ** 2.5, "pow 0.5": lambda z: z ** 0.5, "pow -1.5": lambda z: z ** -1.5,
    "pow 0": lambda z: z ** 0, "norm": lambda z: ember.linalg.vector_norm(z, dim=1),
    "norm 3": lambda z: ember.linalg.vector_norm(z, 3), "norm inf": lambda z: ember.linalg.vector_norm(z, float("inf"), 0),
    "norm 1 keepdim": lambda z: ember.linalg.vector_norm(z, 1, 1, keepdim=True),
}


def _close(got, expected, bound, name):
    """Each element within ``bound`` of the larger of its own and the result's typical magnitude
    (a component that cancels is judged against the number it belongs to), NaNs where eager's,
    infinities equal."""
    got, expected = np.asarray(got, np.complex128), np.asarray(expected, np.complex128)
    assert got.shape == expected.shape, name
    nan = np.isnan(expected.real) | np.isnan(expected.imag)
    assert (np.isnan(got.real) | np.isnan(got.imag))[nan].all(), name
    finite = ~nan & np.isfinite(expected)
    assert (got[~finite & ~nan] == expected[~finite & ~nan]).all(), name
    if not finite.any():
        return
    scale = np.maximum(np.abs(expected[finite]), np.median(np.abs(expected[finite])) * 1e-3)
    error = np.abs(got[finite] - expected[finite]) / scale
    assert error.max(initial=0) <= bound, (name, error.max())


@pytest.mark.filterwarnings("ignore:divide by zero", "ignore:invalid value", "ignore:overflow")
@pytest.mark.parametrize("name", DTYPES)
def test_powers_roots_logs_and_norms_decompose_and_equal_eager(name):
    """sqrt, log, pow by integers (by products, 0 and negative exponents at z = 0) and
    vector_norm of complex values: one graph, no fallback but the three non-integer powers (run
    whole, counted), equal to eager to a few ulp of each value, on a transposed operand with zeros and negative
    reals with -0 imaginary parts (sqrt's branch cut); sqrt, log and the norms also on
    magnitudes whose square overflows (powers of those overflow, and NumPy's ``exp(p log z)``
    loses ``p log|z|`` ulp there)."""
    dtype, _ = DTYPES[name]
    rng = np.random.default_rng(6)
    values = _random(rng, (4, 5))
    values[0, :4] = [0, -4 - 0j, -4 + 0j, 2.5]
    z = ember.tensor(values.T.copy(), dtype=dtype).mT
    values[1, :2] = [3e30 + 1e30j, -1e-30 + 4e30j]
    huge = ember.tensor(values.T.copy(), dtype=dtype).mT
    inputs = [huge if key in ("sqrt", "log") or key.startswith("norm") else z for key in POWERS_ROOTS_LOGS]
    ops = list(POWERS_ROOTS_LOGS.values())
    ember.compiler.reset()
    compiled = ember.compile(lambda *inputs: [op(x) for op, x in zip(ops, inputs)], fullgraph=True)
    for _ in range(2):
        got = compiled(*inputs)
    assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"]
    fallbacks = {k: v for k, v in counters["complex"].items() if k.startswith("fallback")}
    assert fallbacks == {"fallback:Pow": 3}, counters["complex"]
    eps = np.finfo(dtype.to_real().np).eps
    for op_name, g, op, x in zip(POWERS_ROOTS_LOGS, got, ops, inputs):
        e = op(x)
        assert g.dtype == e.dtype, op_name
        _close(g.numpy(), e.numpy(), 32 * eps, op_name)


@pytest.mark.parametrize("name", DTYPES)
def test_gradients_of_powers_roots_logs_and_norms_equal_eager(name):
    """The backward of the same ops (their derivatives are complex pow, div and conj) compiles
    without fallback but non-integer powers and equals eager (whose complex gradients tests/ops/test_complex.py checks
    against torch)."""
    dtype, _ = DTYPES[name]
    values = _random(np.random.default_rng(7), (3, 4))

    def loss(lib, z):
        return sum((op(z).abs() if op(z).dtype.is_complex else op(z)).sum()
                   for key, op in POWERS_ROOTS_LOGS.items() if key != "pow 0")
    z = ember.tensor(values, dtype=dtype, requires_grad=True)
    ember.compiler.reset()
    compiled = ember.compile(lambda z: loss(ember, z), fullgraph=True)
    for _ in range(2):
        z.grad = None
        compiled(z).backward()
    assert not counters["graph_break"]
    assert not [k for k in counters["complex"] if k.startswith("fallback") and k != "fallback:Pow"], counters["complex"]
    eager = ember.tensor(values, dtype=dtype, requires_grad=True)
    loss(ember, eager).backward()
    eps = np.finfo(dtype.to_real().np).eps
    _close(z.grad.numpy(), eager.grad.numpy(), 64 * eps, "gradient")


_SPECIAL = [0.0, -0.0, 1.0, -1.0, 3e38, -3e38, float("inf"), -float("inf"), float("nan")]


@pytest.mark.filterwarnings("ignore:divide by zero", "ignore:invalid value", "ignore:overflow")
@pytest.mark.parametrize("name", DTYPES)
def test_roots_logs_and_integer_powers_at_special_values_equal_eager(name):
    """Over the grid {±0, ±1, ±huge, ±inf, nan} x the same (huge: finite parts whose |z|
    overflows), compiled sqrt and log give eager's (NumPy's, C99 Annex G's) values:
    sqrt(x ± inf i) = inf ± inf i for every x, sqrt(3e38 + 3e38i) finite in complex64,
    log|z| finite where |z| overflows; and
    log(1 + 1e-10 i) keeps its real part 5e-21 (torch's; log|z| near 1 is within 4 eps
    absolute where x² + y² - 1 cancels). Non-integer powers run whole."""
    dtype, _ = DTYPES[name]
    huge = 3e38 if dtype is ember.complex64 else 1.5e308
    parts = [huge * np.sign(v) if abs(v) == 3e38 else v for v in _SPECIAL]
    grid = np.array([complex(a, b) for a in parts for b in parts] + [1 + 1e-10j, 0.6 + 0.8j, 1e-30 + 1j])
    z = ember.tensor(grid, dtype=dtype)
    ops = [lambda z: z.sqrt(), lambda z: z.log(), lambda z: z ** 0.5, lambda z: z ** -1.5]
    ember.compiler.reset()
    compiled = ember.compile(lambda z: [op(z) for op in ops], fullgraph=True)
    for _ in range(2):
        got = compiled(z)
    assert {k: v for k, v in counters["complex"].items() if k.startswith("fallback")} == {"fallback:Pow": 2}
    eps = np.finfo(dtype.to_real().np).eps
    for i, (g, op) in enumerate(zip(got, ops)):
        e = op(z).numpy()
        for part in ("real", "imag"):
            a, b = getattr(g.numpy(), part), getattr(e, part)
            # log|z| where x² + y² - 1 cancels (0.6 + 0.8i): a few eps absolute, as log1p's input
            floor = 4 * eps if (i, part) == (1, "real") else 0
            same = (a == b) | (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= np.maximum(32 * eps * np.abs(b), floor))
            assert same.all(), (i, part, grid[~same], a[~same], b[~same])
    assert abs(got[1].numpy()[-3].real - 5e-21) < 1e-27
    overflowing = [40, 41, 49]  # huge ± huge i, -huge + huge i
    t = torch.tensor(grid[overflowing], dtype=getattr(torch, name))
    np.testing.assert_allclose(got[0].numpy()[overflowing], t.sqrt().numpy(), rtol=4 * eps)
    np.testing.assert_allclose(got[1].numpy()[overflowing], t.log().numpy(), rtol=4 * eps)
