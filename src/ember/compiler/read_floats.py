"""Floats the compiled function reads from a global, a closure cell or an object (``x *
cfg["lr"]``, ``x * CFG.lr``, ``x * self.cfg.lr``, ``self.base_lr * (it + 1)``) as inputs of a
graph, as torch 2.13 takes a changing float read there as a symbol after one recompile.

Each such float has a *path*: a root (``("global", i, name)``: a global of the ``i``-th user
function of the call, :func:`_functions`; ``("cell", i, j)``: a closure cell; ``("self",)``: the
object a bound method or a compiled module is called on; ``("arg", k)``: an argument object, list
or dict: a split function's piece takes ``vals = t.tolist()`` so) and steps into dicts, lists,
objects' ``__dict__``, modules' submodules and an optimizer's groups (``("item", "lr")``,
``("attr", "cfg")``, ``("module", "block")``, ``("group", 0)``: its float entries; a group write
of one, ``g["lr"] = g["lr"] * 0.5``, is replayed by :mod:`.group_replay`, a write elsewhere by
:mod:`.path_writes`).
A path is resolved again from each call's function and arguments (:func:`read_values`), so a
global rebound to another dict of the same contents is read where it now is.

A recording after a read float changed (or one tracing int or float arguments: ``self.base_lr *
(it + 1)``, ``self.c * round(lr)``) puts a :class:`~.traced_ints.TracedFloat` at each such path (:func:`traced_reads`): an
argument after the call's own (position ``len(arguments) + j``) that the machinery of
:mod:`.traced_floats` takes as an input where Python did not use it. The path gets its value
back after the recording; one the call wrote is a use (its value guarded: a graph per value).
The guards of the graph then take any float at those paths (:func:`lifted_capture`: the value
there guarded as :class:`LeafGuard`, with the comparisons Python made of it).
"""
import inspect
import types

from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from .closure_ints import extra_ints
from .contents import held_contents
from .group_writes import READ
from .side_effects import plain_object, user_code
from .traced_floats import any_float
from .traced_ints import TracedFloat

__all__ = ["float_reads", "read_values", "traced_reads", "restore_reads", "PLACED", "REPLAYED", "LiftedFloat", "LeafGuard",
           "Reads", "lifted_capture", "optimizer_of"]

_DEPTH, _MOST = 3, 64  # (steps into containers; paths at most)


def _functions(fn):
    """``(self or None, [user functions])``: the object ``fn`` is bound to and the user functions
    its call runs (the function, a module's ``forward``, and the user functions their globals
    hold, two levels down: ``helper(x)`` reading ``cfg["lr"]``)."""
    bound = getattr(fn, "__self__", None)
    inner = inspect.unwrap(getattr(fn, "__func__", fn))
    found = [inner] if type(inner) is types.FunctionType and user_code(inner) else []
    if isinstance(bound, Module):
        forward = getattr(type(bound).forward, "__func__", type(bound).forward)
        found += [forward] if type(forward) is types.FunctionType and user_code(forward) else []
    level = found
    for _ in range(2):
        level = [g for f in level for g in map(f.__globals__.get, f.__code__.co_names)
                 if type(g) is types.FunctionType and user_code(g)]
        level = [g for g in dict.fromkeys(level) if g not in found][:16]
        found = found + level
    return bound, found


def _roots(fn, args, kwargs):
    """``[(root, value)]``: the globals and closure cells of the call's user functions, the bound
    object and the argument objects."""
    bound, functions = _functions(fn)
    for i, f in enumerate(functions):
        for name in f.__code__.co_names:
            if name in f.__globals__:
                yield ("global", i, name), f.__globals__[name]
        for j, cell in enumerate(f.__closure__ or ()):
            try:
                yield ("cell", i, j), cell.cell_contents
            except ValueError:
                pass
    if bound is not None:
        yield ("self",), bound
    for k, a in enumerate((*args, *kwargs.values())):
        if isinstance(a, Module) or plain_object(a) or type(a) in (list, dict):  # (a piece's ``vals = t.tolist()``)
            yield ("arg", k), a


