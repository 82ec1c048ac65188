"""``Parameter`` and ``Buffer``: the tensors a Module registers when they are assigned to it
(https://pytorch.org/docs/stable/generated/torch.nn.parameter.Parameter.html)."""
from .._creation import empty
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A leaf tensor that a :class:`~ember.nn.Module` lists in ``parameters()`` when it is
    assigned as an attribute.

    ``Parameter(data=None, requires_grad=True)`` shares ``data``'s storage and version counter
    (no copy); ``data=None`` gives an empty float tensor. Operations on a Parameter return plain
    Tensors. Raises RuntimeError when ``requires_grad`` is asked of a non-floating dtype.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        self = object.__new__(cls)
        Tensor._init(self, data._data)
        self._versions = data._versions
        if requires_grad:
            self.requires_grad_(True)
        return self


class _BufferMeta(type):
    # ``Buffer(t)`` returns a plain Tensor marked as a buffer, so isinstance looks at the mark.
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """``Buffer(data=None, *, persistent=True)``: marks a tensor so that assigning it to a
    Module registers it as a buffer (``persistent=False`` keeps it out of ``state_dict``).
    Returns a detached tensor sharing ``data``'s storage."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
