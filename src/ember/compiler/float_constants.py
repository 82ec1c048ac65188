"""A float constant on the left of a traced int in the user's code (``0.01 * (it + 1)``,
nanoGPT's ``learning_rate * (it + 1)``), traced as torch 2.13 traces it: a float of the int's symbol.

Python's ``float.__mul__`` reads an int subclass's digits in C, so a :class:`~.traced_ints.TracedInt`
on the right of a plain float cannot see the operator (:func:`.traced_reads.note_float_operands`
notes it as a use: a graph per value); so does an int Python made of a traced float (``0.5 *
round(lr)``, ``2.0 - math.floor(lr)``). While int or float arguments are traced, each user function about
to be called (a value its caller's code loads, the compiled function itself or a module's
``forward``) whose code loads a float constant, or a global holding a float, right before the
right operand of ``+``, ``-`` or ``*`` runs a copy of its code (:func:`swap_codes`) where that load
pushes a :class:`~.traced_ints.ConstFloat` of the same value (a closure's float too): its operator makes a traced float of
a traced int (``("mul", 0.01, it + 1)``, computed by Python at each call) or of such an int
(``("mul", 0.5, round(lr))``, as ``round(lr) * 0.5``) and gives every other
operand the plain float's result. The copy is the same length (a global's load and its inline
caches become a constant's load and ``NOP``s), so jumps, lines and exception tables stay; the
function gets its code back when the recording ends (:func:`restore_codes`), and the guards,
which read the function's own code, still guard the global. A global's or closure's
(:class:`LoadedFloat`) is read when its operator runs, as eager's load right before it
(``global LR; LR = LR * 0.5`` earlier in the function: the new value; one that a call in the
right operand writes, ``LR * (k + bump())``, would be read after the call, where eager's reads
it before). A local given a float constant once (``base = 0.25``), each read of it such a left
operand, holds the constant's :class:`ConstFloat` (its load rewritten, :func:`_local_constants`); an
attribute's float is read as a traced float where it changed (:mod:`.read_floats`).

A call of the built-in ``int`` (``int(lr)``) is rewritten alike: its load pushes :data:`TRACING_INT`,
which gives ``math.trunc`` of a traced float (a :class:`~.traced_ints.FloatInt`, an int Python
computes at each call, as torch 2.13 traces ``int(lr)``: Python's own ``int`` copies what
``__int__`` returns into a plain int), and calls ``int`` on anything else.
"""
import builtins
import dis
import math
import os
import sysconfig
import types

import numpy as np

from ..nn.modules.module import Module
from .patches import PerThread
from .structure import EMBER_DIR
from .traced_ints import TRACING, TRANSPARENT, ConstFloat, TracedFloat
from .traced_reads import loaded_values, operator_operands

__all__ = ["swap_callees", "swap_codes", "restore_codes", "SWAPPED", "TRACING_INT"]

SWAPPED = PerThread(list)  # (function, its own code) of each code swapped by this thread's recordings
_SIGNS = ("+", "-", "*")


_LOAD_CONST, _NOP, _PUSH_NULL = dis.opmap["LOAD_CONST"], dis.opmap["NOP"], dis.opmap["PUSH_NULL"]
try:  # (the inline caches after a global's load: 5 code units in Python 3.11, 4 in 3.12)
    _GLOBAL_CACHES = dis._inline_cache_entries[dis.opmap["LOAD_GLOBAL"]]
except (AttributeError, KeyError, IndexError, TypeError):
    _GLOBAL_CACHES = None  # (a global's site is then left as it is)
_SITES = {}  # code object -> [(offset, "const" or global name, value or None)]
_INT = ("builtin", "int")  # (a site's name: the built-in ``int`` called)


