"""Graph breaks split a compiled function at statement granularity: captured pieces with
eager statements between them (torch.dynamo's "resume functions", carried to capture by running).

A recording that met graph breaks tells, for each break, the frames between it and the
recording (:func:`~.structure.frames_below`): the outermost one running the function's code
gives the line that broke. From the function's source (``inspect.getsource``, ``ast``,
:mod:`.split_source`) :func:`plan` finds the statements around that line: a ``for``, ``while``,
``if``, ``with`` or ``try`` holding it is *opened* (its header runs eagerly as written, its
bodies, a ``try``'s handlers, ``else`` and ``finally`` too, are split the same way,
recursively), any other statement holding it runs as written, eagerly. In each body, each
maximal run of statements without a break is a *piece*, a generated function (its parameters:
the names it reads or may keep that are bound before it; its results: the names it binds that a
later statement, or the loop's next turn, reads) that is compiled with the same options as the
function and so has its own guards, recompiles and replays. Inside an opened statement a
statement that may ``return``, ``break`` or ``continue`` out of its body runs eagerly. Inside a
``try`` or ``with`` (whose manager may swallow an exception), a piece that raises hands back
what it had bound (its frame, found in the traceback: :meth:`~.split_run.Piece.bound`) before
the exception goes on to the handler, ``finally`` or ``__exit__``; a replay that raises there
(an index out of range) runs the piece's Python instead, which raises with its frame. A break
inside user code the statement calls (a function by name or through a local variable or an
attribute, a method or a module's ``forward``; each of two or more) makes that code compiled on
its own, same options (split at its own breaks in turn): the eager statement calls it through a
:class:`~.split_run.CalleeSwap`. :func:`build` generates a function with the original's
signature that does all this, seeing the original's globals (its ``__globals__``) and closure
cells (by name) live; its code carries the user's file and line numbers, so tracebacks and the
break reasons of the pieces name the user's lines.

The split is refused (the function then runs eagerly on every call, as before) whenever it
could change what the program computes: no source; a generator or coroutine; ``global``,
``nonlocal``, ``del``, ``match``, ``yield``, ``await``, ``locals()``/``vars()``/``eval``/
``exec``/``dir()``, zero-argument ``super()``/``__class__``; a nested function, class or
generator expression closing over its locals; a ``return`` in a top-level piece that is not the
last one; a walrus inside a comprehension; a name crossing between pieces that may be unbound
there; a break that is not inside one of the function's own statements (a forward hook's). At
run time a piece whose recording returns what a replay cannot give back the same (a tensor
sharing memory with an input, a parameter or another result; a list, dict or other mutable
object) runs eagerly from then on. A ``try``'s handler, ``else`` or ``finally`` that reads a
name its body may not have bound runs as written, eagerly. Limits: a loop header that breaks
stays eager (its break opens the bodies, not the header); a Python number passed from an eager
statement into a piece is a guard on its value (a loop counter a piece reads recompiles it each
turn, up to the limit).
"""
import ast
import copy
import inspect
import os
import sysconfig
import textwrap
import types

from ..nn.modules.module import Module
from .split_run import CalleeSwap, Piece, module_call
from .structure import EMBER_DIR
from .split_source import (NO_ARGS, OPENABLE, PREFIX, Refused, backward_of, check, compiles_to, definite, escapes,
                           exposed, first, make_def, own, reads, stores, trivial)

__all__ = ["Refused", "Plan", "target", "plan", "build", "split", "split_as_cached"]

_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
# where a callee's code is not the user's: ember's own, the standard library's, installed packages'
_NOT_USER = tuple({EMBER_DIR + os.sep, *(sysconfig.get_paths()[k] + os.sep
                                          for k in ("stdlib", "platstdlib", "purelib", "platlib"))})


