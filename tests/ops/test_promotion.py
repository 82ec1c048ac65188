"""Type promotion against torch for every pair of dtypes and operand kinds (tensor with
dimensions, 0-dim tensor, Python scalar): ``result_type``, ``+``, ``/``, ``*``, comparisons,
``promote_types``, ``can_cast``; and the effect of ``set_default_dtype(float64)``."""
import itertools

import pytest
import torch

import ember
from harness import Case, P, R, check, params

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SCALARS = {"py_bool": True, "py_int": 2, "py_float": 2.5}
KINDS = ["dim", "zero"]


def operand(lib, kind, dtype):
    if dtype in SCALARS:
        return SCALARS[dtype]
    return lib.ones(2 if kind == "dim" else (), dtype=getattr(lib, dtype))


def _name(x):
    return str(x).split(".")[-1]


def _outcome(fn):
    """The result dtype's name, or the exception class when the call fails."""
    try:
        return _name(fn().dtype)
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        return type(e).__name__


OPS = {"add": lambda a, b: a + b, "div": lambda a, b: a / b, "mul": lambda a, b: a * b,
       "lt": lambda a, b: a < b}

PAIRS = [(ka, da, kb, db) for ka, kb in itertools.product(KINDS, KINDS)
         for da, db in itertools.product(DTYPES, DTYPES)]
PAIRS += [(k, d, "scalar", s) for k in KINDS for d in DTYPES for s in SCALARS]


@pytest.mark.parametrize("ka,da,kb,db", PAIRS, ids=[f"{ka}-{da}-{kb}-{db}" for ka, da, kb, db in PAIRS])
def test_binary_promotion(ka, da, kb, db):
    e = [operand(ember, ka, da), operand(ember, kb, db)]
    t = [operand(torch, ka, da), operand(torch, kb, db)]
    assert _name(ember.result_type(*e)) == _name(torch.result_type(*t))
    for name, op in OPS.items():
        assert _outcome(lambda: op(*e)) == _outcome(lambda: op(*t)), name
        if kb == "scalar":  # reflected: the scalar on the left
            assert _outcome(lambda: op(e[1], e[0])) == _outcome(lambda: op(t[1], t[0])), "r" + name


@pytest.mark.parametrize("da,db", list(itertools.product(DTYPES, DTYPES)))
def test_promote_types_and_can_cast(da, db):
    ea, eb, ta, tb = getattr(ember, da), getattr(ember, db), getattr(torch, da), getattr(torch, db)
    assert _name(ember.promote_types(ea, eb)) == _name(torch.promote_types(ta, tb))
    assert ember.can_cast(ea, eb) == torch.can_cast(ta, tb)


def test_scalar_scalar_and_python_results():
    for a, b in itertools.product(SCALARS.values(), repeat=2):
        assert _name(ember.result_type(a, b)) == _name(torch.result_type(a, b))


@pytest.fixture
def float64_default():
    for lib in (ember, torch):
        lib.set_default_dtype(lib.float64)
    yield
    for lib in (ember, torch):
        lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("da", DTYPES)
def test_promotion_with_float64_default(float64_default, da):
    for ka, s in itertools.product(KINDS, SCALARS):
        e, t = operand(ember, ka, da), operand(torch, ka, da)
        for name, op in OPS.items():
            assert _outcome(lambda: op(e, SCALARS[s])) == _outcome(lambda: op(t, SCALARS[s])), (ka, s, name)
    e, t = operand(ember, "dim", da), operand(torch, "dim", da)
    for fn in (lambda L, x: x.exp(), lambda L, x: x.sqrt(), lambda L, x: x.mean(), lambda L, x: L.sigmoid(x)):
        assert _outcome(lambda: fn(ember, e)) == _outcome(lambda: fn(torch, t))


