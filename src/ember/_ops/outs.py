"""``out=`` tensors resized and filled as torch's: :func:`resize_out` (torch's ``resize_output``,
with its deprecation warning for an ``out`` that had elements) and :func:`factory_out`, the
``out=`` of the range factories (``arange``, ``range``, ``linspace``), which compute in
``out``'s dtype and keep its shape where the element count agrees."""
import functools
import warnings

from .. import _memory
from .._backend import namespace
from ..autograd.grad_mode import STATE
from .core import _type_name, write_into

__all__ = ["resize_out", "factory_out"]


def resize_out(out, shape, warn=True):
    """``out`` (an ``out=`` tensor) given a new row-major buffer of ``shape`` where its shape
    differs, as torch's ``resize_output``: with torch's deprecation warning when it had elements
    (``warn``)."""
    if tuple(out.shape) == tuple(shape):
        return
    if warn and out.numel():
        warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, which "
                      f"does not match the required output shape {list(shape)}. This behavior is deprecated, and in "
                      "a future PyTorch release outputs will not be resized unless they have zero elements. You can "
                      "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                      UserWarning, stacklevel=4)
    out._data = namespace(out._data).empty(tuple(shape), out._data.dtype)
    _memory.track(out._data)


def factory_out(name, warn_count=False, deprecation=None):
    """A decorator giving the range factory ``function(..., dtype=None, requires_grad=False)``
    torch's ``out=``: RuntimeError naming ``name`` (``aten::arange``) for an ``out`` requiring
    grad while grad mode is on, and for a ``dtype`` other than ``out``'s; the values computed
    in ``out``'s dtype and written into it, in its shape when the element count is the same,
    else resized to the result's (``warn_count``: with torch's arange warning); ``out`` requires
    grad as ``requires_grad`` says, as torch's factories set it. Returns ``out``. A
    ``deprecation`` message is warned first, on every call (``torch.range``'s, before its errors)."""
    def wrap(function):
        @functools.wraps(function)
        def call(*args, out=None, **kwargs):
            if deprecation:
                warnings.warn(deprecation, UserWarning, stacklevel=2)
            if out is None:
                return function(*args, **kwargs)
            if STATE.enabled and out.requires_grad:
                raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                                   "differentiation, but one of the arguments requires grad.")
            dtype = kwargs.get("dtype")
            if dtype is not None and dtype is not out.dtype:
                raise RuntimeError(f"dtype {_type_name(dtype)} does not match dtype of out parameter "
                                   f"({_type_name(out.dtype)})")
            result = function(*args, **{**kwargs, "dtype": out.dtype, "requires_grad": False})
            if result.numel() != out.numel():
                if warn_count and out.numel():
                    warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is "
                                  f"{out.numel()} which does not match the computed number of elements "
                                  f"{result.numel()}. Note that this may occur as a result of rounding error. The "
                                  f"out tensor will be resized to a tensor of shape ({result.numel()},).",
                                  UserWarning, stacklevel=2)
                resize_out(out, result.shape, warn=False)
            write_into(out, result.reshape(out.shape))
            if out.requires_grad != bool(kwargs.get("requires_grad")):  # (torch's factories set the flag)
                out.requires_grad_(bool(kwargs.get("requires_grad")))
            return out
        return call
    return wrap
