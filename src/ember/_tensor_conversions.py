"""The conversions of :class:`~ember.Tensor` to NumPy and Python values: ``numpy``,
``__array__``, ``item``, ``tolist``, ``bool``/``int``/``float``/``index``, ``len`` and iteration
(https://pytorch.org/docs/stable/tensors.html). Tensor inherits them; its data, attributes
and method table are in ``_tensor.py``."""
from ._backend import conj_views
from ._backend.shared import own_span
from ._backend.sparse import SparseCOO
from ._backend.meta import NO_NUMPY, MetaArray
from ._device import CPU, META_DEVICE
from .autograd.grad_mode import STATE

__all__ = ["TensorConversions"]


class TensorConversions:
    """The conversion part of :class:`~ember.Tensor` (whose slots it reads)."""
    __slots__ = ()

    @property
    def device(self):
        """Where the storage is: the CPU, or the ``meta`` device (no storage)."""
        return META_DEVICE if type(self._data) is MetaArray else CPU

    @property
    def is_cpu(self):
        """Whether the tensor is on the CPU (every tensor with data)."""
        return type(self._data) is not MetaArray

    @property
    def is_meta(self):
        """Whether the tensor is on the ``meta`` device (a shape and dtype without data)."""
        return type(self._data) is MetaArray

    def numpy(self, force=False):
        """The backend array, sharing memory. RuntimeError if the tensor requires grad (with grad
        mode on, as torch's: ``no_grad`` allows it) or is a lazy conjugate (``is_conj()``) or
        negation (``is_neg()``), unless ``force``, which hands over a copy."""
        if STATE.enabled and self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if type(self._data) is SparseCOO:
            raise TypeError("can't convert a sparse tensor to a NumPy array: call .to_dense() first")
        if type(self._data) is MetaArray:
            raise TypeError(NO_NUMPY)
        if conj_views.VIEWS and (self.is_conj() or self.is_neg()):
            if not force:
                bit, fix = ("conjugate", "conj") if self.dtype.is_complex else ("negative", "neg")
                raise RuntimeError(f"Can't call numpy() on Tensor that has {bit} bit set. "
                                   f"Use tensor.resolve_{fix}().numpy() instead.")
            return self._data.copy()
        return self._data

    def __array__(self, dtype=None, copy=None):
        """The data for NumPy (``np.asarray(t)``, an operator with an array): :meth:`numpy`'s, so
        RuntimeError for a tensor that requires grad, as torch's ``__array__``."""
        data = self.numpy()
        return data if dtype is None else data.astype(dtype, copy=False)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy ufunc's result on a tensor (``x + nd`` is NumPy's ``add``, torch's operators
        declining the array) as a tensor sharing it (``from_numpy``'s), as torch's: a bool array as uint8."""
        return self._make(own_span(array.astype("uint8") if array.dtype == bool else array))

    def item(self):
        """The value of a one-element tensor as a Python number; RuntimeError otherwise."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        """The values as nested Python lists of numbers (a number for a 0-d tensor)."""
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

    # hashed by identity, as torch's tensors: object's own hash, with no Python frame per call
    # (optimizer state is a dict keyed by parameters, read on every step)
    __hash__ = object.__hash__
