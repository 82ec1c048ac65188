"""Where a value lives in the generated code: a :class:`Storage` (one array the code addresses
through its pointer table) and a :class:`Loc` in it (offset, shape, strides in elements), and
the Locs of views computed as strides instead of copies (slices, permutes, expands, reshapes
of contiguous memory, the gradient of a slice's view into its zeroed output).

In a graph with size symbols (dynamic shapes) sizes, strides and offsets are
:class:`~ember.compiler.symbolic.Expr` s: a dim of symbolic size is taken whole, and a slice
with symbolic bounds (``pos[:T]``, ``w[-T:]``, ``w[T:2*T]``) is a view where each bound keeps
one sign over the symbols' ranges (a negative one counts from the end, as Python's) and the
length is the fitted one (:func:`_slice_loc`).
"""
import functools
import itertools
import operator

import numpy as np

from ..symbolic import Expr, evaluate, free_symbols
from .kernels import _dtype

__all__ = ["Storage", "Loc", "contiguous_strides", "coverage", "scatter_loc", "view_loc"]

OPEN_END = 1 << 40  # the size an unbounded symbol range is checked up to (:func:`_grid`)


class Storage:
    """One array the generated code addresses through slot ``index`` of its pointer table:
    kind "input" (a placeholder), "python" (a value computed by NumPy) or "buffer"
    (allocated once, at compile time) holding ``node``'s value as an array of ``shape`` and
    ``dtype``. ``alias`` redirects it to another storage."""

    def __init__(self, kind, node, shape, dtype):
        self.kind, self.node, self.shape, self.dtype = kind, node, tuple(shape), dtype
        self.nbytes, self.alias, self.index = _numel(shape) * dtype.itemsize, None, None

    @property
    def sized(self):
        """Whether its memory is made per call's sizes: its byte count or its shape (``(0, s0)``
        has 0 bytes at every size, but its arrays' shapes differ) holds a size symbol."""
        return isinstance(self.nbytes, Expr) or any(isinstance(d, Expr) for d in self.shape)

    def resolve(self):
        """The storage at the end of the ``alias`` chain: the one that owns the memory."""
        s = self
        while s.alias is not None:
            s = s.alias
        return s


class Loc:
    """Where a value lives: ``storage`` + ``offset`` elements, ``shape``, ``strides`` (in
    elements, 0 along broadcast dimensions), ``dtype``."""

    def __init__(self, storage, shape, strides, dtype, offset=0):
        self.storage, self.shape, self.strides, self.dtype, self.offset = storage, tuple(shape), tuple(strides), dtype, offset

    @property
    def contiguous(self):
        n = _numel(self.shape)
        return self.strides == contiguous_strides(self.shape) or (not isinstance(n, Expr) and n <= 1)


