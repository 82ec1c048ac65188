"""Float arguments as inputs of a graph, as torch 2.13 takes a changing float as a symbol.

While a function is recorded with a float argument traced, the argument is a
:class:`~.traced_ints.TracedFloat`: a float whose methods, called from the user's code, note a
*use*, except arithmetic with numbers (``lr * 2 + 1``, ``lr / 4``, ``-lr``), whose result is
traced too and remembers how it was computed. An op taking a traced float as an operand
(``x * lr``, ``clamp(x, max=lr)``, ``p.sub_(g * lr)``) records it as a node: a placeholder
(source ``("float_arg", position)``, a 0-d float64 tensor made from the argument at each
call), the float64 arithmetic Python did on it (exact: Python's floats are IEEE doubles too),
then a cast to the op's dtype, as the op casts a Python number (``x_float32 * lr`` stays
float32, ``x_int * lr`` is of the default dtype). A float32 or float64 tensor filled with one
(``full((2, 3), lr)``, ``x.new_full``, ``full_like``, ``x.fill_(lr)``) is that node broadcast
(:func:`fill_node`). Its guard is then :data:`ANY_FLOAT`: any
float, nan, inf and -0.0 included.

A comparison with a number in the user's code (``if lr > 0.5``) is guarded by its outcome
(:func:`float_conditions`), and ``lr ** 0.5``, ``round(lr, 2)``, ``math.sqrt(lr)``, ``abs(lr)``,
``round(lr) + 1``, ``math.floor(lr) / 4``, ``int(lr * 2) // 3`` are inputs that Python computes from the
arguments at each call (``("float_arg", how)``), guarded to give a float (an int, in C's range where
an op takes it: ``0.5 * round(lr)`` takes any); so are a fill of such an int (``new_full((2,),
round(lr))``, :func:`fill_node`) and a float the function returns (:class:`ReturnedFloat`:
``return loss, lr * 2``). A float that
was used otherwise (``int(lr)``, ``f"{lr}"``, ``math.exp(lr)``, a
comparison in ember's own code such as ``dropout``'s check of ``p``, an op's attribute other
than ``add``'s ``alpha``, ``leaky_relu``'s slope, ``addcmul``'s ``value``, ``elu``'s ``alpha`` and
``threshold``'s ``threshold`` and ``value``) keeps its value
guarded: a graph per value, as before. So does one whose value (or its float32 rounding) is found in the graph where
it did not come as the traced float (:func:`note_unseen`: an autograd node saves an op's
operand as a plain float; NumPy reads a float subclass without its methods).
"""
import math
import operator
import sys

import numpy as np

from .._backend import INT_MIN, UINT_END
from .. import _creation
from .._creation import ToDtype
from .. import _dtype
from .._dtype import bfloat16, float16, float32, float64
from .._ops.pointwise_binary import Add, Div, Mul, Sub, Where
from .._ops.shape import Clone, Expand
from .._ops.pointwise_unary import Neg
from .._ops.compare import Gt
from .._ops.refusals import check_attribute
from .._tensor import Tensor
from .contents import NAN
from .float_attributes import ATTRIBUTE_OPS
from .graph import instances_in
from .symbolic import evaluate, free_symbols
from .traced_math import MATH
from .traced_ints import COMPARISONS, INT_POSITIONS, MADE, SAVED, FloatInt, TracedFloat, TracedInt, numbers_passed

__all__ = ["ANY_FLOAT", "any_float", "float_positions", "float_guards", "float_conditions", "float_nodes",
           "fill_node", "float_inputs", "argument_positions", "fill_floats", "note_unseen"]


