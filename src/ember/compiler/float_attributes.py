"""An op's float attributes as graph inputs while float arguments are traced (``F.elu(x, lr)``,
``F.hardtanh(x, -lr, lr)``), as torch 2.13 takes a changing float as a symbol: which attributes
(:data:`ATTRIBUTE_INPUTS`), the op's eager formula in graph ops of the attributes' nodes
(:data:`ATTRIBUTE_OPS`, used by :func:`.traced_floats.float_nodes`), and the ember code whose
arithmetic and comparisons of traced floats count as the user's (:data:`AS_USER`: ``hardtanh``'s
``min_val > max_val`` check is guarded by its outcome, as torch guards the comparison its Python
makes; ``celu``'s ``1 / alpha`` is a float Python computes at each call), not a use; and the
factories whose ``float()`` of a traced float is none (:data:`FILLS_READ`: ``tensor(0.5 * k)``).

The graphs compute what eager computes, rounding for rounding: each attribute node is the float
cast to the op's dtype (eager casts a Python number so), ``+-0`` and NaN take eager's branch.
"""
import inspect

from .. import _creation, _dtype
from .._ops.clamp import Clamp
from .._ops.compare import Gt, Le, Lt
from .._ops.nn import Elu
from .._ops.pointwise_binary import Add, Div, Mul, Sub, Where
from .._ops.pointwise_unary import Exp, Expm1, Log1p, Neg
from .._ops import refusals, shrink
from ..nn.functional import activation

__all__ = ["ATTRIBUTE_INPUTS", "ATTRIBUTE_OPS", "AS_USER", "FILLS_READ", "INT_FILLS_READ", "INT_FILLS_COMPARED"]

# the float attributes an op's graph node may take as inputs (``elu``'s alpha and, for ``celu``,
# input_scale; not selu's fixed ``scale``)
ATTRIBUTE_INPUTS = {"Add": ("alpha",), "Sub": ("alpha",), "LeakyRelu": ("negative_slope",), "Addcmul": ("value",),
                    "Elu": ("alpha", "input_scale"), "Threshold": ("threshold", "value"),
                    "Hardtanh": ("min_val", "max_val"), "Softshrink": ("lambd",), "Hardshrink": ("lambd",),
                    "Softplus": ("beta", "threshold"), "SoftplusBackward": ("beta", "threshold")}

# ember's code whose float arithmetic and comparisons of a traced float are the user's (traced_ints)
AS_USER = {activation.hardtanh.__code__, activation.softshrink.__code__, activation.celu.__code__,
           Elu.backward.__code__, shrink._inside.__code__, refusals.check_attribute.__code__,
           _creation.check_narrow.__code__}

# ember's factories whose read of a traced float's value (NumPy's ``float()`` of ``tensor(lr)``'s
# data) is no use: what they made is checked (traced_floats.fill_node: a node, or a use there)
FILLS_READ = {inspect.unwrap(f).__code__ for f in (_creation.tensor, _creation.as_tensor, _creation._infer)}
# ember's code whose NumPy call reads an int's value as a fill (``new_full((2,), round(lr))``): no use, as above
INT_FILLS_READ = {inspect.unwrap(f).__code__ for f in (_creation.full, _creation._beside)}
# ember's code comparing an int fill with its dtype's range: no use where the fill is a node (an int64 one's guard
# checks the range, traced_floats.fill_node), and a use there otherwise
INT_FILLS_COMPARED = {_creation._overflows.__code__}


def _call(tracer, op, args, meta):
    return tracer.graph.call_op(op, tuple(args), {}, meta)


def _mask(meta):
    return dict(meta, dtype=_dtype.bool, requires_grad=False)


def _taken(tracer, mask, x, meta, taken=True):
    """``x`` where ``mask`` is ``taken``, else 0: the operand of a branch's ``exp``/``expm1``
    where the final ``where`` takes that branch, so that the graph's own gradient (the eager
    backend differentiates its nodes) has no ``0 * inf`` (NaN) from the branch not taken
    (``softplus(x, 3.0)`` at x = 30, ``elu(x, lr)`` at x = 100); the values taken are unchanged."""
    return _call(tracer, Where, (mask, x, 0.0) if taken else (mask, 0.0, x), meta)


