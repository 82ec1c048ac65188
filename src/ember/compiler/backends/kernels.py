"""The op table of the C backend: which op entries it lowers, and the C each one becomes.

Ops are matched by ``target.name`` through the tables below (one place), so renamed op entries
only need their names changed here. Elementwise rules give a C expression of their operands'
expressions; the kernel kinds (reductions, row kernels, GEMMs, views) are recognised by name
with their attributes checked in :func:`kind_of`. Anything else runs its ``forward`` from Python.
"""
import operator

import numpy as np

from ..._ops.rnn import GATES, INPUTS, RESULTS
from ..symbolic import Expr
from . import conv, copies, gather, indexing, pool, sort
from .updates import STEPS, UPDATES, update_attrs, update_of

__all__ = ["CTYPES", "kind_of", "cat_dim", "norm_backward_operands", "channel_axes", "elementwise_expr", "c_literal", "VIEWS", "update_of",
           "operands", "reads", "Part", "ROW_REDUCTIONS"]

CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
          np.dtype(np.int64): "int64_t", np.dtype(np.int32): "int32_t", np.dtype(np.bool_): "uint8_t",
          np.dtype(np.uint8): "uint8_t"}
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
VIEWS = ("View", "Unsqueeze", "Squeeze", "Permute", "Expand", "Slice", "Detach")
ATTENTION_OPS = ("Matmul", "AttentionWeights", "SoftmaxScoresGrad")
# op entry -> kernel kind of the row kernels over the last dim (.row_reductions)
ROW_REDUCTIONS = {"Logsumexp": "logsumexp", "Argmax": "argmax", "Cumsum": "cumsum", "Cumprod": "cumprod"}
SCANS = ("Cumsum", "Cumprod")  # along any dim, of strided inputs
_SQRT_HALF = 0.7071067811865476
_SQRT_2_OVER_PI = 0.7978845608028654


# elementwise ops that may take a size expression as their number (x / count of a mean)
_SIZE_OPERANDS = ("Div", "Mul")


def c_literal(value, dtype):
    """A Python number as an exact C constant of ``dtype`` (rounded as NumPy would); a size
    expression (a mean's count over symbolic sizes) as its C code cast to ``dtype``."""
    if isinstance(value, Expr):
        return f"(({CTYPES[np.dtype(dtype)]})({value}))"
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)) and dtype not in FLOATS:
        return f"{int(value)}LL"
    v = float(np.dtype(dtype).type(value)) if dtype in FLOATS else float(value)
    if np.isnan(v):
        return "NAN"
    if np.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    return v.hex() + ("f" if dtype == np.float32 else "")


def _fn(base, dtype):
    return base + ("f" if dtype == np.float32 else "")


def _em(base, dtype):
    return "em_" + _fn(base, dtype)


def _trig(base, dtype):
    """float32 sin and cos: em_sinf/em_cosf, which the loop kernel turns into the vectorised
    em_sinf_near/em_cosf_near where a first pass finds every argument below EM_TANF_NEAR
    (cgen._loop_kernel); double: libm's."""
    return _em(base, dtype) if dtype == np.float32 else base


def _pow(a, k, d):
    e = k["b"]
    if e == 2:
        return f"({a[0]} * {a[0]})"
    if e == 0.5:
        return f"{_fn('sqrt', d)}({a[0]})"
    if e == -1:
        return f"(1 / {a[0]})"
    if e == -0.5:  # as eager (torch's rsqrt), whether or not the C compiler rewrites pow
        return f"(1 / {_fn('sqrt', d)}({a[0]}))"
    return f"{_fn('pow', d)}({a[0]}, {a[1]})"


def _gelu(a, k, d):
    c = lambda v: c_literal(v, d)  # noqa: E731
    x = a[0]
    if k.get("approximate", "none") == "tanh":
        inner = f"({c(_SQRT_2_OVER_PI)} * ({x} + {c(0.044715)} * {x} * {x} * {x}))"
        return f"({c(0.5)} * {x} * (1 + {_em('tanh', d)}({inner})))"
    if d == np.float32:  # em_normal_cdff: Phi(-|x|) without erf's cancellation, shared with the gradient
        return f"({x} * em_normal_cdff({x}))"
    return f"({x} * ({c(0.5)} * (1 + {_em('erf', d)}({x} * {c(_SQRT_HALF)}))))"