UNARY = ["neg", "abs", "sign", "reciprocal", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
         "square", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "floor",
         "ceil", "round", "trunc", "frac", "nan_to_num", "isnan", "relu", "logical_not", "bitwise_not"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_result_dtypes(name):
    """Every unary op keeps, widens or rejects each dtype as torch does."""
    for d in DTYPES:
        e, t = operand(ember, "dim", d), operand(torch, "dim", d)
        assert _outcome(lambda: getattr(ember, name)(e)) == _outcome(lambda: getattr(torch, name)(t)), d


REDUCTIONS = {"sum": lambda x: x.sum(), "prod": lambda x: x.prod(), "mean": lambda x: x.mean(),
              "amax": lambda x: x.amax(), "cumsum": lambda x: x.cumsum(0), "cumprod": lambda x: x.cumprod(0),
              "softmax": lambda x: x.softmax(0), "logsumexp": lambda x: x.logsumexp(0), "var": lambda x: x.var(),
              "argmax": lambda x: x.argmax(), "max-dim": lambda x: x.max(0)[0], "norm": lambda x: x.norm(),
              "sort": lambda x: x.sort()[0], "all": lambda x: x.all(), "count_nonzero": lambda x: x.count_nonzero()}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_result_dtypes(name):
    for d in DTYPES:
        e, t = operand(ember, "dim", d), operand(torch, "dim", d)
        assert _outcome(lambda: REDUCTIONS[name](e)) == _outcome(lambda: REDUCTIONS[name](t)), d


HALF = [Case(f"half-{name}", fn, *args, dtypes=("float16",)) for name, fn, args in [
    ("add", lambda L, a, b: a + b, (R(3, 4), R(4))), ("mul", lambda L, a, b: a * b, (R(3, 4), R(4))),
    ("div", lambda L, a, b: a / b, (R(3, 4), P(4))), ("exp", lambda L, a: a.exp(), (R(3, 4),)),
    ("sum", lambda L, a: a.sum(1), (R(3, 4),)), ("mean", lambda L, a: a.mean(), (R(3, 4),)),
    ("matmul", lambda L, a, b: a @ b, (R(3, 4), R(4, 2))), ("softmax", lambda L, a: a.softmax(1), (R(3, 4),)),
    ("log_softmax", lambda L, a: a.log_softmax(1), (R(3, 4),)), ("var", lambda L, a: a.var(1), (R(3, 4),)),
    ("norm", lambda L, a: a.norm(), (R(3, 4),)), ("sigmoid", lambda L, a: a.sigmoid(), (R(3, 4),)),
    ("erf", lambda L, a: a.erf(), (R(3, 4),)), ("cumsum", lambda L, a: a.cumsum(1), (R(3, 4),)),
    ("pow", lambda L, a: a ** 2.5, (P(3, 4),)), ("logsumexp", lambda L, a: a.logsumexp(1), (R(3, 4),)),
    ("float-scalar", lambda L, a: a + 1e-4, (R(3),)), ("prod", lambda L, a: a.prod(1), (R(3, 4),)),
    ("float32-mix", lambda L, a, b: a * b, (R(3), R(3, dtype="float32"))),
]]


@pytest.mark.parametrize("case,dtype", params(HALF))
def test_half_precision(case, dtype):
    """float16 keeps its dtype through arithmetic, reductions and products, as in torch."""
    check(case, dtype)


NUMPY_SCALARS = {"np.float64": "float64", "np.float32": "float32", "np.int64": "int64", "np.int32": "int32"}


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8"])
@pytest.mark.parametrize("scalar", list(NUMPY_SCALARS))
@pytest.mark.parametrize("op", ["mul", "add", "sub", "truediv", "rmul"])
def test_numpy_scalars_promote_as_python_numbers(op, scalar, dtype):
    """``t * np.float64(0.5)`` keeps a float32 tensor float32 in torch: a NumPy scalar counts
    as the Python number it holds (ember gave float64, so ``q @ k.T / np.sqrt(d) @ v`` failed)."""
    import numpy as np
    value = getattr(np, NUMPY_SCALARS[scalar])(3)
    fn = {"mul": lambda t: t * value, "add": lambda t: t + value, "sub": lambda t: t - value,
          "truediv": lambda t: t / value, "rmul": lambda t: value * t}[op]
    got = fn(ember.ones(2, dtype=getattr(ember, dtype)))
    want = fn(torch.ones(2, dtype=getattr(torch, dtype)))
    assert _name(got.dtype) == _name(want.dtype)
    assert got.tolist() == pytest.approx(want.tolist())
