"""Graph breaks split a compiled function at statement granularity: captured pieces with
eager statements between them (torch.dynamo's "resume functions", carried to capture by running).

A recording that met graph breaks tells, for each break, the statement of the function's body
that was running (the outermost frame of the function's code at the break, see
:func:`~.structure.frames_below`). From the function's source (``inspect.getsource``, ``ast``)
:func:`plan` groups the body's top-level statements: each maximal run without a break is a
*piece*, a generated function (its parameters: the names it reads or may keep that are bound
before it; its results: the names it binds that a later statement reads) that is compiled
with the same options as the function and so has its own guards, recompiles and replays; a
statement that broke runs as written, eagerly, between the pieces. :func:`build` generates a
function with the original's signature that does this, seeing the original's globals (its
``__globals__``) and closure cells (by name) live; its code carries the user's file and line
numbers, so tracebacks and the break reasons of the pieces name the user's lines.

The split is refused (the function then runs eagerly on every call, as before) whenever it
could change what the program computes: no source; a generator or coroutine; ``global``,
``nonlocal``, ``del``, ``match``, ``yield``, ``await``, ``locals()``/``vars()``/``eval``/
``exec``/``dir()``, zero-argument ``super()``/``__class__``; a nested function, class or
generator expression closing over its locals; a ``return`` in a piece that is not the last
one; a walrus inside a comprehension; a name crossing between pieces that may be unbound
there; a break that is not inside one of the function's own top-level statements (a forward
hook's). At run time a piece whose recording returns what a replay cannot give back the same
(a tensor sharing memory with an input, a parameter or another result; a list, dict or other
mutable object) runs eagerly from then on. Limits: statement granularity (a break inside a
callee makes the caller's whole statement eager, where torch's dynamo splits the callee too);
a Python float passed from an eager statement into a piece is a guard on its value.
"""
import ast
import dis
import inspect
import textwrap
import types

import numpy as np

from .._device import device
from .._dtype import dtype
from .._tensor import Tensor
from ..nn.modules import module as _module
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from .structure import flatten, skeleton, unflatten

__all__ = ["Refused", "Plan", "target", "plan", "build", "split"]

_PREFIX = "_ember_split_"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FORBIDDEN = {ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.Match: "match",
              ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await"}
_FRAME_CALLS = {"locals", "vars", "eval", "exec", "dir"}
_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
_NO_ARGS = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
_ATOMS = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), dtype, device)


class Refused(Exception):
    """Why a function is not split (it then runs eagerly at every call)."""


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
    kind ``"piece"`` (captured) or ``"eager"`` (run as written); ``breaks`` the recording's
    ``(reason, where)`` inside the function's statements, ``lines`` their lines in it (those
    before or after the call, a Python side effect, are each piece's own to find again)."""

    def __init__(self, func, tree, segments, breaks, lines):
        self.func, self.tree, self.segments, self.breaks, self.lines = func, tree, segments, breaks, lines

    def describe(self):
        """``pieces [lines 3-5], eager [line 6], ...`` (the log line of ``EMBER_LOGS=graph``)."""
        parts = []
        for kind, statements, _, _ in self.segments:
            first, last = statements[0].lineno, statements[-1].end_lineno
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            parts.append(f"{'pieces' if kind == 'piece' else 'eager'} [{where}]")
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
    _check(fdef, code)
    if not _compiles_to(fdef, code):
        raise Refused("its source does not compile to its code (edited since imported?)")
    body = fdef.body
    broken, breaks, lines = set(), [], []
    for i, (reason, where) in enumerate(cap.breaks):
        chain = cap.break_frames[i] if i < len(getattr(cap, "break_frames", ())) else []
        if not chain:  # before or after the call (a side effect): each piece checks its own
            continue
        frames = [line for c, line in chain if c is code]
        if not frames:
            raise Refused(f"a graph break outside {code.co_name}'s own statements ({reason})")
        line = frames[-1]  # the outermost: a recursive call's frame is not the statement
        index = next((k for k, s in enumerate(body) if _first(s) <= line <= s.end_lineno), None)
        if index is None:
            raise Refused(f"the graph break at line {line} is in no statement of the body")
        broken.add(index)
        breaks.append((reason, where))
        lines.append(line)
    if not broken:
        raise Refused("no graph break inside the function's statements")
    return Plan(func, fdef, _segments(fdef, code, broken), breaks, lines)


