"""Symbolic sizes: integer expressions over named size symbols (``s0``, ``2*s0 + 1``, ``B*T``).

A dynamic dimension of a captured graph is a symbol; sizes and attrs derived from it are
:class:`Expr` trees of ``+``, ``*``, ``//`` and ``%`` over symbols and Python ints, folded where
both sides are ints. Comparisons give a :class:`Cond` (``B % 2 == 0``), evaluated at run time as
an assumption check. :func:`.size_fits.fit` recovers an expression from sizes observed at several
points: the compiler captures a function at a few sizes and fits every size-dependent value of
its graph (see :mod:`.dynamic`). No sympy: nothing here needs solving, only evaluating and printing.
"""
import contextlib
import contextvars
import operator

__all__ = ["Expr", "Cond", "SymbolicSizeError", "Underdetermined", "symbol", "at_least_1", "evaluate", "evaluator",
           "free_symbols", "subexpressions", "substitute", "c_spelling", "minimum"]

# While set (by :func:`c_spelling`), expressions print as C: the C generator formats sizes
# with f-strings, and this makes every one of them C without touching each kernel's template.
_C_SPELLING = contextvars.ContextVar("c_spelling", default=None)

_PRECEDENCE = {"+": 1, "*": 2, "//": 2, "%": 2, "/": 2}
_OPERATOR = {"+": operator.add, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
             "/": operator.truediv, "min": min, "max": max}


class SymbolicSizeError(TypeError):
    """A size expression was asked for an int or a truth value it has no value for yet."""


class Underdetermined(ValueError):
    """:func:`.size_fits.fit`: more than one expression of its kinds gives the values at the points (the
    points do not tell a floor's offset apart: ``(s0 + 1) // 4`` and ``(s0 + 2) // 4`` agree at
    ``s0 = 4, 5, 6``); sizes at more points may decide."""


class Expr:
    """An integer expression: ``op`` is ``"sym"`` (``args == (name,)``), ``"+"``, ``"*"``,
    ``"//"``, ``"%"``, ``"min"`` or ``"max"`` (two args, each an Expr or an int: :func:`minimum`); ``"/"`` (true division) makes a
    float of two of them (``s0 / (s0 - 1)``, batch norm's unbiased-variance factor). Hashed by identity; ``==`` and the
    other comparisons build a :class:`Cond` (``bool()`` of ``==``/``!=`` compares structure)."""
    __slots__ = ("op", "args", "__weakref__")

    def __init__(self, op, args):
        self.op, self.args = op, tuple(args)

    # arithmetic: ints fold, identities vanish
    def __add__(self, other):
        return _binary("+", self, other)

    def __radd__(self, other):
        return _binary("+", other, self)

    def __sub__(self, other):
        return _binary("+", self, _binary("*", -1, other))

    def __rsub__(self, other):
        return _binary("+", other, _binary("*", -1, self))

    def __neg__(self):
        return _binary("*", -1, self)

    def __mul__(self, other):
        return _binary("*", self, other)

    def __rmul__(self, other):
        return _binary("*", other, self)

    def __floordiv__(self, other):
        return _binary("//", self, other)

    def __rfloordiv__(self, other):
        return _binary("//", other, self)

    def __truediv__(self, other):
        return _binary("/", self, other)

    def __rtruediv__(self, other):
        return _binary("/", other, self)

    def __mod__(self, other):
        return _binary("%", self, other)

    def __rmod__(self, other):
        return _binary("%", other, self)

    def __eq__(self, other):
        return Cond("==", self, other)

    def __ne__(self, other):
        return Cond("!=", self, other)

    def __lt__(self, other):
        return Cond("<", self, other)

    def __le__(self, other):
        return Cond("<=", self, other)

    def __gt__(self, other):
        return Cond(">", self, other)

    def __ge__(self, other):
        return Cond(">=", self, other)

    __hash__ = object.__hash__

    def __index__(self):
        raise SymbolicSizeError(f"the size {self} is symbolic: it has no int value until the graph runs")

    def code(self, name=str):
        """Python source of the expression; ``name`` maps a symbol's name to its spelling."""
        if self.op == "sym":
            return name(self.args[0])
        a, b = self.args
        if self.op in ("min", "max"):  # (torch's sym_min, sym_max: ``min(k, 8)`` of a traced int)
            return f"{self.op}({', '.join(v.code(name) if isinstance(v, Expr) else str(v) for v in (a, b))})"
        if self.op == "+" and isinstance(b, int) and b < 0:
            return f"{_operand(a, '+', name)} - {-b}"
        if self.op == "+" and isinstance(b, Expr) and b.op == "*" and b.args[0] == -1:
            return f"{_operand(a, '+', name)} - {_operand(b.args[1], '*', name, right=True)}"
        sep = "*" if self.op == "*" else f" {self.op} "
        return f"{_operand(a, self.op, name)}{sep}{_operand(b, self.op, name, right=True)}"

    def c_code(self, name):
        """C source of the expression (sizes are >= 0: C's ``/`` and ``%`` are Python's ``//``
        and ``%`` there), parenthesised; ``name`` maps a symbol's name to its C spelling."""
        if self.op == "sym":
            return name(self.args[0])
        a, b = (v.c_code(name) if isinstance(v, Expr) else f"({v})" if v < 0 else str(v) for v in self.args)
        if self.op == "/":
            return f"((double){a} / {b})"
        if self.op in ("min", "max"):
            return f"({a} {'<' if self.op == 'min' else '>'} {b} ? {a} : {b})"
        return f"({a} {'/' if self.op == '//' else self.op} {b})"

    def __repr__(self):
        spelling = _C_SPELLING.get()
        return self.code() if spelling is None else self.c_code(spelling)

    def key(self):
        """A structural key: equal for equal expressions."""
        return (self.op,) + tuple(a.key() if isinstance(a, Expr) else a for a in self.args)


