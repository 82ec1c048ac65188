"""Duck sizing for the dynamic-shape probes (:mod:`.dynamic`): which dimensions of equal size
share one symbol.

torch 2.13 gives each dimension that automatic dynamic or ``mark_dynamic`` made dynamic a symbol
of its own (``DimDynamic.DYNAMIC``: a (5, 5) input is ``(s0, s1)``, so (5, 6) runs the same
graph), and only ``dynamic=True``'s first graph shares one symbol between equal sizes
(``DimDynamic.DUCK``); where the program needs two sizes equal (``x * y``, ``x @ y``), tracing
guards ``Eq(s0, s1)`` and the graph has one. ember captures by running the function, so it
finds that relation by probing: a symbol of its own (*separate*) whose probes apart from the
others fail (the function raises, another program) is probed together with each symbol of the
same size in turn, then with all of them, and merged with the first that holds
(:func:`merge`); the fit then starts again with the symbols that remain.
"""
import itertools

from .symbolic import symbol

__all__ = ["Apart", "name_dims", "twins", "merge", "intersect"]


class Apart(Exception):
    """Raised by the probes when ``name`` (a separate symbol with twins) does not fit probed
    apart: ``point`` the first probe of it, ``base_sample`` the (point, recording) it left."""

    def __init__(self, name, point, base_sample):
        super().__init__(name)
        self.name, self.point, self.base_sample = name, point, base_sample


def name_dims(inputs, wanted, separate, static, dims, ranges):
    """Adds a symbol to ``dims`` (``{(input, dim): Expr}``) for each dimension of ``wanted``
    (``{(input, dim): (lo, hi)}``) but those of ``static`` and sizes 0 and 1 where its range
    starts at 2, its range to ``ranges``: one of its own for those of ``separate`` (torch's
    ``DimDynamic.DYNAMIC``), one per size for the others (``dynamic=True``'s first dims:
    ``DimDynamic.DUCK``). Returns ``(dims, ranges, the separate symbols)``."""
    duck, fresh = {}, (f"s{k}" for k in itertools.count())
    for (i, d), (lo, hi) in sorted(wanted.items()):
        size = inputs[i].shape[d]
        if (i, d) in static or size < 2 and lo >= 2:
            continue
        name = next(fresh) if (i, d) in separate else duck.get(size) or duck.setdefault(size, next(fresh))
        dims[(i, d)] = symbol(name)
        ranges[name] = intersect(ranges.get(name, (lo, hi)), (lo, hi))
    return dims, ranges, {dims[k].args[0] for k in separate if k in dims}


def twins(separate, sizes, symbols):
    """``{symbol: [symbols of the same size]}`` for each separate symbol among ``symbols``
    (``sizes``: ``{symbol: the call's size}``) that has any."""
    found = {n: [m for m in symbols if m != n and sizes[m] == sizes[n]] for n in separate if n in symbols}
    return {n: found[n] for n in found if found[n]}


def merge(apart, probe, pairs, dims, ranges):
    """Merges :class:`Apart`'s symbol with the twins (of ``pairs``, :func:`twins`) it holds
    with: the first one whose probe together with it (``probe(point)``: ``(point, recording or
    Mismatch)``) records the ops of the base sample (the fit, from the probes that follow, says
    whether the sizes are one graph), else all of them. ``dims`` (``{(input, dim): Expr}``)
    and ``ranges`` are updated in place (the merged symbol's range the intersection); returns
    the twins merged (empty when none held: the symbol stays apart)."""
    name, point = apart.name, apart.point
    others = pairs.pop(name)
    for group in [[m] for m in others] + ([others] if len(others) > 1 else []):
        sample = probe(dict(point, **{m: point[name] for m in group}))
        if not isinstance(sample[1], Exception) and _ops(sample[1]) == _ops(apart.base_sample[1]):
            break
    else:
        return []
    for key, e in list(dims.items()):
        if getattr(e, "op", None) == "sym" and e.args[0] in group:
            dims[key] = symbol(name)
    for m in group:
        ranges[name] = intersect(ranges.get(name, (2, None)), ranges.pop(m, (2, None)))
        pairs.pop(m, None)
    for n in pairs:
        pairs[n] = [m for m in pairs[n] if m not in group]
    return group


def _ops(cap):
    return [(n.op, n.target) for n in cap.graph.nodes]


def intersect(a, b):
    """The range ``(lo, hi)`` both ranges allow (``hi`` None: unbounded)."""
    return max(a[0], b[0]), a[1] if b[1] is None else b[1] if a[1] is None else min(a[1], b[1])
