"""Returned views of intermediates and empty outputs: strides, storage offset and ``_base`` as
torch.compile's, per backend.

A function returning a view of a value it computed (``(x * 2)[:, ::2]``, ``(x * 2)[1:]``,
``(x * 2)[:1].expand(3, -1)``, ``(x * 2).diagonal()``) gives eagerly a view with gaps, repeats
or an offset, whose ``_base`` is the intermediate. torch.compile keeps those strides and that
storage offset with every backend; ``_base`` differs (checked against torch 2.13):

- ``eager``: the view itself (ember's ``eager`` backend replays the ops through the dispatcher:
  nothing to do here);
- ``aot_eager`` without a backward: a view whose ``_base`` is the intermediate (the interpreter
  hands back NumPy's view of it: :func:`wrap` makes it a view of a tensor over that memory);
- ``inductor`` (ember's code generator), and both backends where the graph records a backward:
  a tensor with the view's strides and offset over its own buffer, ``_base`` None (the code
  generator computes the values row-major: :func:`restrided` copies them into such a buffer).

An empty output keeps eager's strides (``x.t() * 2`` of a (0, 3) tensor: (1, 3)) with ``eager``
and ``aot_eager``; inductor's are the contiguous ones ((1, 1)), as the generated code gives
(:func:`for_backend`). A dynamic graph at sizes other than the recorded ones returns such a view
row-major.
"""
import numpy as np

from .._backend import dense
from .._backend.index_layout import compatible_strides
from .._backend.shared import owner
from .._ops.restride import as_strided
from .._tensor import Tensor

__all__ = ["Strided", "strided_layout", "for_backend", "restrided", "wrap"]


class Strided:
    """Eager's layout of an output that is no dense row-major-or-permuted block at offset 0:
    ``shape``, element ``strides``, element ``offset`` into its storage, and ``extent``, the
    elements a buffer holding it spans."""

    __slots__ = ("shape", "strides", "offset", "extent")

    def __init__(self, shape, strides, offset, extent):
        self.shape, self.strides, self.offset, self.extent = shape, strides, offset, extent


def _offset(array):
    """``array``'s first element's place in its owner's memory, in elements."""
    return (array.__array_interface__["data"][0] - owner(array).__array_interface__["data"][0]) // array.itemsize


def strided_layout(array):
    """The :class:`Strided` layout of eager's output ``array`` where it has gaps, repeats or an
    offset, or is empty with other strides than the contiguous ones; else None (the dense
    layouts are :func:`.layouts.layout_of`'s)."""
    if type(array) is not np.ndarray:
        return None
    size = array.itemsize
    strides = tuple(s // size for s in array.strides)
    if array.size == 0:
        plain = compatible_strides(array.shape, list(range(array.ndim - 1, -1, -1)), size)
        if array.strides == plain or not any(array.strides):
            return None
        return Strided(array.shape, strides, 0, 0)
    offset = _offset(array)
    if dense(array) and offset == 0:
        return None
    extent = offset + 1 + sum((n - 1) * s for n, s in zip(array.shape, strides))
    return Strided(array.shape, strides, offset, extent)


def for_backend(layouts, backend):
    """``layouts`` for a graph compiled by ``backend``: the code generator's (inductor's) empty
    outputs are contiguous, the others keep eager's."""
    if backend in ("eager", "aot_eager"):
        return layouts
    return [None if type(v) is Strided and not v.extent else v for v in layouts]


def restrided(array, layout):
    """``array``'s values in a new buffer, laid out as ``layout`` (a :class:`Strided`) says;
    row-major where the shape is not the recorded one (a dynamic graph at other sizes)."""
    if array.shape != layout.shape:
        return np.ascontiguousarray(array)
    size = array.itemsize
    buffer = np.empty(max(layout.extent, 1), array.dtype)
    out = np.ndarray(layout.shape, array.dtype, buffer, layout.offset * size, tuple(s * size for s in layout.strides))
    if array.size:
        # a repeated element (stride 0) is written once per repeat, each time the same value
        np.copyto(out, array)
    return out


def wrap(array, layout, others):
    """The aot_eager interpreter's output ``array`` as a tensor: where it has ``layout``'s
    strides and offset (NumPy's view of the intermediate), a view whose ``_base`` is a tensor over
    the intermediate's memory, as torch's aot_eager returns it; else a copy laid out so. ``others``:
    the arrays of the call's inputs (a view of one of them is copied: it is no intermediate)."""
    if array.shape == layout.shape and layout.extent and owner(array).dtype == array.dtype \
            and array.strides == tuple(s * array.itemsize for s in layout.strides) \
            and _offset(array) == layout.offset and not any(np.may_share_memory(array, a) for a in others):
        return as_strided(Tensor._make(owner(array)), layout.shape, layout.strides, layout.offset)
    return Tensor._make(restrided(array, layout))
