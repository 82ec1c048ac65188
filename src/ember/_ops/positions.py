"""Positions of elements, as integer tensors: ``nonzero``/``argwhere``, ``one_hot`` and
``unravel_index``. None is differentiable (PyTorch's are not either)."""
import numpy as np

from .. import _backend, _dtype
from .._tensor import Tensor
from .refusals import refuse_unsigned


def nonzero(input, *, as_tuple=False):
    """Indices of nonzero elements: (N, ndim) int64, or a tuple of 1-D index tensors."""
    refuse_unsigned("nonzero_count_cpu", input.dtype)
    xp = _backend.namespace(input._data)
    idx = (input._data if input.ndim else input._data.reshape(1)).nonzero()
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in idx)
    return Tensor._make(xp.stack(idx, axis=1).astype(np.int64) if input.ndim else
                        xp.zeros((int(bool(input._data)), 0), np.int64))


argwhere = nonzero


def one_hot(tensor, num_classes=-1):
    """(…) int64 class indices to (…, num_classes) int64 one-hot rows. RuntimeError for
    non-int64 input, negative classes, or classes >= num_classes."""
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if num_classes == -1:
        num_classes = int(data.max()) + 1 if data.size else 0
        if not data.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((data[..., None] == _backend.namespace(data).arange(num_classes)).astype(np.int64))


def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of the flat ``indices`` (an integer tensor):
    a tuple of ``len(shape)`` int64 tensors shaped like ``indices``
    (https://pytorch.org/docs/stable/generated/torch.unravel_index.html). TypeError for
    non-integer indices."""
    if not isinstance(indices, Tensor):
        indices = Tensor._make(np.asarray(indices))
    if indices.dtype.is_inexact or indices.dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    flat, coordinates = indices._data.astype(np.int64), []
    for size in reversed(shape):
        coordinates.append(flat % size if size else flat * 0)
        flat = flat // size if size else flat
    return tuple(Tensor._make(_backend.as_array(c, flat)) for c in reversed(coordinates))
