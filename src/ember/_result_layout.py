"""The strides of an op's result, as torch 2.13 (CPU) lays it out.

Two rules, each applied where its ops make their results:

* :func:`pointwise` -- elementwise ops (TensorIterator's rule, ``TensorIteratorBase::
  reorder_dimensions`` and ``compute_fast_setup_type``): when every operand has the result's
  shape and all are row-major, or all channels-last, or all share one dense layout, the result
  takes it; otherwise the result's dims are ordered by the operands' strides, fastest first,
  the first operand whose strides tell two dims apart deciding for them (a broadcast dim, of
  stride 0, has no say; an operand with equal strides for both moves the longer dim outward
  and lets the next operand decide); dims no operand tells apart keep row-major order. So
  ``cl + c`` is channels-last, ``c + cl`` row-major, and a channels-last ``x`` plus a
  ``(C, 1, 1)`` bias or a ``(1,)`` tensor is channels-last. NumPy's ufuncs order their
  output by their inputs too ("K") but let row-major win where operands disagree, so the
  dispatcher (:func:`ember._ops.core.apply`) calls this rule unless the first operand is a
  row-major array of the result's shape and either the result has no dim of size 1 or the
  op has one such operand or two (a number aside): torch's order is row-major then too, and
  all-contiguous arithmetic pays a few attribute reads.
* :func:`row_major` -- reductions and scans: torch allocates their results row-major
  whatever the input's layout, a size-1 dim's stride included (``sum(1, keepdim=True)`` of a
  channels-last input is (20, 20, 5, 1)); NumPy keeps the input's order and, with
  ``keepdims``, gives a size-1 dim another stride.
* :func:`joined` -- ``cat`` and ``stack``: the format every input suggests (channels-last),
  else row-major (torch's ``compute_output_memory_format``), where NumPy's join follows the
  inputs' order.
* :func:`channels_last_like` -- convolutions, pooling, interpolation: the result is
  channels-last when an input is (``suggest_memory_format``), else row-major. Op kernels get
  it from :func:`channels_last_from`, composite functions from :func:`in_input_format`.

Values never change, only where they lie: a result in another layout is copied once.
Reference: https://pytorch.org/tutorials/intermediate/memory_format_tutorial.html and the
``TensorIterator`` notes in PyTorch's ``aten/src/ATen/TensorIterator.cpp``.
"""
import functools

import numpy as np

from . import _backend
from ._backend.index_layout import compatible_strides, laid_out_as, tensor_iterator_order
from ._memory_format import (_ORDER, channels_last, contiguous_format, is_contiguous, laid_out, may_suggest,
                             suggested, strides as format_strides)

__all__ = ["pointwise", "channels_last_like", "channels_last_from", "in_input_format", "row_major", "joined"]


def _operand_strides(shape, arrays):
    """Each array operand's element strides over the result's dims: 0 where it is broadcast."""
    ndim, out = len(shape), []
    for a in arrays:
        if type(a) is np.ndarray and a.ndim:  # (a number or a 0-d tensor has no strides to follow)
            lead = ndim - a.ndim
            out.append((0,) * lead + tuple(0 if n == 1 and shape[lead + i] != 1 else s // a.itemsize
                                           for i, (n, s) in enumerate(zip(a.shape, a.strides))))
    return out


def _fast_setup(shape, arrays, operands):
    """The (order, element strides) torch's fast setup gives when every operand has the
    result's shape and all are laid out alike (row-major, 4-d channels-last, or one dense
    layout: the first operand's strides, size-1 dims' too), else None. torch's fast setup
    knows no channels_last_3d: such operands keep their strides, size-1 dims' included."""
    tensors = [a for a in arrays if type(a) is np.ndarray]
    if any(a.shape != shape for a in tensors):
        return None
    first = operands[0]
    one_layout = all(o == first for o in operands)
    if len(shape) == 4 and is_contiguous(tensors[0], channels_last) and (  # (all row-major: the caller's case)
            one_layout or all(is_contiguous(a, channels_last) for a in tensors)):
        perm = list(_ORDER[channels_last][1])
        return perm, compatible_strides(shape, perm, 1)
    if one_layout and _backend.dense(tensors[0]):
        return tensor_iterator_order(shape, [first]), first
    return None


