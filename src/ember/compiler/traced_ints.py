"""Int arguments followed through a recording, so that one graph can take the int as a symbol.

A dynamic graph may take an int argument as a size symbol (:mod:`.dynamic`): fitted from
recordings at a few values, it stands for every value. That holds only where the function's
Python never looks at the value: ``if k == 3:``, ``d[k]``, ``f"{k}"`` take one path per value,
which a fit from a few values cannot see. While the function is recorded such an
argument is a :class:`TracedInt`: an int whose every method, called from the user's code,
notes a *use* (with the user's line), except arithmetic with ints (``k * 2 + 1``, ``k % 2``),
whose result is traced too, and comparisons of a traced int with an int (``if k > 3:``, ``k ==
3``, ``if k:``), whose outcomes are noted instead (``Uses.compared``: the graph holds for the
values with the same outcomes, a range or conditions on the symbols, as torch guards on the
comparison). Called from ember's own code (an op taking
``k`` as its scalar operand) it is a plain int. An int that was used keeps a graph per value
(its guard is its value), as torch specialises an int that Python inspects; one that only
flowed into ops (or was compared) is a symbol, and where the graph takes it only as a number (:func:`.dynamic_ints.int_ranges`) its new values need no
recording, where a size symbol's first call at each size is recorded and checked.

What its methods cannot see: Python's own code reading an int subclass's digits (``range(k)``,
``seq[k]``, ``0.5 * k`` and ``2.5 < k`` computed by the float on the left). Those change the
recording's structure or constants between the probed values, so the fit specialises on them,
except where they happen to follow one polynomial at every probe (an arithmetic list indexed by
``k``). A float on the left may also steer a branch the probes all take alike (``if 0.5 * k >
50``): :func:`.traced_reads.note_float_operands` reads each user frame's bytecode when it returns and notes a
use where a float (a constant, or a name or attribute holding one) meets a traced int in an
arithmetic operator or a comparison.
"""
import operator
import os
import sys
import sysconfig

import numpy as np

from .float_attributes import AS_USER, ATTRIBUTE_INPUTS, FILLS_READ, INT_FILLS_COMPARED, INT_FILLS_READ
from .patches import PerThread
from .structure import EMBER_DIR, user_frame
from .symbolic import subexpressions

__all__ = ["TracedInt", "TracedFloat", "FloatInt", "ConstFloat", "TRANSPARENT", "numbers_passed", "Uses", "TRACING", "VALUES", "MINMAX", "SIZED", "BOUNDS", "Length", "MADE", "SAVED", "INT_POSITIONS", "plain", "traced", "ATTRIBUTE_INPUTS",
           "traced_operands", "COMPARISONS"]

# the Uses being noted now (non-empty while a recording traces int or float arguments), the values
# the traced ints of this recording took (an autograd node saves an op's operand as a plain int),
# the traced floats it made, and the autograd nodes' saved inputs it set to traced floats
# (``(saved list or attributes, position or name, plain entry)``: put back after it)
# (each thread's own: two threads may record at once)
TRACING, VALUES, MADE, SAVED = PerThread(list), PerThread(set), PerThread(list), PerThread(list)
# a ``min``/``max`` expression of traced ints (``min(i0, 2)``): the comparison its operand's pick came from
MINMAX = PerThread(dict)
# ``(expression, comparison)`` of each such expression an op's attribute took (``x[:min(k, 4)]``): its
# pick is guarded (a range) where the probes did not record both (dynamic.capture_dynamic)
SIZED = PerThread(list)
# the comparisons eager's slicing made of traced int bounds (``x[:k]``: ``k >= 0``, ``k <= 6``): _note_bounds
BOUNDS = PerThread(list)
# ints Python made of traced floats that ember's code read as an index (``x[:, :round(lr)]``), and while a
# recording takes such ints as int positions (derived_ints.py), ``{how: traced int}``: what ``round(lr)`` gives
INDEXED, DERIVED = PerThread(list), PerThread(dict)
INT_POSITIONS = PerThread(dict)  # the traced ints' symbols -> their arguments' positions (``k * 0.5``: traced_floats)

