"""The C backend against the reference (each node's ``forward``, as the Python backend runs it).

Tolerances per dtype: elementwise results within TOL (fma contraction and ember's
vector math, bounded in test_codegen_math.py at 1-4 ulp); reductions, softmax, losses and GEMMs
within SUM_TOL (a different summation order: error grows with the number of terms). NaN, +inf
and -inf land where the reference has them.
"""
import numpy as np
import pytest

from ember.compiler.backends import compile_graph, compile_python, toolchain
from ember.compiler.backends import autotune
from graph_builder import Builder

pytestmark = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")

TOL = {np.float32: dict(rtol=2e-6, atol=1e-6), np.float64: dict(rtol=1e-14, atol=1e-14)}
SUM_TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-11, atol=1e-12)}
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, 80.0, -80.0, 0.5, -0.5]


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def _data(rng, shape, dtype, special=True):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if special and x.size >= len(SPECIAL):
        x.reshape(-1)[:len(SPECIAL)] = SPECIAL
    return x


def _check(builder, graph, tol, **options):
    fn = compile_graph(graph, options)
    assert hasattr(fn, "c_source"), "the C backend was expected"
    args = [builder.values[p].copy() for p in graph.placeholders]
    with np.errstate(all="ignore"):
        outs = fn(args)
    for node, out in zip(graph.outputs, outs):
        ref = builder.values[node]
        assert out.dtype == ref.dtype and out.shape == ref.shape, node.name
        if ref.dtype.kind == "f":
            np.testing.assert_allclose(out, ref, equal_nan=True, err_msg=node.name, **tol[ref.dtype.type])
        else:
            np.testing.assert_array_equal(out, ref, err_msg=node.name)
    return fn, args


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.uint8])
def test_all_and_any_in_c(dtype):
    """All and Any as the sum kernel's loops (&= / |= of x != 0) against each node's forward:
    NaN and inf count as true, -0.0 as false; over all dims, some dims (kept or not), no dims;
    empty inputs (all() of nothing is true); a transposed view; a comparison fused into the loop;
    uint8 stays uint8, as torch."""
    rng = np.random.default_rng(7)
    b = Builder()
    values = _data(rng, (6, 9), np.float64) if dtype != np.bool_ else rng.random((6, 9)) < 0.9
    values = values.astype(dtype)
    values[2] = 0  # a row of zeros (and, for floats, a column with -0.0 and NaN)
    if dtype == np.float32:
        values[:, 3], values[4, 3] = -0.0, np.nan
    x = b.input("x", values)
    xt = b.input("xt", np.ascontiguousarray(values.T).T)  # non-contiguous
    empty = [b.input(f"e{i}", np.zeros(shape, dtype)) for i, shape in enumerate(((3, 0), (0, 3)))]
    outs = []
    for op in ("All", "Any"):
        outs += [b.call(op, x), b.call(op, x, dim=(1,)), b.call(op, xt, dim=(0,), keepdim=True),
                 b.call(op, x, dim=()), b.call(op, empty[0], dim=(1,)), b.call(op, empty[1], dim=(1,)),
                 b.call(op, empty[0])]
    outs.append(b.call("All", b.call("Ne", b.call("Mul", x, x), x), dim=(1,)) if dtype == np.float32 else x)
    fn, _ = _check(b, b.output(*outs), SUM_TOL)
    assert fn.c_source.count("all over dims") == 7 + (dtype == np.float32) and fn.c_source.count("any over dims") == 7
    assert "F_all" not in fn.source and "F_any" not in fn.source


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_extremes_in_c(dtype):
    """Amax/Amin (over dims, kept or not) and Max/Min (of everything) as the sum kernel's loops
    against each node's forward: a NaN anywhere in a slice gives NaN, +-inf win, a transposed
    view, an expression fused into the loop."""
    rng = np.random.default_rng(8)
    b = Builder()
    values = _data(rng, (7, 10), dtype)  # nan, inf, -inf, zeros, huge values in row 0
    values[3, 4] = np.nan
    x = b.input("x", values)
    xt = b.input("xt", np.ascontiguousarray(values.T).T)
    clean = b.input("clean", _data(rng, (5, 6), dtype, special=False))
    outs = [b.call(op, x, dim=dim, keepdim=keep) for op in ("Amax", "Amin")
            for dim, keep in (((1,), False), ((0,), True), ((0, 1), False))]
    outs += [b.call(op, xt, dim=(0,)) for op in ("Amax", "Amin")]
    outs += [b.call(op, v) for op in ("Max", "Min") for v in (x, clean)]
    outs.append(b.call("Amax", b.call("Mul", clean, -2.0), dim=(1,)))
    fn, _ = _check(b, b.output(*outs), TOL)
    assert fn.c_source.count("amax over dims") == 5 and fn.c_source.count("amin over dims") == 4
    assert "amax over dims [1] of [5, 6]: Mul(mul), Amax(" in fn.c_source
    assert "F_amax" not in fn.source and "F_max" not in fn.source


