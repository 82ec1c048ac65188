"""Dynamic shapes: one captured graph for a range of sizes.

ember captures by running the function (capture.py), so every size in a recording is a plain
int. A graph valid for many sizes is found by recording the function at a few sizes and
*fitting*: the recordings must have the same structure (same ops on the same values), and every
int that differs between them (output shapes, ``view``/``expand``/slice attrs) must be one
polynomial ``c + sum(a_i s_i) + sum(a_ij s_i s_j)`` of the size symbols at every point, or a
floor of an affine one (an image's size after a convolution or pooling, ``s0 // 4 - 2``), a
remainder (``(s0 + 1) % 2``; of a floor, ``s0 // 2 % 2 - 1``) or a product of floors (a flattened map's size)
(:func:`.size_fits.fit`). The extra recordings (*probes*) run on inputs resized along the dynamic
dimensions (rows repeated, so integer inputs keep valid values) and leave no trace: each starts
from the world the real call saw (parameters, buffers, gradients, optimizer state, tensors
updated in place, the random stream) and the world the real call left is restored after it, so
a step ending in ``zero_grad()`` probes with no ``.grad`` set, as it ran. A dimension whose
probes fail (an error, a graph break, another structure, a value no polynomial explains, a
constant tensor whose size follows it) is specialised, and the log says why; but one of its own
whose probes apart fail is merged with a symbol of its size where they hold together
(:mod:`.duck_sizes`: torch's equality guard).

Sizes 0 and 1 are where programs behave differently (broadcasting, squeeze): the probes run at
sizes >= 2, and a graph covers 0 or 1 only when the real call at that size fitted too (else its
range starts at 2, and a call of size 1 compiles a graph of its own), as torch's 0/1
specialisation does. Which sizes each symbol is probed at (next to a base size, at the ends of
its range, more while several floors fit) is :mod:`.probe_sizes`'s: a large size is probed from
a small base, the real call one more sample. A range the user left open stays open (``[2,
inf]``, as torch's). What fitting cannot see, a size-dependent value equal at all of the
recorded sizes (``if B % 7 == 0``, ``if B > 33``), is caught by :func:`verify`: the first
call at each new size is recorded and refitted with the samples. Python side effects other
than tensors run once per probe.
"""
import math
import warnings

import numpy as np

from .._tensor import Tensor
from .breaks import unobserved
from .capture import capture, skeleton, unflatten
from .graph import Node, Subgraph
from .guards import World
from .probe_sizes import allowed, base_size, far_sizes, near_sizes, small_bases
from .sized_constants import SizedConstant, sized_constant
from .size_fits import fit, fit_ratio
from .symbolic import Expr, Underdetermined, evaluate, free_symbols, substitute
from .structure import same_container
from .duck_sizes import Apart, merge, twins
from .dynamic_ints import (ARG, Ranges, compared_range, fit_returned, fitted_at, int_ranges, minmax_atoms, minmax_sides,
                           picked_ranges, traced_capture)
from .probe_state import State as _State
from .marks import mark_dynamic, mark_static, marks, maybe_mark_dynamic  # (imported from here too)
from .traced_ints import Uses


__all__ = ["ARG", "Shape", "capture_dynamic", "Mismatch", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "marks"]


class Mismatch(Exception):
    """Recordings at different sizes that one graph cannot describe; the message says where.
    ``raised``: the function raised at that size (rather than recording another program);
    ``more``: a value that more than one floor, remainder or product of the sizes fits (more
    sizes may decide)."""

    def __init__(self, message, raised=False, more=False):
        super().__init__(message)
        self.raised, self.more = raised, more