class _AnyFloat:
    """The guard of a float argument the graph takes as an input: equal to the guard key
    (:func:`~.contents.scalar_key`) of every float (nan, +-inf included) for which Python's
    comparisons of it (``conds``: :func:`float_conditions`) have the recorded outcomes (``lr >
    0.5`` False), as torch guards them; and, where an op converts it checked, whose finite value
    is beyond float32's range or not, as the recorded one's (a ``"huge"`` condition: eager's
    ``clamp(x, max=1e300)`` of a float32 ``x`` raises, the graph's cast gives inf; ``x * 1e300`` is
    inf in both, one graph, as torch's)."""

    def __init__(self, conds=()):
        self.conds = conds

    def __eq__(self, other):
        return other is self or (other is NAN and _meets(self.conds, _NAN)
                                 or type(other) is tuple and other[0] is float and _meets(self.conds, other[1]))

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self):
        return "any float" + "".join(
            f", {_spell(c[3])} {_HOLDS[c[0]] if c[2] else _NOT[c[0]]}" + f" {c[1]!r}" * (c[0] != "huge") if len(c) == 4
            else f", {_spell(c[1])} {'an int' if _to_int(c[1]) else 'a float'}" for c in self.conds)


def _huge(value):
    return _FLOAT32_MAX < abs(value) < _INF


_FLOAT32_MAX, _INF = float(np.finfo(np.float32).max), float("inf")
ANY_FLOAT = _AnyFloat()


_NAN = float("nan")
_HOLDS = {"__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=", "__eq__": "==", "__ne__": "!=",
          "huge": "is beyond float32's range", "int64": "is an int64 a double holds"}
_NOT = {"__lt__": ">=", "__le__": ">", "__gt__": "<=", "__ge__": "<", "__eq__": "!=", "__ne__": "==",
        "huge": "is within float32's range", "int64": "is no int64 a double holds"}
_CHECKS = {**COMPARISONS, "huge": lambda value, _: _huge(value), "int64": lambda value, _: _exact_int64(value)}
# (float_conditions' outcomes)


def _exact_int64(value):
    """Whether int ``value`` is an int64 that a double holds exactly (the graph's fill takes it as one)."""
    return INT_MIN <= value < -INT_MIN and float(value) == value
_ARITHMETIC = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
_BITWISE = ("rshift", "lshift", "and", "or", "xor")


def float_conditions(position, uses, made):
    """The comparisons Python made of the traced float argument at ``position`` (``uses``, its
    :class:`~.traced_ints.Uses`; ``(method, number, outcome, traced float)`` each) as ``(method,
    number, outcome, how)``, ``how`` the traced float's computation from the argument (plain
    tuples, :func:`_value` evaluates it: ``lr * 2 > 1``), and ``("computes", how)`` for each
    float of ``made`` (the recording's) that Python computed from it (``lr ** 0.5``): a float
    there, not an error or a complex number. One computed from another float argument too is
    a use of it (its value guarded)."""
    found = []
    computed = [(None, None, None, f) for f in made if (f.how[0] in _PYTHON or type(f) is FloatInt) and position in _positions(f)]
    # (it, or a float computed from it alone, that an op converts checked: beyond float32's range or not,
    # ``F.elu(x, lr * 1e10)``, ``clamp(x, max=lr)`` raise where it is, the graph's cast gives inf)
    computed += [("huge", None, _huge(f), f) for f in made if type(f) is TracedFloat and f.checked
                 and _positions(f) == {position} and not _has_int(f)]  # (``lr * k``: _node's check)
    computed += [("int64", None, True, f) for f in made if type(f) is FloatInt and f.__dict__.get("filled")
                 and position in _positions(f)]  # (an int64 fill of it: ``full((2,), round(lr))``)
    for name, number, outcome, f in (*uses.compared, *computed):
        how = _how(f)
        if _positions(f) != {position}:
            uses.append(("a comparison with another float argument", "(in the recording)"))
        elif name is None:  # (an int no op took, ``0.5 * round(lr)``'s: any int, beyond int64's range too)
            found.append(("computes", how) if type(f) is not FloatInt or f.__dict__.get("operand") else (_ANY_INT, how))
        else:
            found.append((name, number, outcome, how))
    return tuple(found)


# computed by Python at each call (float_inputs): the originals of math's functions (patch_math)
_PYTHON = {"pow": pow, "round": round, "floordiv": operator.floordiv, "mod": operator.mod, "abs": abs,
           "rshift": operator.rshift, "lshift": operator.lshift, "and": operator.and_, "or": operator.or_,
           "xor": operator.xor, **{f"math.{name}": getattr(math, name) for name in (*MATH, "floor", "ceil", "trunc", "fabs")}}
