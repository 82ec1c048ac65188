"""Tensors on the ``meta`` device (PyTorch's meta tensors): a shape, a dtype and autograd
history, no data. Factories given ``device="meta"`` (or run inside ``with device("meta"):``)
make them, ops on them give results of the shapes and dtypes the op's rule says (the
dispatcher's meta path, ``_ops.core``), ``to("meta")`` moves a tensor there, and reading
values raises as torch does. Source: https://pytorch.org/docs/stable/meta.html
"""
import functools

from ._backend.meta import LIVE, MetaArray, meta_array
from ._device import default_device, device_type
from ._dispatch_state import META
from ._tensor import Tensor

__all__ = ["is_meta", "to_meta", "placed"]


def is_meta(t):
    """Whether tensor ``t`` is on the meta device."""
    return type(t._data) is MetaArray


def to_meta(t, dtype=None):
    """A meta tensor of ``t``'s shape and (unless ``dtype``) dtype, requiring grad as ``t``
    does (its history is not kept: a device move in torch records one node, ember none)."""
    out = Tensor._make(meta_array(t._data.shape, (dtype or t.dtype).np))
    if t.requires_grad and out.dtype.is_inexact:
        out.requires_grad = True
    return out


def placed(factory, like=False, unmoved=None):
    """``factory`` (a creation function with a ``device`` keyword) placing its result on the
    meta device when ``device`` says so, or, given none, when the default device is meta
    (``with ember.device("meta"):``) or, for a ``like`` factory (``rand_like``), its first
    argument is a meta tensor. The values are made on the CPU and then dropped; the CPU case
    costs one check. ``unmoved(generator)``, given for a random factory, is a context in which
    its draws leave the generator where it was (torch's meta draws draw nothing)."""
    @functools.wraps(factory)
    def on_device(*args, device=None, **kwargs):
        if device is None:
            if not (META or like and LIVE) or (default_device().type != "meta"
                                               and not (like and args and is_meta(args[0]))):
                return factory(*args, **kwargs)
        elif device_type(device) != "meta":
            return factory(*args, device=device, **kwargs)
        if unmoved is None:
            return to_meta(factory(*args, **kwargs))
        with unmoved(kwargs.get("generator")):
            return to_meta(factory(*args, **kwargs))
    return on_device