class Shape:
    """What a dynamic graph assumed about its inputs: for input ``i`` its size pattern
    (``patterns[i]``: ints and expressions), for scalar argument ``k`` its symbol
    (``ints[k]``), and the range ``[lo, hi]`` of each symbol (``hi`` None: unbounded).
    ``sources[name]`` names where a symbol is read (``x.size(0)``, ``argument 1``).
    ``samples`` are the recordings the graph was fitted to (checked again by :func:`verify`; ``fitted``
    what they fitted, :func:`.dynamic_ints.fitted_at`),
    ``verified`` the sizes it has been recorded at, ``traced`` the symbols of int arguments
    that only ops took."""

    def __init__(self, patterns, ranges, sources, ints=None):
        self.patterns, self.ranges, self.sources, self.ints = patterns, ranges, sources, ints or {}
        self.samples, self.verified, self.traced, self.fitted = [], set(), set(), None

    def ran_at(self, sizes):
        """Whether the graph has been recorded (probed, or verified) at ``sizes``, or needs no
        recording there: its symbols are all int arguments (``traced``) that Python never
        read, only ops took (:mod:`.traced_ints`)."""
        return self.key(sizes) in self.verified

    def key(self, sizes):
        """What :attr:`verified` holds of ``sizes``: the values of the symbols not traced."""
        return tuple(sorted((n, v) for n, v in sizes.items() if n not in self.traced))

    def describe(self):
        """One line for logs and errors: each symbol, where it is read and its range
        (``B = x.size(0) in [2, inf]``)."""
        return ", ".join(f"{n} = {self.sources[n]} in [{lo}, {'inf' if hi is None else hi}]"
                         for n, (lo, hi) in self.ranges.items())