_EMBER = EMBER_DIR + os.sep
_NUMPY, _STDLIB = os.path.dirname(np.__file__) + os.sep, sysconfig.get_paths()["stdlib"] + os.sep
# arithmetic whose result with an int is a polynomial of the operands: traced, not a use
_ARITHMETIC = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__"}
_UNARY = {"__neg__", "__pos__"}
# an argument compared with an int (``if k > 3:``): its outcome noted, guarded as a range, not a use
_ORDER = {"__lt__", "__le__", "__gt__", "__ge__"}
# a traced int (``k``, ``2 * k + 1``, ``k % 2``) compared with an int, ``if k:``: the outcome noted,
# guarded as a condition on the symbols (``Uses.compared``), as torch guards ``Ne(k, 3)``
_COMPARE = _ORDER | {"__eq__", "__ne__"}
# arithmetic of a traced int with a float (or ``/`` by an int other than 0): a traced float computed
# from it (method -> (operation, whether the int is the right operand))
_TO_FLOAT = {"__mul__": ("mul", False), "__rmul__": ("mul", True), "__add__": ("add", False),
             "__radd__": ("add", True), "__sub__": ("sub", False), "__rsub__": ("sub", True),
             "__truediv__": ("div", False)}
_INT_FLOAT = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
              "div": lambda a, b: a / b}
