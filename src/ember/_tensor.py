"""Tensor: a thin handle on a backend array (``torch.Tensor``).

A Tensor holds its array, dtype, ``requires_grad``, ``grad``, ``grad_fn`` and a version counter
(a one-element list shared with its views, bumped by every in-place op). Everything it
computes goes through the op entries in :mod:`ember._ops`; its many methods are attached by
:mod:`ember._functional`, which defines each once for the function, method and operator forms.
"""
import numpy as np

from . import _dtype
from ._memory import track as _track
from ._device import device as _device_cls, CPU
from ._ops import core as _core
from ._size import Size
from .autograd.grad_mode import STATE

__all__ = ["Tensor"]


class Tensor:
    """A multi-dimensional array with autograd (https://pytorch.org/docs/stable/tensors.html).

    Construct tensors with :func:`ember.tensor` and the creation functions; ``Tensor(data)``
    with a list or array, or ``Tensor(*sizes)`` for an uninitialised float tensor, also work.
    """
    __slots__ = ("_data", "dtype", "requires_grad", "grad", "grad_fn", "_version", "_base",
                 "_node", "_retains_grad", "_output_nr", "__weakref__", "__dict__")
    __array_priority__ = 1000  # numpy scalars defer to Tensor's reflected operators
    _view_chain = None  # set (in __dict__) on views only: how to remake the view from its base

    def __new__(cls, *args, **kwargs):
        # The legacy constructor: Tensor(data) or Tensor(*sizes), always the default float dtype.
        self = object.__new__(cls)
        default = _dtype.get_default_dtype().np
        if len(args) == 1 and not isinstance(args[0], int):
            src = args[0]._data if isinstance(args[0], Tensor) else args[0]
            data = np.array(src, dtype=default)
        else:
            data = np.empty(args, dtype=default)
        Tensor._init(self, data)
        return self

    def __init__(self, *args, **kwargs):
        pass

    @staticmethod
    def _init(self, data, requires_grad=False):
        _track(data)
        self._data = data
        self.dtype = _dtype.from_numpy_dtype(data.dtype)
        self.requires_grad = requires_grad
        self.grad = None
        self.grad_fn = None
        self._version = [0]
        self._base = None
        self._node = None
        self._retains_grad = False
        self._output_nr = 0

    @classmethod
    def _make(cls, data):
        _track(data)
        t = object.__new__(Tensor)
        t._data = data
        t.dtype = _DTYPES[data.dtype]
        t.requires_grad = False
        t.grad = None
        t.grad_fn = None
        t._version = [0]
        t._base = None
        t._node = None
        t._retains_grad = False
        t._output_nr = 0
        return t

    def _alias_with_history(self):
        """A handle on the same storage that carries this tensor's current history, so a
        later in-place rebase of ``self`` does not change what an op recorded."""
        t = self._alias()
        t.grad_fn = self.grad_fn
        t.requires_grad = self.requires_grad
        t._node = self._node if self.grad_fn is None else None
        if self.grad_fn is None and self.requires_grad:
            from ._ops.core import _edge
            t._node = _edge(self)[0]
        return t

    def _snapshot(self):
        """A copy of the current values that carries this tensor's history."""
        t = self._alias_with_history()
        t._data = self._data.copy()
        _track(t._data)
        t._version = [0]
        t._base = None
        return t

    def _alias(self):
        """A new handle on the same storage and version counter, with no history."""
        t = Tensor._make(self._data)
        t._version = self._version
        t._base = self._base if self._base is not None else self
        return t

    # ---- attributes -------------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self):
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    @property
    def device(self):
        return CPU

    @property
    def is_cuda(self):
        return False

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        self._data = value._data
        self.dtype = value.dtype

    @property
    def is_sparse(self):
        return False

    @property
    def layout(self):
        return "strided"

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def stride(self, dim=None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        base = self._data
        while isinstance(base.base, np.ndarray):
            base = base.base
        return (self._data.__array_interface__["data"][0]
                - base.__array_interface__["data"][0]) // self._data.itemsize

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None):
        return self._data.flags.c_contiguous

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return False

    def get_device(self):
        return -1

    @property
    def _version_count(self):
        return self._version[0]

    # ---- conversion -------------------------------------------------------------------------
    def numpy(self, force=False):
        """The backend array, sharing memory. RuntimeError if the tensor requires grad."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def item(self):
        """The value of a one-element tensor as a Python number; RuntimeError otherwise."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (type(self), self._data, self.requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        import copy
        t = object.__new__(type(self))
        Tensor._init(t, self._data.copy(), self.requires_grad)
        memo[id(self)] = t
        if self.grad is not None:
            t.grad = copy.deepcopy(self.grad, memo)
        extra = {k: v for k, v in self.__dict__.items() if k != "_view_chain"}
        t.__dict__.update(copy.deepcopy(extra, memo))
        return t

    # ---- autograd ---------------------------------------------------------------------------
    def requires_grad_(self, requires_grad=True):
        """Sets ``requires_grad`` in place on a leaf; RuntimeError for non-float dtypes or for
        a non-leaf being told to stop requiring grad."""
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self):
        """A new tensor sharing storage (and version counter) with no history."""
        return self._alias()

    def detach_(self):
        self.grad_fn = None
        self.requires_grad = False
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulates d(self)/d(leaf) into each leaf's ``.grad``; see :func:`ember.autograd.backward`."""
        from .autograd.engine import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """``hook(grad) -> Tensor or None`` runs when the gradient of this tensor is computed;
        its return value replaces the gradient. Returns a handle with ``remove()``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn if self.grad_fn is not None else _core._edge(self)[0]
        return node.register_prehook(hook)

    def retain_grad(self):
        """Keeps ``.grad`` for this non-leaf tensor after backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        import weakref
        ref = weakref.ref(self)

        def keep(grad):
            t = ref()
            if t is not None:
                t.grad = grad.detach().clone() if t.grad is None else t.grad + grad.detach()
        self.grad_fn.metadata.setdefault("retain", []).append(keep)

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def _grad_fn(self):
        return self.grad_fn

    # ---- printing ---------------------------------------------------------------------------
    def __repr__(self):
        from ._print import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _rebuild(cls, data, requires_grad):
    t = object.__new__(cls)
    Tensor._init(t, data, requires_grad)
    return t


_DTYPES = {d.np: d for d in _dtype._ALL}
_core._Tensor = Tensor
