"""A differential fuzzer: random small programs over ember's ops, compiled (the default backend)
against eager, forward and gradients.

Each program is Python source (printed on failure: paste it to reproduce) over 2-4 inputs of
one broadcast family of shapes (empty ones too), float32/float64/int64/bool, contiguous,
transposed or strided, some holding nan/+-inf/-0.0: elementwise chains, reductions with
dim/keepdim, softmax, matmul, views, type conversions and in-place writes through views.
Results and input gradients must match eager's: integers and booleans exactly; floats within
a bound per family (below) with the same nan and +-inf positions. An op whose result jumps
(floor, sign, comparisons, where's mask) only reads values no rounding touched, so one ulp of
difference upstream cannot flip it. (Gradients that sum huge terms cancelling to a small one,
atan2's at 1e-30 inputs, differed while the C contracted one op's product into the next op's
sum: seed 2867, now test_fuzz_found.py.)

The default suite runs a few seeded programs; ``EMBER_FUZZ=N`` runs N more (``EMBER_FUZZ_SEED``
picks the first seed), each compiled on its own:
``EMBER_FUZZ=2000 pytest -q tests/compiler/test_fuzz.py -k long``.
"""
import os

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.compiler.backends import toolchain

SIZES = (1, 2, 3, 5, 7)
SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e-30], dtype=np.float64)

# float32 bounds per family, relative to the output's largest finite magnitude (atol) and to
# each value (rtol). "exact": rounding is the same in C as in NumPy (one IEEE operation, or
# none); "arith": + - * / whose chains the C may contract to fma;
# "transcendental": ember's vector exp/log/tanh/sigmoid/erf (1-3 ulp, test_codegen_math.py)
# and libm's, compounded along a chain; "reduce": sums in another order (omp simd's lanes,
# docs/compile.md "How close to eager": error ~ n ulp).
# float64 bounds are the same scaled by 2**-29 (the ratio of the two epsilons).
BOUND = {"exact": (0.0, 0.0), "arith": (4e-6, 1e-6), "transcendental": (3e-5, 5e-6), "reduce": (1e-4, 2e-5)}
RANK = ("exact", "arith", "transcendental", "reduce")

# name: (family, template); operands {a}, {b}
UNARY = {
    "neg": ("exact", "-{a}"), "abs": ("exact", "{a}.abs()"), "relu": ("exact", "torch.relu({a})"),
    "exp": ("transcendental", "torch.exp({a})"), "log": ("transcendental", "torch.log({a})"),
    "tanh": ("transcendental", "torch.tanh({a})"), "sigmoid": ("transcendental", "torch.sigmoid({a})"),
    "erf": ("transcendental", "torch.erf({a})"), "sqrt": ("transcendental", "torch.sqrt({a})"),
    "rsqrt": ("transcendental", "torch.rsqrt({a})"), "reciprocal": ("arith", "torch.reciprocal({a})"),
    "sin": ("transcendental", "torch.sin({a})"), "cos": ("transcendental", "torch.cos({a})"),
    "square": ("arith", "torch.square({a})"), "log1p": ("transcendental", "torch.log1p({a})"),
    "expm1": ("transcendental", "torch.expm1({a})"), "gelu": ("transcendental", "F.gelu({a})"),
    "gelu_tanh": ("transcendental", "F.gelu({a}, approximate='tanh')"),
    "silu": ("transcendental", "F.silu({a})"), "softplus": ("transcendental", "F.softplus({a})"),
    "leaky_relu": ("arith", "F.leaky_relu({a}, 0.2)"), "elu": ("transcendental", "F.elu({a})"),
    "clamp": ("exact", "torch.clamp({a}, -1.5, 2.0)"), "clamp_min": ("exact", "{a}.clamp(min=0.25)"),
    "pow2": ("arith", "{a} ** 2"), "pow3": ("arith", "{a} ** 3"), "powhalf": ("transcendental", "{a} ** 0.5"),
    "scale": ("arith", "{a} * 1.7"), "shift": ("arith", "{a} + 2.5"), "rsub": ("arith", "3 - {a}"),
    "rdiv": ("arith", "2 / {a}"), "hardtanh": ("exact", "F.hardtanh({a})"),
}
JUMPS = {"floor": "torch.floor({a})", "ceil": "torch.ceil({a})", "trunc": "torch.trunc({a})",
         "sign": "torch.sign({a})", "gt0": "({a} > 0)", "nan_to_num": "torch.nan_to_num({a})"}
