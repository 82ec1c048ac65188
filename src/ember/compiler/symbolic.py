"""Symbolic sizes: integer expressions over named size symbols (``s0``, ``2*s0 + 1``, ``B*T``).

A dynamic dimension of a captured graph is a symbol; sizes and attrs derived from it are
:class:`Expr` trees of ``+``, ``*``, ``//`` and ``%`` over symbols and Python ints, folded where
both sides are ints. Comparisons give a :class:`Cond` (``B % 2 == 0``), evaluated at run time as
an assumption check. :func:`fit` recovers an expression from sizes observed at several points:
the compiler captures a function at a few sizes and fits every size-dependent value of its graph
(see :mod:`.dynamic`). No sympy: nothing here needs solving, only evaluating and printing.
"""
import contextlib
import contextvars
import functools
import itertools
import math
import operator

import numpy as np

__all__ = ["Expr", "Cond", "SymbolicSizeError", "Underdetermined", "symbol", "at_least_1", "evaluate", "evaluator",
           "free_symbols", "subexpressions", "fit", "fit_ratio", "c_spelling", "minimum"]

# While set (by :func:`c_spelling`), expressions print as C: the C generator formats sizes
# with f-strings, and this makes every one of them C without touching each kernel's template.
_C_SPELLING = contextvars.ContextVar("c_spelling", default=None)

_PRECEDENCE = {"+": 1, "*": 2, "//": 2, "%": 2, "/": 2}
_OPERATOR = {"+": operator.add, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
             "/": operator.truediv, "min": min, "max": max}


class SymbolicSizeError(TypeError):
    """A size expression was asked for an int or a truth value it has no value for yet."""


