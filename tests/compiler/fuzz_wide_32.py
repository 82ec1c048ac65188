"""The compile fuzzer widened (session 32): random programs (test_fuzz.py's statements and more)
compiled against ember's eager AND against real torch's eager, forward and gradients.

What it adds to test_fuzz.py's programs: float16/bfloat16/int32 inputs and mixes of float
dtypes, dtype conversions, edge values per dtype (nan, +-inf, -0.0, subnormals, huge), inputs
that are expanded (stride 0) or offset slices, views (permute, flip, select, slices with steps
on any dim, expand), chains of reductions and a reduction broadcast back, in-place writes with
tensor operands through views of a clone, masked_fill/cat/addcmul/lerp/clamp by a tensor, only
some inputs requiring grad, and ``dynamic=True`` called again at other sizes (every size above
1 grows by one). ``run_step`` fuzzes whole training steps: a small MLP, a loss and an
optimizer (SGD/Adam/AdamW/RMSprop/Adagrad/... with momentum, weight_decay, ...) stepping inside
the compiled function, three steps, then a fourth at another batch size where dynamic.

Bounds: compiled against eager as test_fuzz.py's families (float32's; float64's scaled by
2**-29; float16's and bfloat16's by their epsilon's ratio to float32's, 2**13 and 2**16), taken
from the coarsest dtype a value's inputs passed through. Against torch a value passes where it
is within that bound of torch's, or no farther from torch's float64 result (the same program on
the inputs widened to float64, exactly) than twice torch's own distance from it: torch's float32
kernels are the bound where a chain amplifies rounding (x - x.mean() of huge values).
"""
import warnings

import numpy as np
import torch

import ember
from test_fuzz import BOUND, RANK, SIZES, Program, Value, _broadcast, _reduced