def _gelu_backward(a, k, d):
    """``g * (Phi(x) + x phi(x))``: GeluBackward. float32: ``em_gelu_gradf`` (one exponential
    for both terms, the forward's output unread). float64: Phi(x) is read back as ``output / x``
    when the forward's output is an operand (0.5 at x = 0), as eager does: a division instead of erf."""
    c = lambda v: c_literal(v, d)  # noqa: E731
    g, x = a[0], a[1]
    if d == np.float32:
        return f"({g} * em_gelu_gradf({x}))"
    if len(a) > 2 and a[2] is not None:
        cdf = f"({x} != 0 ? {a[2]} / {x} : {c(0.5)})"
    else:
        cdf = f"({c(0.5)} * (1 + {_em('erf', d)}({x} * {c(_SQRT_HALF)})))"
    pdf = f"({_em('exp', d)}({c(-0.5)} * {x} * {x}) * {c(0.3989422804014327)})"
    return f"({g} * ({cdf} + {x} * {pdf}))"


def _normalize(a, k, d):
    """Normalize: ``(x - mean) / sqrt(var + eps) * weight + bias`` (operands: x, the mean and
    variance, weight and bias reshaped to the affine shape, or None)."""
    out = f"(({a[0]} - {a[1]}) * (1 / {_fn('sqrt', d)}({a[2]} + {c_literal(k['eps'], d)})))"
    if a[3] is not None:
        out = f"({out} * {a[3]})"
    return out if a[4] is None else f"({out} + {a[4]})"


def _maximum(a, b):
    """NumPy's maximum(a, b) (eager's clamp and hardtanh): NaN from either side, b on a tie."""
    return f"(({a} != {a} || {a} > {b}) ? {a} : {b})"


def _minimum(a, b):
    return f"(({a} != {a} || {a} < {b}) ? {a} : {b})"


def _clamp(a, k, d):
    """Clamp(x, min, max) as eager's maximum(min, x) then minimum(max, ·): a bound is None, a
    number or an operand; min > max gives max; x itself on a tie (-0.0 stays)."""
    out = a[0] if a[1] is None else _maximum(a[1], a[0])
    return out if a[2] is None else _minimum(a[2], out)


def _hardtanh(a, k, d):
    lo, hi = (c_literal(k.get(name, v), d) for name, v in (("min_val", -1.0), ("max_val", 1.0)))
    return _minimum(hi, _maximum(lo, a[0]))


def _hardswish(a, k, d):
    """``x * min(max(x + 3, 0), 6) / 6``, in eager's order (NaN kept)."""
    return f"(({a[0]} * {_minimum(_maximum(f'({a[0]} + 3)', '0'), '6')}) / 6)"


def _softplus_of(bx, d):
    """log(1 + exp(bx)) as NumPy's logaddexp(0, bx): max(bx, 0) + log1p(exp(-|bx|)) (mish, logsigmoid)."""
    return f"(({bx} > 0 ? {bx} : 0) + {_em('log1p', d)}({_em('exp', d)}(-{_fn('fabs', d)}({bx}))))"


def _softplus(a, k, d):
    """Softplus(x, beta, threshold): x where beta x > threshold, else log1p(exp(beta x)) / beta, as
    eager's and torch's (inf where exp overflows below a threshold raised past it)."""
    beta, bx = c_literal(k.get("beta", 1.0), d), f"({a[0]} * {c_literal(k.get('beta', 1.0), d)})"
    soft = f"{_em('log1p', d)}({_em('exp', d)}({bx}))"
    return f"({bx} > {c_literal(k.get('threshold', 20.0), d)} ? {a[0]} : {soft} / {beta})"


def _softplus_backward(a, k, d):
    """SoftplusBackward(g, x, beta, threshold): g where beta x > threshold, else g z / (z + 1),
    z = exp(beta x), as eager's and torch's (nan where z overflows)."""
    bx = f"({a[1]} * {c_literal(k.get('beta', 1.0), d)})"
    z = f"{_em('exp', d)}({bx})"
    return f"({bx} > {c_literal(k.get('threshold', 20.0), d)} ? {a[0]} : ({a[0]} * {z}) / ({z} + 1))"


