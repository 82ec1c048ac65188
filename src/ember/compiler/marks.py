"""Marks on input tensors for ``ember.compile``: ``torch._dynamo.mark_dynamic``, ``mark_static``
and ``maybe_mark_dynamic``, read by :mod:`.eval_frame` when it picks the dimensions of a dynamic graph."""
import weakref

__all__ = ["mark_dynamic", "maybe_mark_dynamic", "mark_static", "marks"]


_MARKS = {}  # id(tensor) -> (weak reference, {"dynamic": {dim: (lo, hi)}, "static": {dim: None}})


def _marks_of(t):
    entry = _MARKS.get(id(t))
    if entry is None or entry[0]() is not t:
        entry = _MARKS[id(t)] = (weakref.ref(t, lambda _, key=id(t): _MARKS.pop(key, None)),
                                 {"dynamic": {}, "static": {}})
    return entry[1]


def marks(t, kind):
    """``{dim: (lo, hi)}`` marked ``kind`` ("dynamic" or "static") on tensor ``t``."""
    entry = _MARKS.get(id(t))
    return entry[1][kind] if entry is not None and entry[0]() is t else {}


def _dims(t, index):
    for d in ([index] if isinstance(index, int) else index):
        if not -t.dim() <= d < t.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-t.dim()}, {t.dim() - 1}], "
                             f"but got {d})")
        yield d % t.dim()


def mark_dynamic(t, index, min=None, max=None):
    """Marks dimension(s) ``index`` of ``t`` dynamic for ``ember.compile`` (``torch._dynamo.
    mark_dynamic``): the first graph compiled for a call taking ``t`` treats them as size
    symbols within ``[min, max]`` (default ``[2, inf)``); a dimension that cannot be generic is
    specialised, and the ``EMBER_LOGS=dynamic`` log says why.

    Raises:
        IndexError: a dimension out of range.
    """
    for d in _dims(t, index):
        _marks_of(t)["dynamic"][d] = (2 if min is None else min, max)
        _marks_of(t)["static"].pop(d, None)


def maybe_mark_dynamic(t, index):
    """Like :func:`mark_dynamic` without a range: a hint (ember specialises quietly either way)."""
    mark_dynamic(t, index)


def mark_static(t, index=None):
    """Keeps dimension(s) ``index`` of ``t`` (all when None) static, even under
    ``dynamic=True`` (``torch._dynamo.mark_static``)."""
    for d in _dims(t, range(t.dim()) if index is None else index):
        _marks_of(t)["static"][d] = None
        _marks_of(t)["dynamic"].pop(d, None)