class Underdetermined(ValueError):
    """:func:`fit`: more than one expression of its kinds gives the values at the points (the
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


def _basis(points):
    """The monomials ``1, s_i, s_i*s_j`` of the symbols that vary over ``points``, and their
    values at each point (rows)."""
    names = sorted({n for p in points for n in p if len({q[n] for q in points}) > 1})
    terms = [()] + [(n,) for n in names] + [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    rows = np.array([[math.prod(p[n] for n in t) for t in terms] for p in points], float)
    return terms, rows


def _polynomial(coefficients, terms):
    expr = 0
    for c, t in zip(coefficients, terms):
        monomial = 1
        for n in t:
            monomial = monomial * symbol(n)
        expr = expr + c * monomial if t else expr + c
    return expr


def fit_ratio(values, points):
    """The expression ``P / Q`` (``P``, ``Q`` polynomials as in :func:`fit`) that gives the
    floats ``values[k]`` at ``points[k]`` to within 4 ulps, or None. Found as the null space of
    ``v_k Q(p_k) - P(p_k) = 0``, scaled to integers and checked at every point."""
    v = np.array(values, float)
    if np.array_equal(v, np.full_like(v, values[0]), equal_nan=True):
        return values[0]  # (a NaN too: the mean of an empty tensor passed in)
    if not np.isfinite(v).all():
        return None
    terms, rows = _basis(points)
    for m in range(len(terms), 1, -1):  # cross terms first, dropped while they are not determined
        system = np.hstack([v[:, None] * rows[:, :m], -rows[:, :m]])
        _, sv, vt = np.linalg.svd(system)
        if len(values) < 2 * m - 1 or (len(sv) == 2 * m and sv[-2] < 1e-9 * sv[0]):
            continue  # too few points, or more than one solution
        x = vt[-1] / np.min(np.abs(vt[-1][np.abs(vt[-1]) > 1e-9 * np.abs(vt[-1]).max()]))
        for scale in range(1, 13):
            coef = np.rint(x * scale)
            if np.allclose(x * scale, coef, rtol=0, atol=1e-6):
                break
        else:
            return None
        if coef[:m][np.flatnonzero(coef[:m])[-1]] < 0:  # the denominator's leading term positive
            coef = -coef
        q, p = coef[:m].astype(int).tolist(), coef[m:].astype(int).tolist()
        expr = _binary("/", _polynomial(p, terms[:m]), _polynomial(q, terms[:m]))
        try:
            got = [float(evaluate(expr, point)) for point in points]
        except ZeroDivisionError:
            return None
        if np.allclose(got, v, rtol=4 * np.finfo(float).eps, atol=0):
            return expr
    return None


@functools.lru_cache(maxsize=32)
def _solver(points):
    """(monomials, pseudo-inverse of their values at ``points``) for :func:`fit`, or None when
    the points cannot tell the linear terms apart. ``points``: a tuple of sorted ``(name,
    size)`` tuples; fitting a graph fits thousands of values over the same points."""
    terms, rows = _basis([dict(p) for p in points])
    while terms and np.linalg.matrix_rank(rows) < len(terms):  # too few points for cross terms
        if len(terms[-1]) < 2:
            return None
        terms, rows = terms[:-1], rows[:, :-1]
    return terms, np.linalg.pinv(rows)


def fit(values, points, atoms=()):
    """The expression that gives the ints ``values[k]`` at ``points[k]`` ({symbol name: int})
    for every k, or None: ``(c + sum(a_i s_i) + sum(a_ij s_i s_j)) // d`` (integer
    coefficients, ``d <= 12``, 1 where it can be), else a floor of an affine expression (a
    convolution's or pooling's output size ``(H + 2p - d(k-1) - 1) // s + 1``, nested ones
    folded: ``(s0 - 8) // 4``; see :func:`_fit_floor`), else a remainder ``(s0 + 1) % 2``
    (:func:`_fit_remainder`), else a remainder of a floor plus an int ``s0 // 2 % 2 - 1``
    (:func:`_fit_remainder_of_floor`), else an int times a product of up to
    three of ``atoms`` (floors fitted before: ``16*((s0 - 8) // 4)*((s0 - 8) // 4)``, a
    flattened image's size) and symbols (:func:`_fit_product`).

    The coefficients come from least squares over the points, rounded, then checked exactly
    against every point: a value that is no such expression (``s0**2``, ``min(s0, 8)``) over
    points that tell it apart is reported as None, never approximated.

    Raises:
        Underdetermined: no polynomial fits, and more than one floor (or product) does.
    """
    if all(v == values[0] for v in values):
        return values[0]
    solver = _solver(tuple(tuple(sorted(p.items())) for p in points))
    if solver is None:
        return None
    terms, pseudo_inverse = solver
    coef = pseudo_inverse @ np.array(values, float)  # the least-squares coefficients
    for divisor in range(1, 13):  # 3*s0 // 2: sizes halved by a view, a stride
        scaled = np.rint(coef * divisor)
        if np.allclose(coef * divisor, scaled, rtol=0, atol=1e-6):
            expr = _binary("//", _polynomial(scaled.astype(int).tolist(), terms), divisor)
            if all(evaluate(expr, p) == v for p, v in zip(points, values)):
                return expr
    found = _fit_minmax(values, points, atoms)
    if found is not None or any(m.op in ("min", "max") and len({_key(a) for a in _picks(m, points)}) > 1
                                for m in atoms):  # (points on both sides of a corner: no floor either)
        return found
    for kind in (_fit_floor, _fit_remainder, _fit_remainder_of_floor):
        found = kind(values, points)
        if found is not None:
            return found
    return _fit_product(values, points, atoms) if atoms else None


def _picks(m, points):
    """The operand ``min``/``max`` expression ``m`` picks at each of ``points``."""
    a, b = m.args
    for p in points:
        x, y = evaluate(a, p), evaluate(b, p)
        yield a if (x <= y) == (m.op == "min") else b


def _fit_minmax(values, points, atoms):
    """``a * m + b`` (ints ``a``, ``b``; ``m`` a ``min``/``max`` of ``atoms``, one an int
    argument's ``min(k, 4)`` took: ``x[:min(k, 4)]``'s length) that gives ``values`` at ``points``,
    or None; Underdetermined when two that differ somewhere fit, but for one inside the other
    (``max(min(k, 3), 1)``: the outer one, what the program computed)."""
    found, inner = {}, set()
    for m in atoms:
        if not isinstance(m, Expr) or m.op not in ("min", "max"):
            continue
        at = [evaluate(m, p) for p in points]
        j = next((j for j in range(1, len(at)) if at[j] != at[0]), None)
        if j is None or (values[j] - values[0]) % (at[j] - at[0]):
            continue
        a = (values[j] - values[0]) // (at[j] - at[0])
        if all(a * t + values[0] - a * at[0] == v for t, v in zip(at, values)):
            expr = _binary("+", _binary("*", a, m), values[0] - a * at[0])
            found[_key(m)] = expr
            inner.update(_key(e) for e in subexpressions(m) if e is not m)
    found = {_key(e): e for k, e in found.items() if k not in inner}
    if len(found) > 1:
        raise Underdetermined(f"{values} at {points}: more than one min/max of the sizes fits")
    return next(iter(found.values()), None)


def _sloped(values, points):
    """``(names, sizes, values, free, span)`` for a remainder's search: the symbols that vary
    over ``points``, the sizes (rows) and values as int arrays, whether each symbol may have a
    slope (not when two points differing in it alone have one value) and its span; None when
    none varies or more than two may have slopes."""
    names = sorted({n for p in points for n in p if len({q[n] for q in points}) > 1})
    s = np.array([[p[n] for n in names] for p in points], np.int64)
    v = np.array(values, np.int64)
    alone = [[(j, k) for j in range(len(v)) for k in range(j) if np.count_nonzero(s[j] != s[k]) == 1 and
              s[j][i] != s[k][i]] for i in range(len(names))]
    free = [not pairs or any(v[j] != v[k] for j, k in pairs) for pairs in alone]
    if not names or sum(free) > 2:
        return None
    return names, s, v, free, s.max(0) - s.min(0)


def _fit_remainder(values, points):
    """``(sum(a_i s_i) + c) % d`` (``0 <= a_i, c < d <= 12``, over at most two symbols; a
    convolution's input gradient pads by what its stride left over) that gives ``values`` at
    ``points``, or None; each symbol with a slope must span two periods, and Underdetermined
    when more than one fits."""
    sloped = _sloped(values, points)
    if sloped is None or min(values) < 0:
        return None
    names, s, v, free, span = sloped
    found = []
    for d in range(max(values) + 1, 13):
        for a in itertools.product(*[range(d) if f and w >= 2 * d else (0,) for f, w in zip(free, span)]):
            if any(a):
                at = s @ np.array(a, np.int64)
                found += [(a, c, d) for c in range(d) if np.array_equal((at + c) % d, v)]
    a, c, d = _the_one(found, len(found) > 1, values, points, "remainder")
    return None if a is None else _binary("%", _binary("+", _linear(a, names), c), d)


def _fit_remainder_of_floor(values, points):
    """``(sum(a_i s_i) + c) // q % d + e`` (``q*d <= 16``, ``0 <= a_i, c < q*d``, over at most
    two symbols; a stride-2 convolution's input gradient after a 2x2 pooling crops by
    ``(s0 // 2 - 3) % 2``, its padding ``s0 // 2 % 2 - 1``) that gives ``values`` at ``points``,
    or None. Each symbol with a slope spans two periods (``q*d``); the candidates that fit are
    compared over a whole period of every symbol: Underdetermined when two differ there."""
    sloped = _sloped(values, points)
    if sloped is None:
        return None
    names, s, v, free, span = sloped
    found = []
    for q in range(1, 9):
        for d in range(max(2, int(v.max() - v.min()) + 1), 16 // q + 1):
            period = q * d
            offsets = np.arange(period)[:, None]
            for a in itertools.product(*[range(period) if f and w >= 2 * period else (0,) for f, w in zip(free, span)]):
                if any(a):
                    r = (s @ np.array(a, np.int64) + offsets) // q % d  # (offset c, point)
                    e = v[0] - r[:, 0]
                    found += [(a, int(c), q, d, int(e[c])) for c in np.flatnonzero((r + e[:, None] == v).all(1))]
    if not found:
        return None
    grid = np.array(list(itertools.product(range(math.lcm(*{q * d for _, _, q, d, _ in found})), repeat=len(names))))
    if len(found) > 1 and len({((grid @ np.array(a) + c) // q % d + e).tobytes() for a, c, q, d, e in found}) > 1:
        raise Underdetermined(f"{values} at {points}: more than one remainder of a floor of the sizes fits")
    a, c, q, d, e = min(found, key=lambda f: (f[2] * f[3], f[2], sum(f[0]), f[1]))  # one function: its simplest form
    return _binary("+", _binary("%", _binary("//", _binary("+", _linear(a, names), c), q), d), e)


def _the_one(found, ambiguous, values, points, kind):
    """The one (slopes, offset, divisor) of ``found``, or (None,) * 3; Underdetermined when
    ``ambiguous`` (more than one fits the points: never guess)."""
    if ambiguous:
        raise Underdetermined(f"{values} at {points}: more than one {kind} of the sizes fits")
    return found[0] if found else (None, None, None)


def _linear(slopes, names):
    """``sum(slopes[i] * symbol(names[i]))``."""
    expr = 0
    for k, n in zip(slopes, names):
        expr = expr + k * symbol(n)
    return expr


def _fit_product(values, points, atoms):
    """``k * f1 * ... * fm`` (an int ``k``, ``m <= 3`` factors among ``atoms`` and the symbols
    that vary) that gives ``values`` at ``points``, or None; Underdetermined when two products
    that differ somewhere fit (their values differ at none of the points)."""
    names = sorted({n for p in points for n in p if len({q[n] for q in points}) > 1})
    factors = list({a.key(): a for a in atoms if isinstance(a, Expr)}.values()) + [symbol(n) for n in names]
    at = np.array([[evaluate(f, p) for f in factors] for p in points], np.int64)
    v = np.array(values, np.int64)
    found = []
    for m in (1, 2, 3):
        for chosen in itertools.combinations_with_replacement(range(len(factors)), m):
            product = np.prod(at[:, list(chosen)], axis=1)
            k = next((int(v[j] // product[j]) for j in np.flatnonzero(product)), 0)
            if k and np.array_equal(k * product, v):
                found.append((k, chosen))
    if len(found) > 1:
        raise Underdetermined(f"{values} at {points}: more than one product of the sizes fits")
    if not found:
        return None
    k, chosen = found[0]
    expr = k
    for f in chosen:
        expr = expr * factors[f]
    return expr


def _fit_floor(values, points):
    """``(sum(a_i s_i) + c) // d + e`` (ints ``a_i >= 0``, ``0 <= c < d <= 12``, ``gcd(a, d)
    == 1``) that gives ``values`` at ``points``, or None.

    For each ``d`` the slopes ``a_i`` are ``d`` times the least-squares slopes, rounded either
    way; the offsets that fit are then the integers ``C`` with ``d*v_k <= a.s_k + C < d*v_k + d``
    at every point, an interval. With ``gcd(a, d) == 1`` two offsets give different values at
    some size, so the fit is returned only when the interval is one integer (the points hold
    both ends of the floor's period, ``a.s + C`` = 0 and ``d - 1`` mod ``d``) and each symbol
    with a slope spans two periods (``max - min >= 2d``: three sizes of ``min(s0, 4)`` are no
    floor), and only when no other floor fits. ``a_i >= 0`` and ``c >= 0`` keep the numerator
    >= 0, where C's ``/`` is ``//``.

    Raises:
        Underdetermined: a floor fits, but the interval holds more than one offset.
    """
    names = sorted({n for p in points for n in p if len({q[n] for q in points}) > 1})
    if not names or len(names) > 4:
        return None
    s = np.array([[p[n] for n in names] for p in points], np.int64)
    v = np.array(values, np.int64)
    slope = np.linalg.lstsq(np.hstack([s, np.ones((len(s), 1))]).astype(float), v.astype(float), rcond=None)[0][:-1]
    span = s.max(0) - s.min(0)
    found, ambiguous = [], False
    for d in range(2, 13):
        choices = [sorted({max(0, math.floor(d * m)), max(0, math.ceil(d * m))}) for m in slope]
        for a in itertools.product(*choices):
            if not any(a) or math.gcd(d, *a) != 1 or any(k and w < 2 * d for k, w in zip(a, span)):
                continue
            at = s @ np.array(a, np.int64)
            lo, hi = int((d * v - at).max()), int((d * v + d - 1 - at).min())
            ambiguous |= lo < hi
            if lo == hi:
                found.append((a, lo, d))
    a, offset, d = _the_one(found, ambiguous or len(found) > 1, values, points, "floor")
    if a is None:
        return None
    return _binary("+", _binary("//", _binary("+", _linear(a, names), offset % d), d), offset // d)
