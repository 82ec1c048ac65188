"""Arrays in shared memory, for tensors that several processes read and write
(``Tensor.share_memory_``, ``torch.multiprocessing``).

An array is moved into a POSIX shared-memory segment (``multiprocessing.shared_memory``); another
process attaches to the segment by its name and sees the same bytes, so in-place writes on either
side show on the other (Hogwild training). The process that made a segment unlinks it when its
last array on it is garbage collected, or at exit; a process that attached only closes its
mapping (keep a tensor alive until the processes it was sent to have received it, as in
PyTorch). Processes started by ``multiprocessing`` share their parent's resource tracker, which
unlinks what a crashed maker leaked.
"""
import atexit
import weakref
from multiprocessing import shared_memory

import numpy as np

_SEGMENTS = {}  # id of an owning array -> its SharedMemory, until the array is collected
_ATTACHED = weakref.WeakValueDictionary()  # segment name -> owning array, in this process
_MADE_HERE = {}  # name -> SharedMemory, for the segments this process created (and unlinks)


def _owner(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def is_shared(array):
    """Whether ``array`` lies in a shared-memory segment."""
    return id(_owner(array)) in _SEGMENTS


def share(array):
    """A copy of ``array`` in a new shared-memory segment (C-contiguous); ``array`` itself when
    it is shared already."""
    if is_shared(array):
        return array
    segment = shared_memory.SharedMemory(create=True, size=max(array.nbytes, 1))
    _MADE_HERE[segment.name] = segment
    owner = np.ndarray(array.shape, array.dtype, buffer=segment.buf)
    owner[...] = array
    _keep(owner, segment, unlink=True)
    return owner


def handle(array):
    """What another process needs to attach to ``array``: ``(segment name, byte offset, shape,
    strides, dtype)``, the dtype as an object (pickled by reference: bfloat16 stays bfloat16).
    ``array`` must be shared."""
    owner = _owner(array)
    offset = array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return _SEGMENTS[id(owner)].name, offset, array.shape, array.strides, array.dtype


def attach(name, offset, shape, strides, dtype):
    """The array a :func:`handle` describes, on the same memory (one mapping per segment in a
    process, however many arrays arrive on it)."""
    owner = _ATTACHED.get(name)
    if owner is None:
        segment = shared_memory.SharedMemory(name=name)
        owner = np.ndarray((segment.size,), np.uint8, buffer=segment.buf)
        _keep(owner, segment, unlink=name in _MADE_HERE)
        _ATTACHED[name] = owner
    return np.ndarray(shape, dtype, buffer=owner, offset=offset, strides=strides)


def _keep(owner, segment, unlink):
    _SEGMENTS[id(owner)] = segment
    weakref.finalize(owner, _release, id(owner), segment, unlink)


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