def target(fn, signature_of):
    """``(function, bound object or None, module or None)``: the Python function whose body is
    split and what its first argument is bound to (a bound method's object; a module called
    through ``__call__``, whose ``forward`` is split). Raises :class:`Refused` for anything else
    (a ``functools.partial``, a callable object, a wrapped function)."""
    if isinstance(fn, types.MethodType) and isinstance(fn.__self__, Module) and fn.__func__ is Module.__call__:
        module = fn.__self__
        if type(module).__call__ is not Module.__call__ or not isinstance(signature_of, types.MethodType) \
                or signature_of.__self__ is not module:
            raise Refused("the module's __call__ or forward is not a plain method")
        return _function(signature_of.__func__), module, module
    if isinstance(fn, types.MethodType):
        return _function(fn.__func__), fn.__self__, None
    return _function(fn), None, None


def _function(fn):
    if not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>" or hasattr(fn, "__wrapped__"):
        raise Refused(f"{type(fn).__name__} {getattr(fn, '__qualname__', '')!s} is not a plain def")
    if fn.__code__.co_flags & _FLAGS:
        raise Refused("a generator or coroutine")
    if "__class__" in fn.__code__.co_freevars:
        raise Refused("zero-argument super() or __class__")
    return fn


class Plan:
    """The split of ``func``: ``segments``, each ``(kind, statements, params, results)`` with
    kind ``"piece"`` (captured), ``"eager"`` (run as written) or ``"open"`` (one statement run
    as written but for its bodies: ``params`` is ``[(field, segments)]``, ``"body"``, a
    ``try``'s ``"handler0"``..., ``"orelse"``, ``"finalbody"``); ``breaks`` the recording's
    ``(reason, where)`` inside the function's statements, ``lines`` their lines in it (those
    before or after the call, a Python side effect, are each piece's own to find again);
    ``callees`` maps an eager statement (its ``id``) to a list of ``(code, names, attributes)``
    (see :func:`_callees`): the user code that broke inside it and which of its calls may reach it."""

    def __init__(self, func, tree, segments, breaks, lines, callees=None):
        self.func, self.tree, self.segments, self.breaks, self.lines = func, tree, segments, breaks, lines
        self.callees = callees or {}

    def describe(self):
        """``pieces [lines 3-5], eager [line 6], for [lines 7-9] (pieces [line 8], eager [line 9])``
        (the log line of ``EMBER_LOGS=graph``); a callee compiled on its own is named after its
        eager statement (``eager [line 6] (compiles helper)``)."""
        return _describe(self.segments, self.callees)


def _describe(segments, callees):
    parts = []
    for kind, statements, bodies, _ in segments:
        begin, end = statements[0].lineno, statements[-1].end_lineno
        where = f"[line {begin}]" if begin == end else f"[lines {begin}-{end}]"
        if kind == "open":
            labels = {"orelse": " | else: ", "finalbody": " | finally: "}
            inner = "".join((labels.get(field, " | except: ") if k else "") + _describe(segs, callees)
                            for k, (field, segs) in enumerate(bodies))
            parts.append(f"{type(statements[0]).__name__.lower()} {where} ({inner})")
            continue
        parts.append(f"{'pieces' if kind == 'piece' else 'eager'} {where}")
        named = sorted({c[0].co_qualname for s in statements for c in callees.get(id(s), ())})
        if named:
            parts[-1] += f" (compiles {', '.join(named)})"
    return ", ".join(parts)