def contiguous_strides(shape):
    """The strides, in elements, of a C-ordered array of ``shape`` (ints or size expressions)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _numel(shape):
    """The element count: an int, or an expression of size symbols."""
    n = functools.reduce(operator.mul, shape, 1)
    return n if isinstance(n, Expr) else int(n)


def _slice_loc(index, src, ranges=None):
    """The Loc of ``src[index]`` (basic indexing: ints, slices, None, Ellipsis), or None (then
    the view runs from Python): a dim of symbolic size may only be taken whole; a slice with
    symbolic bounds (``pos[:T]``, ``w[-T:]``), step 1, has each bound normalised as Python
    does (:func:`_bound`, over ``ranges``: {symbol: (lo, hi)}) but not clamped: its caller
    checks the length against the node's fitted shape (:func:`same_sizes`), which each new
    size's recorded eager call has confirmed, so no clamping happens at a size the graph runs
    at (a clamped slice is shorter than the unclamped one, or both are empty)."""
    if Ellipsis in index:
        at = index.index(Ellipsis)
        fill = len(src.shape) - sum(i is not None for i in index if i is not Ellipsis)
        index = index[:at] + (slice(None),) * fill + index[at + 1:]
    shape, strides, offset, d = [], [], src.offset, 0
    for i in index:
        if i is None:
            shape.append(1)
            strides.append(0)
            continue
        if d >= len(src.shape):
            return None
        n, stride = src.shape[d], src.strides[d]
        whole = isinstance(i, slice) and i.start is None and i.stop is None and i.step in (None, 1)
        # the least size of a symbolic dim over the ranges (None where a symbol has none)
        least = min((evaluate(n, p) for p in _grid(free_symbols(n), ranges)), default=None) if isinstance(n, Expr) else n
        if isinstance(i, slice) and (free_symbols(i) or isinstance(n, Expr) and least is not None and not whole):
            start, stop = _bound(i.start, n, 0, ranges), _bound(i.stop, n, n, ranges)
            if i.step not in (None, 1) or start is None or stop is None:
                return None
            shape.append(stop - start)
            strides.append(stride)
            offset += start * stride
        elif free_symbols(i):
            return None
        elif isinstance(n, Expr):  # a size known at run time: taken whole, or an int index in range at every size
            if whole:
                shape.append(n)
                strides.append(stride)
            elif _is_int(i) and least is not None and -least <= i < least:  # x[:, -1] of a symbolic length
                offset += (i if i >= 0 else n + i) * stride
            else:
                return None
        elif isinstance(i, slice):
            start, stop, step = i.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(stride * step)
            offset += start * stride
        elif _is_int(i) and -n <= i < n:
            offset += (i % n) * stride
        else:
            return None
        d += 1
    return Loc(src.storage, shape + list(src.shape[d:]), strides + list(src.strides[d:]), src.dtype, offset)


def _is_int(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _bound(bound, n, default, ranges):
    """A slice bound of a dim of size ``n`` as an offset from its start, or None where it cannot
    be one expression: ``default`` for None; an int or expression that is >= 0 over the ranges
    as written, one that is < 0 over them plus ``n`` (``-T`` is ``n - T``). Without a range for
    each of its symbols an expression is taken as written (the fitted length still decides)."""
    if bound is None:
        return default
    if not isinstance(bound, Expr) and not isinstance(n, Expr):
        return bound if bound >= 0 else bound + n if bound + n >= 0 else None
    values = {evaluate(bound, p) for p in _grid(free_symbols(bound), ranges)} if isinstance(bound, Expr) else {bound}
    if not values:  # a symbol without a range
        return bound
    if min(values) >= 0:
        return bound
    return bound + n if max(values) < 0 else None


def _grid(names, ranges):
    """Points of the symbols ``names`` over ``ranges`` ({symbol: (lo, hi)}): every corner and a
    few points inside. The fitted expressions are polynomials of degree <= 1 in each symbol (or
    their floor division by an int), so their extremes lie at corners and two of them are equal
    over the ranges where they agree at these points. Empty where a symbol has no range; an
    open range (``hi`` None) ends at :data:`OPEN_END` (offsets stay int64 well past it)."""
    ranges = ranges or {}
    if not all(n in ranges for n in names):
        return []
    ends = [(lo, OPEN_END if hi is None else hi) for lo, hi in (ranges[n] for n in names)]
    axes = [sorted({lo, hi, min(lo + 1, hi), max(hi - 1, lo), (lo + hi) // 2}) for lo, hi in ends]
    return [dict(zip(names, p)) for p in itertools.product(*axes)]


def same_sizes(got, want, ranges):
    """Whether the sizes ``got`` equal ``want`` (ints or expressions): written alike, or equal
    at every point of :func:`_grid` over ``ranges`` (``2*s0 - s0`` is ``s0``)."""
    if len(got) != len(want):
        return False
    if all(bool(g == w) if isinstance(g, Expr) or isinstance(w, Expr) else g == w for g, w in zip(got, want)):
        return True
    points = _grid(free_symbols((tuple(got), tuple(want))), ranges)
    return bool(points) and all(evaluate(tuple(got), p) == evaluate(tuple(want), p) for p in points)


def coverage(out, moves, ranges, limit=1 << 24):
    """(most, least): how many of the views (Loc, offset, strides) of ``moves`` hold an element
    of ``out`` at most and at least, or None (past ``limit`` elements: then assume gaps and
    overlaps). Size symbols take their two least sizes in ``ranges`` (or 2 where a symbol has
    no range: its views take symbolic dims whole, :func:`_slice_loc`): a view of fixed extent
    in a symbolic dim leaves a gap at the next size if any (it is never clamped)."""
    views = [(loc.shape, offset, strides) for loc, offset, strides in [(out, 0, ()), *moves]]
    names = free_symbols(views)
    grid = _grid(names, {n: (lo, lo + 1 if hi is None else min(lo + 1, hi)) for n, (lo, hi) in (ranges or {}).items()}) or [dict.fromkeys(names, 2)]
    most, least = 0, None
    for point in grid:
        (shape, _, _), *placed = evaluate(views, point)
        if (size := _numel(shape)) > limit:
            return None
        counts = np.zeros(size, np.int32)
        for view, offset, strides in placed:
            np.lib.stride_tricks.as_strided(counts[offset:], view, [s * counts.itemsize for s in strides])[...] += 1
        most, least = max(most, int(counts.max(initial=0))), min(int(counts.min(initial=1)), 1 if least is None else least)
    return most, least


def scatter_loc(node, out=None, ranges=None):
    """Where IndexBackward's gradient lands inside its zeroed output ``out`` (C-ordered if None),
    or None; a view with symbolic bounds only where its length is the gradient's fitted one
    (``ranges``: the symbols', see :func:`_slice_loc`)."""
    index = tuple(node.kwargs["index"])
    loc = _slice_loc(index, out or Loc(None, node.meta["shape"], contiguous_strides(node.meta["shape"]), None), ranges)
    if loc is None or not free_symbols((index, loc.shape)):
        return loc
    shape = tuple(node.args[0].meta["shape"])
    return Loc(loc.storage, shape, loc.strides, loc.dtype, loc.offset) if same_sizes(loc.shape, shape, ranges) else None


def view_loc(node, src, ranges=None):
    """The Loc of the view ``node`` (a slice, permute, expand, detach, real/imag part, a reshape
    of contiguous memory, a half of NormStats' buffer) of the value at ``src``, or None where
    its elements are not ``src``'s at some strides (then it is copied or computed)."""
    shape = tuple(node.meta["shape"])
    if node.target is operator.getitem:  # a result of NormStats: a half of its (2, *kept) buffer
        return None if src is None else Loc(src.storage, shape, contiguous_strides(shape), src.dtype,
                                            src.offset + node.args[1] * _numel(shape))
    name = node.target.name
    if name == "Detach":
        return src
    if name in ("Real", "Imag"):  # a complex array read as reals: twice the strides, imag one further
        if src is None or isinstance(src.offset, Expr) or any(isinstance(s, Expr) for s in src.strides):
            return None
        return Loc(src.storage, shape, [2 * s for s in src.strides], _dtype(node), 2 * src.offset + (name == "Imag"))
    if name == "Slice":
        loc = _slice_loc(tuple(node.kwargs["index"]), src, ranges)
        if loc is None or not same_sizes(loc.shape, shape, ranges):
            return None
        return Loc(loc.storage, shape, loc.strides, loc.dtype, loc.offset)  # the fitted sizes' spelling
    if name == "Permute":
        dims = node.kwargs.get("dims", node.args[1] if len(node.args) > 1 else None)
        return Loc(src.storage, shape, [src.strides[d] for d in dims], src.dtype, src.offset)
    if name == "Expand":
        lead = len(shape) - len(src.shape)
        strides = [0] * lead + [0 if (n == 1 and m != 1) else s
                                for n, m, s in zip(src.shape, shape[lead:], src.strides)]
        return Loc(src.storage, shape, strides, src.dtype, src.offset)
    if src.contiguous:  # reshape of contiguous memory
        return Loc(src.storage, shape, contiguous_strides(shape), src.dtype, src.offset)
    return _ones_changed(src, shape)


def _ones_changed(src, shape):
    """The Loc of strided ``src`` reshaped to ``shape`` where that only inserts or drops dims
    of size 1 (``q.unsqueeze(1)`` of a split): the other dims keep their strides; else None."""
    kept = [(n, s) for n, s in zip(src.shape, src.strides) if isinstance(n, Expr) or n != 1]
    if [n for n, _ in kept] != [n for n in shape if isinstance(n, Expr) or n != 1]:
        return None
    strides, rest = [], iter(kept)
    for n in shape:
        strides.append(0 if not isinstance(n, Expr) and n == 1 else next(rest)[1])
    return Loc(src.storage, shape, strides, src.dtype, src.offset)
