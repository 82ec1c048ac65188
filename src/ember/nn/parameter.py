"""``Parameter`` and ``Buffer``: the tensors a Module registers when they are assigned to it
(https://pytorch.org/docs/stable/generated/torch.nn.parameter.Parameter.html), and their
uninitialized forms, ``UninitializedParameter`` and ``UninitializedBuffer``, which the lazy
modules (:mod:`ember.nn.modules.lazy`) hold until their first forward gives them a shape."""
from .._creation import empty
from .._tensor import Tensor
from .._tensor_subclass import disabled_torch_function_impl

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]

_DATA = Tensor._data  # the storage slot, which the uninitialized tensors guard with a property


class Parameter(Tensor):
    """A leaf tensor that a :class:`~ember.nn.Module` lists in ``parameters()`` when it is
    assigned as an attribute.

    ``Parameter(data=None, requires_grad=True)`` shares ``data``'s storage and version counter
    (no copy); ``data=None`` gives an empty float tensor. Operations on a Parameter return plain
    Tensors. Raises RuntimeError when ``requires_grad`` is asked of a non-floating dtype.
    """
    __torch_function__ = disabled_torch_function_impl  # (torch's: a Parameter overrides nothing)

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
    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


def _refuse(self):
    raise ValueError(f"Attempted to use an uninitialized parameter in an operation. This error happens when you "
                     f"are using a `LazyModule` or explicitly manipulating `torch.nn.parameter.{type(self).__name__}` "
                     "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
                     "parameters before calling torch functions")


class UninitializedTensorMixin:
    """A tensor without a shape yet: every operation on it raises ValueError, reading
    ``shape`` raises RuntimeError; ``materialize(shape)`` gives it storage and turns it into
    its ``cls_to_become`` (same object, so optimizers and modules holding it keep it).
    ``to``/``float``/``double``/``half``/``size`` act on the empty placeholder (a dtype
    chosen before the first forward is kept)."""
    __slots__ = ()
    __torch_function__ = disabled_torch_function_impl
    _data = property(_refuse, _DATA.__set__)

    def materialize(self, shape, device=None, dtype=None):
        """Gives the tensor uninitialized storage of ``shape`` (this tensor's dtype unless
        ``dtype``) and makes it a plain Parameter (or Tensor, for a buffer)."""
        data = empty(shape, device=device, dtype=dtype or self.dtype)
        _DATA.__set__(self, data._data)
        self.dtype = data.dtype
        self.__class__ = self.cls_to_become

    def _placeholder(self):
        return Tensor._make(_DATA.__get__(self))

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def size(self, dim=None):
        """The placeholder's size, ``torch.Size([0])`` (torch's too)."""
        return self._placeholder().size(dim)

    def to(self, *args, **kwargs):
        """The empty placeholder converted; ``module.to(dtype)`` then keeps the dtype for
        :meth:`materialize`."""
        return self._placeholder().to(*args, **kwargs)

    def float(self):
        """``to(float32)`` of the placeholder."""
        return self._placeholder().float()

    def double(self):
        """``to(float64)`` of the placeholder."""
        return self._placeholder().double()

    def half(self):
        """``to(float16)`` of the placeholder."""
        return self._placeholder().half()

    def share_memory_(self):
        """RuntimeError: there is no storage to share yet."""
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    @property
    def device(self):
        return self._placeholder().device

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return type(self), (self.requires_grad,)

    def __deepcopy__(self, memo):
        memo[id(self)] = copy = type(self)(self.requires_grad, dtype=self.dtype)
        return copy


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """``UninitializedParameter(requires_grad=True, device=None, dtype=None)``: a
    :class:`Parameter` whose shape the first forward of its lazy module decides
    (https://pytorch.org/docs/stable/generated/torch.nn.parameter.UninitializedParameter.html)."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """``UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True)``:
    a buffer whose shape the first forward of its lazy module decides; it becomes a Tensor."""
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        self = object.__new__(cls)
        Tensor._init(self, empty(0, device=device, dtype=dtype)._data)
        self.requires_grad_(requires_grad)
        self.persistent = persistent
        self._is_buffer = True
        return self


def is_lazy(param):
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)
