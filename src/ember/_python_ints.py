"""How ``tensor(data, dtype=...)`` checks the Python numbers it reads into an integer dtype, as
PyTorch's checked conversion does (NumPy arrays and tensors are cast without a check)."""
import numpy as np

__all__ = ["check_fits", "unsigned64"]


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