_TRACED = (TracedFloat, FloatInt)  # (a FloatInt: ``int(lr)``, ``("math.trunc", lr)``)


def _has_int(f):
    """Whether traced float ``f`` is computed from a traced int (``k * 0.5``) or an int Python
    made of a float (``round(lr) * 0.5``, ``math.floor(lr) + 1``)."""
    if type(f) is TracedInt or type(f) is FloatInt:
        return True
    return type(f) in _TRACED and f.how[0] != "argument" and any(_has_int(v) for v in f.how[1:])


def _positions(f):
    """The positions of the arguments traced float ``f`` is computed from."""
    if type(f) not in _TRACED:
        return set()
    if f.how[0] == "argument":
        return {f.how[1]}
    return _positions(f.how[1]) | _positions(f.how[2] if len(f.how) == 3 else None)


def _how(f):
    """``f``'s computation (``TracedFloat.how``) as plain tuples (``("argument", position)``)."""
    if type(f) is TracedInt:  # (its expression, and the argument each symbol is: ``("int", i0, (("i0", 1),))``)
        return ("int", f.expr, tuple((name, INT_POSITIONS[name]) for name in free_symbols(f.expr)))
    if type(f) not in _TRACED:
        return f
    kind, a, b = f.how if len(f.how) == 3 else (*f.how, None)
    return f.how if kind == "argument" else (kind, _how(a), _how(b))


def _value(how, argument):
    """The float ``how`` computes from the arguments (``argument(position)``), in Python's arithmetic."""
    if type(how) is not tuple:
        return how
    if how[0] == "argument":
        return argument(how[1])
    if how[0] == "int":
        return evaluate(how[1], {name: int(argument(k)) for name, k in how[2]})
    if how[0] == "neg":
        return -_value(how[1], argument)
    if how[0] == "checked":  # (eager's RuntimeError beyond float32's range: _node)
        value = _value(how[1], argument)
        check_attribute(value, float32)
        return value
    if how[0].startswith("math.") or how[0] == "abs":
        return _PYTHON[how[0]](_value(how[1], argument))
    return {**_ARITHMETIC, **_PYTHON}[how[0]](_value(how[1], argument), _value(how[2], argument))


_ANY_INT = "computes any int"  # (a condition's kind: the int no op takes, float_conditions)


def _meets(conds, x):
    """Whether each comparison of ``conds`` has its recorded outcome for the argument's value
    ``x``, and each float Python computes from it is a float (each int one an int, and where an
    op takes it in [-2**63, 2**64), else eager's OverflowError)."""
    for cond in conds:
        try:
            value = _value(cond[-1], lambda position: x)
        except (ArithmeticError, ValueError, TypeError):  # (``0.0 ** -1``: eager raises it)
            return False
        if type(value) is not (int if _to_int(cond[-1]) else float) or len(cond) == 4 and _CHECKS[cond[0]](value, cond[1]) is not cond[2]:
            return False
        if type(value) is int and cond[0] != _ANY_INT and not INT_MIN <= value < UINT_END:
            return False
    return True


def _to_int(how):
    """Whether ``how`` computes an int (``round(lr)``, ``math.floor(lr) + 1``: a :class:`~.traced_ints.FloatInt`)."""
    if type(how) is not tuple:
        return type(how) in (int, bool)
    if how[0] in ("add", "sub", "mul", "neg", "abs", "floordiv", "mod", "pow", *_BITWISE):
        return _to_int(how[1]) and (how[0] in ("neg", "abs") or _to_int(how[2]))  # (``** k``: k an int >= 0)
    return how[0] in ("math.floor", "math.ceil", "math.trunc") or how[0] == "round" and how[2] is None