def _elu(a, k, d):
    """Elu(x, alpha, scale, input_scale): scale x for x > 0, else alpha scale expm1(input_scale x)
    (ELU, SELU and CELU; +-0 and NaN take the first, as eager's where)."""
    alpha, scale, input_scale = k.get("alpha", 1.0), k.get("scale", 1.0), k.get("input_scale", 1.0)
    negative = f"{_em('expm1', d)}({a[0]} * {c_literal(input_scale, d)}) * {c_literal(alpha * scale, d)}"
    return f"({a[0]} < 0 ? {negative} : {a[0]} * {c_literal(scale, d)})"


def _lerp(a, k, d):
    """torch's two-sided lerp (:class:`ember._ops.pointwise_float.Lerp`): start + w (end - start)
    for |w| < 0.5, else end - (end - start) (1 - w) (batch norm's running statistics)."""
    start, end, w = a
    return (f"({_fn('fabs', d)}({w}) < {c_literal(0.5, d)} ? {start} + {w} * ({end} - {start}) "
            f": {end} - ({end} - {start}) * ({c_literal(1.0, d)} - {w}))")


def _alpha(sign):
    def rule(a, k, d):
        alpha = k.get("alpha", 1)
        return f"({a[0]} {sign} {a[1]})" if alpha == 1 else f"({a[0]} {sign} {c_literal(alpha, d)} * {a[1]})"
    return rule


# name -> rule(operand expressions, attrs, result dtype) -> C expression. NaN handling follows
# NumPy: maximum/minimum propagate NaN from either side, relu keeps NaN.
ELEMENTWISE = {
    "Add": _alpha("+"),
    "Sub": _alpha("-"),
    "Mul": lambda a, k, d: f"({a[0]} * {a[1]})",
    "Div": lambda a, k, d: f"({a[0]} / {a[1]})",
    "Neg": lambda a, k, d: f"(-{a[0]})",
    "Exp": lambda a, k, d: f"{_em('exp', d)}({a[0]})",
    "Log": lambda a, k, d: f"{_em('log', d)}({a[0]})",
    "Tanh": lambda a, k, d: f"{_em('tanh', d)}({a[0]})",
    "Sigmoid": lambda a, k, d: f"{_em('sigmoid', d)}({a[0]})",
    "Erf": lambda a, k, d: f"{_em('erf', d)}({a[0]})",
    "Sqrt": lambda a, k, d: f"{_fn('sqrt', d)}({a[0]})",
    "Rsqrt": lambda a, k, d: f"(1 / {_fn('sqrt', d)}({a[0]}))",
    "Reciprocal": lambda a, k, d: f"(1 / {a[0]})",
    "Abs": lambda a, k, d: f"{_fn('fabs', d)}({a[0]})",
    "Sin": lambda a, k, d: f"{_trig('sin', d)}({a[0]})",  # see cgen._loop_kernel
    "Cos": lambda a, k, d: f"{_trig('cos', d)}({a[0]})",
    "Hypot": lambda a, k, d: f"{_fn('hypot', d)}({a[0]}, {a[1]})",
    "Atan2": lambda a, k, d: f"{_fn('atan2', d)}({a[0]}, {a[1]})",
    "Expm1": lambda a, k, d: f"{_em('expm1', d)}({a[0]})",
    "Log1p": lambda a, k, d: f"{_em('log1p', d)}({a[0]})",
    "Sinh": lambda a, k, d: f"{_em('sinh', d)}({a[0]})",
    "Cosh": lambda a, k, d: f"{_em('cosh', d)}({a[0]})",
    "Asinh": lambda a, k, d: f"{_em('asinh', d)}({a[0]})",
    "Acosh": lambda a, k, d: f"{_em('acosh', d)}({a[0]})",
    "Atanh": lambda a, k, d: f"{_em('atanh', d)}({a[0]})",
    "Atan": lambda a, k, d: f"{_em('atan', d)}({a[0]})",
    "Tan": lambda a, k, d: f"{_em('tan', d)}({a[0]})",  # float32 only (kind_of); see cgen._loop_kernel
    "Asin": lambda a, k, d: f"{_em('asin', d)}({a[0]})",
    "Acos": lambda a, k, d: f"{_em('acos', d)}({a[0]})",
    "Softplus": _softplus,
    "SoftplusBackward": _softplus_backward,
    "Mish": lambda a, k, d: f"({a[0]} * {_em('tanh', d)}({_softplus(a, {}, d)}))",  # eager's Mul(x, Tanh(Softplus))
    "LogSigmoid": lambda a, k, d: f"(-{_softplus_of(f'(-{a[0]})', d)})",
    "Elu": _elu,
    "Hardswish": _hardswish,
    "Hardtanh": _hardtanh,
    "Clamp": _clamp,
    "Lerp": _lerp,
    "Sign": lambda a, k, d: f"(({CTYPES[d]})(({a[0]} > 0) - ({a[0]} < 0)))",  # 0 at NaN and at -0.0 (+0.0)
    "LogicalNot": lambda a, k, d: f"({a[0]} == 0)",
    "IsNan": lambda a, k, d: f"({a[0]} != {a[0]})",
    "BitwiseAnd": lambda a, k, d: f"({a[0]} & {a[1]})",
    "BitwiseOr": lambda a, k, d: f"({a[0]} | {a[1]})",
    "Relu": lambda a, k, d: f"({a[0]} < 0 ? 0 : {a[0]})",
    "LeakyRelu": lambda a, k, d: f"({a[0]} < 0 ? {a[0]} * {c_literal(k.get('negative_slope', 0.01), d)} : {a[0]})",
    "Gelu": _gelu,
    "GeluBackward": _gelu_backward,
    "Normalize": _normalize,
    "Pow": _pow,
    "Maximum": lambda a, k, d: _maximum(a[0], a[1]),
    "Minimum": lambda a, k, d: _minimum(a[0], a[1]),
    "Where": lambda a, k, d: f"({a[0]} ? {a[1]} : {a[2]})",
    "Eq": lambda a, k, d: f"({a[0]} == {a[1]})",
    "Ne": lambda a, k, d: f"({a[0]} != {a[1]})",
    "Lt": lambda a, k, d: f"({a[0]} < {a[1]})",
    "Le": lambda a, k, d: f"({a[0]} <= {a[1]})",
    "Gt": lambda a, k, d: f"({a[0]} > {a[1]})",
    "Ge": lambda a, k, d: f"({a[0]} >= {a[1]})",
    "ToDtype": lambda a, k, d: a[0],
    "Clone": lambda a, k, d: a[0],
}
_COMPARE = {"Eq", "Ne", "Lt", "Le", "Gt", "Ge"}
_LOGICAL = {"LogicalNot", "BitwiseAnd", "BitwiseOr", "IsNan"}  # of booleans (BitwiseAnd/Or of integers: NumPy)