def _sites(code):
    """The loads of a float constant, a global (by name) or a closure's cell (``("closure", index)``)
    that are the left operand of ``+``, ``-``, ``*`` whose right operand reads a local (``0.01 * (it
    + 1)``), and the loads of the global ``int`` to call (:data:`_INT`)."""
    found = _SITES.get(code)
    if found is None:
        found = _SITES[code] = []
        if "int" in code.co_names and type(_GLOBAL_CACHES) is int and _GLOBAL_CACHES >= 2:
            found += [(i.offset, _INT, None) for i in dis.get_instructions(code)
                      if i.opname == "LOAD_GLOBAL" and i.argval == "int" and i.arg & 1]
        lefts = set()  # (the offsets of the locals' loads there)
        for left, right, _, op in operator_operands(code):
            if op.opname != "BINARY_OP" or op.argrepr not in _SIGNS or len(left) != 1 or left[0].arg >= 256 or not any(
                    i.opname in ("LOAD_FAST", "LOAD_DEREF") for i in right):
                continue
            ins = left[0]
            if ins.opname == "LOAD_FAST":
                lefts.add(ins.offset)
            elif ins.opname == "LOAD_CONST" and type(ins.argval) is float:
                found.append((ins.offset, "const", ins.argval))
            elif ins.opname == "LOAD_GLOBAL" and not ins.arg & 1 and type(_GLOBAL_CACHES) is int:
                found.append((ins.offset, ins.argval, None))
            elif ins.opname == "LOAD_DEREF" and ins.argval in code.co_freevars:  # (a closure's: ``base * (it + 1)``)
                found.append((ins.offset, ("closure", code.co_freevars.index(ins.argval)), None))
        found += _local_constants(code, lefts)
    return found


def _local_constants(code, lefts):
    """The loads of a float constant stored into a local (``base = 0.25``), the local's one store,
    where each read of it is the left operand of a site (at ``lefts``: ``base * (it + 1)``)."""
    found, instructions = [], list(dis.get_instructions(code))
    for name in set(code.co_varnames[code.co_argcount + code.co_kwonlyargcount:]) - set(code.co_cellvars):
        touches = [(k, i) for k, i in enumerate(instructions) if i.argval == name and "FAST" in i.opname]
        stores = [k for k, i in touches if i.opname == "STORE_FAST"]
        if len(stores) == 1 and stores[0] and all(i.opname == "STORE_FAST" or i.opname == "LOAD_FAST" and i.offset in lefts
                                                  for _, i in touches) and len(touches) > 1:
            const = instructions[stores[0] - 1]
            if const.opname == "LOAD_CONST" and type(const.argval) is float and const.arg < 256:
                found.append((const.offset, "const", const.argval))
    return found


def _rewritten(fn):
    """The code of function ``fn`` with each site's load (:func:`_sites`) pushing a
    :class:`ConstFloat`, or None where none holds a float now."""
    code, globals_ = fn.__code__, fn.__globals__
    consts, raw = list(code.co_consts), bytearray(code.co_code)
    for offset, name, value in _sites(code):
        where = None
        if name == _INT:  # (``int(lr)``: NULL, then TRACING_INT, where the global ``int`` is the built-in)
            if globals_.get("int", builtins.__dict__.get("int")) is not int or len(consts) >= 256:
                continue
            consts.append(TRACING_INT)
            raw[offset:offset + 2 + 2 * _GLOBAL_CACHES] = bytes((_PUSH_NULL, 0, _LOAD_CONST, len(consts) - 1)) + bytes(
                (_NOP, 0)) * (_GLOBAL_CACHES - 1)
            continue
        if type(name) is tuple:  # (a closure's cell: its value now)
            where = fn.__closure__[name[1]] if fn.__closure__ else None
            value, name = getattr(where, "cell_contents", None), code.co_freevars[name[1]]
        elif name != "const":
            where, value = globals_, globals_.get(name)
        if type(value) is not float:
            continue
        if len(consts) >= 256:
            break
        consts.append(ConstFloat(value) if where is None else LoadedFloat(value, where, name))
        raw[offset:offset + 2] = bytes((_LOAD_CONST, len(consts) - 1))
        if type(where) is dict:
            raw[offset + 2:offset + 2 + 2 * _GLOBAL_CACHES] = bytes((_NOP, 0)) * _GLOBAL_CACHES
    if len(consts) == len(code.co_consts):
        return None
    return code.replace(co_code=bytes(raw), co_consts=tuple(consts))


