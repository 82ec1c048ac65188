"""Ints taken as int arguments though the call does not pass them, so that one graph can take a
changing one as a symbol, as torch 2.13 does after one recompile: the ints in the compiled
function's own closure cells (``def f(x): return x[:n] * n`` inside a loop that changes ``n``; a
global int stays a graph per value, in torch too), and the ints Python makes of float arguments
that ember's code read as an index (``x[:, :round(lr)]``: *derived* ints, :data:`HOWS`).

Each is a *position* after the call's arguments (:attr:`~.guards.World.positions`: ``(*args,
*kwargs.values(), *cell ints, *derived ints)``, :func:`extra_ints`), guarded as ``argument k``
(:func:`~.guards.snapshot`), so the machinery of :mod:`.dynamic_ints` (automatic dynamic, the
probes, the ranges, binding the symbol at each call) works on it as on an int argument: a
recording puts its traced int (or a probe's value) into the cell, or has ``round(lr)`` give it
(:data:`~.traced_ints.DERIVED`) (:func:`put_cells`), and undoes that (:func:`restore_cells`).
Where the graph takes a cell's int as a symbol, the guard of the values read from globals and
closures takes any int in that cell (:func:`relaxed_cells`).
"""
import inspect
import types

from ..nn.modules.module import Module
from .float_constants import SWAPPED
from .traced_floats import _value, argument_positions
from .traced_ints import DERIVED, INDEXED, how_key, plain

__all__ = ["cell_ints", "extra_ints", "position_names", "note_indexed", "derived_from", "put_cells", "restore_cells", "relaxed_cells", "AnyInt", "CONSTANTS",
           "HOWS"]

CONSTANTS = "Python values read from globals and closures (also inside containers)"  # (guards.snapshot's fact)


# ``{code: [how]}``: the derived ints of a compiled function's code (:func:`.traced_ints.how_key` each), in order
HOWS = {}


def _function(fn):
    """The Python function a call of ``fn`` (a function, a bound method, or a module or its
    ``__call__``: its ``forward``) runs, or None."""
    owner = getattr(fn, "__self__", None)
    fn = type(fn).forward if isinstance(fn, Module) else type(owner).forward if isinstance(owner, Module) \
        and getattr(fn, "__name__", None) in ("__call__", "_call_impl", "forward") else fn
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    return fn if type(fn) is types.FunctionType else None


def _code(fn):
    """The code of the function a call of ``fn`` runs (:func:`_function`), the key of :data:`HOWS`:
    the user's own while a recording has swapped it (:data:`.float_constants.SWAPPED`); or None."""
    function = _function(fn) if fn is not None else None
    if function is None:
        return None
    return next((code for f, code in SWAPPED.value if f is function), function.__code__)


def extra_ints(fn, arguments):
    """The values at the positions after ``arguments`` (the call's ``(*args, *kwargs.values())``):
    the ints of :func:`cell_ints`, then the derived ints Python computes from the arguments (None
    where it raises, ``round(nan)``, or gives no int64, ``round(1e300)``: a graph of its own)."""
    found = [cell.cell_contents for cell in cell_ints(fn)]
    for how in HOWS.get(_code(fn), ()):
        try:
            value = _value(how, lambda k: plain(arguments[k]))  # (a recording's traced float: no use)
            found.append(value if type(value) is int and -2 ** 63 <= value < 2 ** 63 else None)
        except (ArithmeticError, ValueError, TypeError, LookupError):
            found.append(None)
    return found


def position_names(fn, args, kwargs):
    """What each position of a call of ``fn`` (``(*args, *kwargs.values(), *cell ints, *derived
    ints)``, :func:`extra_ints`) is, for a guard's reason: ``"argument 'lr'"`` (the signature's
    name, else ``args[i]``), ``"keyword 'k'"``, ``"closure int 'n'"``, ``"int of a float argument"``."""
    function, names = _function(fn), []
    if function is not None:
        skip = isinstance(fn, Module) or getattr(fn, "__self__", None) is not None  # (``self``)
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        names = [p.name for p in inspect.signature(function).parameters.values() if p.kind in kinds][skip:]
    found = [f"argument {names[i] if i < len(names) else f'args[{i}]'!r}" for i in range(len(args))]
    found += [f"keyword {k!r}" for k in kwargs]
    if function is not None and function.__closure__:
        cells = cell_ints(fn)
        found += [f"closure int {name!r}" for name, cell in zip(_code(fn).co_freevars, function.__closure__)
                  if any(cell is c for c in cells)]
    return found + ["int of a float argument"] * len(HOWS.get(_code(fn), ()))