EPS = {"float64": 2.0 ** -52, "float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
FLOATS = ("float32", "float32", "float32", "float64", "float16", "bfloat16")
# per dtype: subnormal, huge (near the largest finite value)
EDGE = {"float64": (1e-310, 1e300), "float32": (1e-40, 3e38), "float16": (3e-7, 6e4), "bfloat16": (1e-40, 3e38)}
CONVERT = {"float16": ".half()", "bfloat16": ".bfloat16()", "float32": ".float()", "float64": ".double()"}
CHAINS = ("{a}.sum({d}).amax()", "{a}.mean({d}, keepdim=True).sum({e})", "{a} - {a}.mean({d}, keepdim=True)",
          "({a} - {a}.amax({d}, keepdim=True)).exp()", "torch.linalg.vector_norm({a}, dim={d})",
          "{a}.var({d}, correction=0)", "{a}.abs().sum({d}).sqrt()", "{a}.cumsum({d}).amin({e})",
          "F.softmax({a}, {d}).sum({e})", "{a}.std()")
TENSOR_IN_PLACE = ("add_({b})", "mul_({b})", "sub_({b}, alpha=0.5)", "copy_({b})", "div_({b}.abs() + 1)",
                   "clamp_(max={b})", "addcmul_({b}, {b}, value=0.5)", "lerp_({b}, 0.25)")


def _class(name):
    """float, int or bool: of a dtype's name, or of the prefix test_fuzz.py's Program picks by
    (``a.dtype[:3]``: "flo", "bfl", "int", "boo")."""
    return "int" if name.startswith("int") else "bool" if name.startswith("boo") else "float"


class WideValue(Value):
    """A value with ``eps``: the coarsest dtype's epsilon among the values it was computed from."""

    def __init__(self, name, shape, dtype, family="exact", eps=0.0):
        super().__init__(name, shape, dtype, family)
        self.eps = max(eps, EPS.get(dtype, 0.0))


class WideProgram(Program):
    """A random program over test_fuzz.py's statements and the wider ones below."""

    def __init__(self, seed, length):
        self.rng = rng = np.random.default_rng([seed, 32])
        base = tuple(int(rng.choice(SIZES)) for _ in range(rng.integers(0, 4)))
        if base and rng.random() < 0.1:
            base = base[:-1] + (0,)
        self.float = str(rng.choice(FLOATS))
        self.dynamic = rng.random() < 0.3
        self.inputs, self.values, self.lines = [], [], []
        for i in range(rng.integers(2, 5)):
            dtype = self.float if i == 0 else str(rng.choice([self.float, self.float, *FLOATS, "int64", "int32", "bool"]))
            shape = self._broadcastable(base) if i else base
            layouts = ["contiguous", "transposed", "strided", "offset"] if len(shape) >= 2 else ["contiguous", "offset"]
            if any(n > 1 for n in shape):
                layouts.append("expanded")
            layout = str(rng.choice(layouts))
            special = dtype in EPS and rng.random() < 0.35
            grad = dtype in EPS and rng.random() < 0.8
            self.inputs.append((f"x{i}", shape, dtype, layout, special, grad))
            self.values.append(WideValue(f"x{i}", shape, dtype))
        for _ in range(length):
            self._statement()
        self.outputs = [v for v in self.values[len(self.inputs):] if rng.random() < 0.4] + [self.values[-1]]

    def _pick(self, kind=None, exact=False):
        pool = [v for v in self.values if (kind is None or _class(v.dtype) == _class(kind))
                and (not exact or v.family == "exact")]
        return pool[self.rng.integers(len(pool))] if pool else None

    def _partner(self, a, kind, exact=False):
        pool = [v for v in self.values if _class(v.dtype) == _class(kind) and _broadcast(a, v) is not None
                and (not exact or v.family == "exact")]
        return pool[self.rng.integers(len(pool))] if pool else None

    def _emit(self, expr, shape, dtype, family, *operands):
        name = f"v{len(self.values)}"
        self.lines.append(f"{name} = {expr}")
        self.values.append(WideValue(name, shape, dtype, family, max([v.eps for v in operands], default=0.0)))

    def _statement(self):
        roll = self.rng.random()
        if roll >= 0.4:
            super()._statement()
            return
        a = self._pick("float")
        (self._wide_view if roll < 0.12 else self._chain if roll < 0.2 else self._tensor_in_place if roll < 0.28
         else self._convert if roll < 0.33 else self._mixed)(a)

    def _wide_view(self, a):
        rng, nd, shape = self.rng, len(a.shape), a.shape
        kind = rng.integers(6)
        if kind == 0 and nd >= 2:
            perm = [int(k) for k in rng.permutation(nd)]
            self._emit(f"{a.name}.permute({', '.join(map(str, perm))})", [shape[k] for k in perm], a.dtype, a.family, a)
        elif kind == 1 and nd >= 1:
            d = int(rng.integers(nd))
            step, start = int(rng.integers(1, 4)), int(rng.integers(0, 2))
            n = max(0, -(-(shape[d] - start) // step))
            index = ":, " * d + f"{start}::{step}"
            self._emit(f"{a.name}[{index}]", shape[:d] + (n,) + shape[d + 1:], a.dtype, a.family, a)
        elif kind == 2 and nd >= 1 and shape[0] > 0:
            self._emit(f"{a.name}.select(0, -1)", shape[1:], a.dtype, a.family, a)
        elif kind == 3 and nd >= 1:
            d = int(rng.integers(nd))
            self._emit(f"{a.name}.flip({d})", shape, a.dtype, a.family, a)
        elif kind == 4:
            self._emit(f"{a.name}.unsqueeze(0).expand(2{', -1' * nd})", (2,) + shape, a.dtype, a.family, a)
        elif nd >= 1 and 1 in shape:
            d = shape.index(1)
            sizes = ["-1"] * nd
            sizes[d] = "3"  # (-1 elsewhere: the same program at dynamic's other sizes)
            self._emit(f"{a.name}.expand({', '.join(sizes)})", shape[:d] + (3,) + shape[d + 1:], a.dtype, a.family, a)

    def _chain(self, a):
        nd = len(a.shape)
        if nd < 2 or 0 in a.shape:
            return
        d = int(self.rng.integers(-nd, nd))
        template = str(self.rng.choice(CHAINS))
        rest = a.shape if "cumsum" in template or "softmax" in template else \
            _reduced(a.shape, d, keep="keepdim" in template)
        e = int(self.rng.integers(len(rest)))
        shape = () if template.endswith(".amax()") or template.endswith(".std()") else \
            a.shape if template.startswith("{a} - ") or "exp()" in template else \
            _reduced(rest, e, keep=False) if "{e}" in template else rest
        self._emit(template.format(a=a.name, d=d, e=e), shape, a.dtype, "reduce", a)

    def _tensor_in_place(self, a):
        """A clone (or a view of it) written with a tensor operand that broadcasts to it, then read whole."""
        rng = self.rng
        self._emit(f"{a.name}.clone()", a.shape, a.dtype, a.family, a)
        t = self.values[-1]
        target, shape = t.name, t.shape
        if len(shape) >= 2 and rng.random() < 0.4:
            target, shape = f"{t.name}.transpose(0, 1)", (shape[1], shape[0]) + shape[2:]
        elif shape and rng.random() < 0.5:
            target, shape = f"{t.name}[..., ::2]", shape[:-1] + (-(-shape[-1] // 2),)
        pool = [v for v in self.values if v.dtype in EPS and v is not t and _broadcast(v, Value("", shape, "")) == shape]
        if not pool:
            return
        b = pool[rng.integers(len(pool))]
        op = str(rng.choice(TENSOR_IN_PLACE))
        operand = f"{b.name}.to({a.name}.dtype)"  # (always: a recorded dtype may be _promote's guess)
        self.lines.append(f"{target}.{op.format(b=operand)}")
        t.family = self._join("transcendental" if "div" in op else "arith", t.family, b.family)
        t.eps = max(t.eps, b.eps)

    def _convert(self, a):
        dtype = str(self.rng.choice(list(CONVERT)))
        self._emit(f"{a.name}{CONVERT[dtype]}", a.shape, dtype, a.family, a)

    def _mixed(self, a):
        rng = self.rng
        kind = rng.integers(5)
        b = self._partner(a, "float")
        mask = self._pick("bool")
        if kind == 0 and mask is not None and _broadcast(a, mask) == a.shape:
            fill = str(rng.choice(["0.5", "float('-inf')", "float('nan')", "-0.0"]))
            self._emit(f"{a.name}.masked_fill({mask.name}, {fill})", a.shape, a.dtype, a.family, a)
        elif kind == 1 and a.shape:
            d = int(rng.integers(len(a.shape)))
            shape = a.shape[:d] + (2 * a.shape[d],) + a.shape[d + 1:]
            self._emit(f"torch.cat([{a.name}, {a.name} * 2], {d})", shape, a.dtype, self._join("arith", a.family), a)
        elif kind == 2 and b is not None:
            self._emit(f"torch.addcmul({a.name}, {b.name}, {b.name}, value=-0.5)", _broadcast(a, b), a.dtype,
                       self._join("arith", a.family, b.family), a, b)
        elif kind == 3 and b is not None and _broadcast(a, b) == a.shape:
            self._emit(f"torch.clamp({a.name}, min={b.name}.to({a.name}.dtype))", a.shape, a.dtype,
                       self._join(a.family, b.family), a, b)
        elif kind == 4 and b is not None:
            self._emit(f"torch.lerp({a.name}, {b.name}.to({a.name}.dtype), 0.3)", _broadcast(a, b), a.dtype,
                       self._join("arith", a.family, b.family), a, b)

    def make_inputs(self, lib, seed, grow=False, widen=False):
        """The inputs as ``lib``'s tensors (ember or torch), laid out as drawn; ``grow``: every
        size above 1 one larger (dynamic's second shape); ``widen``: floats as float64, exactly."""
        rng = np.random.default_rng([seed, 32, int(grow)])
        tensors = []
        for name, shape, dtype, layout, special, grad in self.inputs:
            shape = tuple(n + 1 if grow and n > 1 else n for n in shape)
            full = shape[:-2] + shape[:-3:-1] if layout == "transposed" else \
                shape[:-1] + (2 * shape[-1],) if layout == "strided" else \
                (shape[0] + 1,) + shape[1:] if layout == "offset" and shape else shape
            if layout == "expanded":  # stride 0 along the first dim longer than 1
                first = [n > 1 for n in shape].index(True)
                full = shape[:first] + (1,) + shape[first + 1:]
            if dtype == "bool":
                array = rng.random(full) < 0.5
            elif dtype.startswith("int"):
                array = rng.integers(-5, 6, full).astype(dtype)
            else:
                array = rng.standard_normal(full) * 2
                if special and array.size:
                    tiny, huge = EDGE[dtype]
                    edges = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, tiny, -tiny, huge, -huge, 1e30, -1e-30])
                    flat = array.reshape(-1)
                    picks = rng.integers(0, array.size, min(3, array.size))
                    flat[picks] = rng.choice(edges, len(picks))
            t = lib.tensor(array.astype(np.float32) if dtype in ("float16", "bfloat16") else array.astype(dtype))
            t = t.to(getattr(lib, dtype))
            if widen and dtype in EPS:
                t = t.double()
            t = t.transpose(-1, -2) if layout == "transposed" else t[..., ::2] if layout == "strided" else \
                (t[1:] if shape else t) if layout == "offset" else t.expand(*shape) if layout == "expanded" else t
            if grad:
                t.requires_grad_(True)
            tensors.append(t)
        return tensors

    def family(self):
        """The loosest family of the program's values, for its gradients."""
        return max((v.family for v in self.values), key=RANK.index)


def bound(family, eps):
    """(rtol, atol) of a family at a dtype's epsilon (test_fuzz.py's float32 bounds scaled)."""
    rtol, atol = BOUND[family]
    scale = max(eps, 2.0 ** -52) / 2.0 ** -23
    return rtol * scale, atol * scale


def to_numpy(t):
    """A result as a float64 (or integer/bool) NumPy array, the dtype's name beside it."""
    if t is None:
        return None, None
    t = t.detach()
    name = str(t.dtype).replace("torch.", "")
    return (t.double() if name in EPS else t).numpy(), name


def check(actual, expected, rtol, atol, what, reference=None):
    """``actual`` within (rtol, atol) of ``expected`` (NumPy arrays from to_numpy); integers and
    bools exactly; nan and +-inf at the same places. With ``reference`` (the float64 result), a
    value farther off passes where it is no farther from the reference than twice ``expected``,
    and a finite one where ``expected`` overflowed passes within the bound of the reference."""
    (a, a_dtype), (e, e_dtype) = actual, expected
    assert (a is None) == (e is None), f"{what}: {a} vs {e}"
    if a is None:
        return
    assert a.shape == e.shape and a_dtype == e_dtype, f"{what}: {a.shape} {a_dtype} vs {e.shape} {e_dtype}"
    if a_dtype not in EPS:
        np.testing.assert_array_equal(a, e, err_msg=what)
        return
    r = reference[0] if reference is not None and reference[0] is not None and reference[0].shape == a.shape else None
    with np.errstate(all="ignore"):
        # (torch's float32 or 16-bit result overflowing where the float64 one and ember's do not)
        r_scale = float(np.abs(r[np.isfinite(r)]).max(initial=0.0)) if r is not None else 0.0
        rescued = np.zeros(a.shape, bool) if r is None else np.isfinite(a) & np.isfinite(r) & ~np.isfinite(e) \
            & (np.abs(a - r) <= atol * max(1.0, r_scale) + rtol * np.abs(r))
        same = (np.isnan(a) == np.isnan(e)) & (np.isposinf(a) == np.isposinf(e)) & (np.isneginf(a) == np.isneginf(e))
        assert (same | rescued).all(), f"{what}: nan or inf positions differ:\n{a}\nvs\n{e}"
        finite = np.isfinite(e)
        scale = float(np.abs(e[finite]).max()) if finite.any() else 0.0
        bad = np.abs(a - e) > atol * max(1.0, scale) + rtol * np.abs(e)
        bad &= finite
        if r is not None:
            bad &= ~(np.abs(a - r) <= 2 * np.abs(e - r))
    assert not bad.any(), f"{what}: {int(bad.sum())} values off:\n{a[bad]}\nvs\n{e[bad]}"


def _call(lib, fn, inputs, seed):
    """fn's outputs and the gradients of sum_i (nan_to_num(out_i) * w_i).sum() (float64)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = fn(*inputs)
        weights = np.random.default_rng([seed, 33])
        loss = None
        for o in outs:
            if o.requires_grad and o.dtype.is_floating_point:
                w = lib.tensor(weights.standard_normal(tuple(o.shape)))
                term = (lib.nan_to_num(o.double(), 0.0, 0.0, 0.0) * w).sum()
                loss = term if loss is None else loss + term
        if loss is not None:
            loss.backward()
    return [to_numpy(o) for o in outs], [to_numpy(t.grad) if t.requires_grad else (None, None) for t in inputs]


def run_program(seed, length=8, against_torch=True):
    """Program ``seed`` compiled (twice, then at other sizes where dynamic) against eager, and
    eager and compiled against torch; raises AssertionError naming the seed and the source."""
    program = WideProgram(seed, length)
    source = program.source()
    functions = {}
    for lib in (ember, torch):
        namespace = {"torch": lib, "F": lib.nn.functional}
        exec(source, namespace)
        functions[lib] = namespace["program"]
    context = f"seed {seed} (dynamic={program.dynamic}):\n{source}"
    ember.compiler.reset()
    expected = _call(ember, functions[ember], program.make_inputs(ember, seed), seed)
    compiled = ember.compile(functions[ember], dynamic=program.dynamic or None)
    runs = [(False, expected)]
    if program.dynamic:
        try:  # (a program whose shapes broadcast at one size only, x[:, ::2] * x, is no dynamic test)
            runs.append((True, _call(ember, functions[ember], program.make_inputs(ember, seed, grow=True), seed)))
        except RuntimeError:
            program.dynamic = False
    try:
        actual = [_call(ember, compiled, program.make_inputs(ember, seed), seed) for _ in range(2)][-1]
        if program.dynamic:
            grown = _call(ember, compiled, program.make_inputs(ember, seed, grow=True), seed)
    except Exception as error:
        raise AssertionError(f"compiled program raised {type(error).__name__}: {error}\n{context}") from error
    grad_family = "reduce" if program.family() != "exact" else "arith"
    rtol, atol = bound(grad_family, max(v.eps for v in program.values))
    theirs = wide = ([(None, None)] * len(program.outputs), [(None, None)] * len(program.inputs))
    if against_torch:
        try:
            theirs = _call(torch, functions[torch], program.make_inputs(torch, seed), seed)
            wide = _call(torch, functions[torch], program.make_inputs(torch, seed, widen=True), seed)
        except Exception as error:
            raise AssertionError(f"torch raised {type(error).__name__}: {error} where ember did not\n{context}")
    # compiled against eager (where it is off, no farther from the float64 result than eager),
    # then eager and compiled against torch
    pairs = [("compiled", actual, "eager", expected)] + \
        ([("compiled grown", grown, "eager", runs[1][1])] if program.dynamic else []) + \
        ([("eager", expected, "torch", theirs), ("compiled", actual, "torch", theirs)] if against_torch else [])
    for who, (outs, grads), whom, (their_outs, their_grads) in pairs:
        reference = wide if "grown" not in who else ([None] * len(outs), [None] * len(grads))
        for value, a, e, r in zip(program.outputs, outs, their_outs, reference[0]):
            check(a, e, *bound(value.family, value.eps), f"{who} {value.name} vs {whom}, {context}", r)
        for (name, *_), a, e, r in zip(program.inputs, grads, their_grads, reference[1]):
            check(a, e, 10 * rtol, 10 * atol, f"{who} grad of {name} vs {whom}, {context}", r)
    return program


# optimizer -> its keyword arguments' choices (one drawn per key)
OPTIMIZERS = {
    "SGD": {"lr": (0.1, 0.01), "momentum": (0.0, 0.9), "nesterov": (False, True), "weight_decay": (0.0, 0.01),
            "maximize": (False, True)},
    "Adam": {"lr": (0.01, 0.1), "weight_decay": (0.0, 0.1), "amsgrad": (False, True), "maximize": (False, True)},
    "AdamW": {"lr": (0.01,), "weight_decay": (0.01, 0.1), "amsgrad": (False, True), "betas": ((0.9, 0.999), (0.5, 0.9))},
    "RMSprop": {"lr": (0.01,), "momentum": (0.0, 0.9), "centered": (False, True), "weight_decay": (0.0, 0.01),
                "alpha": (0.99, 0.9)},
    "Adagrad": {"lr": (0.1,), "lr_decay": (0.0, 0.01), "weight_decay": (0.0, 0.01), "initial_accumulator_value": (0.0, 0.1)},
    "NAdam": {"lr": (0.01,), "weight_decay": (0.0, 0.01), "decoupled_weight_decay": (False, True)},
    "RAdam": {"lr": (0.01,), "weight_decay": (0.0, 0.01)},
    "Adamax": {"lr": (0.01,), "weight_decay": (0.0, 0.01)},
}
ACTIVATIONS = ("tanh", "relu", "gelu", "sigmoid", "silu", "softplus", "elu")
LOSSES = ("mse_loss", "cross_entropy", "l1_loss", "smooth_l1_loss", "huber_loss")


def draw_step(seed):
    """A training step's configuration: sizes, dtype, layers, loss, optimizer and its arguments."""
    rng = np.random.default_rng([seed, 34])
    optimizer = str(rng.choice(list(OPTIMIZERS)))
    kwargs = {k: v[rng.integers(len(v))] for k, v in OPTIMIZERS[optimizer].items()}
    if optimizer == "SGD" and kwargs["nesterov"] and not kwargs["momentum"]:
        kwargs["nesterov"] = False
    return dict(seed=seed, dtype=str(rng.choice(["float32", "float32", "float64"])), batch=int(rng.choice([1, 3, 4])),
                sizes=[int(n) for n in rng.choice([2, 3, 5, 8], 3)], activation=str(rng.choice(ACTIVATIONS)),
                loss=str(rng.choice(LOSSES)), optimizer=optimizer, kwargs=kwargs, dynamic=bool(rng.random() < 0.4),
                zero_grad_first=bool(rng.random() < 0.5), bias=bool(rng.random() < 0.8))


def _train(lib, config, compiled, widen=False):
    """Losses of 3 steps (and 2 at batch + 2 where dynamic) and the parameters after, as to_numpy's."""
    rng = np.random.default_rng([config["seed"], 35])
    dtype = getattr(lib, "float64" if widen else config["dtype"])
    d_in, hidden, d_out = config["sizes"]
    model = lib.nn.Sequential(lib.nn.Linear(d_in, hidden, bias=config["bias"]),
                              getattr(lib.nn, {"tanh": "Tanh", "relu": "ReLU", "gelu": "GELU", "sigmoid": "Sigmoid",
                                               "silu": "SiLU", "softplus": "Softplus", "elu": "ELU"}[config["activation"]])(),
                              lib.nn.Linear(hidden, d_out, bias=config["bias"]))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    model.to(dtype)
    optimizer = getattr(lib.optim, config["optimizer"])(model.parameters(), **config["kwargs"])
    loss_fn = getattr(lib.nn.functional, config["loss"])

    def step(x, y):
        if config["zero_grad_first"]:
            optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if not config["zero_grad_first"]:
            optimizer.zero_grad()
        return loss

    fn = ember.compile(step, dynamic=config["dynamic"] or None) if compiled else step
    losses = []
    batches = [config["batch"]] * 3 + ([config["batch"] + 2] * 2 if config["dynamic"] else [])
    for batch in batches:
        x = lib.tensor(rng.standard_normal((batch, d_in))).to(dtype)
        y = lib.tensor(rng.integers(0, d_out, batch)) if config["loss"] == "cross_entropy" else \
            lib.tensor(rng.standard_normal((batch, d_out))).to(dtype)
        with np.errstate(all="ignore"):
            losses.append(to_numpy(fn(x, y)))
    return losses + [to_numpy(p) for p in model.parameters()]


def run_step(seed):
    """Training step ``seed`` compiled against eager ember, and both against torch (a float64
    torch run the reference); raises AssertionError naming the configuration."""
    config = draw_step(seed)
    ember.compiler.reset()
    expected = _train(ember, config, False)
    try:
        actual = _train(ember, config, True)
    except Exception as error:
        raise AssertionError(f"compiled step raised {type(error).__name__}: {error}\n{config}") from error
    theirs, wide = _train(torch, config, False), _train(torch, config, False, widen=True)
    rtol, atol = bound("reduce", EPS[config["dtype"]])
    for k, (a, e, t, r) in enumerate(zip(actual, expected, theirs, wide)):
        what = f"loss of step {k}" if k < 3 + 2 * config["dynamic"] else f"parameter {k - 3 - 2 * config['dynamic']}"
        check(a, e, 10 * rtol, 10 * atol, f"compiled {what} vs eager: {config}")
        check(e, t, 10 * rtol, 10 * atol, f"eager {what} vs torch: {config}", r)
        check(a, t, 10 * rtol, 10 * atol, f"compiled {what} vs torch: {config}", r)