def plan(fn, signature_of, cap):
    """The :class:`Plan` of splitting ``fn`` (compiled; ``signature_of``: whose body, a module's
    ``forward``) at the graph breaks of its recording ``cap``. Raises :class:`Refused`."""
    func = target(fn, signature_of)[0]
    code = func.__code__
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError) as e:
        raise Refused(f"its source is not available ({type(e).__name__})")
    fdef = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != code.co_name:
        raise Refused("its source is not one def")
    ast.increment_lineno(tree, code.co_firstlineno - 1)
    start = min([fdef.lineno] + [d.lineno for d in fdef.decorator_list])
    if any(line is not None and not start <= line <= fdef.end_lineno for _, _, line in code.co_lines()):
        raise Refused("its source does not match its code (edited since imported?)")
    check(fdef, code)
    if not compiles_to(fdef, code):
        raise Refused("its source does not compile to its code (edited since imported?)")
    body = fdef.body
    marks, breaks, lines, callees = {}, [], [], {}
    for i, (reason, where) in enumerate(cap.breaks):
        chain = cap.break_frames[i] if i < len(getattr(cap, "break_frames", ())) else []
        if not chain:  # before or after the call (a side effect): each piece checks its own
            continue
        at = [k for k, (c, _) in enumerate(chain) if c is code]
        if not at:
            raise Refused(f"a graph break outside {code.co_name}'s own statements ({reason})")
        line = chain[at[-1]][1]  # the outermost: a recursive call's frame is not the statement
        if not any(first(s) <= line <= s.end_lineno for s in body):
            raise Refused(f"the graph break at line {line} is in no statement of the body")
        leaves = _locate(body, line, marks)
        # the user code the break happened in below the statement (a function's, a method's, a
        # module's forward below ember's Module.__call__)
        below = next((c for c, _ in reversed(chain[:at[-1]]) if not c.co_filename.startswith(EMBER_DIR + os.sep)),
                     None)
        for leaf in leaves if below is not None else ():
            known = callees.setdefault(id(leaf), [])
            found = None if any(c[0] is below for c in known) else _callees(leaf, below, func)
            if found is not None:
                known.append(found)
            elif not known:
                del callees[id(leaf)]
        breaks.append((reason, where))
        lines.append(line)
    if not breaks:
        raise Refused("no graph break inside the function's statements")
    args = fdef.args
    bound = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a}
    local = set(code.co_varnames) | set(code.co_cellvars)
    return Plan(func, fdef, _segments(body, local, marks, bound, bound, set(), True), breaks, lines, callees)


def _locate(body, line, marks):
    """Marks the statements of ``body`` holding ``line`` in ``marks`` (by ``id``): ``"open"`` a
    ``for``/``while``/``if``/``with``/``try`` (then its bodies' statements holding it,
    recursively; a line in its header holds none), ``"eager"`` any other. Returns the ones
    marked eager."""
    leaves = []
    for s in body:
        if not first(s) <= line <= s.end_lineno:
            continue
        if isinstance(s, OPENABLE) and marks.get(id(s)) != "eager":
            marks[id(s)] = "open"
            for _, inner in _bodies(s):
                leaves += _locate(inner, line, marks)
        else:
            marks[id(s)] = "eager"
            leaves.append(s)
    return leaves


def _bodies(s):
    """``[(field, statements)]``: the bodies of an openable statement (a ``try``'s handlers as
    ``handler0``, ``handler1`` ...)."""
    fields = [("body", s.body)] + [(f"handler{i}", h.body) for i, h in enumerate(getattr(s, "handlers", ()))]
    return fields + [(f, getattr(s, f)) for f in ("orelse", "finalbody") if getattr(s, f, None)]


def _callees(statement, callee, func):
    """``(callee, names, attributes)`` or None: which calls of ``statement`` may reach
    ``callee``, the user code a graph break happened in (not ember's, the standard library's nor
    an installed package's, which stay eager inside the statement): ``names``, the names holding
    a function of that code (global or closure variables) or that may (local variables:
    ``fn = self.helper; fn(x)``); ``attributes``, whether the statement calls an attribute
    (``self.inner(h)``, ``utils.log(x)``, ``self.cfg.fn(x)``). Each is checked again at each call
    (:class:`~.split_run.CalleeSwap`)."""
    if callee is func.__code__ or callee.co_filename.startswith(_NOT_USER) or callee.co_filename.startswith("<") \
            or callee.co_flags & _FLAGS:
        return None
    code, found, attributes = func.__code__, set(), False
    cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    for node in own(statement):
        attributes |= isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        name = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None
        if name is None:
            continue
        if name in code.co_varnames or name in code.co_cellvars:
            found.add(name)  # (what it holds is known at the call only)
            continue
        if name in cells:
            try:
                value = cells[name].cell_contents
            except ValueError:  # an empty cell
                continue
        else:
            value = func.__globals__.get(name)
        if isinstance(value, types.FunctionType) and value.__code__ is callee:
            found.add(name)
    return (callee, found, attributes) if found or attributes else None