def _operand(value, op, name, right=False):
    if not isinstance(value, Expr):
        return str(value) if value >= 0 or op == "+" and not right else f"({value})"
    text = value.code(name)
    inner = _PRECEDENCE.get(value.op, 3)
    if inner < _PRECEDENCE[op] or right and inner == _PRECEDENCE[op] and op != "+" and op != "*":
        return f"({text})"
    return text


def _binary(op, a, b):
    for v in (a, b):
        if not isinstance(v, (Expr, int)) or isinstance(v, bool):
            return NotImplemented
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return _OPERATOR[op](a, b)
    if op in ("min", "max") and _key(a) == _key(b):
        return a
    if op == "+":
        if isinstance(a, int) and not isinstance(a, Expr):  # ints go right: s0 + 1
            a, b = b, a
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(b, int) and a.op == "+" and isinstance(a.args[1], int):  # (s0 + 1) - 1: s0
            return _binary("+", a.args[0], a.args[1] + b)
    if op == "*":
        if isinstance(b, int) and not isinstance(b, Expr):  # ints go left: 2*s0
            a, b = b, a
        if isinstance(a, int) and not isinstance(a, Expr):
            if a == 0:
                return 0
            if a == 1:
                return b
    if op == "//" and isinstance(b, int) and b == 1:
        return a
    return Expr(op, (a, b))


class Cond:
    """A comparison of expressions (``B % 2 == 0``): an assumption checked at run time."""
    __slots__ = ("op", "lhs", "rhs")
    _TEST = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__,
             ">": int.__gt__, ">=": int.__ge__}

    def __init__(self, op, lhs, rhs):
        self.op, self.lhs, self.rhs = op, lhs, rhs

    def evaluate(self, sizes):
        """True when the comparison holds for ``sizes`` ({symbol name: int})."""
        return self._TEST[self.op](int(evaluate(self.lhs, sizes)), int(evaluate(self.rhs, sizes)))

    def __bool__(self):
        if self.op not in ("==", "!="):
            raise SymbolicSizeError(f"{self} has no truth value before its symbols have values")
        same = _key(self.lhs) == _key(self.rhs)
        return same if self.op == "==" else not same

    def code(self, name=str):
        """Python source of the comparison; ``name`` maps a symbol's name to its spelling."""
        side = [v.code(name) if isinstance(v, Expr) else str(v) for v in (self.lhs, self.rhs)]
        return f"{side[0]} {self.op} {side[1]}"

    def __repr__(self):
        return self.code()