class Part:
    """A value an op reads that is not a graph node: ``source`` reshaped to ``shape`` (the
    affine parameters of a Normalize)."""

    def __init__(self, source, shape):
        self.source = source
        self.meta = {"shape": tuple(shape), "dtype": source.meta["dtype"]}
        self.users, self.op, self.name = [], "part", f"{source.name}_part"


def _normalize_operands(node):
    parts = node.meta.get("codegen_operands")  # made once: Parts are keys of the plan's tables
    if parts is None:
        x, mean, var, weight, bias = node.args[:5]
        shape = node.kwargs.get("affine_shape")
        affine = [None if a is None else a if shape is None else Part(a, shape) for a in (weight, bias)]
        parts = node.meta["codegen_operands"] = (x, mean, var, *affine)
    return parts


def operands(node):
    """What an elementwise node reads: its args, or its update's args for a picked result."""
    update = update_of(node)
    if update is not None:
        return update.args
    if getattr(node.target, "name", None) == "Normalize" and hasattr(node.args[1], "meta"):
        return _normalize_operands(node)  # (without statistics, no-grad layer norm runs from Python)
    return node.args


def reads(node):
    """The operands an elementwise node's C expression uses: for a picked update result, only
    those its own equation names (Adam's new step count reads the step alone, so the loop
    that writes the parameter in place may run before it)."""
    update = update_of(node)
    if update is None:
        return operands(node)
    marks = [None if a is None else f"@{i}@" for i, a in enumerate(update.args)]
    expression = UPDATES[update.target.name](marks, update_attrs(update), _dtype(update.args[0]), node.args[1])
    return [a for a, mark in zip(update.args, marks) if mark is not None and mark in expression]