# a remainder or a floor by a positive int: traced (``k % 2 == 0`` guards ``i0 % 2 == 0``)
_REMAINDER = {"__mod__": lambda e, c: e % c, "__floordiv__": lambda e, c: e // c}
_KEPT = {"__new__", "__init__", "__getattribute__", "__setattr__", "__delattr__", "__class__", "__init_subclass__",
         "__subclasshook__", "__reduce__", "__reduce_ex__", "__getnewargs__", "__sizeof__", "__dir__", "__doc__",
         "__getstate__"}


class Uses(list):
    """The uses noted of the traced ints of one argument: ``(method, "file:line: code")`` each;
    ``active`` while the function runs (outside a recording a traced int is a plain int);
    ``compared``: ``(method, int, outcome, expression)`` of each comparison of a traced int
    with an int (``k > 3``: ``("__gt__", 3, False, i0)``; ``if k:`` is ``k != 0``), which holds
    over a range of values or where a condition on the symbols holds (``i0 % 2 == 0``)."""
    active = False
    floats = False  # (a float argument's: its comparisons are guarded by traced_floats, an int's by dynamic_ints)

    def __init__(self, *items):
        super().__init__(*items)
        self.compared = []


class TracedInt(int):
    """An int argument (or an int computed from it by ``+``, ``-``, ``*``) while the function
    is recorded; ``uses`` collects what the user's code did with it other than arithmetic, and
    ``expr`` is its expression of the arguments' symbols (:class:`~.symbolic.Expr`; None when
    not known), so that a returned ``k + 1`` is computed from ``k`` at each replay."""

    def __new__(cls, value, uses, expr=None):
        self = super().__new__(cls, value)
        self.uses, self.expr = uses, expr
        VALUES.add(value)
        return self


# the expression of arithmetic's result from its operands' (an int operand as itself)
_EXPRESSIONS = {"__add__": lambda a, b: a + b, "__radd__": lambda a, b: b + a, "__sub__": lambda a, b: a - b,
                "__rsub__": lambda a, b: b - a, "__mul__": lambda a, b: a * b, "__rmul__": lambda a, b: b * a,
                "__neg__": lambda a: -a, "__pos__": lambda a: a}


def _expression(name, self, args):
    operands = [self.expr] + [a.expr if type(a) is TracedInt else int(a) for a in args]
    return None if any(e is None for e in operands) else _EXPRESSIONS[name](*operands)


def _from_user():
    """Whether the traced int's method was called by the user's code: the caller, or the first
    caller outside NumPy and the standard library (which ember's own code calls too)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code in TRANSPARENT:  # (a ConstFloat's operator: its caller's)
            frame = frame.f_back
            continue
        name = frame.f_code.co_filename
        if name.startswith(_EMBER):
            return False
        if not (name.startswith(_NUMPY) or name.startswith(_STDLIB) and "-packages" not in name):
            return True
        frame = frame.f_back
    return True


def _noting(name, method):
    def use(self, *args):
        if self.uses.active and _from_user():
            if name in _UNARY:
                return TracedInt(method(self), self.uses, _expression(name, self, ()))
            if name in _ARITHMETIC and type(args[0]) in (int, bool, TracedInt):
                return TracedInt(method(self, *args), self.uses, _expression(name, self, args))
            if name in _COMPARE and type(args[0]) is int and self.expr is not None:
                outcome = method(self, *args)
                self.uses.compared.append((name, args[0], outcome, self.expr))
                return outcome
            if name == "__bool__" and self.expr is not None:  # (``if k:``: ``k != 0``)
                outcome = method(self)
                self.uses.compared.append(("__ne__", 0, outcome, self.expr))
                return outcome
            if name in _REMAINDER and type(args[0]) is int and args[0] > 0 and self.expr is not None:
                return TracedInt(method(self, *args), self.uses, _REMAINDER[name](self.expr, args[0]))
            if name in _TO_FLOAT and self.expr is not None and (type(args[0]) is float or name == "__truediv__"
                                                                and type(args[0]) is int and args[0]):
                how = _TO_FLOAT[name]  # (``k * 0.5``, ``k / 2``: a float the graph takes as Python's)
                operands = (args[0], int.__int__(self)) if how[1] else (int.__int__(self), args[0])
                result = _INT_FLOAT[how[0]](*operands)
                if type(result) is float:
                    return TracedFloat(result, (self.uses,), (how[0], args[0], self) if how[1] else (how[0], self, args[0]))
            if not (name in _ARITHMETIC and (type(args[0]) is TracedFloat or not isinstance(args[0], (int, float, complex)))):
                # (a tensor operand: NotImplemented, then the tensor's own method takes it as an operand;
                # so for a traced float's: ``k * lr``, its ``__rmul__``)
                self.uses.append((name, user_frame()))
        return method(self, *args)
    use.__name__, use.__doc__ = name, f"int's ``{name}``, noting a use when the user's code calls it."
    return use


def _noting_attribute(name):
    def get(self):
        if self.uses.active and _from_user():
            self.uses.append((name, user_frame()))
        return getattr(int.__int__(self), name)
    return property(get, doc=f"int's ``{name}``, noting a use when the user's code reads it.")


for _name in dir(int):
    if _name in _KEPT or _name == "from_bytes":
        continue
    if isinstance(getattr(int, _name), property) or type(getattr(int, _name)).__name__ == "getset_descriptor":
        setattr(TracedInt, _name, _noting_attribute(_name))  # k.real, k.numerator
    elif callable(getattr(int, _name)):
        setattr(TracedInt, _name, _noting(_name, getattr(int, _name)))


class TracedFloat(float):
    """A float argument (or a float computed from traced ones and numbers by ``+``, ``-``,
    ``*``, ``/`` by a number or a traced float of float arguments other than 0 (then guarded
    nonzero: :func:`_divisor`), unary ``-``, or with a number by ``**`` and
    ``round(f, n)``) while the function is recorded:
    ``uses``, the :class:`Uses` of the arguments it comes from; ``how``, ``("argument",
    position)`` or ``(operation, left, right)`` (``("neg", x, None)``), each operand a traced
    float or a number (:mod:`.dynamic_floats` builds its graph from it); ``checked`` once an op
    of a float32 (or narrower) tensor converts it checked (:func:`.traced_floats.float_conditions`
    guards its range)."""
    checked = False

    def __new__(cls, value, uses, how):
        self = super().__new__(cls, value)
        self.uses, self.how = uses, how
        MADE.append(self)
        return self


# float arithmetic whose result is traced: method -> (operation, whether the float is the right operand)
_FLOAT_ARITHMETIC = {"__add__": ("add", False), "__radd__": ("add", True), "__sub__": ("sub", False),
                     "__rsub__": ("sub", True), "__mul__": ("mul", False), "__rmul__": ("mul", True),
                     "__truediv__": ("div", False), "__rtruediv__": ("div", True)}


# what the graph takes as computed by Python at each call (its errors and complex results are Python's):
# ``lr ** 0.5``, ``round(lr, 2)`` (traced_floats.float_inputs)
_PYTHON_COMPUTED = {"__pow__": "pow", "__rpow__": "pow", "__round__": "round"}


# float's methods that make an int: the computation a graph input repeats (traced_floats)
_TO_INT = {"__trunc__": "math.trunc", "__floor__": "math.floor", "__ceil__": "math.ceil",
           "__round__": "round"}


class FloatInt(int):
    """An int Python computed from traced floats by ``round(lr)``, ``math.floor``, ``math.ceil``
    or ``math.trunc`` while the function is recorded (``uses`` and ``how`` as a
    :class:`TracedFloat`'s; ``int(lr)`` cannot be one: Python copies what ``__int__`` returns
    into a plain int): an op's operand takes it as a graph input that Python computes at each
    call, as torch 2.13 traces it; so for its arithmetic with numbers and traced floats in the
    user's code (``round(lr) // 3``, ``round(lr) * self.c``), and its comparisons there are guarded
    by their outcome; every other method, from any code, is a use (but NumPy's read of a fill's
    value in ember's factory: :func:`_filling`)."""

    def __new__(cls, value, uses, how):
        self = super().__new__(cls, value)
        self.uses, self.how = uses, how
        MADE.append(self)
        return self


# an int Python made of traced floats in arithmetic with an int (``round(lr) + 1``) or a float
# (``math.floor(lr) * 0.5``, ``/``): computed by Python too; compared with a number, or ``if
# round(lr):``, its outcome guarded (traced_floats.float_conditions)
COMPARISONS = {"__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge,
           "__eq__": operator.eq, "__ne__": operator.ne}
_OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
              "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "rshift": operator.rshift,
              "lshift": operator.lshift, "and": operator.and_, "or": operator.or_, "xor": operator.xor}
# an int Python made of traced floats divided with a number (``int(lr * 2) // 3``, ``round(lr) % 4``,
# ``round(lr) // round(lr * 0.5 + 1)``), shifted or masked (``round(lr) >> 1``) or raised to a
# power (``int(lr) ** 2``): computed by Python too (a divisor of 0, a negative shift raise Python's
# error, in the recording and in the guards)
_INT_DIVISION = {"__floordiv__": ("floordiv", False), "__rfloordiv__": ("floordiv", True),
                 "__mod__": ("mod", False), "__rmod__": ("mod", True), "__rshift__": ("rshift", False),
                 "__lshift__": ("lshift", False), "__and__": ("and", False), "__rand__": ("and", True),
                 "__or__": ("or", False), "__ror__": ("or", True), "__xor__": ("xor", False), "__rxor__": ("xor", True)}
_BITWISE = {"rshift", "lshift", "and", "or", "xor"}  # (of ints only)


def _int_noting(name, method):
    def use(self, *args):
        other = args[0] if len(args) == 1 else None
        if self.uses[0].active and _from_user() and all(seen.floats for seen in self.uses):
            if name == "__neg__":
                return FloatInt(method(self), self.uses, ("neg", self, None))
            if name == "__abs__":  # (``abs(round(lr))``)
                return FloatInt(method(self), self.uses, ("abs", self))
            how = _FLOAT_ARITHMETIC.get(name) or _INT_DIVISION.get(name)
            if name == "__pow__" and type(other) is int and other >= 0:  # (``int(lr) ** 2``: an int; ``** -1`` a float)
                how = ("pow", False)
            if how is not None and (type(other) in (int, bool, float, FloatInt) and not (
                    how[0] in _BITWISE and type(other) is float) or type(other) is TracedFloat and how[0] in (
                    "add", "sub", "mul") and all(seen.floats for seen in other.uses)) and not (
                    how[0] in ("div", "floordiv", "mod") and not how[1] and _plain_number(other) == 0):
                # (``round(lr) * self.c``, traced; a FloatInt divisor's zero is checked by its guard)
                uses = self.uses + tuple(u for u in getattr(other, "uses", ()) if u not in self.uses)
                operands = (other, int.__int__(self)) if how[1] else (int.__int__(self), other)
                result = _OPERATORS[how[0]](*(int.__int__(v) if type(v) is FloatInt else float.__float__(v)
                                              if type(v) is TracedFloat else v for v in operands))
                made = FloatInt if type(result) is int else TracedFloat
                return made(result, uses, (how[0], other, self) if how[1] else (how[0], self, other))
            if (name in COMPARISONS and type(other) in (int, float) or name == "__bool__"):
                outcome = COMPARISONS[name](int.__int__(self), other) if name != "__bool__" else int.__int__(self) != 0
                for seen in self.uses:
                    seen.compared.append(("__ne__", 0, outcome, self) if name == "__bool__" else (name, other, outcome, self))
                return outcome
        if self.uses[0].active and not (name in _READS and _filling() or name in COMPARISONS and _filling(
                INT_FILLS_COMPARED)):
            for seen in self.uses:
                seen.append((name, user_frame()))
        return method(self, *args)
    use.__name__, use.__doc__ = name, f"int's ``{name}``, noting a use of the floats it came from."
    return use


_READS = {"__int__", "__index__", "__float__"}


def how_key(f):
    """The computation of a traced float or :class:`FloatInt` of float arguments as plain tuples
    (``("round", ("argument", 1), None)``), as :func:`.traced_floats._how` spells it."""
    if type(f) not in (TracedFloat, FloatInt) or f.how[0] == "argument":
        return f if type(f) not in (TracedFloat, FloatInt) else f.how
    return (f.how[0], *map(how_key, f.how[1:]))


def _plain_number(value):
    return int.__int__(value) if type(value) is FloatInt else value  # (its own ``==`` would note a use)


def _filling(codes=INT_FILLS_READ):
    """Whether NumPy reads the int for a fill of ember's factory (:data:`~.float_attributes.INT_FILLS_READ`;
    or the factory compares it with its dtype's range, ``codes`` :data:`~.float_attributes.INT_FILLS_COMPARED`),
    which :func:`.traced_floats.fill_node` checks (a node, or a use)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_NUMPY):
        frame = frame.f_back
    return frame is not None and frame.f_code in codes


for _name in dir(int):
    if _name not in _KEPT and _name != "from_bytes" and callable(getattr(int, _name)):
        setattr(FloatInt, _name, _int_noting(_name, getattr(int, _name)))


class ConstFloat(float):
    """A float constant (or global) of the user's code while int or float arguments are traced, only ever
    the left operand of the ``+``, ``-`` or ``*`` right after its load (:mod:`.float_constants`):
    with a traced int on the right (``0.01 * (k + 1)``) or a :class:`FloatInt` (``0.5 * round(lr)``)
    the result is a traced float of it, as the int's own ``__rmul__`` would make; with anything
    else, the plain float's result."""

    def __add__(self, other):
        return _operate(self, other, "add")

    def __sub__(self, other):
        return _operate(self, other, "sub")

    def __mul__(self, other):
        return _operate(self, other, "mul")


def _operate(self, other, how):
    value = float.__float__(self) if type(self) is ConstFloat else self.now()  # (a global's: float_constants.py)
    if type(value) is not float:  # (the global or closure cell holds no float now)
        return _OPERATORS[how](value, other)
    if type(other) is TracedInt and other.uses.active:
        if other.expr is not None:
            return TracedFloat(_INT_FLOAT[how](value, int.__int__(other)), (other.uses,), (how, value, other))
        other.uses.append(("a float's operator", user_frame()))
    elif type(other) is FloatInt and other.uses[0].active:  # (``0.5 * round(lr)``: its digits read unseen)
        if all(seen.floats for seen in other.uses):  # (a float Python computes at each call, as ``round(lr) * 0.5``)
            return TracedFloat(_OPERATORS[how](value, int.__int__(other)), other.uses, (how, value, other))
        for seen in other.uses:
            seen.append(("a float's operator", user_frame()))
    return _OPERATORS[how](value, other)  # (a traced float on the right: its method sees the user's frame)


# code whose frames _from_user passes over, to their caller: ConstFloat's operators
TRANSPARENT = {_operate.__code__, ConstFloat.__add__.__code__, ConstFloat.__sub__.__code__, ConstFloat.__mul__.__code__}


# a comparison steers Python wherever it runs: ember's own functions check a number before their
# op (``alpha == 1`` picks the op without a scale, ``dropout``'s ``p > 1`` raises), so it is a use
# from any code (the op itself takes plain floats: the dispatcher passes them)
_STEERING = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__"}


# float arithmetic and conversions in ember's own code (not NumPy's: ``np.full`` reads ``__float__``):
# the result is a plain number the graph would keep (``rrelu``'s ``(lower + upper) / 2``,
# ``interpolate``'s ``float(scale_factor)``, ``logspace``'s ``float(start)``), so a use
_COMPUTING = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__divmod__", "__rdivmod__", "__pow__",
              "__rpow__", "__neg__", "__round__", "__trunc__", "__floor__", "__ceil__", "__int__", "__float__"}