UNARY = ["Neg", "Exp", "Log", "Tanh", "Sigmoid", "Erf", "Sqrt", "Rsqrt", "Reciprocal", "Abs",
         "Relu", "Sin", "Cos"]
BINARY = ["Add", "Sub", "Mul", "Div", "Maximum", "Minimum"]
COMPARE = ["Eq", "Ne", "Lt", "Le", "Gt", "Ge"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_elementwise_op_alone(dtype):
    """Each op as its own output (one graph, one build), with nan/inf/-inf/zeros/huge inputs,
    a broadcast row, a non-contiguous placeholder and a transposed view."""
    rng = np.random.default_rng(0)
    b = Builder()
    x = b.input("x", _data(rng, (8, 33), dtype))
    y = b.input("y", _data(rng, (8, 33), dtype)[::-1])
    row = b.input("row", _data(rng, (33,), dtype, special=False))
    xt = b.input("xt", np.ascontiguousarray(_data(rng, (33, 8), dtype)).T)  # non-contiguous
    outs = [b.call(name, x) for name in UNARY]
    outs += [b.call(name, x, y) for name in BINARY]
    outs += [b.call(name, x, row) for name in ("Add", "Mul", "Maximum")]
    outs += [b.call(name, x, xt) for name in ("Sub", "Div")]
    outs += [b.call(name, x, y) for name in COMPARE]
    outs += [b.call("Add", x, y, alpha=2.5), b.call("Sub", x, 0.25), b.call("Mul", x, 1e-3),
             b.call("Pow", x, 2), b.call("Pow", x, 0.5), b.call("Pow", x, 3.0),
             b.call("LeakyRelu", x, negative_slope=0.2), b.call("Gelu", x),
             b.call("Gelu", x, approximate="tanh"), b.call("Where", b.call("Gt", x, 0), x, 0.5),
             # g finite: float32 C computes Phi(x) for x < 0 without eager's 1 + erf cancellation
             # (test_perf_27.py), which a huge g would magnify past these bounds
             b.call("GeluBackward", row, x, b.call("Gelu", x)),
             b.call("Permute", b.call("Exp", b.call("Permute", x, dims=(1, 0))), dims=(1, 0)),
             b.call("ToDtype", b.call("Lt", x, y), dtype=b.graph.nodes[0].meta["dtype"])]
    g = b.output(*outs)
    fn, _ = _check(b, g, TOL)
    assert "em_erf" in fn.c_source and "em_tanh" in fn.c_source
    assert fn.c_source.count("static void k") < 6, "independent ops over one shape share loops"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_backward_reads_phi_from_the_output(dtype):
    """Given the forward's output, GeluBackward's float64 loop divides it by x (0.5 at x = 0)
    instead of evaluating erf again, as eager does; float32's evaluates ``em_gelu_gradf(x)`` (one
    exponential, no erf); both equal torch's GELU gradient (float64 reference, the output
    rounded to ``dtype`` first: its rounding is all that separates them)."""
    import torch
    rng = np.random.default_rng(1)
    x = _data(rng, (8, 33), dtype)
    x.reshape(-1)[20:24] = [0.0, -0.0, 1e-40 if dtype == np.float32 else 1e-310, -5.0]
    g = rng.standard_normal((8, 33)).astype(dtype)
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    out = torch.nn.functional.gelu(xt)
    out.backward(torch.tensor(g.astype(np.float64)))
    y = out.detach().numpy().astype(dtype)
    b = Builder()
    fn, _ = _check(b, b.output(b.call("GeluBackward", b.input("g", g), b.input("x", x), b.input("out", y))), TOL)
    assert "em_erf" not in fn.c_source and ("em_gelu_gradf" in fn.c_source) == (dtype == np.float32)
    finite = np.isfinite(x) & (np.abs(x) < 1e4)
    with np.errstate(all="ignore"):
        got = fn([g, x, y])[0]
    np.testing.assert_allclose(got[finite], xt.grad.numpy()[finite], **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_chains(dtype):
    """GELU(tanh) backward-like chains, layer norm from sums, softmax, log-softmax, a sum of a
    product computed inside the sum's loop, broadcast against keepdim results."""
    rng = np.random.default_rng(1)
    b = Builder()
    x = b.input("x", _data(rng, (16, 64), dtype))
    gamma = b.input("gamma", _data(rng, (64,), dtype, special=False))
    beta = b.input("beta", _data(rng, (64,), dtype, special=False))
    clean = b.input("clean", _data(rng, (16, 64), dtype, special=False))
    mean = b.call("Mul", b.call("Sum", clean, dim=(1,), keepdim=True), 1 / 64)
    centered = b.call("Sub", clean, mean)
    var = b.call("Mul", b.call("Sum", b.call("Mul", centered, centered), dim=(1,), keepdim=True), 1 / 64)
    norm = b.call("Mul", centered, b.call("Rsqrt", b.call("Add", var, 1e-5)))
    layer_norm = b.call("Add", b.call("Mul", norm, gamma), beta)
    t = b.call("Tanh", b.call("Mul", b.call("Add", x, b.call("Mul", b.call("Mul", x, x), b.call("Mul", x, 0.044715))), 0.79788456))
    gelu_grad = b.call("Add", b.call("Mul", b.call("Add", t, 1.0), 0.5),
                       b.call("Mul", b.call("Mul", x, 0.5), b.call("Sub", 1.0, b.call("Mul", t, t))))
    total = b.call("Sum", b.call("Mul", clean, b.call("Exp", clean)))
    columns = b.call("Sum", b.call("Permute", clean, dims=(1, 0)), dim=(1,))
    stats = b.call("NormStats", clean, axes=(1,))
    mean, var = b.call("getitem", stats, 0), b.call("getitem", stats, 1)
    op_layer_norm = b.call("Normalize", clean, mean, var, gamma, beta, axes=(1,), eps=1e-5)
    cube = b.input("cube", _data(rng, (4, 8, 16), dtype, special=False))
    w16 = b.input("w16", _data(rng, (16,), dtype, special=False))
    cube_stats = b.call("NormStats", cube, axes=(1, 2), centered=False)
    rms = b.call("Normalize", cube, b.call("getitem", cube_stats, 0), b.call("getitem", cube_stats, 1),
                 w16, None, axes=(1, 2), eps=1e-6, centered=False, affine_shape=(1, 16))
    g = b.output(layer_norm, gelu_grad, b.call("Softmax", x, dim=-1), b.call("LogSoftmax", clean, dim=1),
                 total, columns, mean, var, op_layer_norm, rms)
    fn, _ = _check(b, g, SUM_TOL)
    assert "sum over dims [0, 1] of [16, 64]: Exp(exp), Mul(mul_" in fn.c_source  # fused into the sum
    assert "mean and variance over the last 2 dims of [4, 8, 16]: NormStats(norm_stats_1)" in fn.c_source
    assert "F_normalize" not in fn.source and "F_norm_stats" not in fn.source  # layer and RMS norm in C


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("choice", [0, 1, 2])
def test_gemm_epilogues_every_candidate(dtype, choice, monkeypatch):
    """Linear + bias + GELU + residual, a transposed operand, a 3-D input folded into rows:
    each autotuning candidate gives the reference's result."""
    monkeypatch.setattr(autotune, "cost_model", lambda shape, *_: (choice, 8))
    rng = np.random.default_rng(2)
    b = Builder()
    x = b.input("x", _data(rng, (3, 12, 40), dtype, special=False))
    w = b.input("w", _data(rng, (24, 40), dtype, special=False))
    bias = b.input("bias", _data(rng, (24,), dtype, special=False))
    res = b.input("res", _data(rng, (3, 12, 24), dtype, special=False))
    a = b.input("a", _data(rng, (40, 36), dtype, special=False))
    rows = b.call("Addmm", bias, b.call("View", x, shape=(36, 40)), b.call("Permute", w, dims=(1, 0)))
    h = b.call("Add", b.call("Gelu", b.call("View", rows, shape=(3, 12, 24))), res)
    at = b.call("Matmul", b.call("Permute", a, dims=(1, 0)), b.call("Permute", w, dims=(1, 0)))
    scaled = b.call("Mul", at, 0.5)
    g = b.output(h, scaled)
    fn, _ = _check(b, g, SUM_TOL)
    assert "with epilogue Gelu(gelu), Add(add)" in fn.c_source


def linear(b, x, w, bias):
    """F.linear on a matrix, as it dispatches: addmm(bias, x, w.t())."""
    return b.call("Addmm", bias, x, b.call("Permute", w, dims=(1, 0)))


def mlp_step(dtype=np.float32, B=32, D=48, H=40, C=10, seed=0, lr=0.1, ignore=None):
    """Forward, backward and SGD of a two-layer MLP as one graph (parameters are mutated)."""
    rng = np.random.default_rng(seed)
    b = Builder()
    x = b.input("x", rng.standard_normal((B, D)).astype(dtype))
    labels = rng.integers(0, C, B)
    if ignore is not None:
        labels[::3] = ignore
    y = b.input("y", labels)
    w1 = b.input("w1", (rng.standard_normal((H, D)) * 0.1).astype(dtype))
    b1 = b.input("b1", np.zeros(H, dtype))
    w2 = b.input("w2", (rng.standard_normal((C, H)) * 0.1).astype(dtype))
    b2 = b.input("b2", np.zeros(C, dtype))
    one = b.input("one", np.ones((), dtype))
    kw = {} if ignore is None else {"ignore_index": ignore}
    a = b.call("Relu", linear(b, x, w1, b1))
    logits = linear(b, a, w2, b2)
    loss = b.call("CrossEntropy", logits, y, None, **kw)
    g_logits = b.call("CrossEntropyBackward", one, y, None, logits, **kw)
    g_h = b.call("Where", b.call("Le", a, 0), 0.0, b.call("Matmul", g_logits, w2))
    grads = {w2: b.call("Matmul", b.call("Permute", g_logits, dims=(1, 0)), a),
             b2: b.call("Sum", g_logits, dim=(0,)),
             w1: b.call("Matmul", b.call("Permute", g_h, dims=(1, 0)), x),
             b1: b.call("Sum", g_h, dim=(0,))}
    for p, grad in grads.items():
        b.mutate(p, b.call("Sub", p, b.call("Mul", grad, lr)))
    return b, b.output(loss, g_logits)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_training_steps_match_reference(dtype):
    b, g = mlp_step(dtype, ignore=3)
    fn = compile_graph(g, {})
    ref = compile_python(g)
    args = [b.values[p].copy() for p in g.placeholders]
    ref_args = [b.values[p].copy() for p in g.placeholders]
    fn.c_source.index("cross entropy")
    previous = []
    for _ in range(3):
        out, expected = fn(args), ref(ref_args)
        for o, e in zip(out, expected):
            assert o.dtype == e.dtype == dtype
            np.testing.assert_allclose(o, e, **SUM_TOL[dtype])
        previous.append((out, [o.copy() for o in out]))
    for out, snapshot in previous:  # returned arrays are the caller's: later steps leave them alone
        for o, s in zip(out, snapshot):
            np.testing.assert_array_equal(o, s)
    for p, a, r in zip(g.placeholders, args, ref_args):  # parameters updated in place
        np.testing.assert_allclose(a, r, err_msg=p.name, **SUM_TOL[dtype])
    assert not np.array_equal(args[2], b.values[g.placeholders[2]])


def test_memory_planning_reuses_dead_buffers():
    """A chain of elementwise steps with sums between them (so each is its own kernel): dead
    intermediate buffers are reused, and the results still equal the reference."""
    rng = np.random.default_rng(4)
    b = Builder()
    x = b.input("x", _data(rng, (32, 16), np.float32, special=False))
    h, outs = x, []
    for _ in range(6):
        h = b.call("Tanh", b.call("Add", h, b.call("Sum", h, dim=(1,), keepdim=True)))
        outs.append(b.call("Sum", h))
    g = b.output(*outs)
    fn, _ = _check(b, g, SUM_TOL)
    slots = {line.split("p[")[1].split("]")[0] for line in fn.c_source.splitlines() if "p[" in line}
    # without reuse: the input + 6 loops + 6 row sums + 6 outputs = 19 arrays; with it the
    # outputs (kept to the end) and the input, plus a few recycled intermediates
    assert len(slots) <= 1 + 6 + 3


def test_non_contiguous_mutated_parameter_is_written_back():
    b, g = mlp_step(np.float64)
    fn = compile_graph(g, {})
    args = [b.values[p].copy() for p in g.placeholders]
    ref_args = [b.values[p].copy() for p in g.placeholders]
    args[2] = np.asfortranarray(args[2])  # w1, as a column-major array
    fn(args)
    compile_python(g)(ref_args)
    np.testing.assert_allclose(args[2], ref_args[2], **SUM_TOL[np.float64])


def test_inputs_of_another_shape_or_dtype_are_refused():
    b, g = mlp_step(np.float32)
    fn = compile_graph(g, {})
    args = [b.values[p].copy() for p in g.placeholders]
    fn(args)
    with pytest.raises(ValueError, match=r"input 'w1' must be float32\[40, 48\], got float64\[40, 48\]"):
        fn(args[:2] + [args[2].astype(np.float64)] + args[3:])
    with pytest.raises(ValueError, match=r"input 'x' must be float32\[32, 48\], got float32\[31, 48\]"):
        fn([args[0][1:]] + args[1:])


def test_cross_entropy_bad_target_raises_like_eager():
    b, g = mlp_step(np.float32)
    fn = compile_graph(g, {})
    args = [b.values[p].copy() for p in g.placeholders]
    args[1][4] = 10
    with pytest.raises(IndexError, match="Target 10 is out of bounds."):
        fn(args)


def test_unknown_ops_run_from_python_between_c_regions():
    rng = np.random.default_rng(3)
    b = Builder()
    x = b.input("x", _data(rng, (6, 5), np.float32, special=False))
    e = b.call("Exp", x)
    s = b.call("Logcumsumexp", e, dim=1)  # no C kernel: its forward runs from Python
    parts = b.call("Sum", b.call("Mul", s, e), dim=(1,))
    first = b.call("getitem", s, (slice(None), 0))
    scalar = b.call("Prod", b.call("Exp", x))  # a NumPy scalar from Python, read by C and Python
    g = b.output(parts, first, b.call("Tanh", first), b.call("Mul", scalar, 2.0), b.call("Logcumsumexp", b.call("Add", scalar, x), dim=0))
    fn, _ = _check(b, g, SUM_TOL)
    assert "F_logcumsumexp" in fn.source and fn.source.count("R") >= 2


def test_python_backend_matches_forward_and_mutates():
    b, g = mlp_step(np.float32)
    args = [b.values[p].copy() for p in g.placeholders]
    out = compile_python(g)(args)
    np.testing.assert_array_equal(out[0], b.values[g.outputs[0]])
    np.testing.assert_array_equal(args[2], b.values[g.mutations[2][1]])
    assert g.mutations[2][0] is g.placeholders[2]


def test_output_code_log_names_fused_ops(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_LOGS", "output_code,autotuning")
    b, g = mlp_step(np.float32, B=8, D=9, H=7, C=3, seed=5)
    compile_graph(g, {})
    err = capfd.readouterr().err
    assert "/* GEMM [8x9] @ [9x7]: Addmm(addmm) with epilogue Relu(relu), Le(le) */" in err
    assert "[ember autotuning] addmm [8x9]@[9x7] + epilogue -> direct kernel (cost model)" in err
