"""Bytes of live tensor storage, counted at allocation and release.

A tensor's storage is the NumPy buffer under its array: the array that owns the memory, which
every view (slice, reshape, ``detach``, ``.data``, ``expand``) points at through ``.base``.
Each owner is counted once, when the first tensor wraps it, and released by a weak-reference
callback when the owner array itself dies, so views never add bytes, and bytes stay counted
for as long as anything (a tensor, a view, a saved tensor of the graph, an array returned by
``numpy()``) keeps the storage alive, as PyTorch's storages do.

The counts are exact bytes (``nbytes`` of the owner), not allocator blocks: PyTorch's CUDA
caching allocator rounds each block up to 512 bytes, NumPy does not pool. Scratch arrays that an
op kernel allocates and drops without wrapping them in a tensor (im2col windows, intermediate
NumPy results) are not tensor storage and are not counted, where PyTorch's allocator would see
its kernels' workspace tensors; ``tracemalloc`` sees every NumPy buffer. An array built on a
foreign buffer (``np.frombuffer`` over ``bytes``) is counted as its own outermost array.

:func:`ember.memory_allocated`, :func:`ember.max_memory_allocated` and
:func:`ember.reset_peak_memory_stats` read these counts (PyTorch's names, from
https://pytorch.org/docs/stable/generated/torch.cuda.memory_allocated.html and its siblings);
profilers read :func:`allocated` and :func:`peak`.
"""
import contextlib
import weakref

import numpy as np

from . import _device

__all__ = ["memory_allocated", "max_memory_allocated", "reset_peak_memory_stats"]

_ndarray = np.ndarray
_live = {}  # id(owner array) -> _Owner; a key leaves in the callback, before the id can be reused
_current = 0  # bytes of the storages in _live
_peak = 0


class _Owner(weakref.ref):
    """A weak reference to a storage-owning array that remembers its key and size."""
    __slots__ = ("key", "nbytes")


def _release(ref):
    global _current
    del _live[ref.key]
    _current -= ref.nbytes


def track(data):
    """Counts the storage under the array ``data`` unless it is already counted.

    Called wherever a Tensor's array is set (``Tensor._make``, ``Tensor._init``, and the few
    places that assign ``_data`` directly); every op calls it, so it is kept to one function."""
    global _current, _peak
    owner = data.base
    if owner is None:
        owner = data
    elif owner.__class__ is not _ndarray or owner.base is not None:
        owner = _outermost(data)
    key = id(owner)
    if key in _live:
        return
    try:
        ref = _live[key] = _Owner(owner, _release)
    except TypeError:  # a NumPy scalar: an immutable value, not a storage that can be freed
        return
    ref.key = key
    ref.nbytes = n = owner.nbytes
    _current += n
    if _current > _peak:
        _peak = _current


def _outermost(array):
    # NumPy collapses chains of views to the owning array, but not across arrays that borrow a
    # foreign buffer, ndarray subclasses, or stride tricks (sliding_window_view hangs its view
    # off a helper object whose ``base`` is the array); walk those.
    base = array.base
    while base is not None:
        if isinstance(base, _ndarray):
            array = base
        # (from_numpy's storage span is a storage, not memory: its array is the memory)
        base = base.spanned if hasattr(base, "spanned") else getattr(base, "base", None)
    return array


def storage_bytes(tensors):
    """Bytes of the distinct storages under ``tensors`` (an iterable of Tensors; others and None
    are skipped): a view of a tensor already in the iterable adds nothing."""
    owners = {}  # holding each owner keeps its id from being reused by a later one
    for t in tensors:
        data = getattr(t, "_data", None)
        if data is not None:
            owner = _outermost(data)
            owners[id(owner)] = owner
    return sum(owner.nbytes for owner in owners.values())


def allocated():
    """Bytes of storage held by live tensors now (int)."""
    return _current


def peak():
    """The most bytes :func:`allocated` has reported since the start or the last reset (int)."""
    return _peak


def reset_peak():
    """Starts peak tracking again from the current allocation."""
    global _peak
    _peak = _current


@contextlib.contextmanager
def peak_scope():
    """Within the block :func:`peak` is the high-water mark since entry; on exit the outer peak
    resumes, raised to the block's if that was higher, so measuring a region does not erase the
    peak a caller is tracking."""
    global _peak
    outer = _peak
    _peak = _current
    try:
        yield
    finally:
        _peak = max(_peak, outer)


def _check_device(device):
    if device is None:
        return
    if isinstance(device, int) or _device.device(device).type != "cpu":
        raise ValueError(f"Expected a cpu device, but got: {device}")


def memory_allocated(device=None):
    """Bytes of storage currently held by live tensors (int).

    Views share their base's storage and are not counted again; storage is released when the
    last tensor or array using it dies (for saved activations: when the graph is freed, after
    ``backward`` without ``retain_graph``). Counts exact ``nbytes``, with no allocator rounding.

    Args:
        device: ``None``, ``"cpu"`` or ``ember.device("cpu")``; ember's tensors live on the CPU.

    Raises:
        ValueError: ``device`` is not a CPU device.

    Source: https://pytorch.org/docs/stable/generated/torch.cuda.memory_allocated.html
    """
    _check_device(device)
    return allocated()


def max_memory_allocated(device=None):
    """The peak of :func:`memory_allocated` in bytes since the program started or since the last
    :func:`reset_peak_memory_stats` (int).

    Raises:
        ValueError: ``device`` is not a CPU device.

    Source: https://pytorch.org/docs/stable/generated/torch.cuda.max_memory_allocated.html
    """
    _check_device(device)
    return peak()


def reset_peak_memory_stats(device=None):
    """Sets the peak that :func:`max_memory_allocated` reports to the current allocation.

    Raises:
        ValueError: ``device`` is not a CPU device.

    Source: https://pytorch.org/docs/stable/generated/torch.cuda.reset_peak_memory_stats.html
    """
    _check_device(device)
    reset_peak()