def _float_noting(name, method):
    def use(self, *args):
        active, caller = self.uses[0].active, sys._getframe(1).f_code
        user = active and (caller in AS_USER or _from_user())
        if active and not user and (name in _STEERING or name in _COMPUTING and caller.co_filename.startswith(_EMBER)
                                    and not (name == "__float__" and caller in FILLS_READ)):
            for seen in self.uses:
                seen.append((name, f"{user_frame()} (in ember's {caller.co_name})"))
        elif user:
            if name in _TO_INT and (not args or args == (None,)) and all(seen.floats for seen in self.uses):
                # (``int(lr)``, ``round(lr)``, ``math.floor(lr)``: an int Python computes at each call)
                made = FloatInt(method(self), self.uses, (_TO_INT[name], self, None) if name == "__round__"
                                else (_TO_INT[name], self))
                return DERIVED.get(how_key(made), made) if DERIVED else made
            how = _FLOAT_ARITHMETIC.get(name)
            if name == "__abs__" and all(seen.floats for seen in self.uses):  # (``abs(lr)``: Python's at each call)
                return TracedFloat(method(self), self.uses, ("math.fabs", self))
            if name in _UNARY:
                return self if name == "__pos__" else TracedFloat(method(self), self.uses, ("neg", self, None))
            other = args[0] if args else None
            if name in ("__lt__", "__gt__") and type(other) is TracedFloat and all(seen.floats for seen in self.uses) \
                    and all(seen.floats for seen in other.uses):  # (``lo > hi``: exactly ``lo - hi > 0``, nan and inf too)
                uses = self.uses + tuple(u for u in other.uses if u not in self.uses)
                self = TracedFloat(float.__sub__(self, other), uses, ("sub", self, other))
                other, args = 0.0, (0.0,)
            if (name in _COMPARE and type(other) in (int, float) or name == "__bool__") and all(
                    seen.floats for seen in self.uses):  # (``if lr > 0.5:``; ``k * 0.5 > 2`` an int's use)
                outcome = method(self, *args)
                for seen in self.uses:  # (guarded as a condition on the argument: traced_floats.float_guards)
                    seen.compared.append(("__ne__", 0.0, outcome, self) if name == "__bool__" else
                                         (name, other, outcome, self))
                return outcome
            if name in _PYTHON_COMPUTED and args and type(other) in (int, float) and len(args) == 1 and all(
                    seen.floats for seen in self.uses):  # (of an int's ``k * 0.5``: no guard sees its errors)
                result = method(self, other)  # (``lr ** 0.5``, ``2 ** lr``, ``round(lr, 2)``)
                if type(result) is float:
                    return TracedFloat(result, self.uses, (_PYTHON_COMPUTED[name], other, self) if name == "__rpow__"
                                       else (_PYTHON_COMPUTED[name], self, other))
            if how is not None and (type(other) in (int, bool, float) and not (how[0] == "div" and (
                    other == 0 if not how[1] else not _divisor(self))) or type(other) is TracedFloat and (
                    how[0] != "div" or _divisor(other)) or type(other) is FloatInt and how[0] != "div" and all(
                    seen.floats for seen in other.uses)):  # (``2.0 / lr``: lr guarded nonzero; ``self.c * round(lr)``)
                uses = self.uses + tuple(u for u in getattr(other, "uses", ()) if u not in self.uses)
                return TracedFloat(method(self, int.__int__(other) if type(other) is FloatInt else other), uses,
                                   (how[0], other, self) if how[1] else (how[0], self, other))
            if type(other) is TracedInt and other.uses.active:  # (``lr * (it + 1)``: a float of both)
                if how is not None and how[0] != "div" and other.expr is not None and all(seen.floats for seen in self.uses):
                    return TracedFloat(method(self, int.__int__(other)), self.uses + (other.uses,),
                                       (how[0], other, self) if how[1] else (how[0], self, other))
                other.uses.append((name, user_frame()))  # (its digits read unseen)
            if not (name in _ARITHMETIC or name in ("__truediv__", "__rtruediv__") or name == "__pow__" and not isinstance(
                    other, np.ndarray)) or isinstance(other, _NUMBERS):  # (``lr ** x``: the tensor's ``pow`` takes lr)
                for seen in self.uses:  # (a tensor operand: its own method takes the float as an operand)
                    seen.append((name, user_frame()))
        return method(self, *args)
    use.__name__, use.__doc__ = name, f"float's ``{name}``, noting a use when the user's code calls it."
    return use


