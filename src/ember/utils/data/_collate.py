"""Batch assembly: :func:`default_collate` (samples -> batch) and :func:`default_convert`
(NumPy -> Tensor without batching), with PyTorch's rules
(https://pytorch.org/docs/stable/data.html#torch.utils.data.default_collate).

:func:`collate` walks the structure of the first sample and looks up a function per leaf type
in ``collate_fn_map`` (exact type first, then ``isinstance`` in insertion order); containers
(mappings, namedtuples, sequences) are transposed and recursed into.
"""
import collections.abc
import copy
import re

import numpy as np

from ..._creation import as_tensor, tensor
from ..._dtype import float64
from ..._ops.join import stack
from ..._tensor import Tensor

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

_STRING_OR_OBJECT_DTYPE = re.compile(r"[SaUO]")
_ERROR_FORMAT = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """``ember.stack(batch, 0)``; RuntimeError when the tensors' sizes differ."""
    first = batch[0]
    dtype = first.dtype
    if not any(t.requires_grad or t.dtype is not dtype for t in batch):
        # Stacking the arrays directly skips per-tensor op dispatch; equal sizes are required,
        # and ember.stack below raises PyTorch's error when they are not.
        try:
            return Tensor._make(np.stack([t._data for t in batch]))
        except ValueError:
            pass
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """Arrays become tensors (sharing memory) and are stacked; TypeError for string/object arrays."""
    if _STRING_OR_OBJECT_DTYPE.search(batch[0].dtype.str) is not None:
        raise TypeError(_ERROR_FORMAT.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    """NumPy scalars become a 1-d tensor of their dtype."""
    return as_tensor(np.array(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    """Python floats become a float64 tensor (whatever the default dtype)."""
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    """Python ints become int64, bools become bool."""
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings and bytes stay a list."""
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    (np.ndarray, np.memmap): collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def collate(batch, *, collate_fn_map=None):
    """Collates a list of samples that share one structure, using ``collate_fn_map`` for leaves.

    Mappings collate per key (keeping the mapping's type where it can be rebuilt);
    namedtuples stay namedtuples; other tuples become lists, and other sequences keep their
    type where it can be rebuilt. Raises RuntimeError("each element in list of batch should
    be of equal size") for sequences of different lengths and TypeError for a leaf type with
    no collate function.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        return _rebuild_mapping(elem, collated)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return collated
        return _rebuild_sequence(elem, collated)
    raise TypeError(_ERROR_FORMAT.format(elem_type))


def default_collate(batch):
    """The DataLoader's default ``collate_fn``: a list of samples -> one batch.

    Tensors are stacked into a new leading dimension (N, ...); NumPy arrays are converted and
    stacked; NumPy scalars become a tensor of their dtype; Python floats a float64 tensor;
    ints an int64 tensor; bools a bool tensor; strings and bytes stay a list. Containers
    recurse: ``[(x0, y0), (x1, y1)]`` becomes ``[X, Y]`` (a list, as in PyTorch), namedtuples
    and dicts keep their type.

    Example::

        >>> default_collate([(0, 1.5), (1, 2.5)])
        [tensor([0, 1]), tensor([1.5000, 2.5000], dtype=ember.float64)]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """The DataLoader's ``collate_fn`` when automatic batching is off: NumPy arrays and scalars
    become tensors, recursing into mappings and sequences (tuples become lists, namedtuples
    stay); everything else, including Python numbers, is returned as it is."""
    data_type = type(data)
    if isinstance(data, Tensor):
        return data
    if data_type.__module__ == "numpy" and data_type.__name__ not in ("str_", "bytes_"):
        if isinstance(data, np.ndarray) and _STRING_OR_OBJECT_DTYPE.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return data_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like, items):
    """``items`` in a mapping of ``like``'s type where that type can be rebuilt, else a dict."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            # a shallow copy keeps the attributes of dict subclasses
            clone = copy.copy(like)
            clone.update(items)
            return clone
        return type(like)(items)
    except TypeError:
        return items


def _rebuild_sequence(like, items):
    """``items`` in a sequence of ``like``'s type where that type can be rebuilt, else a list."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:
        return items