def _segments(body, local, marks, sure, maybe, after, top):
    """``[(kind, statements, params, results)]`` of ``body`` (see :class:`Plan`): ``sure`` and
    ``maybe`` the names bound before it on every way / some way, ``after`` the names read after
    it (the rest of the function, a loop's next turn); ``top``: the function's own body."""
    runs = _runs(body, marks, top)
    sure, maybe, out, seen = set(sure), set(maybe), [], 0
    for r, (kind, statements) in enumerate(runs):
        seen += len(statements)
        later = after | exposed(body[seen:])
        if kind == "eager":
            out.append((kind, statements, (), ()))
        elif kind == "open":
            try:
                out.append((kind, statements, _open(statements[0], local, marks, sure, maybe, later), ()))
            except Refused:  # (a name crossing its body's pieces that may be unbound): as written
                if not isinstance(statements[0], (ast.Try, ast.With)):
                    raise
                out.append(("eager", statements, (), ()))
        else:
            if r != len(runs) - 1 and any(isinstance(n, ast.Return) for s in statements for n in own(s)):
                raise Refused(f"a return at line {statements[0].lineno} in a piece that is not the last")
            needed = exposed(statements)  # read before the piece binds them for sure
            inside = set().union(*map(definite, statements))  # bound for sure
            binds = set().union(*map(stores, statements))
            results = sorted(binds & later & local)
            params = sorted((needed | set(results) - inside) & maybe & local)
            unbound = (needed & local) - maybe - binds
            if unbound:
                raise Refused(f"{sorted(unbound)[0]!r} is read at line {statements[0].lineno} before any binding")
            for name in [p for p in params if p not in sure] + [n for n in results if n not in sure | inside]:
                raise Refused(f"{name!r} may be unbound where pieces meet (line {statements[0].lineno})")
            out.append((kind, statements, params, results))
        for s in statements:
            sure |= definite(s)
            maybe |= stores(s)
    return out


def _runs(body, marks, top):
    """``[(kind, statements)]``: ``body`` cut into runs of pieces, eager statements and opened
    ones. A ``.backward()`` in a piece on a tensor the piece did not make (a callee's loss, an
    eager statement's) runs eagerly too: it reaches autograd history made outside the piece,
    whose recording would break there (capture.py)."""
    while True:
        runs = []
        for s in body:
            kind = marks.get(id(s)) or ("eager" if trivial(s) or not top and escapes(s) else "piece")
            if runs and runs[-1][0] == kind != "open":
                runs[-1][1].append(s)
            else:
                runs.append((kind, [s]))
        outside = []
        for kind, statements in (run for run in runs if run[0] == "piece"):
            made = set()
            for s in statements:
                if backward_of(s) - made:
                    outside.append(s)
                made |= stores(s)
        if not outside:
            return runs
        marks.update((id(s), "eager") for s in outside)