_NUMBERS = (int, float, complex, np.number)


def _divisor(f):
    """Whether traced float ``f`` may divide while traced (``lr / bc``): computed from float
    arguments, not 0 (Python's ZeroDivisionError), which its arguments' guards then check
    (``Uses.compared``: ``f != 0.0``)."""
    if float.__float__(f) == 0 or not all(seen.floats for seen in f.uses):
        return False
    for seen in f.uses:
        seen.compared.append(("__ne__", 0.0, True, f))
    return True

for _name in dir(float):
    if _name in _KEPT or _name == "fromhex":
        continue
    if type(getattr(float, _name)).__name__ == "getset_descriptor":
        read = _float_noting(_name, lambda self, n=_name: getattr(float.__float__(self), n))
        setattr(TracedFloat, _name, property(read))  # f.real, f.imag
    elif callable(getattr(float, _name)):
        setattr(TracedFloat, _name, _float_noting(_name, getattr(float, _name)))


def traced_operands(op, inputs, attrs):
    """``{position: expression}`` of an op's ``inputs`` that are traced ints (None: a plain int
    with one's value, :func:`traced`), and ``{position: traced float}`` of them (and the attribute
    of :data:`~.float_attributes.ATTRIBUTE_INPUTS`: ``add``'s ``alpha``, ``elu``'s ``alpha``,
    ``hardtanh``'s bounds...); a traced
    float inside an input (a list) or another attribute (a fill value) is a use of it: the graph
    takes it as a number."""
    found = {i: x for i, x in enumerate(inputs) if type(x) is TracedFloat or type(x) is FloatInt}
    for name in () if "scale" in attrs else ATTRIBUTE_INPUTS.get(op.name, ()):  # (selu's: fixed)
        if type(attrs.get(name)) is TracedFloat:
            found[name] = attrs[name]
    for value in (*(x for i, x in enumerate(inputs) if i not in found), *(v for k, v in attrs.items() if k not in found)):
        for x in _floats_in(value):
            if op.name == "Slice" and type(x) is FloatInt and all(seen.floats for seen in x.uses):
                INDEXED.append(x)  # (``x[:, :round(lr)]``: an int position at the next recording, closure_ints.py)
            for seen in x.uses:
                seen.append(("an op's attribute", user_frame()))
    came = {i: x.expr if type(x) is TracedInt else None for i, x in enumerate(inputs) if traced(x)}
    if op.name == "Slice" and inputs:
        _note_bounds(inputs[0], attrs.get("index"))
    for name, value in attrs.items():  # (``x[:min(k, 4)]``'s bound: its expression, dynamic._with_minmax)
        sized = [e for x in _floats_in(value, (TracedInt,)) for e in subexpressions(x.expr) if e in MINMAX]
        if sized:
            came[name] = _expressions(value)
            SIZED.extend((e, MINMAX[e]) for e in sized)
    return came, found