BINARY = {
    "add": ("arith", "{a} + {b}"), "sub": ("arith", "{a} - {b}"), "mul": ("arith", "{a} * {b}"),
    "div": ("arith", "{a} / {b}"), "add_alpha": ("arith", "torch.add({a}, {b}, alpha=2.5)"),
    "maximum": ("exact", "torch.maximum({a}, {b})"), "minimum": ("exact", "torch.minimum({a}, {b})"),
    "atan2": ("transcendental", "torch.atan2({a}, {b})"), "hypot": ("transcendental", "torch.hypot({a}, {b})"),
}
COMPARE = ("{a} > {b}", "{a} <= {b}", "{a} == {b}", "{a} != {b}")
REDUCE = ("{a}.sum({d})", "{a}.sum({d}, keepdim=True)", "{a}.mean({d})", "{a}.mean({d}, keepdim=True)",
          "{a}.amax({d})", "{a}.amin({d}, keepdim=True)", "{a}.max({d}).values", "{a}.var({d})",
          "torch.logsumexp({a}, {d})", "F.softmax({a}, {d})", "F.log_softmax({a}, {d})",
          "{a}.cumsum({d})", "{a}.prod({d})", "{a}.sum()", "{a}.std({d}, keepdim=True)")
IN_PLACE = {"add_(1.5)": "arith", "mul_(-2.0)": "arith", "relu_()": "exact", "clamp_(min=0.0)": "exact",
            "zero_()": "exact", "fill_(0.5)": "exact", "sigmoid_()": "transcendental", "neg_()": "exact"}
INTEGER = ("{a} + {b}", "{a} * {b}", "{a} - {b}", "{a} // ({b}.abs() + 1)", "{a} % ({b}.abs() + 1)",
           "torch.maximum({a}, {b})", "{a}.sum({d})", "torch.where({a} > {b}, {a}, {b})")


class Value:
    """A program's value: its name, shape, dtype, error family, and whether a float32 rounding
    reaches it (``coarse``: then float32's bound holds, also for a float64 result)."""

    def __init__(self, name, shape, dtype, family="exact", coarse=False):
        self.name, self.shape, self.dtype, self.family = name, tuple(shape), dtype, family
        self.coarse = coarse or dtype == "float32"