def _spell(how):
    if type(how) is not tuple:
        return repr(how)
    if how[0] in ("argument", "int"):
        return "x" if how[0] == "argument" else repr(how[1])
    if how[0] == "neg":
        return f"-{_spell(how[1])}"
    if how[0].startswith("math.") or how[0] == "abs":
        return f"{how[0]}({_spell(how[1])})"
    sign = dict(add='+', sub='-', mul='*', div='/', pow='**', floordiv='//', mod='%', rshift='>>', lshift='<<',
                xor='^', **{"and": '&', "or": '|'}).get(how[0])
    return f"({_spell(how[1])} {sign} {_spell(how[2])})" if sign else f"{how[0]}({_spell(how[1])}, {_spell(how[2])})"


def float_positions(facts, before, static, arguments):
    """The positions (in ``arguments``, the call's ``(*args, *kwargs.values())``) of the float
    arguments to trace: all (``before`` True: ``dynamic=True``), or those whose guard differs
    from ``before`` (the last graph's guards: automatic dynamic), but those in ``static``
    (found used before)."""
    if not before:
        return []
    old = {} if before is True else dict(before)
    found = []
    for name, value in facts:
        if name.startswith("argument ") and name[9:].isdigit() and type(arguments[int(name[9:])]) is float:
            was = old.get(name, value)
            if (before is True or isinstance(was, _AnyFloat) or was != value) and int(name[9:]) not in static:
                found.append(int(name[9:]))
    return found


def float_guards(facts, symbols):
    """``facts`` with the guards of the float arguments of ``symbols`` (``{position: conditions}``,
    see :func:`float_conditions`) :data:`ANY_FLOAT`, or such a guard that checks the conditions too."""
    names = {f"argument {k}": conds for k, conds in symbols.items()}
    return [(name, any_float(_NAN if value is NAN else value[1], names[name]) if name in names else value)
            for name, value in facts] if names else facts


def any_float(value, conds=()):
    """The guard of a float a graph takes as an input, recorded at ``value``: :data:`ANY_FLOAT`, or
    such a guard that checks the conditions ``conds`` too (:func:`float_conditions`; ``value``
    unused: the conditions hold their outcomes)."""
    return _AnyFloat(conds) if conds else ANY_FLOAT


_OPS = {"add": Add, "sub": Sub, "mul": Mul, "div": Div}
# the ops that take a number beyond float32's range for a float32 tensor as inf (``x * 1e39``; the others
# convert it checked: ``clamp(x, max=1e39)``, ``where(c, x, 1e39)``, ``add``'s alpha, the attributes)
_UNCHECKED = {"Add", "Sub", "Mul", "Div", "Pow", "Eq", "Ne", "Lt", "Le", "Gt", "Ge"}
_SCALAR = {"shape": (), "dtype": float64, "requires_grad": False}


def float_nodes(tracer, op, args, attrs, dtype, output):
    """``(op, args, attrs)`` of an op (graph arguments) with the operands at the positions of
    ``tracer.floats_now`` (``{position: traced float}``) the traced floats' nodes, cast to
    ``dtype``, the op's; ``"alpha"`` there (``add``'s scale) becomes a product ``b * alpha``, as
    eager computes it, ``leaky_relu``'s slope ``where(x > 0, x, x * slope)`` and ``addcmul``'s
    value ``addcmul(input, tensor1 * value, tensor2)``, ``elu`` and ``threshold`` their eager
    ``where`` (:mod:`.float_attributes`). A
    float the op takes otherwise, with no floating-point dtype or ``b`` a number, or of float16 or bfloat16 (eager computes at float32: ``x_half * 70000.0`` is 0 at
    0, a float16 cast of the number would be inf) other than a product or quotient (computed at
    float32 in the graph too: :func:`_at_float32`), is a use: its value stays. The autograd node
    of ``output`` saves the traced floats (:func:`_save_traced`). The plain floats left in
    them are noted where the user's call may have passed a traced float's value unseen
    (:func:`_note_passed`), but an update op's group numbers (``op.hyperparameters``, the last
    operands): a plain one there is the number the call wrote into the group
    (:func:`~.group_replay.hyperparameter_inputs`), equal to a float read there by the write alone."""
    n = len(getattr(op, "hyperparameters", ()))
    op, args, attrs = _float_nodes(tracer, op, args, attrs, dtype, output)
    _note_passed(tracer, args[:len(args) - n], attrs)
    return op, args, attrs