class Length(int):
    """A dim's length (or its negation) in :data:`BOUNDS`, with ``of``: ``(id of the tensor, dim)``,
    so that the length of an input's dynamic dim is its symbol (:func:`.dynamic_ints.minmax_sides`)."""

    def __new__(cls, value, x=None, dim=None):
        self = super().__new__(cls, value)
        self.of = (id(x), dim) if x is not None else None
        return self


def _note_bounds(x, index):
    """Notes in :data:`BOUNDS` the comparisons eager's slicing of ``x`` makes of each traced int
    bound of ``index`` (``x[:k]``): its sign (a negative one counts from the end) and whether it
    lies within the dim (one past it is clamped), as torch guards ``0 <= k <= n``: the real call's
    are the graph's range (:func:`.dynamic_ints.minmax_sides`), not a length that stops growing."""
    if type(index) is not tuple or Ellipsis in index or not hasattr(x, "shape"):
        return
    dims = [i for i in index if i is not None]
    for d, (i, n) in enumerate(zip(dims, x.shape)):
        for b in (i.start, i.stop) if type(i) is slice else ():
            if type(b) is TracedInt and b.expr is not None and b.uses.active:
                v = int.__int__(b)
                BOUNDS.append(("__ge__", 0, v >= 0, b.expr))
                BOUNDS.append(("__le__", Length(n, x, d), v <= n, b.expr) if v >= 0 else
                              ("__ge__", Length(-n, x, d), v >= -n, b.expr))