def _update_ok(node):
    """All array operands of the parameter's shape and dtype (a step count: any 0-d number), the
    hyperparameters numbers or 0-d float64 inputs."""
    n = len(node.target.hyperparameters)
    args = [a for a in node.args[:len(node.args) - n] if a is not None]
    if not args or not all(hasattr(a, "meta") for a in args):
        return False
    param = args[0]
    shape, dtype = param.meta["shape"], _dtype(param)
    if dtype not in FLOATS:
        return False
    if not all(a.meta["shape"] == () and _dtype(a) == np.float64 if hasattr(a, "meta") else
               isinstance(a, (int, float, np.number)) for a in node.args[len(node.args) - n:]):
        return False
    step = node.args[STEPS[node.target.name]] if node.target.name in STEPS else None
    return all((a.meta["shape"] == () and _dtype(a) in CTYPES) if a is step else
               (a.meta["shape"] == shape and _dtype(a) == dtype) for a in args)


def elementwise_expr(node, operands):
    """The C expression of an elementwise ``node`` given its operands' C expressions."""
    update = update_of(node)
    if update is not None:
        return UPDATES[update.target.name](operands, update_attrs(update), _dtype(update.args[0]), node.args[1])
    name, attrs = node.target.name, node.kwargs
    if name == "Pow":
        attrs = {"b": node.args[1]}
    return ELEMENTWISE[name](operands, attrs, _dtype(node))


def _dtype(node):
    d = node.meta["dtype"]
    return np.dtype(getattr(d, "np", d))


def _dtypes_ok(node):
    """Floating results (bool for comparisons), operands of C types; integer arithmetic is
    left to NumPy (its overflow and division rules)."""
    name, out = node.target.name, _dtype(node)
    args = [a for a in node.args if hasattr(a, "meta")]
    if any(_dtype(a) not in CTYPES for a in args):
        return False
    if name in _LOGICAL:
        return out == np.bool_ and all(_dtype(a) == np.bool_ and name != "IsNan" or
                                       name in ("LogicalNot", "IsNan") and _dtype(a) in FLOATS for a in args)
    if name in _COMPARE:
        return out == np.bool_ and all(_dtype(a) in FLOATS for a in args)
    if name == "Where":
        return out in FLOATS and _dtype(node.args[0]) == np.bool_
    if name == "ToDtype":
        return out in FLOATS
    return out in FLOATS and all(_dtype(a) == out for a in args)


def _last_dim(node, dim):
    nd = len(node.args[0].meta["shape"])
    return isinstance(dim, int) and dim in (-1, nd - 1) and nd >= 1


def _row_reduction_ok(node):
    """Over the last dim (a scan: any dim) of a float input of known, non-empty shape, with
    the input's dtype (Argmax: int64) and no other operand."""
    x, k = node.args[0], node.kwargs
    if len(node.args) != 1 or not hasattr(x, "meta") or _dtype(x) not in FLOATS:
        return False
    shape = tuple(x.meta["shape"])
    if not shape or not all(type(s) is int and s > 0 for s in shape):
        return False
    dim = k.get("dim")
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    out = np.dtype(np.int64) if node.target.name == "Argmax" else _dtype(x)
    along = type(dim) is int if node.target.name in SCANS else _last_dim(node, dim)
    return along and _dtype(node) == out


def _nonzero(k):
    """Whether a product's inner size may be left to BLAS: > 0, or a size symbol (BLAS's
    C = 0 A B when it is 0 at run time, the leading dimensions at least 1)."""
    return isinstance(k, Expr) or k > 0