def _note_passed(tracer, args, attrs):
    """Notes in ``tracer.numbers`` each plain float an op takes (``args``, ``attrs``) where the
    user's call into ember running it was given a float, or it runs in a backward (an autograd
    node's saved operand): only those are checked by :func:`note_unseen` (``ones(())``'s 1.0 is
    none, nor is the 0.5 of ``0.5 * lr``, a traced float's own node); so each plain int where
    that call was given a :class:`~.traced_ints.FloatInt` (``x[:, :round(lr)]``; a module's
    transposes and the user's ``sum(1)`` are none: ``round(lr)`` at 1 is no use of ``lr``)."""
    if getattr(tracer, "numbers", None) is None:
        return
    found = [("float", float(a)) if a == a else ("nan",) for a in instances_in((args, attrs), (float, np.floating))]
    if found and numbers_passed(sys._getframe(2), backward=True):
        tracer.numbers.update(dict.fromkeys(found, True))
    found = [("int", a) for a in instances_in((args, attrs), int) if type(a) is int]  # (``round(lr)``'s value)
    if found and numbers_passed(sys._getframe(2), holding=FloatInt):
        tracer.numbers.update(dict.fromkeys(found, True))


def _float_nodes(tracer, op, args, attrs, dtype, output):
    """:func:`float_nodes` but for its note of the plain floats left."""
    floats = tracer.floats_now
    if not floats:
        return op, args, attrs
    adds = op in (Add, Sub)
    if any(type(j) is str for j in floats) and not adds or op is Where:  # (an attribute; where's value: the result's dtype)
        dtype = output.dtype
    b = args[1] if "alpha" in floats and adds else None
    why = "an operand of an op without a floating-point dtype"
    if dtype in (float16, bfloat16):  # (a cast node would round the number first)
        why = "an operand of a float16/bfloat16 op (eager computes it at float32)"
    if dtype in (float16, bfloat16) and op in (Mul, Div) and all(type(j) is int for j in floats):
        return _at_float32(tracer, op, args, attrs, dtype, output)
    # (``x_half + lr``: eager rounds the number to the op's dtype first, as the cast node)
    narrow = dtype in (float16, bfloat16) and not (adds and all(type(j) is int for j in floats))
    if dtype is None or not dtype.is_inexact or narrow or b is not None and (
            dtype.is_complex or not hasattr(b, "meta")):
        for f in floats.values():
            for seen in f.uses:
                seen.append((why, "(in the recording)"))
        return op, args, attrs
    args, nodes = list(args), {}
    for j, f in floats.items():
        if dtype is not float64 and (op.name not in _UNCHECKED or type(j) is str):
            f.checked = True  # (eager refuses it beyond float32's range: float_conditions guards that)
        node = _node(tracer, f)
        if dtype is not float64:
            node = tracer.graph.call_op(ToDtype, (node,), {"dtype": dtype}, dict(_SCALAR, dtype=dtype))
        if op.name in ATTRIBUTE_OPS:
            nodes[j] = node
        elif j == "alpha":
            args[1] = tracer.graph.call_op(Mul, (b, node), {}, dict(b.meta, dtype=dtype))
            attrs = {k: v for k, v in attrs.items() if k != j}
        elif j == "negative_slope":  # (eager's ``x > 0 ? x : x * slope``, in ops the C code fuses)
            meta = {"shape": tuple(output.shape), "dtype": dtype, "requires_grad": output.requires_grad}
            positive = tracer.graph.call_op(Gt, (args[0], 0), {}, dict(meta, dtype=_dtype.bool, requires_grad=False))
            op, args, attrs = Where, [positive, args[0], tracer.graph.call_op(Mul, (args[0], node), {}, meta)], {}
        elif j == "value":  # (addcmul's ``fma(value * tensor1, tensor2, input)``: the product a node)
            args[1] = tracer.graph.call_op(Mul, (args[1], node), {}, dict(args[1].meta, dtype=dtype))
            attrs = dict(attrs, value=1.0)
        else:
            args[j] = node
    if nodes:
        meta = {"shape": tuple(output.shape), "dtype": dtype, "requires_grad": output.requires_grad}
        op, args, attrs = ATTRIBUTE_OPS[op.name](tracer, args[0], dict(attrs, **nodes), meta, *args[1:])
    _save_traced(output, floats)
    return op, tuple(args), attrs