def _steps(value):
    """The ``(step, item)`` of a dict (of an optimizer's group, its float entries), list, object,
    module or optimizer (its groups: ``("group", i)``)."""
    if type(value) is dict:
        group = "params" in value
        return [(("item", k), v) for k, v in value.items() if type(k) in (str, int) and (not group or type(v) is float)]
    if type(value) is list:
        return [(("item", k), v) for k, v in enumerate(value)]
    if isinstance(value, Optimizer):
        return [(("group", i), g) for i, g in enumerate(value.param_groups)]
    if isinstance(value, Module) or plain_object(value):
        found = [(("attr", k), v) for k, v in vars(value).items() if type(k) is str and not k.startswith("_")]
        if isinstance(value, Module):  # (a submodule's float: ``self.block.scale``)
            found += [(("module", k), v) for k, v in value._modules.items() if type(k) is str and v is not None]
        return found
    return []


def float_reads(fn, args, kwargs, kinds=(float,)):
    """``{path: value}`` of the floats the call of ``fn`` can read (see the module's docstring);
    ``kinds``: the types taken as floats (:mod:`.path_writes`' traced floats too)."""
    found, seen = {}, set()

    def walk(path, value, depth):
        if len(found) >= _MOST:
            return
        if type(value) in kinds:
            found[path] = value
        elif depth < _DEPTH and id(value) not in seen:
            seen.add(id(value))
            for step, item in _steps(value):
                walk(path + (step,), item, depth + 1)
    try:
        for root, value in _roots(fn, args, kwargs):
            walk((root,), value, 0 if root[0] in ("self", "arg") or type(value) in kinds else 1)
    except Exception:  # (an object whose __dict__ cannot be read: nothing taken)
        return {}
    return found


def _resolve(path, fn, args, kwargs):
    """``(container, key)`` holding the value at ``path`` (a dict, a list or a cell, ``key``
    None for a cell); ``fn``: the compiled function or its :func:`_functions`."""
    root, (bound, functions) = path[0], fn if type(fn) is tuple else _functions(fn)
    if root[0] == "global":
        holder, key = functions[root[1]].__globals__, root[2]
    elif root[0] == "cell":
        holder, key = functions[root[1]].__closure__[root[2]], None
    else:
        holder, key = None, None
        value = bound if root[0] == "self" else (*args, *kwargs.values())[root[1]]
    for kind, name in path[1:]:
        if holder is not None:
            value = holder.cell_contents if key is None else holder[key]
        holder, key = (vars(value), name) if kind == "attr" else (value._modules, name) if kind == "module" \
            else (value.param_groups, name) if kind == "group" else (value, name)
    return holder, key


def optimizer_of(path, fn, args, kwargs):
    """The optimizer whose group holds the float at ``path`` (``(..., ("group", i), ("item", key))``), or None."""
    if len(path) < 3 or path[-2][0] != "group":
        return None
    holder, key = _resolve(path[:-2], fn, args, kwargs)
    return holder.cell_contents if key is None else holder[key]


def _get(path, fn, args, kwargs):
    holder, key = _resolve(path, fn, args, kwargs)
    return holder.cell_contents if key is None else holder[key]


def _put(path, fn, args, kwargs, value):
    holder, key = _resolve(path, fn, args, kwargs)
    if key is None:
        holder.cell_contents = value
    else:
        holder[key] = value


ABSENT = object()  # (a path's value before a call that made it: path_writes)


def put_or_delete(path, fn, args, kwargs, value):
    """Puts ``value`` at ``path``, or deletes its key where ``value`` is :data:`ABSENT`."""
    if value is not ABSENT:
        return _put(path, fn, args, kwargs, value)
    holder, key = _resolve(path, fn, args, kwargs)
    del holder[key]