def _elu(tracer, x, attrs, meta):
    """``elu(x, alpha)`` (``celu``: its ``input_scale`` too; ``scale`` 1) as eager computes it:
    ``x < 0 ? expm1(x * input_scale) * alpha : x``."""
    below = _call(tracer, Lt, (x, 0), _mask(meta))
    x_below = _taken(tracer, below, x, meta)
    scaled = x_below if "input_scale" not in attrs else _call(tracer, Mul, (x_below, attrs["input_scale"]), meta)
    negative = _call(tracer, Mul, (_call(tracer, Expm1, (scaled,), meta), attrs.get("alpha", 1.0)), meta)
    return Where, [below, negative, x], {}


def _threshold(tracer, x, attrs, meta):
    """``threshold(x, threshold, value)`` as eager computes it: ``x <= threshold ? value : x``."""
    below = _call(tracer, Le, (x, attrs["threshold"]), _mask(meta))
    return Where, [below, attrs["value"], x], {}


def _hardtanh(tracer, x, attrs, meta):
    """``hardtanh(x, min_val, max_val)``: eager's ``minimum(max_val, maximum(min_val, x))``, the
    graph's ``Clamp`` (NaN from either side, x itself on a tie)."""
    return Clamp, [x, attrs.get("min_val", -1.0), attrs.get("max_val", 1.0)], {}


def _shrink(tracer, x, attrs, meta, inside, outside):
    """``x < -lambd ? outside(x, lambd, True) : x <= lambd ? inside : outside(x, lambd, False)``:
    eager's ``where(-lambd <= x <= lambd, inside, ...)``, NaN outside (``lambd`` a node)."""
    lambd = attrs["lambd"]
    below = _call(tracer, Lt, (x, _call(tracer, Neg, (lambd,), dict(lambd.meta))), _mask(meta))
    within = _call(tracer, Where, (_call(tracer, Le, (x, lambd), _mask(meta)), inside, outside(x, lambd, False)), meta)
    return Where, [below, outside(x, lambd, True), within], {}


def _hardshrink(tracer, x, attrs, meta):
    """``hardshrink(x, lambd)``: 0 on ``[-lambd, lambd]``, else ``x``."""
    return _shrink(tracer, x, attrs, meta, 0.0, lambda x, lambd, below: x)


def _softshrink(tracer, x, attrs, meta):
    """``softshrink(x, lambd)``: ``x * 0`` on ``[-lambd, lambd]`` (-0.0 below 0, as torch's),
    ``x + lambd`` below it, ``x - lambd`` above it (and for NaN)."""
    inside = _call(tracer, Mul, (x, 0.0), meta)
    return _shrink(tracer, x, attrs, meta, inside,
                   lambda x, lambd, below: _call(tracer, Add if below else Sub, (x, lambd), meta))


def _softplus(tracer, x, attrs, meta):
    """``softplus(x, beta, threshold)`` as eager computes it: ``x * beta > threshold ? x :
    log1p(exp(x * beta)) / beta`` (inf where ``exp`` overflows, as torch's)."""
    beta, threshold = attrs.get("beta", 1.0), attrs.get("threshold", 20.0)
    bx = _call(tracer, Mul, (x, beta), meta)
    above = _call(tracer, Gt, (bx, threshold), _mask(meta))
    z = _call(tracer, Exp, (_taken(tracer, above, bx, meta, taken=False),), meta)
    soft = _call(tracer, Div, (_call(tracer, Log1p, (z,), meta), beta), meta)
    return Where, [above, x, soft], {}


def _softplus_backward(tracer, g, attrs, meta, x):
    """``softplus_backward(g, x, beta, threshold)`` as eager computes it: ``x * beta > threshold ?
    g : g * z / (z + 1)``, ``z = exp(x * beta)`` (nan where ``z`` overflows, as torch's)."""
    beta, threshold = attrs.get("beta", 1.0), attrs.get("threshold", 20.0)
    bx = _call(tracer, Mul, (x, beta), meta)
    above = _call(tracer, Gt, (bx, threshold), _mask(meta))
    z = _call(tracer, Exp, (_taken(tracer, above, bx, meta, taken=False),), meta)
    soft = _call(tracer, Div, (_call(tracer, Mul, (g, z), meta), _call(tracer, Add, (z, 1), meta)), meta)
    return Where, [above, g, soft], {}


# the ops whose float attributes (ATTRIBUTE_INPUTS) become nodes of other ops (given the op's first
# input, its other inputs after the attributes and meta: ``SoftplusBackward(g, x)``)
ATTRIBUTE_OPS = {"Elu": _elu, "Threshold": _threshold, "Hardtanh": _hardtanh, "Hardshrink": _hardshrink,
                 "Softshrink": _softshrink, "Softplus": _softplus, "SoftplusBackward": _softplus_backward}

