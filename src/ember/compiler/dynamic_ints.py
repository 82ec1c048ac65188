"""Dynamic int arguments (:mod:`.dynamic`): recording with them traced (:mod:`.traced_ints`),
the range of one that sizes a value, and the ints a dynamic graph returns."""
import builtins
import inspect
import math
from collections import deque

import numpy as np

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from .capture import capture
from .closure_ints import note_indexed, put_cells, restore_cells
from .graph import instances_in
from .breaks import unobserved
from .contents import LARGE
from .group_writes import watched_groups
from .float_constants import SWAPPED, restore_codes, swap_codes
from .side_effects import GLOBALS_SEEN, global_names, plain_object, user_class
from .structure import same_container
from .symbolic import Cond, Expr, evaluate, free_symbols, symbol
from .probe_state import State
from .read_floats import PLACED, restore_reads, traced_reads
from .returned_floats import mark_returned
from .traced_floats import argument_positions, float_conditions, note_unseen
from .traced_ints import BOUNDS, COMPARISONS, INT_POSITIONS, MADE, MINMAX, SAVED, SIZED, TRACING, VALUES, FloatInt, TracedFloat, TracedInt, Uses, plain
from .traced_math import patch_math, patch_minmax, unpatch_math

__all__ = ["ARG", "int_symbols", "static_ints", "traced_capture", "int_ranges", "returned_ints", "fit_returned",
           "plain_ints", "compared_range", "Ranges", "float_capture", "minmax_atoms",
           "minmax_sides", "picked_ranges", "fitted_at", "traced_again"]

# ``dims`` keys are (flat tensor input index, dim), or (ARG, position in (*args, *kwargs.values()))
# for a scalar int argument (an IntVar of a spec, or an int taken as a symbol: int_symbols)
ARG = "argument"
_TRACED = (TracedInt, FloatInt, TracedFloat)


def traced_capture(fn, args, kwargs, world, fullgraph, joint, uses, values, symbols):
    """:func:`~.capture.capture` with the int arguments ``values`` (``{position in (*args,
    *kwargs.values()): int}``) passed as traced ints (:class:`~.traced_ints.TracedInt`) noting
    into ``uses[position]``, each the expression ``symbols[position]``. The capture's
    ``returned_exprs`` are the expressions of the ints returned (None where one did not come
    traced: Python computed it), ``int_symbols`` the names of ``symbols``."""
    if not uses:
        return capture(fn, args, kwargs, world, fullgraph, joint)
    args, names = list(args), list(kwargs)
    kwargs, traced = dict(kwargs), {k: TracedInt(value, uses[k], symbols[k]) for k, value in values.items()}
    for k, value in traced.items():
        if k < len(args):
            args[k] = value
        elif k < len(args) + len(names):
            kwargs[names[k - len(args)]] = value
    put = put_cells(world, traced)  # (beyond the arguments: the closure cells' ints, closure_ints.py)
    for seen in uses.values():
        seen.active = True
    TRACING.append(uses)
    INT_POSITIONS.update((e.args[0], k) for k, e in symbols.items())
    patched, swapped = patch_minmax(), len(SWAPPED)  # (``min(k, 8)``: a traced int)
    try:
        swap_codes((fn,))  # (``0.01 * (k + 1)``: float_constants.py)
        result, cap = capture(fn, tuple(args), kwargs, world, fullgraph, joint)
        note_unseen(cap)  # (``k * 0.5`` passed on unseen: a use of ``k``)
        # a returned int computed from a traced one is the user's plain int (passed back in as
        # ``step`` it would be guarded as an object, by identity), in replays too
        cap.returned_exprs = [v.expr if type(v) is TracedInt else None for v in returned_ints(cap.output)]
        cap.int_symbols = {e.args[0] for e in symbols.values()}
        cap.minmax = list(SIZED)  # (``x[:min(k, 4)]``: which operand it took, guarded unless probed both)
        cap.minmax_made, cap.bounds = list(MINMAX), list(BOUNDS)
        cap.output = plain(mark_returned(cap.output))  # (a float of float arguments: computed at each call)
        return plain(result), cap
    finally:
        restore_codes(swapped)
        unpatch_math(patched, builtins)
        TRACING.remove(uses)
        for e in symbols.values():
            INT_POSITIONS.pop(e.args[0], None)
        VALUES.clear()
        MINMAX.clear()
        SIZED.clear()
        BOUNDS.clear()
        for seen in uses.values():
            seen.active = False
        restore_cells(put)
        plain_ints(world)  # (``self.pos = k``, ``seen.append(k)``: a plain int kept there)