def _attention_kind(node, have_blas):
    """"bmm" (Matmul of stacks of matrices), "attention" (AttentionWeights), "softmax_grad"
    (SoftmaxScoresGrad): kernels of :mod:`.attention`; or None."""
    name, out = node.target.name, _dtype(node)
    arrays = [a for a in node.args if hasattr(a, "meta")]
    if out not in FLOATS or 0 in node.meta["shape"]:
        return None
    if name == "Matmul" and have_blas and len(node.args) == 2 and len(arrays) == 2:
        a, b = arrays
        if len(a.meta["shape"]) >= 2 and len(b.meta["shape"]) > 2 and _dtype(a) == _dtype(b) == out \
                and _nonzero(a.meta["shape"][-1]):
            return "bmm"
    if name == "AttentionWeights" and have_blas:
        query, key = node.args[0], node.args[1]
        mask = node.args[2] if len(node.args) > 2 else None
        if _dtype(query) == _dtype(key) == out and _nonzero(query.meta["shape"][-1]) and \
                (mask is None or (hasattr(mask, "meta") and _dtype(mask) in (np.dtype(np.bool_), out))):
            return "attention"
    if name == "SoftmaxScoresGrad" and len(arrays) == 2 and all(
            a.meta["shape"] == node.meta["shape"] and _dtype(a) == out for a in arrays):
        return "softmax_grad"
    return None


def norm_backward_operands(node):
    """(g, x, mean, var, weight, bias) of a NormalizeBackward node, and the result index of
    each gradient it gives: (x, weight, bias)."""
    return tuple(node.args[:6]), (0, 3, 4)


def channel_axes(shape, axes):
    """Whether ``axes`` are batch norm's: every axis of ``shape`` but 1 (the channels)."""
    return len(shape) >= 2 and tuple(axes) == (0,) + tuple(range(2, len(shape)))


def _norm_backward_ok(node):
    """Whether the kernel handles ``node``: statistics over trailing axes, weight and bias
    (or None) of the normalised trailing shape, one floating dtype throughout."""
    (g, x, mean, var, weight, bias), _ = norm_backward_operands(node)
    if not all(u.target is operator.getitem for u in node.users) or \
            len({u.args[1] for u in node.users}) != len(node.users):
        return False
    k = node.kwargs
    shape = tuple(x.meta["shape"])
    axes = tuple(k["axes"])
    arrays = [a for a in (g, x, mean, var, weight, bias) if a is not None]
    if not all(hasattr(a, "meta") for a in arrays) or len({_dtype(a) for a in arrays}) != 1 \
            or _dtype(x) not in FLOATS or tuple(g.meta["shape"]) != shape:
        return False
    if channel_axes(shape, axes):  # batch norm: per-channel weight and bias (norm.channel_backward_kernel)
        ones = (1,) * (len(shape) - 2)
        return k.get("affine_shape") in (None, (shape[1],) + ones, (-1,) + ones) and \
            all(a is None or tuple(a.meta["shape"]) == shape[1:2] for a in (weight, bias))
    if not axes or axes != tuple(range(len(shape) - len(axes), len(shape))) or k.get("affine_shape") is not None:
        return False
    trailing = shape[len(shape) - len(axes):]
    return all(a is None or tuple(a.meta["shape"]) == trailing for a in (weight, bias))


# The fused recurrent layer and its backward (kernels in .rnn), with their positional arities.
RNN_OPS = {"RNNLayer": len(INPUTS), "RNNLayerBackward": 3 + len(INPUTS) + len(RESULTS)}


def _rnn_ok(node, have_blas):
    """Whether the recurrent kernels handle ``node``: a BLAS, positional array operands of one
    floating dtype without empty dimensions, no LSTM projection, each result picked once."""
    name, mode = node.target.name, node.kwargs.get("mode")
    if not have_blas or len(node.args) != RNN_OPS[name] or mode not in GATES:
        return False
    inputs = node.args[:len(INPUTS)] if name == "RNNLayer" else node.args[3:3 + len(INPUTS)]
    arrays = [a for a in node.args if a is not None]
    if inputs[INPUTS.index("weight_hr")] is not None or not all(hasattr(a, "meta") and "shape" in a.meta
                                                                for a in arrays):
        return False
    if len({_dtype(a) for a in arrays}) != 1 or _dtype(arrays[0]) not in FLOATS \
            or any(0 in tuple(a.meta["shape"]) for a in arrays):
        return False
    picked = [u.args[1] for u in node.users if u.target is operator.getitem]
    return len(picked) == len(node.users) == len(set(picked))


def cat_dim(node):
    """Cat's (or Stack's) dimension in the result, counted from 0."""
    return node.kwargs.get("dim", 0) % len(node.meta["shape"])