def read_values(paths, fn, args, kwargs, extras=None):
    """The ints in the closure cells of ``fn`` and those derived (positions right after the arguments,
    :mod:`.closure_ints`; the first ``extras``, as many as the recording had: those derived since come
    after), then the floats at ``paths`` in this call; None where one is not there or not a float (the
    guards checked them: a graph of other objects' code, ``rebind.py``, may meet another layout)."""
    cells = tuple(extra_ints(fn, (*args, *kwargs.values()))[:extras])
    if not paths:
        return cells
    try:
        functions = _functions(fn)
        values = tuple([_get(p, functions, args, kwargs) for p in paths])
    except (LookupError, AttributeError, TypeError, ValueError):
        return None
    return cells + values if all(type(v) is float for v in values) else None


def _key(value):
    return repr(value) if type(value) is float else None


def changed_reads(seen, now, static, all_floats, written=frozenset()):
    """The paths of ``now`` (:func:`float_reads` of this call) to trace: those whose value differs
    from ``seen`` (the last recording's) or that a recording saw written (``written``:
    :mod:`.path_writes`), or all (``all_floats``: int or float arguments are traced), but those in
    ``static`` (found used)."""
    return [p for p, v in now.items() if p not in static
            and (all_floats or p in written or p in seen and _key(seen[p]) != _key(v))]


PLACED = set()  # ids of the traced floats traced_reads put, until restore_reads (dynamic_ints.plain_ints leaves them)
REPLAYED = set()  # ids of the floats path_writes and group_replay put where the call wrote one a replay repeats: no use


def traced_reads(paths, fn, args, kwargs, first, uses, world):
    """Puts a traced float at each of ``paths`` (position ``first + j``) traced (``uses[first +
    j]``: its :class:`~.traced_ints.Uses`); returns ``[(path, traced float, value)]`` for
    :func:`restore_reads`. What ``world`` (the call's :class:`~.guards.World`) compares of the
    lists, dicts and objects its modules hold is read again (a dynamic recording checks it). One
    that cannot be put there is a use (the recording reads its value)."""
    put = []
    for j, path in enumerate(paths):
        if first + j not in uses:
            continue
        try:
            value = _get(path, fn, args, kwargs)
            if type(value) is float:
                traced = TracedFloat(value, (uses[first + j],), ("argument", first + j))
                _put(path, fn, args, kwargs, traced)
                put.append((path, traced, value))
                PLACED.add(id(traced))
                continue
        except (LookupError, AttributeError, TypeError, ValueError):
            pass
        uses[first + j].append(("not put as a traced float", repr(path)))
    _held_again(world, put)
    return put


def _held_again(world, put):
    if put and getattr(world, "held_lists", None):
        world.held_lists = [(v, held_contents(v)) for v, _ in world.held_lists]


def restore_reads(put, fn, args, kwargs, world):
    """Gives each path of ``put`` its value back; a path the call wrote keeps what it wrote (a
    plain float for a traced one), and its float is a use."""
    for path, traced, value in reversed(put):
        PLACED.discard(id(traced))
        now = _get(path, fn, args, kwargs)
        if now is traced:
            _put(path, fn, args, kwargs, value)
            continue
        if id(now) in REPLAYED:  # (a write each replay repeats: path_writes, group_replay)
            REPLAYED.discard(id(now))
            continue
        if type(now) is TracedFloat:
            _put(path, fn, args, kwargs, float.__float__(now))
        for seen in traced.uses:
            seen.append(("written by the call", repr(path)))
    REPLAYED.clear()
    _held_again(world, put)


class LiftedFloat(float):
    """A float put at a path while the guards of a graph taking it as an input are made
    (:func:`relaxed`): :func:`~.contents.baked` gives its :class:`LeafGuard`."""

    def __new__(cls, value, guard):
        made = super().__new__(cls, value)
        made.guard = guard
        return made