def _compiles_to(fdef, code):
    """Whether ``fdef`` compiles (inside a function giving it ``code``'s free variables) to
    ``code``'s bytecode, constants and names: the source read is what runs."""
    at = dict(lineno=fdef.lineno, col_offset=0)
    free = [ast.Assign([ast.Name(n, ast.Store(), **at)], ast.Constant(None, **at), **at) for n in code.co_freevars]
    bare = ast.FunctionDef(**{f: getattr(fdef, f) for f in fdef._fields}, **at)
    bare.decorator_list = []
    outer = compile(ast.Module([_def(_PREFIX + "check", _NO_ARGS, free + [bare], at)], []), code.co_filename, "exec")
    inner = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    return any(_same_code(c, code) for c in inner.co_consts if isinstance(c, types.CodeType))


def _same_code(a, b):
    """Code objects that do the same (their instructions, names, constants), whatever their
    positions (a dedented source's columns) and the compiler's choice of method-call opcodes
    (pytest's rewritten modules compile ``F.f(x)`` with other ones)."""
    fields = ("co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount", "co_kwonlyargcount",
              "co_posonlyargcount", "co_name")
    if any(getattr(a, f) != getattr(b, f) for f in fields) or len(a.co_consts) != len(b.co_consts) \
            or (a.co_flags ^ b.co_flags) & ~inspect.CO_NESTED or _instructions(a) != _instructions(b):
        return False
    return all(_same_code(x, y) if isinstance(x, types.CodeType) and isinstance(y, types.CodeType)
               else type(x) is type(y) and x == y for x, y in zip(a.co_consts, b.co_consts))


def _instructions(code):
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    return [(_SAME_OP.get(i.opname, i.opname), None if i.opcode in jumps or isinstance(i.argval, types.CodeType)
             else i.argval) for i in dis.get_instructions(code) if i.opname not in _NO_OP]


_SAME_OP = {"LOAD_METHOD": "LOAD_ATTR"}
_NO_OP = {"CACHE", "NOP", "PUSH_NULL", "EXTENDED_ARG"}


def _first(statement):
    return min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])


