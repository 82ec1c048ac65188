"""The memory layouts of what a compiled function returns: eager's strides on every call.

The generated code (C, or Python on NumPy) computes every value row-major, where eager ember
lays results out as torch does (:mod:`ember._result_layout`: a convolution of a channels-last
input is channels-last, ``x.t() * 2`` transposed, ``empty(memory_format=channels_last)`` as
asked). The traced call runs eagerly, so the strides of what it returns are torch's: the
capture records each output's layout (:func:`layout_of`: of the returned tensors and of the
``.grad`` tensors the call sets, and of the gradients a compiled forward's backward returns),
and every replay lays the value out so (:func:`laid_out`): one copy for an output eager lays
out otherwise, nothing for a row-major one (the common case costs a list check per call).
Tensors the graph writes in place keep their own memory and strides (the mutations are
copied into them).

What the layouts follow from, the layouts of the inputs, the tensors read from globals and
closures and the parameters, is a guard (:func:`layout_keys`): a call passing a channels-last
image where the graph was captured with a row-major one compiles again, as torch's stride
guards do. A dynamic graph's key is the order of the dims, not the strides, so one graph serves
every size. An output that is a view of an input is remade from it instead (:mod:`.aliases`);
one of an intermediate (gaps, repeats, an offset) and an empty output get eager's strides as
:mod:`.inner_views` describes.
"""
import numpy as np

from .._backend import dense
from .._backend.index_layout import compatible_strides, laid_out_as
from .inner_views import Strided, restrided

__all__ = ["LAYOUTS", "layout_of", "laid_out", "layout_keys"]

LAYOUTS = "memory layouts of the inputs, globals/closures' tensors and parameters (dims fastest first; None: row-major)"


def _row_major(array):
    """Whether ``array``'s strides are row-major exactly, a size-1 dim's included (torch's
    order reads those; NumPy's ``c_contiguous`` flag does not); true of an array that is no
    NumPy array (a sparse tensor's: no strides to keep)."""
    if type(array) is not np.ndarray:
        return True
    if array.flags.c_contiguous and 1 not in array.shape and 0 not in array.shape:
        return True
    return array.strides == compatible_strides(array.shape, list(range(array.ndim - 1, -1, -1)), array.itemsize)


def _order(array):
    """The dims by stride, fastest first; of equal strides a size-1 dim first (it lies inside
    the dim its stride steps), then the later dim."""
    strides, shape = array.strides, array.shape
    return sorted(range(array.ndim), key=lambda d: (strides[d], shape[d] != 1, -d))


def layout_of(array):
    """How a replay must lay out a value eager gave as ``array``: None where that is row-major
    (or not dense: an expanded or stepped view, or empty), else ``(dims fastest first, shape,
    element strides)``."""
    if _row_major(array) or not array.size or not dense(array):
        return None
    return _order(array), array.shape, tuple(s // array.itemsize for s in array.strides)


def laid_out(array, layout):
    """``array``'s values with the strides ``layout`` (:func:`layout_of`) gives: eager's where
    the shape is the one recorded, else those of a dense array with the dims in the recorded
    order (a dynamic graph at other sizes); row-major where ``layout`` is None. ``array``
    itself where it has them already (a view where only a size-1 dim's stride differs)."""
    if layout is None:
        if _row_major(array):
            return array
        order = list(range(array.ndim - 1, -1, -1))
        return laid_out_as(array, order, compatible_strides(array.shape, order, array.itemsize))
    if type(layout) is Strided:  # a view of an intermediate, or empty (inner_views.py)
        return restrided(array, layout)
    order, shape, strides = layout
    size = array.itemsize
    want = tuple(s * size for s in strides) if array.shape == shape else compatible_strides(array.shape, order, size)
    return laid_out_as(array, order, want)


def layout_keys(tensors):
    """The guarded layout of each tensor: None for row-major, else its dims by stride
    (fastest first) and whether it is dense."""
    return tuple([None if _row_major(t._data) else (tuple(_order(t._data)), dense(t._data)) for t in tensors])