def _open(s, local, marks, sure, maybe, later):
    """``[(field, segments)]`` of an opened statement's bodies: a loop's body is entered with
    what any earlier turn may have bound, and what the next turn reads is read after it; a
    ``try``'s handlers and ``finally`` with what its body may have bound before raising, and
    what they read is read after each statement of the body."""
    if isinstance(s, ast.Try):
        final = exposed(s.finalbody)
        handlers = [(h, {h.name} - {None}) for h in s.handlers]
        caught = final | exposed(s.orelse).union(*(exposed(h.body) - name for h, name in handlers))
        caught |= set().union(*(reads(h.type) for h in s.handlers if h.type is not None))
        tried = maybe.union(*map(stores, s.body))
        bodies = [("body", _segments(s.body, local, marks, sure, maybe, later | caught, False))]
        bodies += [(f"handler{i}", _or_eager(h.body, local, marks, sure | name, tried | name, later | final))
                   for i, (h, name) in enumerate(handlers)]
        if s.orelse:
            done = sure.union(*map(definite, s.body))
            bodies.append(("orelse", _or_eager(s.orelse, local, marks, done, tried, later | final)))
        if s.finalbody:
            bodies.append(("finalbody", _or_eager(s.finalbody, local, marks, sure, maybe | stores(s), later)))
        return bodies
    if isinstance(s, ast.With):
        header = set().union(*(stores(i) for i in s.items))
        return [("body", _segments(s.body, local, marks, sure | header, maybe | header, later, False))]
    if isinstance(s, ast.If):
        header = stores(s.test)
        return [(field, _segments(getattr(s, field), local, marks, sure | header, maybe | header, later, False))
                for field in ("body", "orelse") if getattr(s, field)]
    before = stores(s.iter) if isinstance(s, ast.For) else stores(s.test)  # bound however many turns
    header = before | stores(s.target) if isinstance(s, ast.For) else before
    turns = maybe | stores(s)
    bodies = [("body", _segments(s.body, local, marks, sure | header, turns, later | exposed([s]), False))]
    if s.orelse:
        bodies.append(("orelse", _segments(s.orelse, local, marks, sure | before, turns, later, False)))
    return bodies


def _or_eager(body, local, marks, sure, maybe, later):
    """The segments of a ``try``'s handler, ``else`` or ``finally`` ``body``; where a piece of it
    would read a name the ``try``'s body may not have bound (``except E: y = y + 1``), the
    whole ``body`` as written, eagerly (a piece's parameter must be bound at its call)."""
    try:
        return _segments(body, local, marks, sure, maybe, later, False)
    except Refused:
        return [("eager", body, (), ())]