def capture_dynamic(fn, args, kwargs, world, fullgraph, dims, ranges, names, log, joint=True, separate=()):
    """Records ``fn(*args, **kwargs)`` (the real call) and, when its sizes along ``dims`` can
    vary, probes and fits. Returns ``(result, capture, Shape or None, static)``: Shape None
    when every dimension was specialised (then ``capture`` is the real call's static
    recording); ``static`` the real call's recording when the dynamic graph does not cover
    its sizes (0 or 1 behaving differently), else None.

    Args:
        dims: ``{(flat input index, dim): Expr}``: the symbol (or derived expression) of each
            dynamic dimension; ``{(ARG, k): Expr}`` for a scalar int argument.
        ranges: ``{symbol: (lo, hi)}``. names: readable input names.
        log: ``log(text)`` for the "dynamic" log. joint: as :func:`~.capture.capture`'s.
        separate: the symbols that have their own although another is of the same size (torch's
            automatic dynamic, ``mark_dynamic``); merged where probing apart fails (:mod:`.duck_sizes`).
    Raises:
        RuntimeError: a derived dimension that is not its expression at this call.
    """
    before = unobserved(_State, world) if dims else None  # each probe starts from the world the call saw
    dims = dict(dims)  # (the caller's stays whole: the specialised ints are popped from this one)
    uses = {k: Uses() for i, k in dims if i == ARG}  # what Python did with each int argument
    try:
        result, cap = traced_capture(fn, args, kwargs, world, fullgraph, joint, uses,
                                      {k: world.positions[k] for k in uses},
                                      {k: dims[(ARG, k)] for k in uses})
    except Exception:
        if not _read_type(uses):
            raise
        cap = None
    if _read_type(uses):  # ``type(k) is int`` was False in that run: the call is recorded again, plain
        before.restore()
        result, cap = capture(fn, args, kwargs, world, fullgraph, joint)
    for k, seen in uses.items():
        if seen:  # its value steers Python: one graph per value (its guard), as torch specialises it
            e = dims.pop((ARG, k))
            log(f"specialising {e} (argument {k}): Python reads its value ({seen[0][0]} at {seen[0][1]})")
    uses = {k: seen for k, seen in uses.items() if not seen}
    ranges, scalars, pairs = Ranges(ranges), world.positions, None
    for k, seen in uses.items():  # ``if k > 3:``, ``k == 3``: a graph for the values with the same outcomes
        name, seen.branch = dims[(ARG, k)].args[0], _outcomes(seen.compared)
        ranges[name] = compared_range(seen.compared, ranges.get(name, (-math.inf, None)), ranges.conds)
    minmax_sides(cap, {e.args[0]: scalars[k] for (i, k), e in dims.items() if i == ARG}, ranges,  # (x[:k]: 0 <= k <= n)
                 {(id(world.inputs[i]), d): (world.inputs[i]._data.shape[d], e.args[0]) for (i, d), e in dims.items()
                  if i != ARG and e.op == "sym"})
    # (``k == 3`` True: a graph for 3 alone, but the int is no constant: another value is a symbol again)
    cap.pinned = {k for k, seen in uses.items() if any(c.op == "==" and free_symbols(c) == [dims[(ARG, k)].args[0]]
                                                       for c in ranges.conds)}
    if cap.breaks or not dims or not world.held_same():  # (a module's list appended to: probes would too)
        return result, cap, None, None
    after, inputs = unobserved(_State, world), world.inputs

    def probe(point):
        before.restore()
        try:
            with warnings.catch_warnings():  # (the function's warnings at sizes no caller passed: torch has none)
                warnings.simplefilter("ignore")
                return point, _record(fn, args, kwargs, world, dims, point, joint, uses)
        except Mismatch as e:
            return point, e
        except Exception as e:  # the function itself rejects the size
            return point, Mismatch(f"the function raised {type(e).__name__}: {e}", raised=True)
        finally:
            after.restore()
    while True:  # (again after symbols of one size were merged: duck_sizes.py)
        hints, sources = {}, {}
        for (i, d), e in dims.items():
            if isinstance(e, Expr) and e.op == "sym":
                hints.setdefault(e.args[0], scalars[d] if i == ARG else inputs[i].shape[d])
                sources.setdefault(e.args[0], f"argument {d}" if i == ARG else f"{names[i]}.size({d})")
        real = dict(hints)
        base = {n: base_size(n, v, ranges) for n, v in real.items()}
        symbols = [n for n in hints if base[n] is not None and len(near_sizes(n, base[n], ranges)) >= 2]
        for n in hints:
            if n not in symbols:
                base[n] = real[n]
                log(f"specialising {n} ({sources[n]} = {real[n]}): its range leaves too few sizes to probe")
        if pairs is None:  # (of the inputs' sizes: an int argument is never duck sized)
            pairs = twins(separate, real, [n for n in symbols if n not in {e.args[0] for (i, _), e in dims.items()
                                                                             if i == ARG}])
        real_cap = (real, cap)
        try:
            fitted = _fit(probe, base, real_cap, symbols, hints, ranges, sources, log, pairs)
            break
        except Apart as apart:
            group = merge(apart, probe, pairs, dims, ranges)
            log(f"{apart.name} ({sources[apart.name]}) " + (f"is {', '.join(sources[m] for m in group)}: one symbol"
                                                            if group else "does not fit apart"))
    if not fitted:
        return result, cap, None, None
    symbols, samples, shape_ranges, covered = fitted
    conds = [substitute(c, {n: samples[0][0][n] for n in hints if n not in symbols}) for c in ranges.conds]
    shape_ranges = Ranges(shape_ranges, [c for c in conds if free_symbols(c) and set(free_symbols(c)) <= set(symbols)])
    picked_ranges(getattr(cap, "minmax", ()), [p for p, _ in samples], symbols, shape_ranges)  # (``min(k, 4)`` probed one side)
    base, graph_cap = samples[0]
    graph_cap.pinned = cap.pinned
    fitted = _unify(samples, [n for n in hints if n not in symbols])
    _apply(graph_cap, fitted)
    graph_cap.graph.symbols = tuple(symbols)
    patterns, ints = {}, {}  # a specialised symbol keeps the size the samples had (its base)
    for (i, d), e in dims.items():
        value = e if all(n in symbols for n in free_symbols(e)) else evaluate(e, base)
        if i == ARG:
            ints[d] = value
        else:
            patterns.setdefault(i, list(inputs[i].shape))[d] = value
    graph_cap.graph.symbol_ranges = dict(shape_ranges)  # where a slice's bound keeps one sign (backends/locs.py)
    numbers = int_ranges(graph_cap, ints, samples, shape_ranges)
    shape = Shape({i: tuple(p) for i, p in patterns.items()}, shape_ranges, sources, ints)
    shape.traced = numbers - set(free_symbols(list(patterns.values())))
    shape.samples, shape.fitted = samples[1:], fitted  # (the first one's graph holds them now)
    shape.verified = {shape.key({n: point[n] for n in symbols}) for point, _ in samples}
    log(f"dynamic graph of {getattr(fn, '__qualname__', fn)}: {shape.describe()}"
        + "".join(f"; {n} only a number (new values run unrecorded)" for n in sorted(shape.traced)))
    return result, graph_cap, shape, None if covered else cap