def _check(fdef, code):
    """Raises :class:`Refused` where the body uses what a split cannot keep."""
    nested = False
    for node in ast.walk(fdef):
        if type(node) in _FORBIDDEN:
            raise Refused(f"it uses {_FORBIDDEN[type(node)]}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FRAME_CALLS:
            raise Refused(f"it calls {node.func.id}()")
        if isinstance(node, ast.Name) and node.id.startswith(_PREFIX):
            raise Refused(f"a name starting with {_PREFIX}")
        if isinstance(node, _COMPREHENSIONS) and any(isinstance(n, ast.NamedExpr) for n in ast.walk(node)):
            raise Refused("a walrus inside a comprehension")
        nested |= node is not fdef and isinstance(node, _SCOPES + (ast.GeneratorExp,))
    if code.co_cellvars and nested:
        raise Refused("a nested function, class or generator expression closes over its locals")
    args = fdef.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    n = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS) \
        + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    if names != list(code.co_varnames[:n]):
        raise Refused("its source's parameters are not its code's")
    bound = set(names).union(*(_stores(s) for s in fdef.body))
    # (Python 3.12 inlines comprehensions: their variables are the function's locals too)
    inlined = {n.id for c in ast.walk(fdef) if isinstance(c, _COMPREHENSIONS) for g in c.generators
               for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    local = set(code.co_varnames) | set(code.co_cellvars)
    if not bound <= local or not local - bound <= inlined:
        raise Refused("a binding the split cannot follow")


def _segments(fdef, code, broken):
    """``[(kind, statements, params, results)]`` of the body, ``broken`` its broken statements'
    indices: runs of statements without a break, but for plain ones (:func:`_trivial`), are pieces."""
    body, runs = fdef.body, []
    for k, s in enumerate(body):
        kind = "eager" if k in broken or _trivial(s) else "piece"
        if runs and runs[-1][0] == kind:
            runs[-1][1].append(s)
        else:
            runs.append((kind, [s]))
    args = fdef.args
    bound = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a}
    local = set(code.co_varnames) | set(code.co_cellvars)
    sure, maybe, out, seen = set(bound), set(bound), [], 0
    for r, (kind, statements) in enumerate(runs):
        seen += len(statements)
        last = r == len(runs) - 1
        if kind == "eager":
            out.append((kind, statements, (), ()))
        else:
            if not last and any(isinstance(n, ast.Return) for s in statements for n in _own(s)):
                raise Refused(f"a return at line {statements[0].lineno} in a piece that is not the last")
            needed, inside = set(), set()  # read before the piece binds them for sure; bound for sure
            for s in statements:
                needed |= _reads(s) - inside
                inside |= _definite(s)
            stores = set().union(*map(_stores, statements))
            later = set().union(set(), *map(_reads, body[seen:]))
            results = sorted(stores & later & local)
            params = sorted((needed | set(results) - inside) & maybe & local)
            unbound = (needed & local) - maybe - stores
            if unbound:
                raise Refused(f"{sorted(unbound)[0]!r} is read at line {statements[0].lineno} before any binding")
            for name in [p for p in params if p not in sure] + [n for n in results if n not in sure | inside]:
                raise Refused(f"{name!r} may be unbound where pieces meet (line {statements[0].lineno})")
            out.append((kind, statements, params, results))
        for s in statements:
            sure |= _definite(s)
            maybe |= _stores(s)
    return out


def _trivial(s):
    """A statement of plain Python not worth a graph: ``pass``, a docstring, ``return`` of names."""
    if isinstance(s, ast.Pass) or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
        return True
    if isinstance(s, ast.Return):
        return s.value is None or all(isinstance(n, (ast.Name, ast.Constant, ast.Tuple, ast.Load))
                                      for n in ast.walk(s.value))
    return False


