"""What the source of a function being split says (:mod:`.split`): whether it is the code that
runs (:func:`compiles_to`), what a split cannot keep (:func:`check`), and for each statement
the names it binds (:func:`stores`, :func:`definite`), reads (:func:`reads`, :func:`exposed`) and whether it
leaves its body by ``return``/``break``/``continue`` (:func:`escapes`). All from ``ast``;
nothing is run.
"""
import ast
import dis
import inspect
import types

__all__ = ["Refused", "PREFIX", "NO_ARGS", "OPENABLE", "compiles_to", "check", "first", "trivial", "escapes",
           "backward_of", "own", "stores", "definite",
           "reads", "exposed", "make_def"]

PREFIX = "_ember_split_"
NO_ARGS = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
OPENABLE = (ast.For, ast.While, ast.If, ast.With, ast.Try)  # split inside their bodies (headers run eagerly)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FORBIDDEN = {ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.Match: "match",
              ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await"}
_FRAME_CALLS = {"locals", "vars", "eval", "exec", "dir"}


class Refused(Exception):
    """Why a function is not split (it then runs eagerly at every call)."""


def compiles_to(fdef, code):
    """Whether ``fdef`` compiles (inside a function giving it ``code``'s free variables) to
    ``code``'s bytecode, constants and names: the source read is what runs."""
    at = dict(lineno=fdef.lineno, col_offset=0)
    free = [ast.Assign([ast.Name(n, ast.Store(), **at)], ast.Constant(None, **at), **at) for n in code.co_freevars]
    bare = ast.FunctionDef(**{f: getattr(fdef, f) for f in fdef._fields}, **at)
    bare.decorator_list = []
    outer = compile(ast.Module([make_def(PREFIX + "check", NO_ARGS, free + [bare], at)], []), code.co_filename, "exec")
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


def first(statement):
    """The first source line of ``statement``, its decorators' included."""
    return min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])