def pointwise(out, arrays):
    """``out``, the result of an elementwise op on ``arrays`` (its kernel's inputs: arrays and
    numbers), laid out as torch's TensorIterator lays it out (module docstring)."""
    if type(out) is not np.ndarray:
        return out
    if not out.size:
        return _empty(out, arrays)
    first = arrays[0]
    if type(first) is np.ndarray and first.flags.c_contiguous and first.size == out.size and (
            1 not in out.shape or len(arrays) == 2 and first.shape == out.shape and (
                type(arrays[1]) is not np.ndarray and first.strides == out.strides
                or type(arrays[1]) is np.ndarray and arrays[1].flags.c_contiguous and arrays[1].shape == out.shape)):
        return out  # torch's order is NumPy's here: row-major (the dispatcher's common case)
    shape, strides = out.shape, out.strides
    row_major = same_layout = fast = True
    for a in arrays:
        if type(a) is np.ndarray:
            if a.shape != shape:
                row_major = same_layout = False
                break
            row_major = row_major and a.flags.c_contiguous
            same_layout = same_layout and a.strides == strides and a.itemsize == out.itemsize
        elif 1 in shape:
            # a number: torch's fast setup wants every operand of the result's shape, so the
            # operands' strides order the dims, a size-1 dim's too (NumPy's flag ignores it)
            row_major = same_layout = fast = False
            break
    if row_major or same_layout and 1 not in shape:
        # torch's fast setup: the operands' common layout, which NumPy's result has (with a
        # size-1 dim, a channels-last format comes before the operands' strides: below)
        return out
    if out.ndim < 2:
        return out
    operands = _operand_strides(shape, arrays)
    if not operands:
        return out
    fast = _fast_setup(shape, arrays, operands) if fast else None
    perm, strides = fast if fast is not None else (tensor_iterator_order(shape, operands), None)
    strides = compatible_strides(shape, perm, 1) if strides is None else strides
    return laid_out_as(out, perm, tuple(s * out.itemsize for s in strides))


def _empty(out, arrays):
    """An elementwise result with no element, as torch lays it out: row-major when every
    operand is a tensor of its shape (torch's fast setup: an empty tensor counts as
    contiguous), else its dims ordered by the operands' strides, each stride the product of
    the sizes inside it (a size 0 included: ``empty(0, 3).t() + 1`` strides (1, 3))."""
    if out.ndim < 2 or all(type(a) is np.ndarray and a.shape == out.shape for a in arrays):
        return _backend.empty_strided_like(out, format_strides(out.shape, out.itemsize, contiguous_format))
    operands = _operand_strides(out.shape, arrays)
    perm = tensor_iterator_order(out.shape, operands) if operands else list(range(out.ndim))[::-1]
    strides = compatible_strides(out.shape, perm, 1)
    return _backend.empty_strided_like(out, tuple(s * out.itemsize for s in strides))


def channels_last_like(out, *arrays, keep=True):
    """``out`` laid out channels-last when one of ``arrays`` (its op's inputs, None for one
    not given) suggests a channels-last format of ``out``'s rank, else as it is; with ``keep``
    False, row-major instead (a torch kernel that takes channels-last inputs but gives
    row-major results: the 3-D pools, ``slow_conv3d``)."""
    for a in arrays:
        if a is not None and a.ndim == out.ndim and may_suggest(a):
            fmt = suggested(a)
            if fmt is not contiguous_format:
                if not keep:
                    return out if out.flags.c_contiguous else laid_out(out, contiguous_format, _backend.namespace(out))
                return out if out.strides == format_strides(out.shape, out.itemsize, fmt) else \
                    laid_out(out, fmt, _backend.namespace(out))
    return out