def _own(node):
    """The nodes of ``node`` in the function's own scope: nested functions, classes, lambdas and
    comprehensions are yielded, not entered."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES + _COMPREHENSIONS):
            todo += ast.iter_child_nodes(n)


def _stores(node):
    """The names ``node`` binds in the function's scope."""
    names = set()
    for n in _own(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.alias):
            names.add(n.asname or n.name.partition(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
    return names


def _definite(s):
    """The names statement ``s`` binds on every way through it that reaches the next statement."""
    if isinstance(s, ast.Assign):
        return set().union(*(_stores(t) for t in s.targets))
    if isinstance(s, (ast.AnnAssign, ast.AugAssign)):
        return _stores(s.target) if getattr(s, "value", None) is not None else set()
    if isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return _stores(s)
    if isinstance(s, ast.With):
        bound = set().union(*(_stores(i.optional_vars) for i in s.items if i.optional_vars is not None))
        return bound.union(*map(_definite, s.body))
    if isinstance(s, ast.If) and s.orelse:
        return set().union(*map(_definite, s.body)) & set().union(*map(_definite, s.orelse))
    return set()


def _reads(node):
    """The names ``node`` reads from the function's scope (a comprehension's own variables left
    out; a nested function's reads all counted, which only adds parameters)."""
    if isinstance(node, _COMPREHENSIONS):
        outer, inner, own = _reads(node.generators[0].iter), set(), set()
        for k, g in enumerate(node.generators):
            if k:
                inner |= _reads(g.iter)
            own |= _stores(g.target)
            inner |= set().union(*map(_reads, g.ifs))
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return outer | (inner.union(*map(_reads, parts)) - own)
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    reads = set().union(*map(_reads, ast.iter_child_nodes(node)))
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):  # ``h += 1`` reads h
        reads.add(node.target.id)
    return reads


def build(the_plan, make_piece):
    """The function that runs ``the_plan``: the original's signature, defaults, globals and
    closure cells; each piece made by ``make_piece(function, label, last)`` (its compiled
    callable; ``last``: the piece whose result the function returns)."""
    func, fdef = the_plan.func, the_plan.tree
    code = func.__code__
    defs, body, names, labels, lasts = [], [], [], [], []
    for kind, statements, params, results in the_plan.segments:
        if kind == "eager":
            body += statements
            continue
        name = f"{_PREFIX}piece{len(names)}"
        first, end = statements[0].lineno, statements[-1].end_lineno
        names.append(name)
        labels.append(f"{func.__qualname__} (lines {first}-{end})")
        at = dict(lineno=first, col_offset=0)
        load = lambda n: ast.Name(n, ast.Load(), **at)  # noqa: E731
        inner = list(statements)
        last = statements is the_plan.segments[-1][1]
        lasts.append(last)
        if not last:
            inner.append(ast.Return(ast.Tuple([load(n) for n in results], ast.Load(), **at), **at))
        defs.append(_def(f"{name}_fn", ast.arguments(posonlyargs=[], args=[ast.arg(p, **at) for p in params],
                                                     kwonlyargs=[], kw_defaults=[], defaults=[]), inner, at))
        call = ast.Call(load(name), [load(p) for p in params], [], **at)
        if last:
            body.append(ast.Return(call, **at))
        elif results:
            body.append(ast.Assign([ast.Tuple([ast.Name(n, ast.Store(), **at) for n in results], ast.Store(), **at)],
                                   call, **at))
        else:
            body.append(ast.Expr(call, **at))
    at = dict(lineno=fdef.lineno, col_offset=0)
    wrapper = _def(_PREFIX + "wrapper", _bare(fdef.args), body, at)
    free = [ast.Assign([ast.Name(n, ast.Store(), **at)], ast.Constant(None, **at), **at)
            for n in [*code.co_freevars, *names]]
    made = ast.Return(ast.Tuple([ast.Name(d.name, ast.Load(), **at) for d in [*defs, wrapper]], ast.Load(), **at), **at)
    maker = _def(_PREFIX + "make", _NO_ARGS, free + defs + [wrapper, made], at)
    namespace = {}
    exec(compile(ast.Module([maker], []), code.co_filename, "exec"), namespace)
    made = namespace[_PREFIX + "make"]()
    cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    pieces = []
    for f, label, last in zip(made, labels, lasts):
        pieces.append(make_piece(_rebind(f, func, cells, f.__name__[len(_PREFIX):-3], None), label, last))
    cells.update((name, types.CellType(p)) for name, p in zip(names, pieces))
    split_fn = _rebind(made[-1], func, cells, func.__name__, func.__defaults__)
    split_fn.__kwdefaults__ = func.__kwdefaults__
    split_fn.pieces = pieces
    return split_fn


def _def(name, arguments, body, at):
    fields = dict(name=name, args=arguments, body=body, decorator_list=[], returns=None, **at)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12
        fields["type_params"] = []
    return ast.FunctionDef(**fields)


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


class _Piece:
    """A piece's callable: its compiled function, whose recordings are checked (:func:`unsafe`):
    a result the recording had identical to an input tensor (or parameter) is that tensor in
    each replay too (a replay's own is an alias of it); one a replay cannot give back the same
    makes the piece run its Python function, eagerly, from then on, unless it is the ``last``
    piece, whose results are the function's (returned as a whole function's replay returns them)."""

    def __init__(self, fn, compiled, log, last):
        self.fn, self.compiled, self.log, self.last = fn, compiled, log, last
        self.eager, self.same = False, None

    def __call__(self, *args):
        if self.eager:
            return self.fn(*args)
        compiled = self.compiled
        n = len(compiled._entries)
        results = compiled(*args)
        if len(compiled._entries) != n:  # a recording: its results are the eager run's
            same, why = unsafe(results, args, compiled._world)
            if why is None and self.same is not None and _key(same) != _key(self.same):
                why = "results identical to other inputs than an earlier recording's"
            if why is not None and not self.last:
                self.eager = True
                self.log(f"{compiled._label} runs eagerly from now on: it returns {why}")
            self.same = same
        elif self.same:
            flat, tensors = flatten(results), flatten(args)
            for j, source in self.same:
                want = tensors[source] if type(source) is int else source
                if flat[j] is not want and flat[j]._data is want._data:
                    flat[j] = want  # (same array: the alias a joint graph's autograd node made)
            results = unflatten(skeleton(results), iter(flat))
        return results


def _key(same):
    return [(j, s if type(s) is int else id(s)) for j, s in same]


def unsafe(results, args, world):
    """``(same, why)`` of a recording's ``results``: ``same`` lists ``(j, source)`` for each
    returned tensor ``j`` (in :func:`~.structure.flatten` order) that is an input tensor
    (``source``: its index among the arguments' tensors) or a parameter or tensor the function
    read (``source``: it); ``why`` (None when safe) says what a replay could return differently:
    a tensor sharing memory with an input, parameter, tensor read or another result without
    being it (a replay returns new arrays), a mutable or unknown object (a replay returns the
    recorded one)."""
    todo = [results]
    while todo:
        v = todo.pop()
        if isinstance(v, tuple):
            todo += v
        elif isinstance(v, Module) and any(v is m for m in world.all_modules) or \
                isinstance(v, Optimizer) and any(v is o for o in world.optimizers):
            continue
        elif not isinstance(v, _ATOMS + (Tensor,)):
            return [], f"a {type(v).__name__}"
    inputs, known, tensors, same = flatten(args), [*world.params, *world.free], flatten(results), []
    for j, t in enumerate(tensors):
        source = next((i for i, a in enumerate(inputs) if a is t), None)
        if source is None:
            source = next((o for o in known if o is t), None)
        if source is not None:
            same.append((j, source))
            continue
        for other in [*inputs, *known, *tensors[:j]]:
            a, b = t._data, other._data
            if type(a) is not np.ndarray or type(b) is not np.ndarray or np.may_share_memory(a, b):
                return same, "a tensor that shares memory with an input, a parameter or another result"
    return same, None


def split(compiled, cap, log):
    """``(callable, Plan)`` running ``compiled``'s function split at ``cap``'s breaks (the
    pieces made as ``compiled`` was, fullgraph off), or ``(None, reason)`` where refused."""
    if compiled._spec is not None or getattr(compiled, "_piece", False):
        return None, "a dynamic shapes spec, or a piece itself"
    try:
        the_plan = plan(compiled._fn, compiled._signature_of, cap)
        _, bound, module = target(compiled._fn, compiled._signature_of)

        def make_piece(fn, label, last):
            piece = type(compiled)(fn, False, compiled._backend, compiled._options, compiled._recompile_limit,
                                   compiled._dynamic, name=label)
            piece._piece = True
            return _Piece(fn, piece, log, last)
        split_fn = build(the_plan, make_piece)
    except Refused as e:
        return None, str(e)
    if module is not None:
        return _module_call(module, split_fn, compiled._fn), the_plan
    if bound is not None:
        return types.MethodType(split_fn, bound), the_plan
    return split_fn, the_plan


def _module_call(module, split_forward, call):
    """Calls ``module`` with its ``forward`` split; with hooks, ``call`` (the whole module, eagerly)."""
    def run(*args, **kwargs):
        if module._forward_pre_hooks or module._forward_hooks or module._backward_hooks \
                or module._backward_pre_hooks or _module._global_forward_pre_hooks or _module._global_forward_hooks:
            return call(*args, **kwargs)
        return split_forward(module, *args, **kwargs)
    run.pieces = split_forward.pieces
    return run