class LeafGuard(tuple):
    """The guard of a float read as a graph input, where :func:`~.contents.baked` gives ``(float,
    value)``: equal to that of every float (nan, inf, -0.0 too) that ``any`` (a
    :class:`~.traced_floats._AnyFloat`: beyond float32's range or not, comparisons) takes."""

    def __new__(cls, any_float):
        made = super().__new__(cls, (float, any_float))
        made.any = any_float
        return made

    def __eq__(self, other):
        if type(other) is LeafGuard:
            return other.any is self.any or repr(other.any) == repr(self.any)
        return type(other) is tuple and 2 <= len(other) <= 3 and other[0] is float and self.any == (float, other[1])

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __repr__(self):
        return f"({self.any!r})"


class Reads:
    """A compiled function's read floats: their values at its last recording (``seen``, see
    :func:`float_reads`), the paths found used (``static``: not traced again) and those a
    recording saw written with a plain float (``written``: traced by the next, :mod:`.path_writes`)."""

    def __init__(self):
        self.seen, self.static, self.written = {}, set(), set()


def lifted_capture(capture, reads, fn, args, kwargs, facts, ints_traced, facts_of):
    """``capture(positions, paths)`` (:func:`~.dynamic_ints.float_capture` of the call with the
    floats at ``paths`` traced as the arguments at ``positions``) with the paths whose float
    changed since the last recording (all, ``ints_traced``: int or float arguments are traced),
    ``reads`` a :class:`Reads`: its
    ``(result, capture, shape, static, symbols, facts)``, the capture's ``float_reads`` the paths,
    ``symbols`` without theirs, ``facts`` (this call's) those of ``facts_of()`` (a snapshot) made
    with the paths Python did not use guarded as any float (:class:`LeafGuard`) where any was traced."""
    now = float_reads(fn, args, kwargs)
    paths = changed_reads(reads.seen, now, reads.static, ints_traced, reads.written)
    arguments = (*args, *kwargs.values())  # (then the cells' and derived ints: closure_ints.py)
    reads.seen, first = now, len(arguments) + len(extra_ints(fn, arguments))
    result, cap, shape, static, symbols = capture([first + j for j in range(len(paths))], paths)
    reads.written.update(getattr(cap, "floats_written", ()))
    lifted = {p: symbols.pop(first + j) for j, p in enumerate(paths) if first + j in symbols}
    reads.static.update(p for p in paths if p not in lifted)
    # (a group's float used, or compared: ``if lr > 0.05``, guarded by value, its guards being the group's)
    READ.update(filter(None, [optimizer_of(p, fn, args, kwargs) for p in paths if lifted.get(p, True)]))
    for made in (cap, static):
        if made is not None:
            made.float_reads, made.extras = tuple(paths), first - len(arguments)
    if lifted:
        facts = _relaxed({p: any_float(now[p], conds) for p, conds in lifted.items()}, now, fn, args, kwargs, facts_of,
                         getattr(cap, "path_writes", ()))
    return result, cap, shape, static, symbols, facts


def _relaxed(guards, values, fn, args, kwargs, facts_of, writes=()):
    """``facts_of()`` made with a :class:`LiftedFloat` of ``values`` (the call's start) at each path
    of ``guards`` (``{path: _AnyFloat}``) and the value at the call's start at each path the call
    wrote (``writes``: ``(path, how, value)``, :mod:`.path_writes`: ``self.n += 1`` guarded as it
    was, not as the call left it), the paths then given back what they held."""
    held = {path: _get(path, fn, args, kwargs) for path in [*guards, *(w[0] for w in writes)]}
    for path, _, old in writes:  # (a float traced or an int read there: the plain number)
        put_or_delete(path, fn, args, kwargs, old if old is ABSENT or type(old) in (int, float) else
                      int.__int__(old) if isinstance(old, int) else float.__float__(old))
    for path, guard in guards.items():
        _put(path, fn, args, kwargs, LiftedFloat(values[path], LeafGuard(guard)))
    try:
        return facts_of()
    finally:
        for path, value in held.items():
            _put(path, fn, args, kwargs, value)