def _at_float32(tracer, op, args, attrs, dtype, output):
    """``(ToDtype, (node,), {"dtype": dtype})`` of a float16 or bfloat16 product or quotient
    with a traced float (``x_half * lr``, ``lr / x_half``), ``node`` the op at float32 on its
    operands cast there, the float from float64 (no 16-bit rounding first), as eager computes
    it (torch's opmath): then rounded once to ``dtype``."""
    floats = tracer.floats_now
    meta = {"shape": tuple(output.shape), "dtype": float32, "requires_grad": output.requires_grad}
    wide = [tracer.graph.call_op(ToDtype, (_node(tracer, floats[j]) if j in floats else a,), {"dtype": float32},
                                 dict(_SCALAR, dtype=float32) if j in floats else dict(a.meta, dtype=float32))
            for j, a in enumerate(args)]
    _save_traced(output, floats)
    return ToDtype, (tracer.graph.call_op(op, tuple(wide), attrs, meta),), {"dtype": dtype}


def _save_traced(output, floats):
    """Sets the inputs (and attributes) the autograd node of ``output`` saved (the plain floats
    the op ran on) at the positions of ``floats`` to the traced floats: its backward, recorded
    too, then takes them as the graph's nodes (``x * lr`` with ``x`` requiring grad: ``g * lr``).
    They are put back plain after the recording (:data:`~.traced_ints.SAVED`): NumPy would take a
    float subclass as float64."""
    node = getattr(output, "_grad_fn", None)
    saved, kept = getattr(node, "_saved", None), getattr(node, "attrs", None)
    for j, f in floats.items():
        if type(j) is int and type(saved) is list and j < len(saved) \
                and type(saved[j][0]) is (int if type(f) is FloatInt else float) and saved[j][1] is None:
            SAVED.append((saved, j, saved[j]))
            saved[j] = (f, None)
        elif type(j) is str and type(kept) is dict and type(kept.get(j)) is float:
            SAVED.append((kept, j, kept[j]))
            kept[j] = f


# the factories filling with a number, and the name of their parameter holding it (``fill_`` calls ``full``)
_FILLS = {"full": "fill_value", "new_full": "fill_value", "full_like": "fill_value", "tensor": "data", "as_tensor": "data"}
_FILL_DTYPES = {"float64": float64, "float32": float32, "float16": float16, "bfloat16": bfloat16, "int64": _dtype.int64}


def fill_node(tracer, array, frame):
    """Records ``array``, just made by ``full``, ``new_full``, ``full_like``, or ``tensor`` or
    ``as_tensor`` of a float (``tensor(0.5 * k)``) (``frame``: the
    frame wrapping it, ``_finish``'s) of a floating dtype with a traced float (or a
    :class:`~.traced_ints.FloatInt`: ``new_full((2,), round(lr))``) as the fill value,
    as ``clone(expand(float.to(dtype), shape))``: the graph takes the fill value as an input, as
    torch's symbolic fill (a float16 or bfloat16 fill's range check, ``check_narrow``, is guarded
    by its comparisons' outcomes). A traced float otherwise in the locals of the factory's frames
    is a use (its value kept): NumPy read it into a constant that :func:`note_unseen` need not
    find equal to it (``tensor([lr], dtype=int64)``, ``arange(0.0, lr)``)."""
    frames, found = [], []
    while frame is not None and frame.f_code.co_filename == _creation.__file__:
        frames.append(frame)
        found += [f for f in instances_in(list(frame.f_locals.values()), _TRACED) if f.uses[0].active]
        frame = frame.f_back
    if not found:
        return
    filling = next((f for f in frames if f.f_code.co_name in _FILLS), None)
    value = filling and filling.f_locals.get(_FILLS[filling.f_code.co_name])
    dtype = _FILL_DTYPES.get(getattr(getattr(array, "dtype", None), "name", None))
    if type(value) not in _TRACED or any(f is not value for f in found) or filling.f_locals.get("requires_grad") \
            or type(array) is not np.ndarray or dtype is None or dtype is _dtype.int64 and not (
            type(value) is FloatInt and _exact_int64(int.__int__(value))):  # (an int64 fill of an int held exactly)
        for f in found:
            for seen in f.uses:
                seen.append(("read by a factory into a constant", "(in the recording)"))
        return
    if dtype is _dtype.int64:  # (its guard checks the int is one: float_conditions)
        value.filled = True
    if type(value) is TracedFloat:  # (``full((2,), 1e39)`` raises: float_conditions; a FloatInt's range is int64's)
        value.checked = value.checked or dtype is not float64
    node = _node(tracer, value)
    if dtype is not float64:
        node = tracer.graph.call_op(ToDtype, (node,), {"dtype": dtype}, dict(_SCALAR, dtype=dtype))
    meta = dict(_SCALAR, shape=array.shape, dtype=dtype)
    node = tracer.graph.call_op(Expand, (node,), {"shape": array.shape}, meta)
    tracer.value[id(array)] = tracer.graph.call_op(Clone, (node,), {}, meta)
    tracer.hold(array)


