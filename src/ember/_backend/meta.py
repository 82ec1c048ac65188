"""Storage of tensors on the ``meta`` device: a shape and a dtype, no data.

A :class:`MetaArray` is an ndarray whose every element is one shared zero (all strides 0), so
a meta tensor of any size takes no memory, and NumPy's views (reshape, transpose, slicing)
of it stay meta arrays. The dispatcher never runs a kernel on one (it takes the op's shape
rule instead); computing on one by mistake raises, never gives numbers.
"""
import weakref

import numpy as np

__all__ = ["MetaArray", "meta_array", "result", "LIVE", "NO_DATA", "NO_VALUE", "NO_NUMPY", "DATA_DEPENDENT"]

# One entry per meta array alive: while it is empty (no meta tensor exists, as after a model
# built on meta got its storage), an op pays one list check for the meta path.
LIVE = []

NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_VALUE = "Tensor.item() cannot be called on meta tensors"
DATA_DEPENDENT = ("a boolean mask or nonzero() on the meta device: the size of the result depends on the "
                  "values, which a meta tensor does not have")
NO_NUMPY = ("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
            "host memory first.")

# What may look at a meta array: questions about memory, not values.
_ALLOWED = {np.may_share_memory, np.shares_memory, np.ndim, np.shape, np.size, np.result_type}


class MetaArray(np.ndarray):
    """An ndarray without data (see the module's docstring)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise NotImplementedError(NO_DATA)

    def __array_function__(self, func, types, args, kwargs):
        if func in _ALLOWED:
            return super().__array_function__(func, types, args, kwargs)
        raise NotImplementedError(NO_DATA)

    def copy(self, order="C"):
        return meta_array(self.shape, self.dtype)

    def astype(self, dtype, *args, **kwargs):
        return meta_array(self.shape, dtype)

    def nonzero(self):
        raise NotImplementedError(DATA_DEPENDENT)

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def item(self, *args):
        raise RuntimeError(NO_VALUE)

    def __bool__(self):
        raise RuntimeError(NO_VALUE)

    def __int__(self):
        raise RuntimeError(NO_VALUE)

    def __float__(self):
        raise RuntimeError(NO_VALUE)

    __index__ = __int__


def meta_array(shape, dtype, base=None):
    """A :class:`MetaArray` of ``shape`` and NumPy ``dtype``; over the zero of meta array
    ``base`` (of that dtype) when given, so that it is a view of ``base``."""
    zero = np.zeros(1, dtype) if base is None else base
    array = np.lib.stride_tricks.as_strided(zero, tuple(shape), (0,) * len(shape), writeable=False).view(MetaArray)
    LIVE.append(None)
    weakref.finalize(array, LIVE.pop)
    return array


def result(op, inputs, attrs):
    """The meta array(s) an op entry would give for ``inputs`` (tensors, on the meta device or
    0-dim on the CPU, and constants): shapes and dtypes from its rule ``op.infer``, a view of
    input 0 for a view op. RuntimeError, as torch's, for a CPU tensor of 1 or more dims;
    NotImplementedError for a boolean mask, whose values would set the shape."""
    for x in inputs:
        data = getattr(x, "_data", None)
        if data is not None and type(data) is not MetaArray and data.ndim:
            raise RuntimeError("Tensor on device cpu is not on the expected device meta!")
    index = attrs.get("index", ())
    if getattr(op, "mask_sets_shape", False) and any(
            type(i) is MetaArray and i.dtype.kind == "b" for i in (index if type(index) is tuple else (index,))):
        raise NotImplementedError(DATA_DEPENDENT)
    rule = op.infer(*inputs, **attrs)
    if op.num_outputs > 1:
        return tuple(None if r is None else meta_array(r[0], r[1].np) for r in rule)
    base = inputs[0]._data if op.is_view and inputs[0]._data.dtype == rule[1].np else None
    return meta_array(rule[0], rule[1].np, base)
