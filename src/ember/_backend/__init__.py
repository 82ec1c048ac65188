"""Array namespaces behind ember's devices, and the few calls that differ between them.

Op kernels call NumPy functions on the arrays they are given; with CuPy installed the same
kernels run on the GPU because CuPy mirrors NumPy's API. What does not mirror cleanly lives
here and nowhere else.
"""
import numpy as np

__all__ = ["index_add_at", "sliding_windows"]


def index_add_at(out, index, values):
    """``out[index] += values`` with repeated indices each adding (unbuffered)."""
    np.add.at(out, index, values)


def sliding_windows(x, window_shape, axis):
    """Read-only strided view of all windows of ``window_shape`` over ``axis`` (no copy)."""
    return np.lib.stride_tricks.sliding_window_view(x, window_shape, axis=axis)
