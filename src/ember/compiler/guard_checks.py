"""Checking a call's guarded facts (:func:`~.guards.snapshot`) against a graph's: equal pair by pair
(:func:`holds`), or, for a dynamic graph whose guards hold size patterns and int symbols
(:func:`with_patterns`), with its symbols bound to this call's values (:func:`bind`); the first that
fails, named for the logs (:func:`first_difference`)."""
import functools

from .reads import _MISSING
from .symbolic import Expr, evaluate, free_symbols

__all__ = ["input_name", "holds", "with_patterns", "bind", "first_difference", "argument_named"]


@functools.lru_cache(maxsize=None)
def input_name(i):
    """The name of input ``i``'s guard in a snapshot."""
    return f"input {i} (shape, dtype, requires_grad)"


def holds(expected, actual):
    """True when every guard of ``expected`` (a subset of a snapshot, in its order) has the
    same value in ``actual``: the fast check made before each replay."""
    i = 0
    for name, value in actual:
        if i < len(expected) and expected[i][0] == name:
            if expected[i][1] != value:
                return False
            i += 1
    return i == len(expected)


def with_patterns(facts, shape):
    """``facts`` with the input shapes of a dynamic graph replaced by their patterns
    (``shape.patterns``: ints and size expressions, see :mod:`.dynamic`)."""
    patterns = {input_name(i): p for i, p in shape.patterns.items()}
    ints = {f"argument {k}": e for k, e in shape.ints.items()}
    return [(name, (patterns[name],) + value[1:]) if name in patterns else
            (name, ints[name]) if name in ints else (name, value) for name, value in facts]


def bind(expected, actual, ranges):
    """Like :func:`holds` for a dynamic graph's guards (``expected`` made by
    :func:`with_patterns`): the values of its size symbols (``{name: int}``) when every guard
    holds, every symbol is inside its range ``ranges[name] = (lo, hi)``, every derived size
    equals its expression and each condition of ``ranges.conds`` holds (Python's comparisons:
    :class:`~.dynamic_ints.Ranges`); else None."""
    sizes, derived, i = {}, [], 0
    for name, value in actual:
        if i < len(expected) and expected[i][0] == name:
            want = expected[i][1]
            # (an int argument's symbol binds without ``!=``: an Expr's comparison is symbolic, slow)
            if (isinstance(want, Expr) or want != value) and not _bind_shape(want, value, sizes, derived):
                return None
            i += 1
    if i != len(expected):
        return None
    for name, (lo, hi) in ranges.items():
        v = sizes.get(name)
        if v is None or v < lo or hi is not None and v > hi:
            return None
    if any(evaluate(e, sizes) != v for e, v in derived):
        return None
    if any(not c.evaluate(sizes) for c in getattr(ranges, "conds", ())):  # (``k == 3`` False: ``i0 != 3``)
        return None
    return sizes


def _bind_shape(want, got, sizes, derived):
    """Matches one input's ``(pattern, dtype, requires_grad)`` against its ``(shape, ...)``,
    or a scalar argument's symbol against its int."""
    if isinstance(want, Expr):
        if type(got) is not int:
            return False
        if want.op == "sym":
            return sizes.setdefault(want.args[0], got) == got
        derived.append((want, got))
        return True
    if not isinstance(want, tuple) or len(want) < 3 or not isinstance(got, tuple) or want[1:] != got[1:]:
        return False
    pattern, shape = want[0], got[0]
    if not isinstance(pattern, tuple) or len(pattern) != len(shape):
        return False
    for p, n in zip(pattern, shape):
        if not isinstance(p, Expr):
            if p != n:
                return False
        elif p.op == "sym":
            if sizes.setdefault(p.args[0], n) != n:
                return False
        else:
            derived.append((p, n))
    return True


def first_difference(expected, actual, ranges=None):
    """The name and values of the first guard of ``expected`` that ``actual`` (both
    ``snapshot`` lists, ``expected`` maybe a subset) does not meet, or None when all hold.
    ``ranges``: a dynamic graph's symbol ranges (see :func:`bind`)."""
    actual = dict(actual)
    sizes = {}
    for name, want in expected:
        got = actual.get(name, _MISSING)
        if got is _MISSING:
            return f"{name}: no longer there"
        if want != got and (ranges is None or not _bind_shape(want, got, sizes, [])):  # (ids: as a count)
            return f"{name}: " + (f"other objects ({len(got)} where the graph had {len(want)})" if name in (
                "parameter identity", "module structure") else f"expected {want!r}, got {got!r}")
    for name, (lo, hi) in (ranges or {}).items():
        v = sizes.get(name)
        if v is not None and (v < lo or hi is not None and v > hi):
            return f"size {name} = {v} is outside the graph's range [{lo}, {'inf' if hi is None else hi}]"
    for c in getattr(ranges, "conds", ()):
        if all(n in sizes for n in free_symbols(c)) and not c.evaluate(sizes):
            return f"{c} is false ({', '.join(f'{n} = {sizes[n]}' for n in free_symbols(c))})"
    return None


def argument_named(reason, names, positions):
    """A failed guard's ``reason`` (:func:`first_difference`'s ``"input i ..."`` or ``"argument
    k ..."``) with what it reads, as torch's recompile reasons name it: ``names[i]``
    (``sources.input_names``: ``... (tensor 'x')``, ``'xs[1]'``) or ``positions[k]``
    (``closure_ints.position_names``: ``... (closure int 'n')``)."""
    kind, index = reason.split(" ", 2)[:2]
    index = index.rstrip(":")
    if kind == "input" and index.isdigit() and int(index) < len(names):
        return f"{reason} (tensor {names[int(index)]!r})"
    if kind == "argument" and index.isdigit() and int(index) < len(positions):
        return f"{reason} ({positions[int(index)]})"
    return reason