def _node(tracer, f):
    """The node computing traced float ``f`` in float64 (one per float made, per recording). One
    that an op converts checked (``f.checked``) computed from several arguments (``F.elu(x, a *
    b)``, ``clamp(x, max=lr * k)`` of an int symbol ``k``) is Python's at each call, which raises eager's RuntimeError beyond float32's range
    (:func:`_value`'s ``"checked"``; the guards check one argument at a time: float_conditions)."""
    made = tracer.__dict__.setdefault("float_made", {})
    checked = type(f) is TracedFloat and f.checked and (len(_positions(f)) > 1 or _has_int(f))
    if id(f) in made and (made[id(f)][2] or not checked):  # (made unchecked before: made again)
        return made[id(f)][1]
    kind, a, b = f.how if len(f.how) == 3 else (*f.how, None)
    if kind == "argument" or kind in _PYTHON or _has_int(f) or kind == "div" and type(a) not in _TRACED or checked:
        # (``lr ** 0.5``, ``k * 0.5``, ``1 / lr``: Python's at each call)
        node = tracer.graph.placeholder(f"float_{a}" if kind == "argument" else f"float_python{len(made)}", dict(_SCALAR))
        tracer.sources.append(("float_arg", a if kind == "argument" else ("checked", _how(f)) if checked else _how(f)))
        if type(f) is FloatInt:  # (an op takes the int: its guard checks int64's range, float_conditions)
            f.operand = True
    else:
        a, b = (_node(tracer, v) if type(v) is TracedFloat else v for v in (a, b))
        if kind == "neg":
            node = tracer.graph.call_op(Neg, (a,), {}, dict(_SCALAR))
        elif kind == "sub" and type(a) is not type(b) and not hasattr(a, "meta"):  # number - float: -float + number
            node = tracer.graph.call_op(Add, (tracer.graph.call_op(Neg, (b,), {}, dict(_SCALAR)), a), {}, dict(_SCALAR))
        else:  # (a number before a node: + and * are commutative, exactly)
            node = tracer.graph.call_op(_OPS[kind], (a, b) if hasattr(a, "meta") else (b, a), {}, dict(_SCALAR))
    made[id(f)] = f, node, checked  # (f held: its id stays its own)
    return node


def float_inputs(sources):
    """``[(placeholder index, argument position or how)]`` of the ``("float_arg", position)``
    sources, and of ``("float_arg", how)``: a float Python computes from them (``lr ** 0.5``)."""
    return [(i, s[1]) for i, s in enumerate(sources) if s[0] == "float_arg"]


