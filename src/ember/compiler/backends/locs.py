"""Where a value lives in the generated code: a :class:`Storage` (one array the code addresses
through its pointer table) and a :class:`Loc` in it (offset, shape, strides in elements), and
the Locs of views computed as strides instead of copies (slices, permutes, expands, reshapes
of contiguous memory, the gradient of a slice's view into its zeroed output).

In a graph with size symbols (dynamic shapes) sizes, strides and offsets are
:class:`~ember.compiler.symbolic.Expr` s: a dim of symbolic size is taken whole, and a slice
with symbolic bounds (``pos[:T]``) is taken as written where its length is the fitted one.
"""
import functools
import operator

import numpy as np

from ..symbolic import Expr, free_symbols
from .kernels import _dtype

__all__ = ["Storage", "Loc", "contiguous_strides", "scatter_loc", "view_loc"]

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


def _slice_loc(index, src):
    """The Loc of ``src[index]`` (basic indexing: ints, slices, None, Ellipsis), or None (then
    the view runs from Python): a dim of symbolic size may only be taken whole; a slice with
    symbolic bounds (``pos[:T]``) is taken as written, step 1: its caller checks the length
    against the node's fitted shape, which each new size's recorded eager call has confirmed."""
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
        if isinstance(i, slice) and free_symbols(i):
            if i.step not in (None, 1) or not all(_unclamped(b) for b in (i.start, i.stop)):
                return None
            start, stop = i.start or 0, n if i.stop is None else i.stop
            shape.append(stop - start)
            strides.append(stride)
            offset += start * stride
        elif free_symbols(i):
            return None
        elif isinstance(n, Expr):  # a size known at run time: only a whole dim is addressable here
            if not (isinstance(i, slice) and i.start is None and i.stop is None and i.step in (None, 1)):
                return None
            shape.append(n)
            strides.append(stride)
        elif isinstance(i, slice):
            start, stop, step = i.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(stride * step)
            offset += start * stride
        elif isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) and -n <= i < n:
            offset += (i % n) * stride
        else:
            return None
        d += 1
    return Loc(src.storage, shape + list(src.shape[d:]), strides + list(src.strides[d:]), src.dtype, offset)


def _unclamped(bound):
    """Whether a slice bound needs no normalising: None, an int >= 0 or a symbolic size (the
    fitted length, checked by the caller, says it lay within the dim at every size recorded)."""
    return bound is None or isinstance(bound, Expr) or (isinstance(bound, (int, np.integer)) and bound >= 0)


def scatter_loc(node, out=None):
    """Where IndexBackward's gradient lands inside its zeroed output ``out`` (C-ordered if None),
    or None; a view with symbolic bounds only where its length is the gradient's fitted one."""
    index = tuple(node.kwargs["index"])
    loc = _slice_loc(index, out or Loc(None, node.meta["shape"], contiguous_strides(node.meta["shape"]), None))
    if loc is not None and free_symbols(index) and loc.shape != tuple(node.args[0].meta["shape"]):
        return None
    return loc


def view_loc(node, src):
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
        loc = _slice_loc(tuple(node.kwargs["index"]), src)
        return loc if loc is not None and loc.shape == shape else None
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