def _cat_ok(node):
    """Cat (or Stack: a cat of operands that gain a size-1 dim) of operands of the result's dtype
    (a C type) and rank, of sizes known or size expressions (read at run time): each is copied
    into its slice of the result (cgen._copy_kernel)."""
    shape, out = tuple(node.meta["shape"]), _dtype(node)
    if out not in CTYPES or not shape or not all(type(n) is int or isinstance(n, Expr) for n in shape) \
            or node.kwargs.keys() - {"dim"}:
        return False
    d = cat_dim(node)
    if node.target.name == "Stack":  # each operand's shape is the result's without dim d
        rest = shape[:d] + shape[d + 1:]
        return bool(node.args) and all(hasattr(a, "meta") and _dtype(a) == out and tuple(a.meta["shape"]) == rest
                                       for a in node.args)
    return bool(node.args) and all(
        hasattr(a, "meta") and _dtype(a) == out and len(a.meta["shape"]) == len(shape)
        and all(m == n for i, (m, n) in enumerate(zip(a.meta["shape"], shape)) if i != d) for a in node.args)


def kind_of(node, have_blas):
    """"view", "elementwise", "sum" (also All, Any and the extremes), "softmax", "log_softmax", "norm_stats", "cross_entropy",
    "cross_entropy_backward", "gemm", "conv" (a direct convolution loop), "pool" (max and average pooling),
    "bmm", "attention", "softmax_grad", "scatter", "cat", "copies" (flip, tril, triu, constant pad), "embedding_backward",
    "norm_backward", "rnn", "gather", "extreme" (.gather), "index" (.indexing), "sort" (.sort),
    "logsumexp", "argmax", "cumsum", "cumprod" (.row_reductions) (and
    "result" for the gradients or results these two give) or None (run from Python); the plan makes "copy" of a
    reshape of strided memory."""
    target = node.target
    name = getattr(target, "name", None)
    if update_of(node) is not None:
        return "elementwise" if _update_ok(update_of(node)) else None
    if name in UPDATES:
        return "update" if _update_ok(node) else None
    if name == "NormStats":
        x, axes = node.args[0], tuple(node.kwargs.get("axes", ()))
        nd = len(x.meta["shape"])
        trailing = bool(axes) and axes == tuple(range(nd - len(axes), nd))
        return "norm_stats" if (trailing or channel_axes(x.meta["shape"], axes)) and _dtype(x) in FLOATS else None
    if target is operator.getitem and getattr(node.args[0].target, "name", None) == "NormStats":
        return "view"  # the mean or the variance: a half of the statistics kernel's buffer
    if name == "NormalizeBackward":
        return "norm_backward" if _norm_backward_ok(node) else None
    if node.target is operator.getitem and getattr(node.args[0].target, "name", None) in (
            "NormalizeBackward", *RNN_OPS, *gather.EXTREMES, *sort.OPS):
        return "result"  # a result the layer-norm backward, a recurrent, an extreme's or a sort's kernel writes (if C runs it)
    if name in gather.EXTREMES:
        return "extreme" if gather.supported(node) else None
    if name in sort.OPS:
        return "sort" if sort.supported(node) else None
    if name in RNN_OPS:
        return "rnn" if _rnn_ok(node, have_blas) else None
    if node.op != "call_op" or name is None or "shape" not in node.meta:
        return None
    shape = node.meta["shape"]
    if name in VIEWS:
        return "view"
    if name in ("Real", "Imag"):  # every other number of a complex array (complex_decompose's parts)
        return "view"
    if any(not hasattr(a, "meta") and not isinstance(a, (int, float, bool, np.number, type(None)))
           and not (isinstance(a, Expr) and name in _SIZE_OPERANDS) for a in node.args):
        return None
    if name in indexing.OPS and indexing.supported(node):
        return "index"  # (an IndexBackward of basic indices: "scatter", below)
    if name in ("Cat", "Stack"):
        return "cat" if _cat_ok(node) else None
    if name in copies.OPS:
        return "copies" if copies.supported(node, CTYPES) else None
    if name in pool.OPS:
        return "pool" if pool.supported(node) else None
    if name in gather.OPS:
        return "gather" if gather.supported(node) else None
    if name in ELEMENTWISE:
        if name == "Tan" and _dtype(node) != np.float32:
            return None  # libm's scalar tan would be slower than NumPy's vector loop
        if name == "Pow" and hasattr(node.args[1], "meta"):
            return None
        if name == "Normalize" and not hasattr(node.args[1], "meta"):
            return None
        return "elementwise" if _dtypes_ok(node) else None
    if name in ("All", "Any") and len(node.args) == 1 and hasattr(node.args[0], "meta") \
            and _dtype(node.args[0]) in CTYPES:
        return "sum"  # the sum kernel's loops with &= / |= of (x != 0)
    if name in ROW_REDUCTIONS:
        return ROW_REDUCTIONS[name] if _row_reduction_ok(node) else None
    out = _dtype(node)
    if out not in FLOATS or not node.args or not hasattr(node.args[0], "meta"):
        return None  # e.g. DropoutMask: no tensor input, it runs its forward
    if name == "Sum" and node.kwargs.get("dtype") is None and _dtype(node.args[0]) == out and len(node.args) == 1:
        return "sum"
    if name in ("Amax", "Amin", "Max", "Min") and _dtype(node.args[0]) == out and len(node.args) == 1:
        return "sum"  # the sum kernel's loops keeping the extreme (eager raised on an empty one)
    if name == "Prod" and _dtype(node.args[0]) == out and len(node.args) == 1:
        return "sum"  # the sum kernel's loops multiplying (an empty product is 1)
    if name == "VectorNorm" and _dtype(node.args[0]) == out and len(node.args) == 1 \
            and isinstance(node.kwargs.get("ord"), (int, float)):
        return "sum"  # the sum kernel's loops over |x|, x^2 or |x|^p, the root taken after
    if name in ("Softmax", "LogSoftmax") and _last_dim(node, node.kwargs.get("dim")) and _dtype(node.args[0]) == out:
        return "softmax" if name == "Softmax" else "log_softmax"
    if name in ("CrossEntropy", "CrossEntropyBackward"):
        x = node.args[0] if name == "CrossEntropy" else node.args[3]
        target_ = node.args[1]
        ok = (hasattr(x, "meta") and len(x.meta["shape"]) == 2 and _dtype(x) == out
              and hasattr(target_, "meta") and _dtype(target_) == np.int64 and len(target_.meta["shape"]) == 1
              and node.args[2] is None and not node.kwargs.get("label_smoothing", 0.0)
              and node.kwargs.get("reduction", "mean") in ("mean", "sum"))
        if name == "CrossEntropyBackward":
            ok = ok and hasattr(node.args[0], "meta") and node.args[0].meta["shape"] == () and _dtype(node.args[0]) == out
        return ("cross_entropy" if name == "CrossEntropy" else "cross_entropy_backward") if ok else None
    if name in conv.OPS:
        return "conv" if conv.supported(node, have_blas) else None
    if name == "EmbeddingBackward" and _dtype(node.args[0]) == out and hasattr(node.args[1], "meta") \
            and _dtype(node.args[1]) == np.int64 and not node.kwargs.get("scale_grad_by_freq") \
            and (node.kwargs.get("padding_idx") is None or node.kwargs["padding_idx"] >= 0):
        return "embedding_backward"
    if name == "IndexBackward" and _dtype(node.args[0]) == out and all(
            i is None or i is Ellipsis or isinstance(i, slice) or type(i) is int for i in node.kwargs["index"]):
        return "scatter"  # the gradient of a basic index: zeros, and g copied into the view
    if name in ATTENTION_OPS:
        kind = _attention_kind(node, have_blas)
        if kind is not None:
            return kind
    if name in ("Matmul", "Addmm") and have_blas:
        a, b = node.args[-2], node.args[-1]
        if not (hasattr(a, "meta") and hasattr(b, "meta") and len(a.meta["shape"]) >= 2
                and len(b.meta["shape"]) == 2 and _dtype(a) == _dtype(b) == out and 0 not in shape):
            return None
        if name == "Matmul" and a.meta["shape"][-1] == 1:  # (an outer product: eager's, -0.0 kept as torch's)
            return None
        if name == "Addmm":  # F.linear's product: its bias a vector over the columns
            bias = node.args[0]
            if not (hasattr(bias, "meta") and tuple(bias.meta["shape"]) == tuple(shape[-1:]) and _dtype(bias) == out):
                return None
        return "gemm"
    return None
