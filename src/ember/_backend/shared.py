"""Arrays in shared memory, for tensors that several processes read and write
(``Tensor.share_memory_``, ``torch.multiprocessing``).

An array is moved into a POSIX shared-memory segment (``multiprocessing.shared_memory``); another
process receives a duplicate of the segment's file descriptor (as PyTorch's ``file_descriptor``
strategy: multiprocessing's resource sharer passes it) and maps the same bytes, so in-place writes
on either side show on the other (Hogwild training). The process that made a segment unlinks its
name when its last array on it is garbage collected, or at exit; an open descriptor keeps the
memory alive, so a sender may drop a tensor before the receiver has taken it. Processes started
by ``multiprocessing`` share their parent's resource tracker, which unlinks what a crashed maker
leaked.
"""
import atexit
import collections
import ctypes
import gc
import mmap
import os
import sys
import weakref
from multiprocessing import reduction, shared_memory

import numpy as np

_SEGMENTS = {}  # id of a segment's array -> its SharedMemory, until the array is collected
_ATTACHED = weakref.WeakValueDictionary()  # segment name -> its array, in this process
_MADE_HERE = {}  # name -> SharedMemory, for the segments this process created (and unlinks)


def owner(array):
    """The array that owns the memory ``array`` views (``array`` itself when it owns it)."""
    while (base := held(array)) is not None:
        array = base
    return array


def held(array):
    """The array whose memory ``array`` views and keeps alive, or None (its own memory)."""
    base = array.base
    if not isinstance(base, np.ndarray):  # as_strided's go-between keeps the array as .base
        base = getattr(base, "base", None)
    return base if isinstance(base, np.ndarray) else None


class _Span:
    """The bytes an array's elements span, as an array interface that is a storage of its own
    (no ``base``: :func:`owner` stops here); ``spanned``, the array, keeps the memory alive
    (and is what ``_memory`` counts)."""

    def __init__(self, array, nbytes):
        self.spanned = array
        self.__array_interface__ = {"data": (array.__array_interface__["data"][0], not array.flags.writeable),
                                    "shape": (nbytes,), "typestr": "|u1", "version": 3}


def own_span(array):
    """``array`` where its memory is a whole allocation from its start; otherwise the same
    view over a :class:`_Span` of exactly its elements' bytes: the storage torch gives
    ``from_numpy`` of a view (positive strides)."""
    if array.base is None:
        return array
    span = sum((n - 1) * s for n, s in zip(array.shape, array.strides)) + array.itemsize if array.size else 0
    root = owner(array)
    if span % array.itemsize or (span == root.nbytes and root.__array_interface__["data"][0]
                                 == array.__array_interface__["data"][0]):
        return array
    items = np.asarray(_Span(array, span)).view(array.dtype)
    return np.lib.stride_tricks.as_strided(items, array.shape, array.strides, writeable=array.flags.writeable)


def is_shared(array):
    """Whether ``array`` lies in a shared-memory segment."""
    return id(owner(array)) in _SEGMENTS


def on(root, cls):
    """Every ``cls`` instance (a tensor) whose ``_data`` array lies on ``root``'s memory, found
    by scanning the heap (an allocation does not know its tensors). The slot is read itself: a
    lazy module's uninitialized parameter, alive anywhere in the process, refuses ``._data``."""
    slot = cls.__dict__["_data"]
    found = []
    for t in gc.get_objects():
        if issubclass(type(t), cls):  # (type(): no __class__ lookups)
            try:
                data = slot.__get__(t)
            except AttributeError:  # (not set yet)
                continue
            if isinstance(data, np.ndarray) and owner(data) is root:
                found.append(t)
    return found


def regrow(items, size, cls):
    """Gives the allocation whose bytes are ``items`` (a whole allocation, as uint8) ``size``
    bytes in a new one that keeps the first ones (new ones are zero), and moves every ``cls``
    instance (a tensor) on it there, at its offset and strides, as torch resizes a storage its
    tensors share. Returns the new bytes. RuntimeError where ``items`` is part of an allocation
    (torch's "not resizable") or a tensor on it would reach past the new end."""
    root = owner(items)
    start = _address(root)
    if _address(items) != start or items.nbytes != root.nbytes or isinstance(root.base, _Span):  # part of one
        raise RuntimeError("Trying to resize storage that is not resizable")
    grown = np.zeros(size, np.uint8)
    keep = min(size, items.size)
    grown[:keep] = items[:keep]
    moved = []
    for t in on(root, cls):
        data = t._data
        offset = _address(data) - start
        end = offset + sum(max((n - 1) * st, 0) for n, st in zip(data.shape, data.strides)) + data.itemsize
        if data.size and end > size:
            raise RuntimeError(f"resize_: a tensor of shape {list(data.shape)} on this storage reaches byte "
                               f"{end}, past the new size {size}")
        moved.append((t, offset))
    for t, offset in moved:
        t._data = np.ndarray(t._data.shape, t._data.dtype, buffer=grown, offset=min(offset, size),
                             strides=t._data.strides)
    for hook in REGROWN:
        hook(root, grown)
    return grown