def _fit(probe, base, real_cap, symbols, hints, ranges, sources, log, pairs):
    """The probes and fit of :func:`capture_dynamic` (:func:`_probe_and_fit`'s answer, False when
    all were specialised): from a small base where a size is large (probe_sizes.py: the first the
    function takes), else from ``base``. Raises :class:`.duck_sizes.Apart`."""
    real = real_cap[0]
    for small in small_bases({n: base[n] for n in symbols}, ranges):
        sample = probe(dict(base, **small))
        if not isinstance(sample[1], Mismatch):
            fitted = _probe_and_fit(probe, sample, real_cap, list(symbols), hints, ranges, sources, log, True, pairs)
            if fitted is not None:
                return fitted
            log(f"the probes from {_fmt(sample[0])} do not fit the call at {_fmt(real)}: probing next to it")
            break
    base_sample = real_cap if base == real else probe(base)
    if isinstance(base_sample[1], Mismatch):
        log(f"specialising {', '.join(symbols)}: at {_fmt(base)}: {base_sample[1]}")
        return False
    return _probe_and_fit(probe, base_sample, real_cap, symbols, hints, ranges, sources, log, False, pairs)


def _probe_and_fit(probe, base_sample, real_cap, symbols, hints, ranges, sources, log, shrunk, pairs=()):
    """Probes each symbol from ``base_sample`` (point, recording) and fits: ``(symbols kept,
    samples, {symbol: range}, whether the real call is covered)``, False when all were specialised;
    from a small base (``shrunk``), None (try another) where the fit misses the real call. A
    symbol with twins (``pairs``, :func:`.duck_sizes.twins`) that does not fit raises Apart."""
    base, real = base_sample[0], real_cap[0]
    per_symbol = {}
    for n in list(symbols):
        got, near, refused = [], [], None
        # the first two sizes the function accepts, among the first 6, or all 16 where it took one
        # there or another symbol may decide (``reshape(n, 2, -1)`` of an input whose size is a
        # symbol too: the multiples of 2n)
        for v in near_sizes(n, base[n], ranges, point=base):
            if len(near) == 6 and not got and len(symbols) == 1:
                break
            sample = probe(dict(base, **{n: v}))
            near.append(v)
            if isinstance(sample[1], Mismatch) and sample[1].raised:
                refused = sample
                continue
            got.append(sample)
            if len(got) == 2:
                break
        if len(got) < 2:
            got.append(refused or (base, Mismatch("too few sizes in its range to probe")))
        else:  # far sizes catch what saturates (min(B, 8)); a size the function refuses is skipped
            far = [probe(dict(base, **{n: v})) for v in far_sizes(n, base[n], ranges, near, base)]
            got += [s for s in far if not (isinstance(s[1], Mismatch) and s[1].raised)]
            got += _largest_accepted(n, probe, base, got, [s for s in far if s not in got])
        bad = next((s for s in got if isinstance(s[1], Mismatch)), None)
        if bad:
            reason = f"at {_fmt(bad[0])}: {bad[1]}"
        else:
            reason = _deciding(n, probe, base_sample, got, ranges)
        if reason and pairs.get(n) and near:
            raise Apart(n, dict(base, **{n: near[0]}), base_sample)
        if reason:
            if shrunk:
                return None
            symbols.remove(n)
            log(f"specialising {n} ({sources[n]}): {reason}")
        else:
            per_symbol[n] = got
    if not symbols:
        return False
    samples = [base_sample] + [s for n in symbols for s in per_symbol[n]]
    for k, a in enumerate(symbols):
        for b in symbols[k + 1:]:  # products of two sizes (a reshape to B*T) need a joint point
            point = dict(base, **{a: per_symbol[a][0][0][a], b: per_symbol[b][0][0][b]})
            held = allowed(a, point[a], ranges, point) and allowed(b, point[b], ranges, point)  # (i0 <= s0)
            sample = probe(point) if held else None
            if sample is not None and not isinstance(sample[1], Mismatch):
                samples.append(sample)
    # symbols specialised after all: only the samples at their base size describe the graph
    fixed = [n for n in hints if n not in symbols]
    samples = [s for s in samples if all(s[0][n] == base[n] for n in fixed)]
    covered = base == real
    if not covered and all(real[n] == base[n] for n in fixed) and not _unify_reason(samples + [real_cap]):
        samples.append(real_cap)
        covered = True
    if shrunk and not covered:
        return None
    reason = _unify_reason(samples)
    if reason:
        return None if shrunk else log(f"specialising {', '.join(symbols)}: {reason}") or False
    shape_ranges = {}
    for n in symbols:
        lo, hi = ranges.get(n, (2, None))  # left open, open (a larger size is verified)
        if not covered and real[n] < 2:
            lo = max(lo, 2)
            log(f"{n} ({sources[n]}): the call at size {real[n]} differs from larger sizes; "
                f"this graph covers sizes >= 2")
        shape_ranges[n] = (lo, hi)
    return symbols, samples, shape_ranges, covered


