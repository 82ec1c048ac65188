"""Moving and casting a ``Module``'s parameters and buffers: ``to``, ``float``, ``cpu``...
(https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to), all
through ``_apply``, which replaces each tensor's data in place so optimizers keep theirs."""
from ... import _dtype
from ..._device import device as _device
from ..._creation import empty_like
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["ConversionMixin"]


class ConversionMixin:
    """The conversion methods of :class:`~ember.nn.Module` (which holds the tables they walk)."""

    def _apply(self, fn, recurse=True):
        """Replaces every parameter's data (and gradient's) and every buffer by ``fn`` of it.
        Parameters stay the same objects, so optimizers holding them still see them."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                param.data = fn(param)
                if param.grad is not None:
                    param.grad.data = fn(param.grad)
            for key, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """``to(device=None, dtype=None, non_blocking=False)``, ``to(dtype)``, ``to(tensor)``:
        moves and/or casts the floating-point parameters and buffers in place; returns self.
        TypeError for a non-floating dtype; the tensors raise for a device ember lacks."""
        device, dtype, memory_format = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        return self._apply(lambda t: t.to(device=device, dtype=dtype if t.is_floating_point() else None,
                                          memory_format=memory_format if t.ndim in (4, 5) else None))

    def to_empty(self, *, device, recurse=True):
        """Replaces every parameter and buffer by an uninitialised tensor of its shape and dtype
        on ``device`` (ember gives zeros): how a model built on the ``meta`` device gets
        storage before its weights are loaded or initialised; returns self
        (https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to_empty)."""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        """Moves every parameter and buffer to the CPU (where they already are); returns self."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Raises as ``Tensor.cuda`` does once there is a tensor to move (no CUDA in this build)."""
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        """Casts all parameters and buffers to ``dst_type``; returns self."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Casts the floating-point parameters and buffers to float32; returns self."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Casts the floating-point parameters and buffers to float64; returns self."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Casts the floating-point parameters and buffers to float16; returns self."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Casts the floating-point parameters and buffers to bfloat16; returns self."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self):
        """Moves every parameter and buffer into shared memory (``Tensor.share_memory_``), so
        processes started by ``ember.multiprocessing`` see one copy; returns self."""
        return self._apply(lambda t: t.share_memory_())


def _parse_to(args, kwargs):
    """The (device, dtype, memory_format) of ``Module.to``'s accepted call forms (the format
    applies to 4-D and 5-D tensors, as torch's)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, _device)):
            device = _device(a)
        elif not isinstance(a, bool) and a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    return device, dtype, memory_format
