"""How ``tensor(data, dtype=...)`` checks the Python numbers it reads into an integer dtype, as
PyTorch's checked conversion does (NumPy arrays and tensors are cast without a check), and
the nested sequences it reads (torch's errors for ragged ones)."""
import collections.abc

import numpy as np

__all__ = ["LONG_LONG", "check_fits", "first_sizes", "is_sequence", "listed", "refuse_first_elements", "refuse_ragged", "unsigned64"]

LONG_LONG = "Overflow when unpacking long long"  # torch's ValueError for a Python int past int64 read as one


def check_fits(arr, dtype):
    """RuntimeError unless every value of ``arr`` (the data as NumPy read it) fits ``dtype``;
    an unsigned dtype takes a negative int whose magnitude fits (``tensor([-5], dtype=uint8)``
    wraps to 251)."""
    info = np.iinfo(dtype.np)
    lowest = -info.max if info.min == 0 and arr.dtype.kind in "biu" else info.min
    if not (np.all(np.isfinite(arr)) and arr.min() >= lowest and arr.max() <= info.max):
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def unsigned64(data):
    """A uint64 array of ``data`` (Python ints, nested), read as unsigned 64-bit as torch reads
    them: 2**63 and up fit, which reading through int64 would refuse; a negative int or one
    from 2**64 raises torch's OverflowError."""
    flat = np.array(data, dtype=object).ravel()
    if flat.size and flat.min() < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if flat.size and flat.max() >= 1 << 64:
        raise OverflowError("int too big to convert")
    return np.array(data, dtype=np.uint64)


def first_sizes(data):
    """The sizes torch's ``tensor()`` reads off nested sequences: the lengths along the first
    elements, down to a number or an empty sequence (``[[], [1]]``: ``[2, 0]``; torch then
    stores no element, so the other sequences are never looked at)."""
    sizes, x = [], data
    while isinstance(x, (list, tuple, np.ndarray)):
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]
    return sizes


def refuse_ragged(data, integral):
    """torch's error for nested sequences that are not a grid: the sizes are read along the
    first elements, then a sequence of another length is a ValueError naming both and the
    dim, a number where a sequence belongs TypeError "not a sequence", a sequence where a
    number belongs the TypeError of converting it to an int (``integral``) or a float."""
    sizes = first_sizes(data)

    def walk(seq, dim):
        if dim == len(sizes):
            if isinstance(seq, (list, tuple, np.ndarray)):
                raise TypeError(f"'{type(seq).__name__}' object cannot be interpreted as an integer"
                                if integral else
                                f"must be real number, not {type(seq).__name__}")
            return
        if not isinstance(seq, (list, tuple, np.ndarray)):
            raise TypeError("not a sequence")
        if len(seq) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(seq)})")
        for item in seq:
            walk(item, dim + 1)
    walk(data, 0)


def listed(data):
    """``data``, a sequence other than a list or tuple (a deque, a range) as a list (torch's)."""
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (list, tuple, str, bytes)):
        return list(data)
    return data


def is_sequence(typ):
    """Whether torch's ``tensor()`` reads a ``typ`` inside nested data as one more dim: a
    sequence (a list, a tuple or ``Size``, a range, a deque), but not a string or bytes."""
    return issubclass(typ, collections.abc.Sequence) and not issubclass(typ, (str, bytes))


def refuse_first_elements(data):
    """torch's errors for what lies where the first elements size the dims: a string
    (``tensor(['a'])``: ValueError, one sequence more there; anywhere else it is the TypeError
    of a non-number), a 0-d array (TypeError, it has no length; anywhere else it is a number)."""
    x = data
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    if isinstance(x, str):
        raise ValueError("too many dimensions 'str'")
    if isinstance(x, np.ndarray) and not x.ndim and x is not data:
        raise TypeError("len() of unsized object")
