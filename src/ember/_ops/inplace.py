"""In-place writes: the ``add_`` forms of the public functions, ``fill_``, ``zero_`` and
``copy_``.

An in-place method computes the out-of-place result and writes it into ``self``
(:func:`write_result`, on ``core.write_into``), so each op keeps one definition.
"""
import builtins

from .._backend.sparse import SparseUnsupported, unsupported_message
from .._creation import full, tensor
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from .._dtype import can_cast, result_type
from .core import ZeroLink, _type_name, apply, write_into
from .shape import Clone, expand


def write_result(self, result, overlapping=False):
    """Writes an op's out-of-place ``result`` into ``self`` and returns ``self`` (``write_into``'s
    errors)."""
    write_into(self, result, overlapping)
    return self


def inplace(fn):
    """The in-place method form of ``fn`` (``add`` -> ``Tensor.add_``)."""
    def method_(self, *args, **kwargs):
        src = self
        if STATE.enabled and (self.requires_grad or builtins.any(getattr(a, "requires_grad", False)
                                                                 for a in (*args, *kwargs.values()))):
            # The op may save its input for backward; give it the old value, not the storage
            # about to be overwritten (PyTorch keeps the original self the same way).
            src = self._snapshot()
        try:
            result = fn(src, *args, **kwargs)
        except NotImplementedError:
            # torch checks that the result's dtype casts to self's before it picks a kernel
            # (``u8.bitwise_and_(1.5)``: float, which the bitwise kernels refuse)
            if args and not isinstance(args[0], (str, type(None))):
                dtype = result_type(self, args[0])
                if dtype is not self.dtype and not can_cast(dtype, self.dtype):
                    raise RuntimeError(f"result type {_type_name(dtype)} can't be cast to the desired output "
                                       f"type {_type_name(self.dtype)}") from None
            raise
        return write_result(self, result)
    method_.__name__ = fn.__name__ + "_"
    method_.__doc__ = f"In-place ``{fn.__name__}``: writes the result into ``self`` and returns it."
    return method_


def fill_(self, value):
    """Sets every element to ``value`` (a number or a 0-dim tensor, RuntimeError otherwise;
    NotImplementedError for a sparse tensor, as torch)."""
    if self.is_sparse:
        raise SparseUnsupported(unsupported_message("fill_.Scalar"))
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return write_result(self, expand(value.to(self.dtype), self.shape), overlapping=True)
    # made by the factory: a compiled function records the filled value as a constant
    return write_result(self, full(self.shape, value, dtype=self.dtype), overlapping=True)


def zero_(self):
    """Sets every element to zero (a sparse tensor keeps no entries)."""
    if self.is_sparse:
        return write_result(self, Tensor._make(self._data.cleared()))
    return fill_(self, 0)


def copy_(self, src, non_blocking=False):
    """Copies ``src`` (broadcast, cast) into ``self``; differentiable w.r.t. ``src``.

    Raises:
        RuntimeError: one of ``self`` and ``src`` is sparse and the other dense (as torch).
    """
    if not isinstance(src, Tensor):
        src = tensor(src)
    if self.is_sparse != src.is_sparse:
        raise RuntimeError(f"copy_() between dense and sparse Tensors is not implemented! Found self type = "
                           f"{self.type()} and src type = {src.type()}")
    result = src if src.dtype is self.dtype else src.to(self.dtype)
    if result._data.shape != self._data.shape:
        result = expand(result, self.shape)
    if STATE.enabled and self.requires_grad and result.requires_grad and self._view_chain is None:
        # torch's CopyBackwards: src's gradient, zeros for self's old value (x.grad 0, not None)
        result = apply(ZeroLink, result, self)
    elif result is src and src.requires_grad:
        # ``self`` takes the result's history: src's own node must not become self's.
        result = apply(Clone, src)
    write_into(self, result)
    return self