def verify(shape, sizes, cap):
    """Whether the real call's recording ``cap`` at ``sizes`` (``{symbol: int}``, a size this
    dynamic graph has not run yet) is the fitted graph at those sizes: the fit is refitted with
    it added. The probes see a few sizes only, so a branch on a size that flips between them
    (``if B % 7 == 0``) is caught here, on the first call at each new size, not answered
    wrongly. Returns None when it holds (the size is remembered), else the reason."""
    if shape.ran_at(sizes):
        return None
    if cap.breaks:
        return f"the call at {_fmt(sizes)} breaks the graph: {cap.breaks[0][0]}"
    point = dict(shape.samples[0][0], **sizes)
    reason = _unify_reason(shape.samples + [(point, cap)])
    if reason is not None:
        return reason
    if not fitted_at(shape.fitted, point, cap):  # (``min(i0, 4)`` fits them, where the graph holds ``i0``)
        return f"the graph's sizes are not the call's at {_fmt(sizes)}"
    shape.verified.add(shape.key(sizes))


def _largest_accepted(name, probe, base, got, refused):
    """When the function refuses the far size of ``name`` (a position table of 10 rows refusing
    T = 12), the probes that bisect up to the largest size it accepts: an unbounded range ends at
    the largest size recorded, so without them the graph would cover few sizes."""
    bad = max((point[name] for point, _ in refused), default=None)
    good = max(point[name] for point, _ in got)
    found = []
    while bad is not None and bad - good > 1:
        sample = probe(dict(base, **{name: (good + bad) // 2}))
        if isinstance(sample[1], Mismatch) and sample[1].raised:
            bad = sample[0][name]
        else:
            found.append(sample)
            good = sample[0][name]
    return found


def _deciding(name, probe, base_sample, got, ranges):
    """Why ``[base_sample] + got`` (the probes of ``name``) is no one graph, or None; while
    more than one floor (remainder, product) of the sizes fits a value (a pooling's output ``(s0 - 8) // 4`` over
    sizes holding three of its four phases), first the probes at the next sizes near the base
    (up to 12 each way) are added to ``got``, until one does: they complete a floor's period."""
    base = base_sample[0]
    tried = {point[name] for point, _ in got}
    for v in [v for v in near_sizes(name, base[name], ranges, 12, base) if v not in tried] + [None]:
        error = _unify_error([base_sample] + got)
        if error is None or not error.more or v is None:
            return None if error is None else str(error)
        sample = probe(dict(base, **{name: v}))
        if not isinstance(sample[1], Mismatch):
            got.append(sample)


def _fmt(point):
    return ", ".join(f"{n}={v}" for n, v in point.items())


def _record(fn, args, kwargs, world, dims, point, joint, uses=None):
    """One probe: ``fn`` recorded on copies of the inputs resized to ``point`` (the tensors
    objects hold, ``world.held``, put in their place meanwhile)."""
    flat = world.inputs
    resized = []
    for i, t in enumerate(flat):
        shape = list(t.shape)
        for (j, d), e in dims.items():
            if j == i:
                shape[d] = evaluate(e, point)
        if shape == list(t.shape):
            resized.append(t)
            continue
        a = t._data
        for d, n in enumerate(shape):
            if n != a.shape[d]:
                a = np.take(a, np.arange(n) % a.shape[d], axis=d) if a.shape[d] else \
                    np.zeros(a.shape[:d] + (n,) + a.shape[d + 1:], a.dtype)
        # the same memory layout as the real input (a transposed input stays transposed)
        order = np.argsort([-s for s in t._data.strides], kind="stable")
        laid = np.empty([a.shape[d] for d in order], a.dtype).transpose(np.argsort(order))
        laid[...] = a
        new = Tensor._make(laid)
        resized.append(new.requires_grad_() if t.requires_grad else new)
    n = len(flat) - len(world.held)
    args2, kwargs2 = unflatten(skeleton((args, kwargs)), iter(resized[:n]))
    args2, names = list(args2), list(kwargs2)
    values = {k: evaluate(e, point) for (i, k), e in dims.items() if i == ARG}  # int arguments
    uses = uses or {}
    for k, v in values.items():
        if k < len(args2):
            args2[k] = v
        elif k < len(args2) + len(names):  # (beyond: a closure cell's, put by traced_capture)
            kwargs2[names[k - len(args2)]] = v
    held = [(where, owner, key, t, attribute) for (where, owner, key, _, attribute), t in zip(world.held, resized[n:])]
    counts = {k: (len(seen), len(seen.compared)) for k, seen in uses.items()}
    try:
        _put(held)
        world2 = World(fn, args2, kwargs2, held=held)
        _, cap = traced_capture(fn, args2, kwargs2, world2, False, joint, uses, {k: values[k] for k in uses},
                                {k: dims[(ARG, k)] for k in uses})
    finally:
        _put(world.held)
    if cap.breaks:
        raise Mismatch(f"graph break: {cap.breaks[0][0]}")
    for k, seen in uses.items():
        if len(seen) > counts[k][0]:
            raise Mismatch(f"Python reads argument {k}'s value ({seen[-1][0]} at {seen[-1][1]})")
        if _outcomes(seen.compared[counts[k][1]:]) != getattr(seen, "branch", []):
            raise Mismatch(f"Python compares argument {k} otherwise ({seen.compared[counts[k][1]:]})")
    return cap


def _outcomes(compared):
    """``Uses.compared``'s comparisons, each expression as its structural key (comparable)."""
    return [(name, c, outcome, expr.key()) for name, c, outcome, expr in compared]


def _put(held):
    """Puts each held tensor of ``held`` (``World.held`` entries) in its place."""
    for _, owner, key, t, attribute in held:
        if attribute:
            setattr(owner, key, t)
        else:
            owner[key] = t


def _read_type(uses):
    """Whether a run with traced ints read one's class (``type(k) is int``: False there)."""
    return any(use[0] == "type" for seen in uses.values() for use in seen)


# ---- fitting ------------------------------------------------------------------------------------
def _unify_reason(samples):
    error = _unify_error(samples)
    return None if error is None else str(error)


def _unify_error(samples):
    try:
        _unify(samples, ())
    except Mismatch as e:
        return e
    return None


def _unify(samples, fixed):
    """The symbolic (node, args, kwargs, shape) of every node of the first sample's graph,
    fitted over all samples, the sources of constants rebuilt per call and the returned
    structure (its ints fitted too: :func:`.dynamic_ints.fit_returned`); raises Mismatch
    naming the first difference."""
    points = [{n: v for n, v in p.items() if n not in fixed} for p, _ in samples]
    caps = [c for _, c in samples]
    graphs = [c.graph for c in caps]
    if len({len(g.nodes) for g in graphs}) > 1:
        raise Mismatch(f"the graphs differ in length ({', '.join(str(len(g.nodes)) for g in graphs)} nodes)")
    index = [{n: k for k, n in enumerate(g.nodes)} for g in graphs]
    atoms = minmax_atoms(caps[0])  # (``x[:min(k, 4)]``'s length: ``min(i0, 4)``)

    def same(values, where):
        first = values[0]
        if isinstance(first, Node):
            if len({ix[v] if isinstance(v, Node) else None for ix, v in zip(index, values)}) > 1:
                raise Mismatch(f"{where}: different values used")
            return first
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values):
            try:
                expr = fit([int(v) for v in values], points, atoms)
            except Underdetermined:
                raise Mismatch(f"{where}: {[int(v) for v in values]} at {[_fmt(p) for p in points]} is more "
                               f"than one floor of the sizes", more=True) from None
            if expr is None:
                raise Mismatch(f"{where}: {[int(v) for v in values]} at {[_fmt(p) for p in points]} "
                               f"is no polynomial of the sizes")
            if isinstance(expr, Expr) and expr.op != "*" and "//" in repr(expr):
                atoms.append(expr)  # a floor (an image size): products of them may follow
            return expr
        if isinstance(first, float) and all(isinstance(v, float) for v in values):
            expr = fit_ratio(values, points)  # count / (count - 1): batch norm's unbiased variance
            if expr is None:
                raise Mismatch(f"{where}: {values} at {[_fmt(p) for p in points]} is no ratio of "
                               f"polynomials of the sizes")
            return expr
        if isinstance(first, (tuple, list)) and all(type(v) is type(first) and len(v) == len(first) for v in values):
            items = [same([v[k] for v in values], where) for k in range(len(first))]
            return same_container(first, items)
        if isinstance(first, dict) and all(isinstance(v, dict) and v.keys() == first.keys() for v in values):
            return {k: same([v[k] for v in values], f"{where}[{k!r}]") for k in first}
        if isinstance(first, slice) and all(isinstance(v, slice) for v in values):
            return slice(*same([(v.start, v.stop, v.step) for v in values], where))
        if isinstance(first, np.ndarray):
            if all(isinstance(v, np.ndarray) and v.shape == first.shape and np.array_equal(v, first, equal_nan=True)
                   for v in values):
                return first
            made = sized_constant(values, same, where)
            if made is None:
                raise Mismatch(f"{where}: a constant tensor made inside the function changes with the sizes "
                               f"(shapes {[getattr(v, 'shape', None) for v in values]}) and is no "
                               f"full() or arange() of them")
            return made
        if isinstance(first, Subgraph) and all(isinstance(v, Subgraph) and v.graph.code == first.graph.code
                                               and v.graph.any_shape == first.graph.any_shape for v in values):
            return first  # the same program at every size (associative_scan's combine, on single elements)
        if all(v is first or type(v) is type(first) and _equal(v, first) for v in values):
            return first
        raise Mismatch(f"{where}: {values[0]!r} != {values[1]!r}")

    for k, nodes in enumerate(zip(*(g.nodes for g in graphs))):
        if len({(n.op, n.target if n.op == "call_op" else None) for n in nodes}) > 1:
            raise Mismatch(f"node {k}: different ops ({nodes[0].name}, {nodes[1].name})")
    _strict([[index[j][p] for p in g.placeholders] for j, g in enumerate(graphs)], "placeholders")
    sources = []  # (placeholder index, source) of constants rebuilt at each call
    for k, group in enumerate(zip(*(c.sources for c in caps))):
        name = f"input {graphs[0].placeholders[k].name}"
        if group[0][0] == "const":
            const = same([s[1] for s in group], name)
            if isinstance(const, SizedConstant):
                sources.append((k, ("sized_const", const)))
        else:  # (a float Python computes, ``("float_arg", how)``: compared as the computation)
            _strict([tuple(_key(v) if s[0] == "float_arg" else v if isinstance(v, (str, int)) else id(v) for v in s)
                     for s in group], name)
    _strict([[index[j][v] for v in g.outputs] for j, g in enumerate(graphs)], "outputs")
    _strict([[(index[j][p], index[j][v]) for p, v in g.mutations] for j, g in enumerate(graphs)], "mutations")
    exprs = iter(getattr(caps[0], "returned_exprs", ()))
    output = fit_returned([c.output for c in caps], same, exprs, [p for p, _ in samples], set(fixed),
                          getattr(caps[0], "int_symbols", ()), Mismatch)
    _strict([[(id(p), i) for p, i in c.grad_sets] for c in caps], ".grad updates")
    _strict([c.input_grad_sets for c in caps], "inputs' .grad updates")
    _strict([[(id(o), i, k, how) for o, i, k, how in c.group_writes] for c in caps], "writes into optimizer groups")
    _strict([[(key, name, i) for _, key, name, i in c.attr_sets] for c in caps], "module attributes set")
    _strict([[(key, name, how) for _, key, name, how in c.float_sets] for c in caps], "module floats set")
    _strict([[(path, how) for path, how, _ in c.path_writes] for c in caps], "floats written into dicts and objects")
    _strict([None if c.joint is None else (sorted(index[j][n] for n in g.nodes if id(n) in c.joint[0]),
                                          [(k, index[j][n]) for k, n in c.joint[1]])
             for j, (c, g) in enumerate(zip(caps, graphs))], "the backward's cut")
    plan = []
    for nodes in zip(*(g.nodes for g in graphs)):
        n = nodes[0]
        where = f"{n.name} ({getattr(n.target, 'name', n.op)})"
        args, kwargs = _with_minmax(nodes, graphs[0], [p for p, _ in samples], fixed)
        args, kwargs = same(args, where), same(kwargs, where)
        shape = same([m.meta.get("shape") for m in nodes], f"{where} result shape")
        _strict([(m.meta.get("dtype"), m.meta.get("requires_grad"), m.meta.get("num_outputs")) for m in nodes], where)
        plan.append((n, args, kwargs, shape))
    return plan, sources, output


def _with_minmax(nodes, graph, points, fixed):
    """The samples' args and attributes of ``nodes``, each operand (attribute) that came as a
    traced ``min``/``max`` of the symbols (:func:`.traced_math.patch_minmax`; a slice's bound:
    ``x[:min(k, 4)]``) its expression where it gives the values at every point: no polynomial
    fits it over points on both sides of its corner."""
    came = {j: e for j, e in graph.traced_operands.get(nodes[0], {}).items()
            if e is not None and ("min(" in repr(e) or "max(" in repr(e)) and set(fixed).isdisjoint(free_symbols(e))}
    if not came:
        return [m.args for m in nodes], [m.kwargs for m in nodes]
    for j, e in list(came.items()):
        if not all(j in m.kwargs and evaluate(e, p) == m.kwargs[j] if type(j) is str else
                   j < len(m.args) and type(m.args[j]) is int and evaluate(e, p) == m.args[j]
                   for m, p in zip(nodes, points)):
            del came[j]
    return ([tuple(came.get(j, a) for j, a in enumerate(m.args)) for m in nodes],
            [{k: came.get(k, v) for k, v in m.kwargs.items()} for m in nodes])


def _key(value):
    """A float argument's computation (:func:`.traced_floats._how`) as a comparable key."""
    if isinstance(value, tuple):
        return tuple(map(_key, value))
    return value.key() if isinstance(value, Expr) else value


def _strict(values, where):
    if any(v != values[0] for v in values):
        raise Mismatch(f"{where} differ")


def _equal(a, b):
    try:
        return bool(a == b)
    except Exception:  # objects whose == is elementwise or undefined: only identity counts
        return a is b


def _apply(cap, fitted):
    """Writes the fitted args, attrs and shapes into the graph's nodes (users lists stay), the
    constants rebuilt per call into its sources and the fitted returned structure into its output."""
    plan, sources, cap.output = fitted
    for k, source in sources:
        cap.sources[k] = source
    for node, args, kwargs, shape in plan:
        node.args, node.kwargs = args, kwargs
        if shape is not None:
            node.meta["shape"] = shape
