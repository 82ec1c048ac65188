"""Fitting size expressions (:mod:`.symbolic`) to the ints a graph held at several size points
(:mod:`.dynamic`'s probes): :func:`fit` for ints (a polynomial of the symbols, else a floor, a
remainder, a quotient, a product of floors, a ``min``/``max``), :func:`fit_ratio` for floats (a
ratio of two polynomials). Every expression returned gives the values at every point exactly;
none is approximated.
"""
import functools
import itertools
import math

import numpy as np

from .symbolic import Expr, Underdetermined, _binary, _key, evaluate, subexpressions, symbol

__all__ = ["fit", "fit_ratio"]


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
    coefficients, ``d <= 12``, 1 where it can be), else a polynomial over a symbol
    (``12 // s0``: :func:`_fit_quotient`), else a floor of an affine expression (a
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
    if _solver(tuple(tuple(sorted(p.items())) for p in points)) is None:
        return None
    for kind in (_fit_polynomial, _fit_quotient):
        expr = kind(values, points)
        if expr is not None:
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


def _fit_polynomial(values, points):
    """``(c + sum(a_i s_i) + sum(a_ij s_i s_j)) // d`` (integer coefficients, ``d <= 12``, 1 where
    it can be) that gives ``values`` at ``points``, or None."""
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
    return None


def _fit_quotient(values, points):
    """``P // s`` (``P`` a polynomial of the sizes, ``s`` a symbol >= 1 at every point) where
    ``values[k] * s == P`` exactly at every point, or None: the size ``reshape(n, -1)`` infers,
    ``numel // n`` (torch's ``12 // s0``, guarded ``12 % s0 == 0``: a value of ``n`` that does not
    divide is another call, recorded where eager raises)."""
    names = sorted({n for p in points for n in p if len({q[n] for q in points}) > 1})
    for name in names:
        if any(p[name] < 1 for p in points):
            continue
        product = [v * p[name] for v, p in zip(values, points)]
        numerator = product[0] if all(w == product[0] for w in product) else _fit_polynomial(product, points)
        if numerator is not None:
            expr = _binary("//", numerator, symbol(name))
            if all(evaluate(expr, p) == v for p, v in zip(points, values)):
                return expr
    return None


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