def channels_last_from(*positions, keep=None):
    """Decorates an op's forward kernel: its result laid out channels-last when the inputs at
    ``positions`` suggest it (:func:`channels_last_like`), as torch's convolution and pooling
    kernels (CPU) lay out theirs; ``keep(*arrays, **attrs)``, when given, tells whether torch's
    kernel for these inputs keeps the format (else the result is row-major). A result no input
    makes channels-last is row-major (NumPy's follows a transposed input's order: torch's
    kernels allocate one of the two)."""
    def decorate(forward):
        @functools.wraps(forward)
        def kernel(*arrays, **attrs):
            inputs = [arrays[i] for i in positions if i < len(arrays)]
            out = channels_last_like(forward(*arrays, **attrs), *inputs, keep=keep is None or keep(*arrays, **attrs))
            if type(out) is not np.ndarray or out.flags.c_contiguous or any(
                    a is not None and a.ndim == out.ndim and suggested(a) is not contiguous_format for a in inputs):
                return out
            return row_major(out)
        return kernel
    return decorate


def in_input_format(out, input, ranks=(4, 5)):
    """The tensor ``out`` of a composite function of a channels-last ``input`` (interpolation,
    adaptive averaging) in the format ``input`` suggests when its rank is in ``ranks``, else
    row-major, as torch's kernel gives it."""
    data = input._data
    if out.ndim != input.ndim or not hasattr(data, "flags") or not may_suggest(data):
        return out
    fmt = suggested(data)
    if fmt is contiguous_format:
        return out
    fmt = fmt if out.ndim in ranks else contiguous_format
    if out._data.strides == format_strides(out.shape, out._data.itemsize, fmt):
        return out
    return out.clone(memory_format=fmt)


def row_major(out):
    """The array ``out`` in row-major order with torch's strides for it (module docstring): a
    copy where it lies otherwise, a view where only its size-1 dims' strides differ (an empty
    array: torch's row-major strides, a size 0 counted as 1)."""
    if type(out) is np.ndarray and not out.size and out.ndim > 1:
        return _backend.empty_strided_like(out, format_strides(out.shape, out.itemsize, contiguous_format))
    if not out.flags.c_contiguous:
        return out.copy()
    if type(out) is np.ndarray and 1 in out.shape and out.ndim > 1:
        return out.reshape(-1).reshape(out.shape)  # (NumPy's C strides: torch's, size-1 dims too)
    return out


def _keeps_format(arrays):
    """Whether all ``arrays`` suggest one channels-last format (their join keeps it)."""
    formats = {suggested(a) for a in arrays}
    return len(formats) == 1 and contiguous_format not in formats


def joined(join, arrays, axis, stacked=False):
    """``join(arrays, axis=axis)`` (NumPy's ``concatenate``, or ``stack`` where ``stacked``)
    laid out as torch's ``cat``/``stack``: NumPy's order where every input suggests one
    channels-last format, else row-major (NumPy's join follows the inputs' order: a stack of
    transposed matrices came out transposed). Inputs led by a row-major one are joined first
    (row-major results: one flag read), others straight into a row-major result."""
    first = arrays[0]
    if type(first) is not np.ndarray:
        return join(arrays, axis=axis)
    if first.flags.c_contiguous:
        out = join(arrays, axis=axis)
        return out if out.flags.c_contiguous or _keeps_format(arrays) else row_major(out)
    if _keeps_format(arrays):
        return join(arrays, axis=axis)
    shape = list(first.shape)
    if stacked:
        shape.insert(axis, len(arrays))
    else:
        shape[axis] = sum(a.shape[axis] for a in arrays)
    dtypes = {a.dtype for a in arrays}
    out = np.empty(tuple(shape), dtype=dtypes.pop() if len(dtypes) == 1 else np.result_type(*arrays))
    return join(arrays, axis=axis, out=out)