def plain_ints(world):
    """Puts a plain number in place of each traced int or float (:class:`~.traced_ints.TracedInt`,
    :class:`~.traced_ints.TracedFloat`: a use of it, its value guarded) that a recording left
    where the call can reach: in the globals and closure cells the function names
    (and the globals of the user code it ran),
    in its argument objects, modules and optimizers, and in the lists, dicts, sets, tuples,
    plain objects and user classes they hold, up to four levels down and :data:`~.contents.LARGE`
    items long (``self.n = k``, ``seen.append(k + 1)``, ``Config.lr = lr``: ``type(obj.n) is int``
    after the call, as after eager's; a traced float left there named its argument's position, and
    a later recording reading it took that recording's argument for it)."""
    fn = inspect.unwrap(getattr(world.fn, "__func__", world.fn))
    code, seen = getattr(fn, "__code__", None), set()

    def fixed(value, depth):  # the value to put back: a traced number plain, a tuple rebuilt, else itself
        if type(value) in _TRACED:
            if id(value) in PLACED:  # (a float read there, put back by restore_reads: no store)
                return value
            for use in value.uses if type(value) is TracedFloat else ():
                use.append(("stored", "a traced float kept where the call can reach it"))  # (its value guarded)
            return plain(value)
        if depth > 4 or id(value) in seen or isinstance(value, (Tensor, str, bytes, int, float)) or value is None \
                or isinstance(value, type) and not user_class(value) \
                or isinstance(value, (list, deque, dict, set)) and len(value) > LARGE:  # (a data set is not walked)
            return value
        seen.add(id(value))
        if isinstance(value, tuple):
            items = [fixed(v, depth + 1) for v in value]
            if all(a is b for a, b in zip(items, value)):
                return value
            return same_container(value, items)
        target = value
        if isinstance(value, (list, deque)):
            slots = list(enumerate(value))
        elif isinstance(value, dict):
            if any(type(key) in _TRACED for key in value):  # (``d[k] = ...``: the keys too, in order)
                items = list(value.items())
                value.clear()  # (dict's update: a Counter's would count the pairs)
                dict.update(value, [(plain(key), v) for key, v in items])
            slots = list(value.items())
        elif isinstance(value, set):
            traced = [v for v in value if type(v) in _TRACED]
            value.difference_update(traced)
            value.update(map(plain, traced))
            return value
        elif isinstance(value, type):  # (a user's class: ``Config.lr = lr``)
            slots = [(key, v) for key, v in vars(value).items() if not key.startswith("__")]
            target = _ClassSlots(value)
        elif isinstance(value, (Module, Optimizer)) or plain_object(value):
            target = vars(value)  # (a plain object's __dict__ written: no property or __setattr__ runs)
            slots = list(target.items())
        else:
            return value
        for key, item in slots:
            new = fixed(item, depth + 1)
            if new is not item:  # (a module's attribute set as its own code would: its state version counts)
                setattr(value, key, new) if isinstance(value, Module) else target.__setitem__(key, new)
        return value
    if code is not None:
        for name in dict.fromkeys(global_names(code)):
            if name in fn.__globals__:
                new = fixed(fn.__globals__[name], 0)
                if new is not fn.__globals__[name]:
                    fn.__globals__[name] = new
        for cell in fn.__closure__ or ():
            try:
                new = fixed(cell.cell_contents, 0)
            except ValueError:  # an empty cell
                continue
            if new is not cell.cell_contents:
                cell.cell_contents = new
    for names, name in GLOBALS_SEEN:  # (the other functions' globals: ``other.SEEN.append(k)``)
        new = fixed(names[name], 0) if name in names else None
        if new is not None and new is not names[name]:
            names[name] = new
    for root in (*world.arguments, *world.roots, *world.all_modules, *world.optimizers):
        if type(root) not in _TRACED:  # (an argument traced itself: no store)
            fixed(root, 0)