def build(the_plan, make_piece, make_callee=lambda f: f):
    """The function that runs ``the_plan``: the original's signature, defaults, globals and
    closure cells; each piece made by ``make_piece(function, label, last)`` (its compiled
    callable; ``last``: the piece whose result the function returns), each callee that broke
    by ``make_callee(function)``."""
    func, fdef = the_plan.func, the_plan.tree
    code = func.__code__
    defs, names, labels, lasts, guards, swaps = [], [], [], [], [], {}

    def swapped(statement):
        """``statement`` calling ``swap(helper)(...)`` where it called a callee that broke in it
        (``swap1(swap0(helper))(...)`` where two may be called there)."""
        found = the_plan.callees.get(id(statement))
        if not found:
            return statement
        statement = copy.deepcopy(statement)
        calls = [node for node in own(statement) if isinstance(node, ast.Call)]
        for node in calls:
            attribute = isinstance(node.func, ast.Attribute)
            name = node.func.id if isinstance(node.func, ast.Name) else None
            for callee, names, attributes in found:
                if name in names or attributes and attribute:
                    swap = swaps.setdefault(callee, f"{PREFIX}callee{len(swaps)}")
                    node.func = ast.Call(ast.Name(swap, ast.Load()), [node.func], [])
        return ast.fix_missing_locations(statement)

    def emit(segments, top, guarded=False):
        out = []
        for kind, statements, params, results in segments:
            if kind == "eager":
                out += map(swapped, statements)
                continue
            if kind == "open":
                opened = copy.copy(statements[0])
                if isinstance(opened, ast.Try):
                    opened.handlers = list(map(copy.copy, opened.handlers))
                for field, inner in params:
                    where = opened.handlers[int(field[7:])] if field.startswith("handler") else opened
                    setattr(where, "body" if where is not opened else field,
                            emit(inner, False, guarded or isinstance(opened, (ast.Try, ast.With))))
                out.append(opened)
                continue
            name = f"{PREFIX}piece{len(names)}"
            begin, end = statements[0].lineno, statements[-1].end_lineno
            names.append(name)
            labels.append(f"{func.__qualname__} (lines {begin}-{end})")
            at = dict(lineno=begin, col_offset=0)
            load = lambda n: ast.Name(n, ast.Load(), **at)  # noqa: E731
            inner = list(statements)
            last = top and statements is segments[-1][1]
            lasts.append(last)
            if not last:
                inner.append(ast.Return(ast.Tuple([load(n) for n in results], ast.Load(), **at), **at))
            defs.append(make_def(f"{name}_fn", ast.arguments(posonlyargs=[], args=[ast.arg(p, **at) for p in params],
                                                             kwonlyargs=[], kw_defaults=[], defaults=[]), inner, at))
            call = ast.Call(load(name), [load(p) for p in params], [], **at)
            if last:
                out.append(ast.Return(call, **at))
            elif results:
                out.append(ast.Assign([ast.Tuple([ast.Name(n, ast.Store(), **at) for n in results], ast.Store(), **at)],
                                      call, **at))
            else:
                out.append(ast.Expr(call, **at))
            guards.append(guarded and bool(results))
            if guards[-1]:  # an exception a handler, finally or manager may see: it sees what was bound
                out[-1] = _handing_back(out[-1], name, results, at)
        return out
    body = emit(the_plan.segments, True)
    at = dict(lineno=fdef.lineno, col_offset=0)
    wrapper = make_def(PREFIX + "wrapper", _bare(fdef.args), body, at)
    free = [ast.Assign([ast.Name(n, ast.Store(), **at)], ast.Constant(None, **at), **at)
            for n in [*code.co_freevars, *names, *swaps.values()]]
    made = ast.Return(ast.Tuple([ast.Name(d.name, ast.Load(), **at) for d in [*defs, wrapper]], ast.Load(), **at), **at)
    maker = make_def(PREFIX + "make", NO_ARGS, free + defs + [wrapper, made], at)
    namespace = {}
    exec(compile(ast.Module([maker], []), code.co_filename, "exec"), namespace)
    made = namespace[PREFIX + "make"]()
    cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    pieces = []
    for f, label, last, guarded in zip(made, labels, lasts, guards):
        pieces.append(make_piece(_rebind(f, func, cells, f.__name__[len(PREFIX):-3], None), label, last))
        pieces[-1].guarded = guarded
    cells.update((name, types.CellType(p)) for name, p in zip(names, pieces))
    callees = [CalleeSwap(callee, make_callee) for callee in swaps]
    cells.update((name, types.CellType(swap)) for name, swap in zip(swaps.values(), callees))
    split_fn = _rebind(made[-1], func, cells, func.__name__, func.__defaults__)
    split_fn.__kwdefaults__ = func.__kwdefaults__
    split_fn.pieces, split_fn.callees = pieces, callees
    return split_fn


def _handing_back(statement, piece, results, at):
    """``try: statement except BaseException: <each of results the piece bound before raising,
    bound here>; raise`` (:meth:`~.split_run.Piece.bound`)."""
    load = lambda n: ast.Name(n, ast.Load(), **at)  # noqa: E731
    got, raised = PREFIX + "bound", PREFIX + "raised"
    bound = ast.Call(ast.Attribute(load(piece), "bound", ast.Load(), **at), [load(raised)], [], **at)
    handler = [ast.Assign([ast.Name(got, ast.Store(), **at)], bound, **at)]
    for n in results:
        value = ast.Subscript(load(got), ast.Constant(n, **at), ast.Load(), **at)
        handler.append(ast.If(ast.Compare(ast.Constant(n, **at), [ast.In()], [load(got)], **at),
                              [ast.Assign([ast.Name(n, ast.Store(), **at)], value, **at)], [], **at))
    handler.append(ast.Raise(**at))
    catch = ast.ExceptHandler(load("BaseException"), raised, handler, **at)
    return ast.Try([statement], [catch], [], [], **at)


def _bare(args):
    """The parameters of ``args`` without annotations and with placeholder defaults (the
    original's default values are set on the function, not evaluated again)."""
    bare = lambda a: a and ast.arg(a.arg, lineno=a.lineno, col_offset=a.col_offset)  # noqa: E731
    none = ast.Constant(None, lineno=1, col_offset=0)
    return ast.arguments(posonlyargs=[bare(a) for a in args.posonlyargs], args=[bare(a) for a in args.args],
                         vararg=bare(args.vararg), kwonlyargs=[bare(a) for a in args.kwonlyargs],
                         kw_defaults=[d and none for d in args.kw_defaults], kwarg=bare(args.kwarg),
                         defaults=[none for _ in args.defaults])