def note_indexed(fn):
    """Takes the ints Python made of float arguments that ember's code read as an index in the
    recording just made (:data:`~.traced_ints.INDEXED`) as derived ints of ``fn``'s code."""
    code = _code(fn)
    if code is not None and INDEXED:
        hows = HOWS.setdefault(code, [])
        hows += [how for how in dict.fromkeys(map(how_key, INDEXED)) if how not in hows]
    INDEXED.clear()


def derived_from(fn):
    """The positions of the float arguments the derived ints of ``fn`` are computed from."""
    hows = HOWS.get(_code(fn), ())
    return set(argument_positions([(None, how) for how in hows]))


def cell_ints(fn):
    """``[cell]`` of the closure cells of ``fn`` (see :func:`_function`) holding an int (not a bool)."""
    fn = _function(fn)
    if fn is None or not fn.__closure__:
        return []
    found = []
    for cell in fn.__closure__:
        try:
            if type(cell.cell_contents) is int:
                found.append(cell)
        except ValueError:  # (an empty cell)
            pass
    return found


def put_cells(world, values):
    """Puts ``values`` (``{position: int}``) at the positions of ``world`` (a :class:`~.guards.World`)
    that are closure cells; returns ``[(cell, value put, value before)]`` for :func:`restore_cells`."""
    first, put = len(world.arguments), []
    hows = HOWS.get(_code(world.fn), ())
    for k, value in values.items():
        if first <= k < first + len(world.cells):
            cell = world.cells[k - first]
            put.append((cell, value, cell.cell_contents))
            cell.cell_contents = value
        elif k >= first:  # (a derived int: what Python's ``round(lr)`` gives in the recording)
            DERIVED[hows[k - first - len(world.cells)]] = value
            put.append((None, hows[k - first - len(world.cells)], None))
    return put


def restore_cells(put):
    """Gives each cell of ``put`` (:func:`put_cells`) its value back; a cell the call wrote keeps
    what it wrote, a use of the traced int put there (the graph keeps its value)."""
    for cell, value, before in reversed(put):
        if cell is None:
            DERIVED.pop(value, None)
        elif cell.cell_contents is value:
            cell.cell_contents = before
        elif hasattr(value, "uses"):
            value.uses.append(("written by the call", "a closure cell"))


class AnyInt(tuple):
    """The guard (:func:`~.contents.baked`) of a closure cell's int that a graph takes as a symbol:
    equal to that of any int (its value is bound and range-checked as ``argument k``)."""

    def __new__(cls):
        return super().__new__(cls, (int, "any"))

    def __eq__(self, other):
        return type(other) is AnyInt or type(other) is tuple and len(other) == 2 and other[0] is int

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __repr__(self):
        return "(any int)"


class _LiftedInt(int):
    """An int put into a cell while the guards of a graph taking it as a symbol are made: its
    :func:`~.contents.baked` guard is :class:`AnyInt`."""
    guard = AnyInt()


def relaxed_cells(facts, world, positions, facts_of):
    """``facts`` with the guard of the values read from globals and closures (:data:`CONSTANTS`)
    taking any int (:class:`AnyInt`) where ``facts_of()`` gives one while the cells at ``positions``
    (those the graph takes as symbols) hold a :class:`_LiftedInt` (the floats read there that a
    graph takes as inputs keep their guards, :mod:`.read_floats`)."""
    first = len(world.arguments)
    cells = [world.cells[k - first] for k in positions if first <= k < first + len(world.cells)]
    if not cells:
        return facts
    held = [cell.cell_contents for cell in cells]
    for cell, value in zip(cells, held):
        cell.cell_contents = _LiftedInt(value)
    try:
        fresh = dict(facts_of())
    finally:
        for cell, value in zip(cells, held):
            cell.cell_contents = value
    return [(name, _merged(value, fresh[name]) if name == CONSTANTS else value) for name, value in facts]


def _merged(old, lifted):
    if len(old) != len(lifted):  # (another walk: the values stay guarded, a graph per value)
        return old
    return tuple([new if type(new) is AnyInt else value for value, new in zip(old, lifted)])