@contextlib.contextmanager
def c_spelling(name):
    """Within the block, expressions print as C code (:meth:`Expr.c_code` with ``name``)."""
    token = _C_SPELLING.set(name)
    try:
        yield
    finally:
        _C_SPELLING.reset(token)


def _key(value):
    return value.key() if isinstance(value, Expr) else value


def minimum(op, a, b):
    """``min(a, b)`` (``op`` ``"min"``) or ``max(a, b)`` of ints and expressions, as torch's
    ``sym_min``/``sym_max``: an int where both are ints."""
    return _binary(op, a, b)


def symbol(name):
    """The expression of one symbol."""
    return Expr("sym", (name,))


def at_least_1(n):
    """max(1, n): as an int, or as C code for an expression of sizes."""
    return f"({n} > 1 ? {n} : 1)" if isinstance(n, Expr) else max(1, n)


def evaluate(value, sizes):
    """``value`` with every expression in it (also inside tuples, lists, dicts and slices)
    replaced by its int for ``sizes`` ({symbol name: int})."""
    if isinstance(value, Expr):
        if value.op == "sym":
            return sizes[value.args[0]]
        a, b = (evaluate(v, sizes) for v in value.args)
        return _OPERATOR[value.op](a, b)
    if isinstance(value, tuple):
        return tuple(evaluate(v, sizes) for v in value)
    if isinstance(value, list):
        return [evaluate(v, sizes) for v in value]
    if isinstance(value, dict):
        return {k: evaluate(v, sizes) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(evaluate(value.start, sizes), evaluate(value.stop, sizes), evaluate(value.step, sizes))
    return value


def substitute(value, sizes):
    """``value`` (an :class:`Expr`, a :class:`Cond` or an int) with the symbols of ``sizes``
    ({symbol name: int}) replaced by their ints, folded (``i0 <= s0`` at ``s0 = 8``: ``i0 <= 8``);
    the others stay symbols."""
    if isinstance(value, Cond):
        return Cond(value.op, substitute(value.lhs, sizes), substitute(value.rhs, sizes))
    if not isinstance(value, Expr):
        return value
    if value.op == "sym":
        return sizes.get(value.args[0], value)
    return _binary(value.op, *(substitute(v, sizes) for v in value.args))


def evaluator(value):
    """A function ``f(sizes)`` equal to ``evaluate(value, sizes)`` for ``value`` an int, an
    :class:`Expr` or a tuple or list of them, compiled once from the expressions' Python source
    (a graph's driver sizes its buffers at every call: the tree walk cost ~60 us a call for a
    CNN step's floors and products); other values are evaluated by :func:`evaluate`."""
    def source(v):
        if isinstance(v, Expr):
            return f"({v.code(lambda n: f'sizes[{n!r}]')})"
        if isinstance(v, int) and not isinstance(v, bool):
            return repr(v)
        if isinstance(v, (tuple, list)):
            parts = [source(x) for x in v]
            if None not in parts:
                return f"({''.join(p + ', ' for p in parts)})" if isinstance(v, tuple) else f"[{', '.join(parts)}]"
        return None
    text = source(value)
    return (lambda sizes: evaluate(value, sizes)) if text is None else eval(f"lambda sizes: {text}", {})


def subexpressions(expr):
    """``expr`` (an :class:`Expr`, or an int: none) and each expression inside it, outermost first."""
    if isinstance(expr, Expr):
        yield expr
        for a in expr.args:
            yield from subexpressions(a)


def free_symbols(value):
    """The names of the symbols in ``value`` (as :func:`evaluate` walks it), in order met."""
    found = {}

    def walk(v):
        if isinstance(v, Expr):
            if v.op == "sym":
                found.setdefault(v.args[0])
            for a in v.args:
                walk(a)
        elif isinstance(v, (tuple, list)):
            for a in v:
                walk(a)
        elif isinstance(v, dict):
            for a in v.values():
                walk(a)
        elif isinstance(v, slice):
            walk((v.start, v.stop, v.step))
        elif isinstance(v, Cond):
            walk((v.lhs, v.rhs))
    walk(value)
    return list(found)