def argument_positions(floats):
    """The positions of the float arguments a graph's float inputs (``floats``: :func:`float_inputs`)
    are computed from (not those of int symbols: ``k * 0.5``)."""
    found = set()

    def walk(how):  # (an int inside is a number of the computation: ``int(lr * 3)``'s 3)
        if type(how) is tuple and how[0] == "argument":
            found.add(how[1])
        elif type(how) is tuple and how[0] != "int":
            for v in how[1:]:
                walk(v)
    for _, k in floats:
        if type(k) is int:
            found.add(k)
        else:
            walk(k)
    return sorted(found)


def fill_floats(tensors, floats, args, kwargs, reads=()):
    """Puts into ``tensors`` (a graph's inputs) at each placeholder index of ``floats`` (see
    :func:`float_inputs`) its float argument of this call (or float read: ``reads``, after the
    arguments, :mod:`.read_floats`), or the float Python computes from them, as a 0-d float64 tensor."""
    arguments = (*args, *kwargs.values(), *reads)
    for i, k in floats:
        value = arguments[k] if type(k) is int else _value(k, arguments.__getitem__)
        tensors[i] = Tensor._make(np.array(value, np.float64))


def note_unseen(cap):
    """Notes a use of each traced float made in recording ``cap`` whose value, or its float32
    rounding, is a plain number of the graph (an op's operand or attribute) or in a constant
    tensor it made from numbers the user's code passed (``tensor([lr])``; ``cap.numbers``, see
    :func:`~.traced_ints.numbers_passed`): Python passed it on unseen (an autograd node's saved
    operand, NumPy). A constant made of no float (``loss.backward()``'s seed, ``ones_like(x)``)
    equal to it is a coincidence (nanoGPT's ``coeff`` is 1.0 at the end of its warmup). So for
    an int Python made of a traced float (``round(lr)``) equal to a plain int of the graph that
    a call given one took (``cap.numbers``' ``("int", value)``)."""
    values, nans, ints = {}, [], {}
    for f in MADE:
        if type(f) is FloatInt:  # (``int(lr)``: a plain int of the graph equal to it)
            ints.setdefault(int.__int__(f), []).append(f)
            continue
        v = float.__float__(f)
        if v != v:
            nans.append(f)
        with np.errstate(over="ignore"):  # (beyond float32's range: its rounding is inf)
            rounded = float(np.float32(v))
        for key in {v, rounded} if v == v else ():
            values.setdefault(key, []).append(f)
    hit, passed = [], getattr(cap, "numbers", None)
    for node in cap.graph.nodes:
        for a in instances_in((node.args, node.kwargs), (float, np.floating)):
            if passed is None or (("float", float(a)) if a == a else ("nan",)) in passed:
                hit += nans if a != a else values.get(float(a), [])
        if not (node.target is Expand and getattr(node.args[0], "meta", {}).get("shape") == ()):
            # (but a fill's broadcast of its node, fill_node: the size passed the factory, read by ember's code)
            hit += [f for a in instances_in((node.args, node.kwargs), int) if type(a) is int and (
                passed is None or ("int", a) in passed) for f in ints.get(a, ())]
    for source in cap.sources:
        if source[0] == "sized_const":  # (dynamic shapes: a full's fill value)
            hit += [f for a in instances_in(source[1].args, (float, np.floating)) for f in values.get(float(a), ())]
        elif source[0] == "const" and source[1].dtype.kind in "fc" and source[1].size and id(source[1]) in getattr(
                cap, "numbers", (id(source[1]),)):  # (made of Python's numbers, not ``loss.backward()``'s ones)
            hit += [f for v, fs in values.items() if (source[1] == v).any() for f in fs]
            hit += nans if np.isnan(source[1]).any() else []
    for f in hit:
        for seen in f.uses:
            seen.append(("a plain number of the graph equal to it", "(in the recording)"))


def _of_arguments(f):
    """Whether traced float ``f`` is computed from arguments and numbers only (a traced int's
    symbols' positions are known while its recording runs: :data:`~.traced_ints.INT_POSITIONS`)."""
    if type(f) is TracedInt:
        return f.expr is not None and all(name in INT_POSITIONS for name in free_symbols(f.expr))
    return type(f) not in _TRACED or f.how[0] == "argument" or all(_of_arguments(v) for v in f.how[1:])