class Program:
    """A random program: ``self.inputs`` (name, shape, dtype, layout, special) and source lines."""

    def __init__(self, seed, length):
        self.rng = np.random.default_rng(seed)
        rng = self.rng
        base = tuple(int(rng.choice(SIZES)) for _ in range(rng.integers(0, 4)))
        if base and rng.random() < 0.1:
            base = base[:-1] + (0,)  # an empty tensor
        self.float = "float64" if rng.random() < 0.25 else "float32"
        self.inputs, self.values, self.lines = [], [], []
        for i in range(rng.integers(2, 5)):
            dtype = self.float if i < 2 else str(rng.choice([self.float, "int64", "bool", "float64"]))
            shape = self._broadcastable(base) if i else base
            layout = str(rng.choice(["contiguous", "transposed", "strided"])) if len(shape) >= 2 else "contiguous"
            special = dtype.startswith("float") and rng.random() < 0.3
            self.inputs.append((f"x{i}", shape, dtype, layout, special))
            self.values.append(Value(f"x{i}", shape, dtype))
        for _ in range(length):
            self._statement()
        self.outputs = [v for v in self.values[len(self.inputs):] if rng.random() < 0.4] + [self.values[-1]]

    def _broadcastable(self, base):
        shape = [1 if self.rng.random() < 0.3 else n for n in base]
        return tuple(shape[self.rng.integers(0, len(shape) + 1):]) if self.rng.random() < 0.3 else tuple(shape)

    def _pick(self, kind=None, exact=False):
        pool = [v for v in self.values if (kind is None or v.dtype.startswith(kind))
                and (not exact or v.family == "exact")]
        return pool[self.rng.integers(len(pool))] if pool else None

    def _emit(self, expr, shape, dtype, family, *operands):
        name = f"v{len(self.values)}"
        self.lines.append(f"{name} = {expr}")
        self.values.append(Value(name, shape, dtype, family, any(v.coarse for v in operands)))

    @staticmethod
    def _join(*families):
        return max(families, key=RANK.index)

    def _statement(self):
        rng = self.rng
        roll = rng.random()
        a = self._pick("float")
        if roll < 0.3:
            family, template = UNARY[rng.choice(list(UNARY))]
            self._emit(template.format(a=a.name), a.shape, a.dtype, self._join(family, a.family), a)
        elif roll < 0.5:
            b = self._partner(a, "float")
            family, template = BINARY[rng.choice(list(BINARY))]
            self._emit(template.format(a=a.name, b=b.name), _broadcast(a, b), _promote(a, b),
                       self._join(family, a.family, b.family), a, b)
        elif roll < 0.57:
            a = self._pick("float", exact=True)
            key = rng.choice(list(JUMPS))
            self._emit(JUMPS[key].format(a=a.name), a.shape, "bool" if key == "gt0" else a.dtype, "exact")
        elif roll < 0.63:
            a = self._pick(exact=True)
            b = self._partner(a, a.dtype[:3], exact=True)
            self._emit(rng.choice(COMPARE).format(a=a.name, b=b.name), _broadcast(a, b), "bool", "exact")
        elif roll < 0.68:
            mask = self._pick("bool")
            b = self._partner(a, "float")
            if mask is None or b is None or _broadcast(a, b, mask) is None:
                return
            self._emit(f"torch.where({mask.name}, {a.name}, {b.name})", _broadcast(a, b, mask),
                       _promote(a, b), self._join(a.family, b.family), a, b)
        elif roll < 0.8:
            if not a.shape:
                return
            d = int(rng.integers(-len(a.shape), len(a.shape)))
            template = rng.choice(REDUCE)
            expr = template.format(a=a.name, d=d)
            shape = () if template == "{a}.sum()" else a.shape if "softmax" in template or "cumsum" in template \
                else _reduced(a.shape, d, keep="keepdim" in template)
            if 0 in a.shape and any(k in template for k in ("amax", "amin", ".max(")):
                return  # an empty reduction without identity: eager raises, as torch
            self._emit(expr, shape, a.dtype, "reduce", a)
        elif roll < 0.88:
            self._view(a)
        elif roll < 0.93:
            self._in_place(a)
        elif roll < 0.96:
            if len(a.shape) >= 1:
                other = f"{a.name}.transpose(-1, -2)" if len(a.shape) >= 2 else a.name
                shape = a.shape[:-1] + a.shape[-2:-1] if len(a.shape) >= 2 else ()
                self._emit(f"{a.name} @ {other}", shape, a.dtype, "reduce", a)
        else:
            i = self._pick("int") or self._pick("bool")
            if i is None:
                return
            i_name = i.name if i.dtype.startswith("int") else f"{i.name}.long()"
            b = self._partner(i, i.dtype[:3], exact=True) or i
            b_name = b.name if b.dtype.startswith("int") else f"{b.name}.long()"
            template = rng.choice(INTEGER)
            if "sum" in template and not i.shape:
                return
            d = int(rng.integers(-len(i.shape), len(i.shape))) if i.shape else 0
            shape = _reduced(i.shape, d, False) if "sum" in template else _broadcast(i, b)
            self._emit(template.format(a=i_name, b=b_name, d=d), shape, "int64", "exact")
            if rng.random() < 0.5 and _broadcast(self.values[-1], a) is not None:
                self._emit(f"{self.values[-1].name}.to({a.name}.dtype) * {a.name}", _broadcast(self.values[-1], a),
                           a.dtype, self._join("arith", a.family), a)

    def _partner(self, a, kind, exact=False):
        pool = [v for v in self.values if v.dtype.startswith(kind) and _broadcast(a, v) is not None
                and (not exact or v.family == "exact")]
        return pool[self.rng.integers(len(pool))] if pool else None

    def _view(self, a):
        rng, nd = self.rng, len(a.shape)
        if nd >= 2 and rng.random() < 0.4:
            i, j = (int(k) for k in rng.choice(nd, 2, replace=False))
            shape = list(a.shape)
            shape[i], shape[j] = shape[j], shape[i]
            self._emit(f"{a.name}.transpose({i}, {j})", shape, a.dtype, a.family, a)
        elif nd >= 1 and rng.random() < 0.5:
            step = int(rng.integers(1, 3))
            start = int(rng.integers(0, 2))
            n = max(0, -(-(a.shape[-1] - start) // step))
            self._emit(f"{a.name}[..., {start}::{step}]", a.shape[:-1] + (n,), a.dtype, a.family, a)
        elif rng.random() < 0.5:
            d = int(rng.integers(0, nd + 1))
            self._emit(f"{a.name}.unsqueeze({d})", a.shape[:d] + (1,) + a.shape[d:], a.dtype, a.family, a)
        else:
            self._emit(f"{a.name}.reshape(-1)", (int(np.prod(a.shape)),), a.dtype, a.family, a)

    def _in_place(self, a):
        """A clone written through a view (or whole), then read: in-place ops on views."""
        rng = self.rng
        self._emit(f"{a.name}.clone()", a.shape, a.dtype, a.family, a)
        t = self.values[-1]
        target = t.name
        if len(t.shape) >= 2 and rng.random() < 0.5:
            target = f"{t.name}.transpose(0, 1)"
        elif t.shape and rng.random() < 0.5:
            target = f"{t.name}[..., :1]"
        op = rng.choice(list(IN_PLACE))
        self.lines.append(f"{target}.{op}")
        t.family = self._join(IN_PLACE[op], t.family)

    def source(self):
        args = ", ".join(name for name, *_ in self.inputs)
        body = "".join(f"    {line}\n" for line in self.lines)
        return f"def program({args}):\n{body}    return ({', '.join(v.name for v in self.outputs)},)\n"

    def make_inputs(self, seed):
        rng = np.random.default_rng(seed)
        tensors = []
        for name, shape, dtype, layout, special in self.inputs:
            full = shape[:-2] + shape[:-3:-1] if layout == "transposed" else \
                shape[:-1] + (2 * shape[-1],) if layout == "strided" else shape
            if dtype == "bool":
                array = rng.random(full) < 0.5
            elif dtype == "int64":
                array = rng.integers(-5, 6, full)
            else:
                array = (rng.standard_normal(full) * 2).astype(dtype)
                if special and array.size:
                    flat = array.reshape(-1)
                    picks = rng.integers(0, array.size, min(3, array.size))
                    flat[picks] = rng.choice(SPECIAL, len(picks))
            t = ember.tensor(array)
            t = t.transpose(-1, -2) if layout == "transposed" else t[..., ::2] if layout == "strided" else t
            tensors.append(t)
        return tensors


def _broadcast(*values):
    try:
        return tuple(np.broadcast_shapes(*(v.shape for v in values)))
    except ValueError:
        return None


def _promote(a, b):
    """torch's promotion of two float tensors: a 0-d one takes part only against another 0-d."""
    if bool(a.shape) != bool(b.shape):
        return (a if a.shape else b).dtype
    return "float64" if "float64" in (a.dtype, b.dtype) else a.dtype


def _reduced(shape, d, keep):
    d %= len(shape)
    return shape[:d] + ((1,) if keep else ()) + shape[d + 1:]


def _bound(value):
    rtol, atol = BOUND[value.family]
    if not value.coarse:
        rtol, atol = rtol * 2.0 ** -29, atol * 2.0 ** -29
    return rtol, atol


def _compare(actual, expected, rtol, atol, what):
    a, e = actual.detach().numpy(), expected.detach().numpy()
    assert a.shape == e.shape and a.dtype == e.dtype, f"{what}: {a.shape} {a.dtype} vs eager {e.shape} {e.dtype}"
    if a.dtype.kind != "f":
        np.testing.assert_array_equal(a, e, err_msg=what)
        return
    assert np.array_equal(np.isnan(a), np.isnan(e)), f"{what}: nan positions differ"
    assert np.array_equal(np.isposinf(a), np.isposinf(e)) and np.array_equal(np.isneginf(a), np.isneginf(e)), \
        f"{what}: inf positions differ:\n{a}\nvs eager\n{e}"
    finite = np.isfinite(e)
    scale = float(np.abs(e[finite]).max()) if finite.any() else 0.0
    np.testing.assert_allclose(a[finite], e[finite], rtol=rtol, atol=atol * max(1.0, scale), err_msg=what)


def run_program(seed, length=8):
    """Compiles program ``seed`` and checks it against eager; returns (program, how it ran)."""
    program = Program(seed, length)
    namespace = {"torch": ember, "F": F}
    exec(program.source(), namespace)
    fn = namespace["program"]
    float_inputs = [i for i, (_, _, dtype, _, _) in enumerate(program.inputs) if dtype.startswith("float")]

    def call(f):
        inputs = program.make_inputs(seed)
        for i in float_inputs:
            inputs[i].requires_grad_(True)
        with np.errstate(all="ignore"):
            outs = f(*inputs)
            weights = np.random.default_rng(seed + 1)
            loss = None
            for o in outs:
                if o.requires_grad and o.dtype.is_floating_point:
                    w = ember.tensor(weights.standard_normal(o.shape).astype(o.detach().numpy().dtype))
                    term = (ember.nan_to_num(o, 0.0, 0.0, 0.0) * w).sum()
                    loss = term if loss is None else loss + term.to(loss.dtype)
            if loss is not None:
                loss.backward()
        return outs, [inputs[i].grad for i in float_inputs]

    ember.compiler.reset()
    expected, expected_grads = call(fn)
    compiled = ember.compile(fn)
    try:
        for _ in range(2):  # the second call replays the graph the first recorded
            actual, actual_grads = call(compiled)
    except Exception as error:
        raise AssertionError(f"compiled program raised {type(error).__name__}: {error}\n{program.source()}") from error
    context = f"seed {seed}:\n{program.source()}"
    for value, a, e in zip(program.outputs, actual, expected):
        _compare(a, e, *_bound(value), f"{value.name} of {context}")
    family = max((v.family for v in program.values), key=RANK.index)
    rtol, atol = BOUND["reduce" if family != "exact" else "arith"]
    if not any(v.coarse for v in program.values):
        rtol, atol = rtol * 2.0 ** -29, atol * 2.0 ** -29
    for i, a, e in zip(float_inputs, actual_grads, expected_grads):
        assert (a is None) == (e is None), f"grad of x{i}: {a} vs eager {e}, {context}"
        if a is not None:
            _compare(a, e, rtol * 10, atol * 10, f"grad of x{i} of {context}")
    return program, compiled._entries


needs_cc = pytest.mark.skipif(toolchain.find_compiler() is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
    yield
    ember.compiler.reset()


def test_generator_records_eager_shapes():
    """Every value's recorded shape (from which later statements pick broadcasting partners)
    is the shape eager computes: softmax and cumsum keep their dim's size (seed 1075 recorded
    log_softmax's result as a reduction's, so a later add broadcast (5, 7) against (5, 2, 7))."""
    for seed in (1075, *range(1100, 1160)):
        program = Program(seed, 8)
        namespace = {"torch": ember, "F": F}
        names = [v.name for v in program.values]
        exec(program.source().rsplit("return", 1)[0] + f"return ({', '.join(names)},)\n", namespace)
        with np.errstate(all="ignore"):
            values = namespace["program"](*program.make_inputs(seed))
        for value, result in zip(program.values, values):
            assert tuple(result.shape) == value.shape, f"seed {seed}: {value.name} {tuple(result.shape)} vs {value.shape}"


@needs_cc
@pytest.mark.parametrize("seed", range(4))
def test_fuzz_programs(seed):
    run_program(seed, length=10)


@needs_cc
@pytest.mark.skipif(not os.environ.get("EMBER_FUZZ"), reason="set EMBER_FUZZ=N for the long run")
def test_fuzz_long():
    first = int(os.environ.get("EMBER_FUZZ_SEED", 1000))
    failures = []
    for seed in range(first, first + int(os.environ["EMBER_FUZZ"])):
        try:
            run_program(seed, length=int(os.environ.get("EMBER_FUZZ_LENGTH", 8)))
        except AssertionError as error:
            failures.append(f"--- seed {seed}: {str(error)[:1500]}")
    assert not failures, f"{len(failures)} failing programs:\n" + "\n".join(failures)