def _rebind(made, func, cells, name, defaults):
    """``made`` (a generated function) as a function named ``name`` (in ``func``'s namespace)
    of ``func``'s globals, with the cells its free variables name."""
    qualname = func.__qualname__ if name == func.__name__ else f"{func.__qualname__}.<{name}>"
    f = types.FunctionType(made.__code__.replace(co_name=name, co_qualname=qualname), func.__globals__, name,
                           defaults, tuple(cells[n] for n in made.__code__.co_freevars))
    f.__qualname__, f.__module__ = qualname, func.__module__
    return f


def split(compiled, cap, log):
    """``(callable, Plan)`` running ``compiled``'s function split at ``cap``'s breaks (the
    pieces and callees made as ``compiled`` was, fullgraph off), or ``(None, reason)`` where refused."""
    if compiled._spec is not None or getattr(compiled, "_piece", False):
        owner = getattr(compiled, "_split_owner", None)
        if owner is not None and owner._split is not None:  # (split as its cache was: now records its own)
            owner._split, owner._plan = None, (None, "a piece broke where the earlier split did not")
        return None, "a dynamic shapes spec, or a piece itself"
    try:
        the_plan = plan(compiled._fn, compiled._signature_of, cap)
        _, bound, module = target(compiled._fn, compiled._signature_of)

        def make(fn, label, signature_of=None):
            return type(compiled)(fn, False, compiled._backend, compiled._options, compiled._recompile_limit,
                                  compiled._dynamic, signature_of=signature_of, name=label)

        def make_callee(f):  # a function, a bound method or a module (its __call__, its forward split)
            if isinstance(f, Module):
                return make(f.__call__, type(f).__qualname__ + ".forward", f.forward)
            return make(f, f.__qualname__)

        def make_piece(fn, label, last):
            piece = make(fn, label)
            piece._piece = True
            return Piece(fn, piece, log, last)
        split_fn = build(the_plan, make_piece, make_callee)
    except Refused as e:
        return None, str(e)
    cache = compiled._cache
    if cache.breaks is not cap:  # (the breaks of every split sharing the cache, for the next ones)
        known = cache.breaks or types.SimpleNamespace(breaks=[], break_frames=[])
        new = [k for k, b in enumerate(cap.breaks) if b not in known.breaks]
        cache.breaks = types.SimpleNamespace(breaks=known.breaks + [cap.breaks[k] for k in new],
                                             break_frames=known.break_frames + [cap.break_frames[k] for k in new])
    if module is not None:
        return module_call(module, split_fn, compiled._fn), the_plan
    if bound is not None:
        return types.MethodType(split_fn, bound), the_plan
    return split_fn, the_plan


def split_as_cached(compiled, log):
    """``(callable, (callable, Plan))`` splitting ``compiled``'s function, before any recording,
    where another ``compile`` call of the same function or module with the same settings (its
    shared cache, :mod:`.shared_cache`) was split, at the breaks that one's recordings met (the
    cache's ``breaks``): ``ember.compile(step)(x)`` called anew in a loop records ``step`` once,
    and its pieces, of the same code, replay the first one's graphs (another function object
    of the code records its own: a closure over another flag may not break); ``(None, None)``
    where refused (its first call then records, as any) and for ``fullgraph=True`` (whose
    recording raises at the break). A piece of it whose recording breaks (a global changed
    since) makes the function record its own breaks on its next call, split then at those and
    the earlier ones."""
    if compiled._fullgraph:
        return None, None
    split_fn, the_plan = split(compiled, compiled._cache.breaks, log)
    if split_fn is None:
        return None, None
    for piece in getattr(split_fn, "__func__", split_fn).pieces:
        piece.compiled._split_owner = compiled
    return split_fn, (split_fn, the_plan)