def check(fdef, code):
    """Raises :class:`Refused` where the body uses what a split cannot keep."""
    nested = False
    for node in ast.walk(fdef):
        if type(node) in _FORBIDDEN:
            raise Refused(f"it uses {_FORBIDDEN[type(node)]}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FRAME_CALLS:
            raise Refused(f"it calls {node.func.id}()")
        if isinstance(node, ast.Name) and node.id.startswith(PREFIX):
            raise Refused(f"a name starting with {PREFIX}")
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
    bound = set(names).union(*(stores(s) for s in fdef.body))
    # (Python 3.12 inlines comprehensions: their variables are the function's locals too)
    inlined = {n.id for c in ast.walk(fdef) if isinstance(c, _COMPREHENSIONS) for g in c.generators
               for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    local = set(code.co_varnames) | set(code.co_cellvars)
    if not bound <= local or not local - bound <= inlined:
        raise Refused("a binding the split cannot follow")



def trivial(s):
    """A statement of plain Python not worth a graph: ``pass``, ``break``, ``continue``, ``raise``
    (a piece that raises keeps no graph), a docstring, ``return`` of names, a name bound to a
    name or constant."""
    if isinstance(s, (ast.Pass, ast.Break, ast.Continue, ast.Raise)) \
            or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
        return True
    if isinstance(s, ast.Assign) and isinstance(s.value, (ast.Name, ast.Constant)):  # ``acc = x``
        return all(isinstance(t, ast.Name) for t in s.targets)
    if isinstance(s, ast.Return):
        return s.value is None or all(isinstance(n, (ast.Name, ast.Constant, ast.Tuple, ast.Load))
                                      for n in ast.walk(s.value))
    return False


def escapes(statement):
    """Whether ``statement`` may leave the body it sits in other than by its end: a ``return``,
    or a ``break``/``continue`` of a loop around it (one inside its own loop's body is that
    loop's; one in a loop's ``else`` is not). Such a statement cannot be part of a piece (a
    generated function) inside a loop or branch."""
    todo = [(statement, False)]
    while todo:
        node, looped = todo.pop()
        if isinstance(node, ast.Return) or isinstance(node, (ast.Break, ast.Continue)) and not looped:
            return True
        if isinstance(node, _SCOPES + _COMPREHENSIONS):
            continue
        if isinstance(node, _LOOPS):
            todo += [(n, True) for n in node.body] + [(n, looped) for n in node.orelse]
            todo += [(n, looped) for n in (getattr(node, "target", None), getattr(node, "iter", None),
                                           getattr(node, "test", None)) if n is not None]
        else:
            todo += [(n, looped) for n in ast.iter_child_nodes(node)]
    return False


def backward_of(statement):
    """The names read by what ``statement`` calls ``.backward()`` on (``loss.backward()``: loss)."""
    names = set()
    for n in own(statement):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward":
            names |= reads(n.func.value)
    return names


def own(node):
    """The nodes of ``node`` in the function's own scope: nested functions, classes, lambdas and
    comprehensions are yielded, not entered."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES + _COMPREHENSIONS):
            todo += ast.iter_child_nodes(n)


def stores(node):
    """The names ``node`` binds in the function's scope."""
    names = set()
    for n in own(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.alias):
            names.add(n.asname or n.name.partition(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
    return names


def definite(s):
    """The names statement ``s`` binds on every way through it that reaches the next statement."""
    if isinstance(s, ast.Assign):
        return set().union(*(stores(t) for t in s.targets))
    if isinstance(s, (ast.AnnAssign, ast.AugAssign)):
        return stores(s.target) if getattr(s, "value", None) is not None else set()
    if isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stores(s)
    if isinstance(s, ast.With):
        bound = set().union(*(stores(i.optional_vars) for i in s.items if i.optional_vars is not None))
        return bound.union(*map(definite, s.body))
    if isinstance(s, ast.If) and s.orelse:
        return set().union(*map(definite, s.body)) & set().union(*map(definite, s.orelse))
    if isinstance(s, ast.Try):  # the body and else, or each handler that falls through (its name deleted)
        bound = set().union(*map(definite, s.body + s.orelse))
        for h in s.handlers:
            if not (h.body and isinstance(h.body[-1], (ast.Raise, ast.Return))):
                bound &= set().union(*map(definite, h.body)) - {h.name}
        return bound.union(*map(definite, s.finalbody))
    return set()


def reads(node):
    """The names ``node`` reads from the function's scope (a comprehension's own variables left
    out; a nested function's reads all counted, which only adds parameters)."""
    if isinstance(node, _COMPREHENSIONS):
        outer, inner, mine = reads(node.generators[0].iter), set(), set()
        for k, g in enumerate(node.generators):
            if k:
                inner |= reads(g.iter)
            mine |= stores(g.target)
            inner |= set().union(*map(reads, g.ifs))
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return outer | (inner.union(*map(reads, parts)) - mine)
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    names = set().union(*map(reads, ast.iter_child_nodes(node)))
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):  # ``h += 1`` reads h
        names.add(node.target.id)
    return names


def exposed(statements):
    """The names ``statements`` (run in order) may read before binding them for sure: a later
    statement's read of a name an earlier one binds on every way is not counted, nor a read in a
    ``for`` body of the loop's own target."""
    needed, inside = set(), set()
    for s in statements:
        if isinstance(s, ast.For):
            names = reads(s.iter) | reads(s.target) | (exposed(s.body) - stores(s.target)) | exposed(s.orelse)
        else:
            names = reads(s)
        needed |= names - inside
        inside |= definite(s)
    return needed


def make_def(name, arguments, body, at):
    """An ``ast.FunctionDef`` named ``name`` with ``arguments`` and ``body``, located as ``at``
    (``lineno``/``col_offset`` fields); ``type_params`` where the Python (3.12+) has them."""
    fields = dict(name=name, args=arguments, body=body, decorator_list=[], returns=None, **at)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12
        fields["type_params"] = []
    return ast.FunctionDef(**fields)