class _TracingInt:
    """The built-in ``int`` as a rewritten code calls it (:func:`_rewritten`): ``int(lr)`` of a
    traced float is ``math.trunc(lr)`` (the same int, the same errors for nan and inf), which
    Python computes at each call of the graph; any other call is ``int``'s."""
    makes_int = True  # (traced_reads._to_int: ``7.0 // int(lr)``, a float's operator, is a use of lr)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and type(args[0]) is TracedFloat:
            return math.trunc(args[0])  # (its method sees the user's frame: TRANSPARENT)
        return int(*args, **kwargs)

    def __repr__(self):
        return "<class 'int'>"


TRACING_INT = _TracingInt()
TRANSPARENT.add(_TracingInt.__call__.__code__)


class LoadedFloat(ConstFloat):
    """The :class:`ConstFloat` of a global's or closure cell's load (``where``: the function's
    globals or the cell; ``name``): its operator reads the value :meth:`now`, as eager's load
    right before it would."""

    def __new__(cls, value, where, name):
        made = super().__new__(cls, value)
        made.where, made.name = where, name
        return made

    def now(self):
        """The name's value now (Python's NameError where it has none)."""
        if type(self.where) is dict:
            if self.name in self.where:
                return self.where[self.name]
            raise NameError(f"name '{self.name}' is not defined")
        try:
            return self.where.cell_contents
        except ValueError:
            raise NameError(f"cannot access free variable '{self.name}' where it is not associated with a value "
                            "in enclosing scope") from None


def _user_function(value):
    """The Python function ``value`` (a function, a bound method) runs, where it is the user's
    code: not ember's, NumPy's or the standard library's."""
    fn = getattr(value, "__func__", value)
    name = fn.__code__.co_filename if type(fn) is types.FunctionType else _NUMPY
    if name.startswith(EMBER_DIR) or name.startswith(_NUMPY) or name.startswith(_STDLIB) and "-packages" not in name:
        return None
    return fn


_NUMPY, _STDLIB = os.path.dirname(np.__file__) + os.sep, sysconfig.get_paths()["stdlib"] + os.sep


def swap_codes(values):
    """Gives each user function among ``values`` (functions, bound methods, modules' ``forward``)
    whose code has a site (:func:`_sites`) the rewritten code until :func:`restore_codes`; never raises."""
    for value in values:
        try:
            for fn in map(_user_function, (value, *_forwards(value))):
                if fn is None or not _sites(fn.__code__) or any(f is fn for f, _ in SWAPPED.value):
                    continue
                made = _rewritten(fn)
                if made is not None:
                    SWAPPED.append((fn, fn.__code__))
                    fn.__code__ = made
        except Exception:
            pass


def _forwards(value):
    """The ``forward`` of a module ``value`` is, or whose method it is (``module.__call__``), as
    its call runs it."""
    for owner in (value, getattr(value, "__self__", None)):
        if isinstance(owner, Module):
            yield getattr(owner, "forward", None)


def restore_codes(count):
    """Gives the functions swapped since :data:`SWAPPED` held ``count`` entries their code back."""
    while len(SWAPPED.value) > count:
        fn, code = SWAPPED.value.pop()
        fn.__code__ = code


def swap_callees(frame):
    """:func:`swap_codes` of the values user code ``frame`` (being called) loads (``get_lr``,
    ``self.schedule``), while int or float arguments are traced."""
    if any(TRACING.value):
        try:
            swap_codes(list(loaded_values(frame)))
        except Exception:
            pass