def _expressions(value):
    """``value`` (an op's attribute: tuples, lists, slices) with each traced int its expression."""
    if type(value) is TracedInt and value.expr is not None:
        return value.expr
    if type(value) in (tuple, list):
        return type(value)(_expressions(v) for v in value)
    if type(value) is slice:
        return slice(*(_expressions(v) for v in (value.start, value.stop, value.step)))
    return plain(value)


def _floats_in(value, kinds=(TracedFloat, FloatInt)):
    if type(value) in kinds:
        yield value
    elif type(value) in (tuple, list, dict, slice):
        for v in (value.values() if type(value) is dict else (value.start, value.stop, value.step)
                  if type(value) is slice else value):
            yield from _floats_in(v, kinds)


def traced(value):
    """Whether an op's operand is a traced int, or a plain int with the value one took in this
    recording (an autograd node saves an op's operands plain: ``t`` of ``x * t`` in its backward)."""
    return type(value) is TracedInt or type(value) is int and value in VALUES.value


def plain(value):
    """``value`` with each :class:`TracedInt` and :class:`TracedFloat` in it (in tuples, lists, dicts, slices) a plain
    int: what a graph records."""
    if type(value) is TracedInt or type(value) is FloatInt:
        return int.__int__(value)
    if type(value) is TracedFloat:
        return float.__float__(value)
    if type(value) in (tuple, list):
        return type(value)(plain(v) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # (a named tuple)
        return type(value)(*map(plain, value))
    if type(value) is dict:
        return {k: plain(v) for k, v in value.items()}
    if type(value) is slice:
        return slice(plain(value.start), plain(value.stop), plain(value.step))
    return value


def numbers_passed(frame, backward=False, holding=None):
    """Whether the call into ember that ``frame`` (ember's, making a tensor: a graph's constant)
    runs under may have been given a traced float's value: the outermost ember frame's
    parameters (the arguments the user's code passed, ``tensor([lr])``) hold a float or a float subclass, or
    an object other than a tensor, a number, a string or a container of those. ``loss.backward()``'s
    seed of ones, ``ones_like(x)``, ``zeros(3)`` are not: a 1.0 there is no traced float passed
    unseen (:func:`.traced_floats.note_unseen`). With ``backward``, an op run by the autograd
    engine may too (a node's saved operand). With ``holding`` (a class: :class:`FloatInt`), whether
    the parameters hold one (``x[:, :round(lr)]``; a module called is no such pass)."""
    while frame.f_back is not None and frame.f_back.f_code.co_filename.startswith(_EMBER):
        frame = frame.f_back
        if backward and frame.f_code.co_filename == _ENGINE:
            return True
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
    arguments = frame.f_locals  # (its parameters: ``*args``, ``**kwargs`` included)
    if holding is not None:
        return any(next(_floats_in(arguments.get(name), (holding,)), None) is not None for name in code.co_varnames[:count])
    return frame.f_back is None or not all(_plain_data(arguments.get(name), 0) for name in code.co_varnames[:count])


def _plain_data(value, depth):
    if value is None or type(value) in (bool, int, str, TracedInt) or hasattr(value, "_grad_fn"):
        return True  # (a tensor: its values are the graph's, not Python's)
    if type(value) in (tuple, list, set, frozenset) and depth < 3 and len(value) <= 64:
        return all(_plain_data(v, depth + 1) for v in value)
    if type(value) is dict and depth < 3 and len(value) <= 64:
        return all(_plain_data(v, depth + 1) for v in (*value, *value.values()))
    return type(value).__module__ in _PLAIN_MODULES and not isinstance(value, float)


_ENGINE = os.path.join(EMBER_DIR, "autograd", "engine.py")
_PLAIN_MODULES = {"ember._dtype", "ember._device", "ember._size", "ember._memory_format", "ember._layout"}