class _ClassSlots:
    """A class's attributes written as ``plain_ints`` writes a ``__dict__`` (a class's is read-only)."""

    def __init__(self, cls):
        self.cls = cls

    def __setitem__(self, key, value):
        type.__setattr__(self.cls, key, value)


class Ranges(dict):
    """``{symbol: (lo, hi)}`` with ``conds``: the conditions on the symbols (:class:`~.symbolic.Cond`)
    that Python's comparisons other than a range took (``k == 3`` False: ``i0 != 3``; ``k % 2 ==
    0``), which the probes keep to and the guards check (:func:`.guards.bind`)."""

    def __init__(self, items=(), conds=()):
        super().__init__(items)
        self.conds = list(conds)


_NEGATED = {"__lt__": ">=", "__le__": ">", "__gt__": "<=", "__ge__": "<", "__eq__": "!=", "__ne__": "=="}
_HOLDS = {"__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=", "__eq__": "==", "__ne__": "!="}


def compared_range(compared, was, conds=None):
    """The range ``(lo, hi)`` (``hi`` None: unbounded) of the values for which each comparison
    of ``compared`` (:attr:`.traced_ints.Uses.compared`) has its outcome, within ``was``: the
    values a graph recorded at one of them holds for (``k > 3`` False: ``(-inf, 3)``; ``2 * k +
    1 > 7`` False: ``(-inf, 3)``). A comparison that is no range of the symbol (``k == 3`` False,
    ``k % 2 == 0``, of two symbols) is appended to ``conds`` as the :class:`~.symbolic.Cond`
    that held."""
    lo, hi = was
    for name, c, outcome, expr in compared:
        op = _HOLDS[name] if outcome else _NEGATED[name]
        if isinstance(c, Expr):  # (of two symbols: ``x[:k]``'s ``i0 <= s0``, :func:`minmax_sides`)
            conds.append(Cond(op, expr, c))
            continue
        expr = _one_side(op, expr, c)
        if expr is None:  # (``min(k, 4) < 0``: k < 0 alone decides it, 4 < 0 holding never)
            continue
        line = _affine(expr)
        if line is None or op in ("==", "!="):
            if conds is not None:
                conds.append(Cond(op, expr, c))
            continue
        a, b = line
        # a*s + b >= m (or <= m), the strict ones as ints: a*s >= m - b
        m = c + 1 if op == ">" else c - 1 if op == "<" else c
        up = (op in (">", ">=")) == (a > 0)  # a lower bound on s
        if up:
            lo = max(lo, -((b - m) // a))  # ceil((m - b) / a)
        else:
            bound = (m - b) // a
            hi = bound if hi is None else min(hi, bound)
    return lo, hi


def minmax_atoms(cap):
    """The ``min``/``max`` expressions of the traced ints a recording made (``min(i0, 4)``, one
    each): what :func:`.size_fits.fit` may fit its sizes with (``x[:min(k, 4)]``'s length,
    ``ones(min(k, 4))``'s)."""
    return list({e.key(): e for e in getattr(cap, "minmax_made", ()) if e.op in ("min", "max")}.values())


def fitted_at(fitted, point, cap):
    """Whether what :func:`.dynamic._unify` fitted (``(plan, sources, output)``) gives, at
    ``point`` (``{symbol: int}``), the ints of recording ``cap``'s nodes (their args, attributes
    and shapes) and its constant tensors rebuilt per call: a fit over other recordings may be
    another expression (``min(i0, 3)`` where the graph holds ``3``)."""
    plan, sources, _ = fitted
    want = [evaluate(entry[1:], point) for entry in plan]
    if list(_ints(want)) != list(_ints([(n.args, n.kwargs, n.meta.get("shape")) for n in cap.graph.nodes])):
        return False
    return all(np.array_equal(const.build(point), cap.sources[k][1]) for k, (_, const) in sources)


def _ints(value):
    if type(value) is int:
        yield value
    elif isinstance(value, (tuple, list, slice, dict)):
        for v in (value.start, value.stop, value.step) if isinstance(value, slice) else \
                value.values() if isinstance(value, dict) else value:
            yield from _ints(v)


def minmax_sides(cap, values, ranges, dims=None):
    """Narrows ``ranges`` (:class:`Ranges`), before the probes, to the values for which the real
    call's recording ``cap`` compared as it did: each slice bound's comparisons (``cap.bounds``:
    ``0 <= k <= 6`` of ``x[:k]``, :data:`~.traced_ints.BOUNDS`; ``i0 <= s0``, a condition, where
    the dim is one of ``dims``, ``{(id of an input, dim): (size, symbol)}``, as torch's guard
    ``k <= s0``; where it is another tensor's of such a size, below each symbol of that size), and
    the side of the corner of each ``min``/``max`` an op's attribute took (``cap.minmax``) where
    the probes, at values >= 2, would not reach the call otherwise: its symbol's value
    (``values``: ``{symbol: int}``) is below 2 (``x[:min(k, 2)]`` at k = -3) or it compares two
    symbols (``min(k, j)``)."""
    conds = [cond for _, cond in getattr(cap, "minmax", ()) if len(free_symbols(cond[3])) > 1 or all(
        values.get(n, 2) < 2 for n in free_symbols(cond[3]))]
    dims, named = dims or {}, {}  # (two of one size: which one is not known, so the bound is below both)
    for v, n in dims.values():
        named.setdefault(v, []).append(symbol(n))
    bounds = [(name, e if c > 0 else -e, *rest) if e is not None else (name, c, *rest)
              for name, c, *rest in getattr(cap, "bounds", ())
              for e in ([symbol(dims[c.of][1])] if getattr(c, "of", None) in dims else named.get(abs(c), [None]))]
    for cond in (*bounds, *conds):
        names = free_symbols(cond[3])
        if names and all(n in values for n in names):
            ranges[names[0]] = compared_range([cond], ranges.get(names[0], (-math.inf, None)), ranges.conds)


def picked_ranges(minmax, points, symbols, ranges):
    """Narrows ``ranges`` (:class:`Ranges` of the graph's ``symbols``) to the values for which
    each ``min``/``max`` an op's attribute took (``minmax``: the real call's ``(expression,
    comparison)``, :data:`.traced_ints.SIZED`) picks the operand it picked, where the recordings
    (at ``points``) all picked that one: a size fitted over one side of its corner (``x[:min(k,
    4)]`` at k = 1, 2, 3: ``i0``) is no size past it. Where they picked both, each size is fitted
    over both sides (``min(i0, 4)``): no range."""
    for _, (name, c, outcome, diff) in minmax:
        names = free_symbols(diff)
        if not set(names) <= set(symbols) or any(COMPARISONS[name](evaluate(diff, p), c) is not outcome for p in points):
            continue
        ranges[names[0]] = compared_range([(name, c, outcome, diff)], ranges[names[0]], ranges.conds)  # (or a Cond)


def _one_side(op, expr, c):
    """``expr`` with each ``min``/``max`` of an expression and an int (``min(k, 4)``) that holding
    ``expr op c`` reduces to its expression (``min(k, 4) >= 0``: ``k >= 0``), or None where the
    int alone makes it hold (``min(k, 4) <= 6``)."""
    while op in ("<", "<=", ">", ">=") and isinstance(expr, Expr) and expr.op in ("min", "max") and any(
            type(a) is int for a in expr.args):
        a, k = expr.args if type(expr.args[1]) is int else expr.args[::-1]
        if (op in (">", ">=")) != (expr.op == "min") and Cond(op, k, c).evaluate({}):  # (an ``or``: the int's side holds)
            return None
        expr = a
    return expr


def _affine(expr):
    """``(a, b)`` when ``expr`` is ``a*s + b`` of one symbol ``s`` (``a`` not 0), else None."""
    names = free_symbols(expr)
    if len(names) != 1 or "//" in repr(expr) or "%" in repr(expr):
        return None
    points = (0, 1, *range(-5, 0), *range(2, 9), 1000, 12345)  # (a polynomial: linear at all of them)
    values = [evaluate(expr, {names[0]: v}) for v in points]
    a, b = values[1] - values[0], values[0]
    if a == 0 or any(type(e) is not int or e != a * v + b for v, e in zip(points, values)):
        return None
    return a, b


def int_ranges(cap, ints, samples, ranges):
    """The int arguments' symbols that the graph (``cap``, fitted) takes only as numbers:
    operands of floating-point arithmetic and comparisons (``x * i0``, ``x + (2*i0 + 1)``,
    ``x < i0``) that came as traced ints, floats Python computes from them at each call (``k *
    0.5``: :mod:`.traced_floats`) and ``full``'s fill value, right at every int; a new
    value of those needs no recording. Each other one (an operand of integer arithmetic, which may refuse a value:
    ``x_int // 0``; an index, a slice's bound, a shape) keeps the first-call check of a size symbol
    (:func:`.dynamic.verify`), and where it sizes a value (a shape, a floor or a remainder of it)
    its open range is narrowed to the values recorded and above: a negative or zero value there is
    another program (an error, an empty tensor), and C's ``/`` and ``%`` are Python's only for
    sizes >= 0."""
    names = {e.args[0] for e in ints.values() if isinstance(e, Expr) and e.op == "sym"}
    if not names:
        return set()
    sizing, other, traced = set(), set(), set()
    for node in cap.graph.nodes:
        sizing.update(free_symbols(node.meta.get("shape")))
        operands = _takes_numbers(node)
        for value in (node.args, node.kwargs):
            sizing.update(n for e in instances_in(value, Expr) if "//" in repr(e) or "%" in repr(e)
                          for n in free_symbols(e))
        # an operand that came as a traced int; one that did not (``0.5 * k`` computed by the float,
        # ``seq[k]``) is a value Python computed unseen, which may also have steered a branch
        came = cap.graph.traced_operands.get(node, ())
        for j, a in enumerate(node.args):
            if isinstance(a, Expr):
                (traced if operands and j in came else other).update(free_symbols(a))
            else:
                other.update(free_symbols(a))
        other.update(free_symbols(list(node.kwargs.values())))
    # a returned int (``return x * k, k + 1``): a polynomial of the symbols where it came traced
    for e, came in zip(returned_ints(cap.output), getattr(cap, "returned_exprs", ())):
        (traced if came is not None else other).update(free_symbols(e))
    for source in cap.sources:  # (a full's shape, not its value; an arange's bounds)
        if source[0] == "float_arg":  # (``k * 0.5``: a float Python computes from it at each call)
            traced.update(free_symbols(source[1]))
        if source[0] == "sized_const":
            sizing.update(free_symbols(source[1].args[:1] if source[1].kind == "full" else source[1].args))
    for n in names & sizing:
        lo, hi = ranges[n]
        if lo == -math.inf:  # (a declared minimum, an IntVar's, is the user's to keep)
            ranges[n] = (min(point[n] for point, _ in samples), hi)
    return (names & traced) - sizing - other


def returned_ints(value):
    """The ints (or their fitted expressions) in a returned structure (a skeleton), in order."""
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from returned_ints(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from returned_ints(v)
    elif type(value) in (int, TracedInt) or isinstance(value, Expr):
        yield value


def fit_returned(values, same, exprs, points, fixed, int_symbols, mismatch):
    """The returned structure of a dynamic graph fitted over its samples (``values``, skeletons,
    at ``points``; ``same`` fits values as :func:`.dynamic._unify` does): an int in it may follow
    the symbols, evaluated at each replay. One computed from int arguments by arithmetic
    (``return x * k, k + 1``) is its expression (``exprs``: an iterator over the first sample's
    ``returned_exprs``); one a fit finds (a size, ``x.size(0)``) is that fit, but one Python
    computed from an int argument unseen (``len(range(k))``) raises ``mismatch``: torch
    specialises it too. All else must be the same in each (else ``mismatch``)."""
    first = values[0]
    if all(type(v) is int for v in values):
        expr = next(exprs, None)
        if expr is None or not fixed.isdisjoint(free_symbols(expr)):  # (a specialised symbol in it: a fit)
            fitted = same(values, "a returned int")
            if expr is None and isinstance(fitted, Expr) and not set(int_symbols).isdisjoint(free_symbols(fitted)):
                raise mismatch(f"a returned int ({values}) is computed from an int argument by Python unseen")
            return fitted
        if any(evaluate(expr, p) != v for p, v in zip(points, values)):
            raise mismatch(f"a returned int: {values} is not {expr} at each sample")
        return expr
    more = (exprs, points, fixed, int_symbols, mismatch)
    if isinstance(first, (tuple, list)) and all(type(v) is type(first) and len(v) == len(first) for v in values):
        items = [fit_returned([v[k] for v in values], same, *more) for k in range(len(first))]
        return same_container(first, items)
    if isinstance(first, dict) and all(type(v) is type(first) and v.keys() == first.keys() for v in values):
        return type(first)((k, fit_returned([v[k] for v in values], same, *more)) for k in first)
    if any(v != first for v in values):
        raise mismatch("the returned structure differ")
    for _ in returned_ints(first):  # (the expressions of its ints passed over)
        next(exprs, None)
    return first


def _takes_numbers(node):
    """Whether ``node`` takes Python numbers as operands of a floating-point computation (its
    tensor operands, cast as the op promotes, are of an inexact dtype)."""
    if node.op != "call_op" or getattr(node.target, "promote", None) is None:
        return False
    dtypes = [a.meta["dtype"] for a in node.args if hasattr(a, "meta")]
    return bool(dtypes) and all(d.is_inexact for d in dtypes)


def static_ints(dims, shape, arguments):
    """The positions of the int arguments of ``dims`` that the dynamic graph made (``shape``,
    a :class:`~.dynamic.Shape`, or None) specialised: once, then never probed again; but an
    int at 0 or 1 (of ``arguments``, the call's), which torch specialises as a value, not for
    good (``x[:min(k, 4)]`` at k = 0, 1, 2, ...: 3 graphs)."""
    return [k for i, k in dims if i == ARG and (shape is None or not isinstance(shape.ints.get(k), Expr))
            and arguments[k] not in (0, 1)]


def int_symbols(facts, before, static, arguments, first_extra=None):
    """``({(ARG, position): symbol}, {symbol: (-inf, None)})`` of the int arguments (of
    ``arguments``, the call's ``(*args, *kwargs.values())``) to take as symbols: all (``before``
    True: ``dynamic=True``), or those whose value differs from ``before`` (the last graph's
    guards: automatic dynamic), but those at the positions ``static``; named ``i0``, ``i1``, ...
    Python's reads of them are watched while recording (:mod:`.traced_ints`), so one that steers
    Python is specialised again. (An object argument's guard is its id, an int too: not one.) A position
    from ``first_extra`` on that ``before`` lacks (an int derived since, :mod:`.closure_ints`) is one too."""
    if not before:
        return {}, {}
    old = {} if before is True else dict(before)
    found = {}
    for name, value in facts:
        if name.startswith("argument ") and name[9:].isdigit() and type(arguments[int(name[9:])]) is int:
            was = old.get(name, value if first_extra is None or int(name[9:]) < first_extra else None)
            if (before is True or not isinstance(was, int) or was != value) and int(name[9:]) not in static:
                found[(ARG, int(name[9:]))] = symbol(f"i{len(found)}")
    return found, {e.args[0]: (-math.inf, None) for e in found.values()}


def _floats_made():
    """The traced floats made by a recording (:data:`~.traced_ints.MADE`), emptied, and the autograd
    nodes' saved inputs set to them put back plain."""
    made = list(MADE)
    MADE.clear()
    for saved, j, value in SAVED:
        saved[j] = value
    SAVED.clear()
    return made


def _watching(run, world):
    """``run`` recording with the optimizers' groups watched (:func:`.group_writes.watched_groups`)."""
    def watched(a, k):
        out = []
        with watched_groups(world.optimizers, lambda: out[0][1] if out else None):
            out.append(run(a, k))
        return out[0]
    return watched


def traced_again(run, args, kwargs, world, floats, fn=None, reads=()):
    """``run(args, kwargs)`` (the recording of a call at new sizes of a dynamic graph, checked to
    be the fitted graph there: :func:`.dynamic.verify`) with the float arguments that graph takes
    (``floats``: its :func:`~.traced_floats.float_inputs`) traced again, as its recordings were:
    ``(result, capture)`` (recorded plain, each new size was a graph of its own, and each value);
    ``fn``, the compiled function, as :func:`float_capture`'s."""
    return float_capture(run, args, kwargs, world, argument_positions(floats), fn, reads)[:2]


def float_capture(run, args, kwargs, world, positions, fn=None, reads=()):
    """``run(args, kwargs)`` (a recording: ``(result, capture)``) with the float arguments at
    ``positions`` (in ``(*args, *kwargs.values())``) passed as traced floats
    (:mod:`.traced_floats`). Returns ``(result, capture, symbols)``: ``symbols`` ``{position:
    conditions}`` of those Python did not use, which the graph takes as inputs, each with the
    comparisons Python made of it (``if lr > 0.5``: :func:`.traced_floats.float_conditions`). A run that read one's class
    (``type(lr) is float``: False there) is run again with the floats plain. The optimizers'
    groups are watched for the user's code reading them (:func:`.group_writes.watched_groups`);
    ``fn``, the compiled function, runs its float constants' rewrite (``0.5 * round(lr)``:
    :mod:`.float_constants`); the floats it reads at ``reads`` (paths, :mod:`.read_floats`) are the
    arguments after the call's own."""
    run = _watching(run, world)
    if not positions:
        patched = patch_math()  # (``math.cos(k / 6)``: traced as ``k * 0.5`` is)
        try:
            return (*run(args, kwargs), {})
        finally:  # (traced floats made from traced ints: ``k * 0.5``)
            unpatch_math(patched)
            _floats_made()
    uses = {k: Uses() for k in positions}
    for seen in uses.values():
        seen.floats = True
    before, arguments, names = unobserved(State, world), list(args) + list(kwargs.values()), list(kwargs)
    for k in positions:
        if k < len(arguments):
            arguments[k] = TracedFloat(arguments[k], (uses[k],), ("argument", k))
        uses[k].active = True
    put = traced_reads(reads, fn, args, kwargs, len(world.positions), uses, world)  # (after the cells' ints)
    TRACING.append(uses)
    patched, swapped, reads = patch_math(), len(SWAPPED), patch_minmax()  # (``math.sqrt(lr)`` traced too)
    swap_codes((fn,) if fn is not None else ())
    made = []  # (the floats made: Python's computations checked by the guards, float_conditions)
    try:
        try:
            out = run(tuple(arguments[:len(args)]), dict(zip(names, arguments[len(args):])))
            result, cap = out[0], out[1]
        except Exception:
            if not any(use[0] == "type" for seen in uses.values() for use in seen):
                raise
            cap = None
        if cap is not None:
            note_unseen(cap)  # (a float returned: computed from the arguments at each call, else a use)
            cap.output = plain(mark_returned(cap.output))
    finally:
        restore_reads(put, fn, args, kwargs, world)
        TRACING.remove(uses)
        restore_codes(swapped)
        unpatch_math(patched), unpatch_math(reads, builtins)
        made += _floats_made()
        note_indexed(fn)  # (``x[:, :round(lr)]``: an int position at the next recording)
        for seen in uses.values():
            seen.active = False
        # ``self.lr = lr``: a write a replay does not repeat (a use), and the module keeps a plain
        # float; so does the optimizer's group (``group["lr"] = lr``), a replay repeating the write
        kept = [(vars(m), m.__setattr__, True) for m in world.all_modules]
        kept += [(g, g.__setitem__, False) for opt in world.optimizers for g in opt.param_groups]
        for table, put, used in kept:
            for name, value in list(table.items()):
                if type(value) is TracedFloat:
                    put(name, plain(value))
                    for seen in value.uses if used else ():
                        seen.append(("stored", f"{type(value).__name__} kept as {name!r}"))
        plain_ints(world)  # (``G = lr`` into a global, ``obj.v = lr``: kept, a replay's float would read this call's)
    if any(use[0] == "type" for seen in uses.values() for use in seen):
        before.restore()
        return (*run(args, kwargs), {})
    conds = {k: float_conditions(k, seen, made) for k, seen in uses.items()}  # (one of two arguments: a use)
    return (plain(result), *out[1:], {k: conds[k] for k, seen in uses.items() if not seen})