# called with (the old allocation, the new bytes) after :func:`regrow` moved the tensors: the
# storage objects that show the whole allocation follow it (``storage.py``)
REGROWN = []


def holders(root, cls):
    """Every ``cls`` instance (a tensor) whose ``_data`` array lies on ``root``'s memory.
    RuntimeError if anything else (an array from ``numpy()``, a compiled graph's constant)
    also holds that memory, counted by references: each array by the instances holding it,
    ``root`` also by the views on it."""
    found = on(root, cls)
    arrays = {id(root): root, **{id(t._data): t._data for t in found}}
    counts = collections.Counter(id(t._data) for t in found)
    counts.update(id(held(a)) for a in arrays.values() if a is not root)
    # beyond those: getrefcount's argument and the dict's entry; for root also its two names
    if any(sys.getrefcount(arrays[key]) - 2 - 2 * (key == id(root)) != counts[key]
           for key in arrays):
        raise RuntimeError("share_memory_(): this tensor's memory is also held by something other "
                           "than tensors (an array from numpy(), a compiled graph), which could "
                           "not follow it into shared memory")
    return found


def move(arrays):
    """``arrays``, views of one owner, as the same views of a new shared-memory segment holding
    a byte copy of the owner's memory: offsets and strides are kept, so every view still sees
    what the others write. Returns the new arrays, in order."""
    low, high = np.lib.array_utils.byte_bounds(owner(arrays[0]))
    segment = shared_memory.SharedMemory(create=True, size=max(high - low, 1))
    _MADE_HERE[segment.name] = segment
    room = np.ndarray((segment.size,), np.uint8, buffer=segment.buf)
    ctypes.memmove(room.ctypes.data, low, high - low)
    _keep(room, segment, unlink=True)
    return [np.ndarray(a.shape, a.dtype, room, _address(a) - low, a.strides) for a in arrays]


def _address(array):
    return array.__array_interface__["data"][0]


def handle(array):
    """What another process needs to attach to ``array``: ``(segment name, a duplicate of its
    file descriptor for pickling, byte offset, shape, strides, dtype)``, the dtype as an object
    (pickled by reference: bfloat16 stays bfloat16). ``array`` must be shared."""
    root = owner(array)
    segment = _SEGMENTS[id(root)]
    offset = _address(array) - _address(root)
    descriptor = reduction.DupFd(segment._fd)  # SharedMemory keeps its descriptor in _fd
    return segment.name, descriptor, offset, array.shape, array.strides, array.dtype


def attach(name, descriptor, offset, shape, strides, dtype):
    """The array a :func:`handle` describes, on the same memory (one mapping per segment in a
    process, however many arrays arrive on it)."""
    fd = descriptor.detach()
    room = _ATTACHED.get(name)
    if room is None:
        segment = _Received(name, fd)
        room = np.ndarray((len(segment.buf),), np.uint8, buffer=segment.buf)
        _keep(room, segment, unlink=False)
        _ATTACHED[name] = room
    else:
        os.close(fd)
    return np.ndarray(shape, dtype, buffer=room, offset=offset, strides=strides)


class _Received:
    """A segment mapped from a descriptor another process sent (its name may be unlinked)."""

    def __init__(self, name, fd):
        self.name, self._fd = name, fd
        self.buf = mmap.mmap(fd, os.fstat(fd).st_size)

    def close(self):  # the mapping goes with the last array on it
        os.close(self._fd)


def _keep(room, segment, unlink):
    _SEGMENTS[id(room)] = segment
    weakref.finalize(room, _release, id(room), segment, unlink)


def _release(key, segment, unlink):
    del _SEGMENTS[key]
    segment.close()
    if unlink and _MADE_HERE.pop(segment.name, None) is not None:
        segment.unlink()


@atexit.register
def _unlink_all():
    """Segments still alive at exit (arrays in module globals) are unlinked by their maker."""
    for segment in tuple(_MADE_HERE.values()):
        _MADE_HERE.pop(segment.name, None)
        segment.unlink()
