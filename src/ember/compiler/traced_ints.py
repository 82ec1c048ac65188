"""Int arguments followed through a recording, so that one graph can take the int as a symbol.

A dynamic graph may take an int argument as a size symbol (:mod:`.dynamic`): fitted from
recordings at a few values, it stands for every value. That holds only where the function's
Python never looks at the value: ``if k > 3:``, ``min(k, 8)``, ``d[k]``, ``f"{k}"`` take one
path per value, which a fit from a few values cannot see. While the function is recorded such an
argument is a :class:`TracedInt`: an int whose every method, called from the user's code,
notes a *use* (with the user's line), except arithmetic with ints (``k * 2 + 1``), whose result
is traced too. Called from ember's own code (an op taking ``k`` as its scalar operand) it is a
plain int. An int that was used keeps a graph per value (its guard is its value), as torch
specialises an int that Python inspects; one that only flowed into ops is a symbol, and where
the graph takes it only as a number (:func:`.dynamic_ints.int_ranges`) its new values need no
recording, where a size symbol's first call at each size is recorded and checked.

What it cannot see: Python's own code reading an int subclass's digits without its methods
(``range(k)``, ``seq[k]``, ``0.5 * k`` computed by the float). Those change the recording's
structure or constants between the probed values, so the fit specialises on them, except where
they happen to follow one polynomial at every probe (an arithmetic list indexed by ``k``).
"""
import os
import sys
import sysconfig

import numpy as np

from .structure import EMBER_DIR, user_frame

__all__ = ["TracedInt", "Uses", "TRACING", "VALUES", "plain", "traced", "note_type_reads"]

# the Uses being noted now (non-empty while a recording traces int arguments), and the values
# the traced ints of this recording took (an autograd node saves an op's operand as a plain int)
TRACING, VALUES = [], set()

_EMBER = EMBER_DIR + os.sep
_NUMPY, _STDLIB = os.path.dirname(np.__file__) + os.sep, sysconfig.get_paths()["stdlib"] + os.sep
# arithmetic whose result with an int is a polynomial of the operands: traced, not a use
_ARITHMETIC = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__"}
_UNARY = {"__neg__", "__pos__"}
_KEPT = {"__new__", "__init__", "__getattribute__", "__setattr__", "__delattr__", "__class__", "__init_subclass__",
         "__subclasshook__", "__reduce__", "__reduce_ex__", "__getnewargs__", "__sizeof__", "__dir__", "__doc__",
         "__getstate__"}


class Uses(list):
    """The uses noted of the traced ints of one argument: ``(method, "file:line: code")`` each;
    ``active`` while the function runs (outside a recording a traced int is a plain int)."""
    active = False


class TracedInt(int):
    """An int argument (or an int computed from it by ``+``, ``-``, ``*``) while the function
    is recorded; ``uses`` collects what the user's code did with it other than arithmetic."""

    def __new__(cls, value, uses):
        self = super().__new__(cls, value)
        self.uses = uses
        VALUES.add(value)
        return self


def _from_user():
    """Whether the traced int's method was called by the user's code: the caller, or the first
    caller outside NumPy and the standard library (which ember's own code calls too)."""
    frame = sys._getframe(2)
    while frame is not None:
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
                return TracedInt(method(self), self.uses)
            if name in _ARITHMETIC and type(args[0]) in (int, bool, TracedInt):
                return TracedInt(method(self, *args), self.uses)
            if not (name in _ARITHMETIC and not isinstance(args[0], (int, float, complex))):
                # (a tensor operand: NotImplemented, then the tensor's own method takes it as an operand)
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


# names whose reading sees a traced int's class, not int's (``type(k) is int``, ``k.__class__``):
# no method of the int runs, so a code reading one notes a use of every traced int
_TYPE_READS = {"type", "__class__"}


def note_type_reads(code):
    """Notes a use of each traced int being recorded where user code ``code`` (a frame's, on
    its call) names ``type`` or ``__class__``: ``type(k) is int`` would be False while recorded."""
    if _TYPE_READS.isdisjoint(code.co_names):
        return
    where = f"{code.co_filename}:{code.co_firstlineno}: {code.co_name} reads type() or __class__"
    for uses in TRACING:
        for seen in uses.values():
            if seen.active:
                seen.append(("type", where))


def traced(value):
    """Whether an op's operand is a traced int, or a plain int with the value one took in this
    recording (an autograd node saves an op's operands plain: ``t`` of ``x * t`` in its backward)."""
    return type(value) is TracedInt or type(value) is int and value in VALUES


def plain(value):
    """``value`` with each :class:`TracedInt` in it (in tuples, lists, dicts, slices) a plain
    int: what a graph records."""
    if type(value) is TracedInt:
        return int.__int__(value)
    if type(value) in (tuple, list):
        return type(value)(plain(v) for v in value)
    if type(value) is dict:
        return {k: plain(v) for k, v in value.items()}
    if type(value) is slice:
        return slice(plain(value.start), plain(value.stop), plain(value.step))
    return value
