"""The live conjugate views: NumPy arrays kept as the conjugates of other arrays.

NumPy cannot stride a conjugate, so ``ember.conj``'s lazy view (``_ops/complex.py``) holds its
own array, laid out as its source (:func:`laid_out_like`), and is registered here with the
source; every in-place write (``_ops.core.write_into``) passes the written array to
:func:`sync`, which carries the write across each pair. A view is forgotten when its buffer
dies. Only NumPy arrays take part: another library's arrays cannot alias these.
"""
import weakref

import numpy as np

__all__ = ["VIEWS", "register", "live", "sync", "laid_out_like", "address"]

# id(buffer) -> (weak reference to the buffer, the view's byte offset in it or None for the
# buffer itself, the source array, the conjugate bit). Empty unless a conj view is alive, so a
# write pays one truthiness check.
VIEWS = {}


def register(view, source, bit):
    """Keeps ``view`` (a NumPy array holding ``source``'s conjugate) in step with ``source``
    for as long as ``view``'s buffer lives; ``bit`` is the conjugate bit ``is_conj`` reports."""
    # The buffer, which every view of ``view`` keeps alive, and where ``view`` lies in it
    # (None: the view is the buffer).
    buffer, offset = view, None
    if view.base is not None:
        buffer, offset = view.base, address(view) - address(view.base)
    key = id(buffer)
    VIEWS[key] = (weakref.ref(buffer, lambda _: VIEWS.pop(key, None)), offset, source, bit)


def live():
    """(view array, source array, conjugate bit) of each live conj view, oldest first."""
    for ref, offset, source, bit in tuple(VIEWS.values()):
        buffer = ref()
        if buffer is not None:
            view = buffer if offset is None else np.ndarray(source.shape, source.dtype, buffer, offset,
                                                            source.strides)
            yield view, source, bit


def sync(written):
    """Carries an in-place write into the array ``written`` across conj views: a write into a
    view's array goes back conjugated into its source (and on up, for the conjugate of a
    conjugate), then every view whose source was touched is recomputed (and on down)."""
    if type(written) is not np.ndarray:  # another library's array cannot alias a conj view
        return
    views = list(live())
    touched = [written]
    for view, source, _ in reversed(views):  # a source made by a newer view than its own: none
        if np.may_share_memory(view, touched[-1]):
            np.conjugate(view, out=source)
            touched.append(source)
    for view, source, _ in views:
        if any(np.may_share_memory(source, t) for t in touched):
            np.conjugate(source, out=view)
            touched.append(view)


def laid_out_like(a):
    """An empty array with ``a``'s shape, dtype and strides at ``a``'s offset in a new buffer
    the size of the storage ``a`` views (so ``stride()`` and ``storage_offset()`` agree)."""
    if a.base is None:  # a owns its (contiguous) memory
        return np.empty_like(a)
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root.flags.c_contiguous or root.flags.f_contiguous:
        low, high = address(root), address(root) + root.nbytes
    else:
        low, high = np.lib.array_utils.byte_bounds(root)
    buffer = np.empty(high - low, np.uint8)
    return np.ndarray(a.shape, a.dtype, buffer, address(a) - low, a.strides)


def address(a):
    """The address of ``a``'s first element."""
    return a.__array_interface__["data"][0]
