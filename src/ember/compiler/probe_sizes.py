"""Where the dynamic-shape probes run (:mod:`.dynamic`): the sizes each symbol is recorded at.

Every probe runs the function eagerly, so its cost is the function's at the probed sizes. A
symbol is probed from a *base* size: next to it (to fit), at the ends of its range (to catch
what saturates, ``min(B, 8)``) and, while more than one floor fits a value, at the next sizes
up and down (a floor ``s0 // 4`` needs four phases). Probing next to a large call (a 600x600
image) and at ``2 * 600 + 8`` cost tens of seconds, so a size above :data:`SMALL` is probed from
a small base instead (:func:`small_bases`: 16, 32, 64, ... below it, the first one the function
accepts: a convolution refuses an image smaller than its kernel, a stride-32 network one below
32), and the real call is one more sample of the fit; where the small sizes do not fit that
call (``if H > 100``), :mod:`.dynamic` probes next to the real size as before.
"""


from .symbolic import free_symbols

__all__ = ["SMALL", "allowed", "base_size", "near_sizes", "far_sizes", "small_bases"]

SMALL = 32  # sizes up to this are probed next to themselves


def _floor(lo, hi):
    """The least value probed in the range ``[lo, hi]``: 2, but for an int argument's range
    bounded above by a comparison and below by none or a negative value (``if k > 3:`` False:
    ``[-inf, 3]``; ``x[:k]`` at k < 0: ``[-n, -1]``) up to 3 below its top."""
    return max(lo, min(2, hi - 2)) if lo < 0 and hi is not None else 2


def allowed(name, value, ranges, point=None):
    """Whether ``value`` of ``name`` meets the conditions of ``ranges`` on it alone
    (:class:`~.dynamic_ints.Ranges`' ``conds``: ``k == 3`` False, ``k % 2 == 0``) and, the other
    symbols at ``point`` ({symbol: size}), those on it and them (``x[:k]``'s ``i0 <= s0``)."""
    at = dict(point or {}, **{name: value})
    return all(c.evaluate(at) for c in getattr(ranges, "conds", ())
               if name in free_symbols(c) and set(free_symbols(c)) <= set(at))


def base_size(name, hint, ranges):
    """The size the probes of ``name`` start from: its hint, raised to 2 (or its range's
    minimum) when smaller, and on to the next size meeting its conditions; None when the
    range holds no such size >= 2."""
    lo, hi = ranges.get(name, (2, None))
    size = max(hint, lo, _floor(lo, hi))
    if size != hint:
        size = next((v for v in range(size, size + 64) if allowed(name, v, ranges)), None)
    return size if size is not None and (hi is None or size <= hi) else None


def near_sizes(name, around, ranges, reach=8, point=None):
    """Probe sizes for ``name`` other than ``around``, nearest first: >= 2, in its range and
    meeting its conditions (with the others at ``point``: :func:`allowed`; up to ``reach`` each
    way of those), upward before downward (a function may accept only some sizes: even ones,
    multiples)."""
    lo, hi = ranges.get(name, (2, None))
    least = max(lo, _floor(lo, hi))
    found = []
    for step in (1, -1):
        v, kept = around + step, 0
        while kept < reach and abs(v - around) <= 8 * reach and v >= least and (hi is None or v <= hi):
            if allowed(name, v, ranges, point):
                found.append(v)
                kept += 1
            v += step
    return found


def far_sizes(name, around, ranges, near, point=None):
    """Sizes far from ``around`` to verify a fit with: the range's low end (>= 2) and its high
    end (``2 * around + 8`` when unbounded), each moved inwards to meet the conditions (with
    the others at ``point``)."""
    lo, hi = ranges.get(name, (2, None))
    ends = [(max(lo, _floor(lo, hi)), 1), (2 * around + 8 if hi is None else hi, -1)]
    ends = [next((v + i * step for i in range(64) if allowed(name, v + i * step, ranges, point)), None)
            for v, step in ends]
    return [v for v in dict.fromkeys(ends) if v is not None and v != around and v not in near]


def small_bases(base, ranges):
    """Smaller base points to probe from than ``base`` ({symbol: size}), smallest first: each
    symbol above :data:`SMALL` at 16, 32, 64, ... (the powers of two up to half its size, raised
    to its range's minimum), the others where they are. Empty when no
    symbol is above SMALL."""
    large = [n for n, v in base.items() if v > SMALL]
    points, size = [], 16
    while large:
        point = dict(base)
        for n in list(large):
            if 2 * size > base[n]:
                large.remove(n)
                continue
            point[n] = max(size, ranges.get(n, (2, None))[0], 2)
        if point != base and point not in points:
            points.append(point)
        size *= 2
    return points

