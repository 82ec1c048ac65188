"""Tensor methods that older and hand-written PyTorch programs call and that are not ops of
their own: the legacy constructor ``new``, ``fill_diagonal_``, the in-place ``transpose_``
family, the predicates ``is_signed``/``is_nonzero``/``is_same_size`` (``torch.is_signed`` &
co. too), the slow Python loops ``apply_``/``map_``, ``resize_as_``, the storages
(``storage.py``), and the in-place spellings torch keeps as aliases (``greater_`` is ``gt_``)
(https://pytorch.org/docs/stable/tensors.html); the method spellings of existing functions
(``igamma``, ``mvlgamma``, ``prelu``, ...), ``narrow_copy``, ``nonzero_static``, ``dim_order``,
``map2_``, and the predicates of devices and layouts ember has not (``is_mkldnn``: False).
``_tensor.py`` attaches :data:`METHODS`, :data:`IN_PLACE` and :data:`PROPERTIES`."""
import numbers

import numpy as np

from . import _backend, _dtype
from ._dlpack import dlpack, dlpack_device
from ._creation import empty_strided, new_empty, new_tensor, to as _to
from ._ops import compare as _compare, complex as _complex, pointwise_float as _float, special as _special
from ._ops.args import warn_once, with_out
from ._ops.complex import abs_for_in_place
from ._ops.core import named
from ._ops.inplace import inplace
from ._ops.join import cat, narrow
from ._ops.splits import unsafe_split_with_sizes
from ._ops.pointwise_binary import float_power
from ._ops.positions import nonzero
from ._ops.prelu import prelu
from ._ops.restride import _become, as_strided, resize_
from ._ops.shape import clone, permute, transpose
from ._ops.shrink import hardshrink
from ._ops.sort import unique_consecutive
from ._memory_format import contiguous_format as _CONTIGUOUS, memory_format as _memory_format
from ._removed import TENSOR_METHODS as _REMOVED_METHODS
from ._size import Size
from ._tensor import Tensor as _Tensor  # (defined before _tensor.py imports this module)
from .storage import set_, storage, untyped_storage


def new(self, *args, device=None):
    """PyTorch's legacy constructor, with ``self``'s dtype: ``x.new()`` is empty, ``x.new(2, 3)``
    or ``x.new(Size([2, 3]))`` uninitialised of that size (zeros here), ``x.new([1, 2])`` a tensor
    of that data, ``x.new(t)`` the tensor ``t`` (of ``self``'s dtype) without its history.
    TypeError for any other argument (a number, a keyword other than ``device``), as torch."""
    if not args:
        return new_empty(self, 0)
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args) or \
            (len(args) == 1 and isinstance(args[0], Size)):
        return new_empty(self, *args)
    if len(args) == 1 and isinstance(args[0], type(self)):
        other = args[0]
        if other.dtype is not self.dtype:
            raise TypeError(f"expected {_options(self.dtype)} (got {_options(other.dtype)})")
        return other.detach()
    if len(args) == 1 and not isinstance(args[0], (str, numbers.Number)) and hasattr(args[0], "__len__"):
        return new_tensor(self, args[0])
    if len(args) == 1:
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")




def _options(dtype):
    name = str(dtype).rsplit(".", 1)[-1]
    return (f"TensorOptions(dtype={_dtype.CPP_NAMES.get(name, name)}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def fill_diagonal_(self, fill_value, wrap=False):
    """Writes ``fill_value`` on the main diagonal of ``self`` (2-D of any shape, or N-D with
    equal sizes) in place; with ``wrap``, a tall matrix's diagonal starts again every
    ``columns + 1`` rows, as NumPy's ``fill_diagonal``. A write through a strided view, so its
    node is ``CopySlices`` as torch's. RuntimeError for fewer than 2 dims or unequal sizes."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) > 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    step, count = sum(self.stride()), min(self.shape)
    if wrap and self.ndim == 2 and self.shape[0] > self.shape[1] + 1:
        rows, columns = self.shape
        count = (rows * columns - 1) // (columns + 1) + 1
    if count:
        self.as_strided((count,), (step,), self.storage_offset()).fill_(fill_value)
    return self


def transpose_(self, dim0, dim1):
    """In-place ``transpose``: ``self`` becomes its view with ``dim0`` and ``dim1`` swapped
    (torch's node for the in-place form: ``TransposeBackward1``)."""
    return _become(self, named(transpose(self, dim0, dim1), "TransposeBackward1"))


def is_signed(input):
    """Whether ``input``'s dtype holds negative values (every dtype but ``uint8`` and ``bool``);
    ``torch.is_signed`` and the method."""
    return input.dtype.is_signed


def is_nonzero(input):
    """``bool`` of a one-element tensor; RuntimeError for none or several elements, as torch's."""
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with "
                           f"{'no values' if input.numel() == 0 else 'more than one value'} is ambiguous")
    return bool(input.item())


def is_same_size(input, other):
    """Whether ``input`` and ``other`` have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def apply_(self, callable):
    """Replaces each element ``v`` by ``callable(v)`` (a Python function of a Python number),
    converted to ``self``'s dtype as torch converts (an int tensor truncates a float result);
    slow, for small tensors. Returns self
    (https://pytorch.org/docs/stable/generated/torch.Tensor.apply_.html).

    As torch's loop: the elements are visited in row-major order, each read just before it is
    written, so the elements an expanded tensor shares are visited one after another
    (``zeros(1).expand(3).apply_(f)`` holds ``f(f(f(0)))``), and the write does not advance
    ``_version``.

    Raises:
        RuntimeError: ``self`` requires grad (``detach()`` first, as torch says).
        TypeError: ``callable`` returns something other than a number.
    """
    _refuse_grad(self, "apply_")
    return _write_each(self, lambda v, _: callable(v), None)


def map_(self, tensor, callable):
    """Replaces each element ``v`` of ``self`` by ``callable(v, w)``, ``w`` the element of
    ``tensor`` (broadcast to ``self``'s shape) at the same position, in the order and with the
    version counter of :func:`apply_`. Returns self
    (https://pytorch.org/docs/stable/generated/torch.Tensor.map_.html).

    Raises:
        TypeError: ``tensor``'s dtype is not ``self``'s, or a result is not a number.
        RuntimeError: ``self`` requires grad; ``tensor`` does not broadcast to ``self``'s shape.
    """
    if tensor.dtype is not self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {tensor.type()})")
    _refuse_grad(self, "map_")
    return _write_each(self, callable, tensor.expand_as(self)._data.reshape(-1).tolist())


def map2_(self, x, y, callable):
    """Replaces each element ``v`` of ``self`` by ``callable(v, a, b)``, ``a`` and ``b`` the
    elements of ``x`` and ``y`` (broadcast to ``self``'s shape) at the same position. Returns
    self (https://pytorch.org/docs/stable/generated/torch.Tensor.map2_.html).

    Raises:
        TypeError: ``x`` or ``y`` has another dtype than ``self``, or a result is not a number.
        RuntimeError: ``self`` requires grad; ``x`` or ``y`` does not broadcast to ``self``.
    """
    for name, other in (("x", x), ("y", y)):
        if other.dtype is not self.dtype:
            raise TypeError(f"map2_: expected {self.type()} for argument '{name}' (got {other.type()})")
    _refuse_grad(self, "map2_")
    a, b = (other.expand_as(self)._data.reshape(-1).tolist() for other in (x, y))
    return _write_each(self, lambda v, w: callable(v, *w), list(zip(a, b)))


def _refuse_grad(self, name):
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")


def _number(value):
    if not isinstance(value, numbers.Number):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return value


def _write_each(self, function, others):
    """``self``'s elements ``v`` (row-major) become ``function(v, w)``, ``w`` the element of
    ``others`` at the same position (None without ``others``), written straight into the
    memory: no version bump, as torch. Where elements share memory (an expanded tensor) or the
    array is read-only, one element at a time through the storage, each read just before."""
    data = self._data
    others = others if others is not None else [None] * data.size
    if not _backend.overlaps_itself(data) and data.flags.writeable:
        values = [_number(function(v, w)) for v, w in zip(data.reshape(-1).tolist(), others)]
        if values:
            data[...] = new_tensor(self, values)._data.reshape(data.shape)
        return self
    flat = untyped_storage(self)._items.view(data.dtype)
    index = np.arange(flat.size)[self.storage_offset():]
    positions = np.lib.stride_tricks.as_strided(index, data.shape, [s // data.itemsize * index.itemsize
                                                                     for s in data.strides])
    for p, w in zip(positions.reshape(-1).tolist(), others):
        flat[p] = new_tensor(self, [_number(function(flat[p].item(), w))])._data[0]
    return self


def resize_as_(self, the_template, memory_format=None):
    """``self.resize_(the_template.shape)`` (https://pytorch.org/docs/stable/generated/torch.Tensor.resize_as_.html)."""
    return resize_(self, the_template.shape, memory_format=memory_format)


def narrow_copy(input, dim, start, length, *, out=None):
    """``narrow`` then a contiguous copy: ``length`` elements of ``dim`` from ``start``, in
    new memory; ``torch.narrow_copy`` and the method, ``narrow``'s errors; differentiable
    (node ``NarrowCopyBackward0``) (https://pytorch.org/docs/stable/generated/torch.narrow_copy.html)."""
    return with_out(named(clone(narrow(input, dim, start, length), memory_format=_CONTIGUOUS),
                          "NarrowCopyBackward0"), out)


def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero(input)`` cut or padded to exactly ``size`` rows: an int64 ``(size, input.dim())``
    tensor, its missing rows filled with ``fill_value``. RuntimeError for a negative ``size``
    (https://pytorch.org/docs/stable/generated/torch.nonzero_static.html)."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = nonzero(input)[:size]
    return cat([found, found.new_full((size - found.shape[0], found.shape[1]), fill_value)])


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                      pin_memory=False):
    """``empty_strided(size, stride)`` with ``self``'s dtype unless ``dtype`` is given
    (https://pytorch.org/docs/stable/generated/torch.Tensor.new_empty_strided.html)."""
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, device=device,
                         requires_grad=requires_grad, layout=layout, pin_memory=pin_memory)


def float_power_(self, exponent):
    """In-place ``float_power``: ``self`` must already have the result's dtype (float64, or
    complex128 when either operand is complex), else RuntimeError naming both, as torch
    (https://pytorch.org/docs/stable/generated/torch.Tensor.float_power_.html)."""
    complex_exponent = exponent.dtype.is_complex if hasattr(exponent, "dtype") else isinstance(exponent, complex)
    wanted = _dtype.complex128 if self.dtype.is_complex or complex_exponent else _dtype.float64
    if self.dtype is not wanted:
        names = _dtype.SCALAR_TYPE_NAMES
        raise RuntimeError(f"the base given to float_power_ has dtype {names[self.dtype.name]} but the "
                           f"operation's result requires dtype {names[wanted.name]}")
    return _FLOAT_POWER_(self, exponent)


def dim_order(self, *, ambiguity_check=False):
    """The dims from the outermost to the innermost in memory: sorted by stride, largest first,
    ties in their logical order (``(0, 1, 2, 3)`` for a contiguous tensor, ``(0, 2, 3, 1)`` for
    channels-last). With ``ambiguity_check=True`` (or a list of memory formats), RuntimeError
    when a size-1 dim or equal strides leave the order open (and the tensor is not contiguous
    in exactly one of those formats); TypeError for another kind of argument
    (https://pytorch.org/docs/stable/generated/torch.Tensor.dim_order.html)."""
    if not isinstance(ambiguity_check, (bool, list)) or isinstance(ambiguity_check, list) and not all(
            isinstance(f, _memory_format) for f in ambiguity_check):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    strides = self.stride()
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    open_order = any(a == b for a, b in zip(strides, strides[1:])) or 1 in self.shape
    if (ambiguity_check is not False and open_order and
            sum(self.is_contiguous(memory_format=f) for f in formats) != 1):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def as_strided_(self, size, stride, storage_offset=None):
    """In-place ``as_strided``: ``self`` becomes that view of its storage
    (https://pytorch.org/docs/stable/generated/torch.Tensor.as_strided_.html)."""
    return _become(self, as_strided(self, size, stride, storage_offset))


def const_data_ptr(self):
    """The address of the first element, as ``data_ptr()`` (ember does not tell read-only
    access apart)."""
    return self.data_ptr()


def _false(self):
    """False: ember keeps no such tensors (pinned, distributed or inference ones)."""
    return False


_FLOAT_POWER_ = inplace(float_power)

def type_(input, dtype=None, non_blocking=False, **kwargs):
    """``type()`` gives the legacy type name ("torch.FloatTensor", "torch.sparse.FloatTensor");
    ``type(dtype)`` converts to a dtype, a legacy type (``torch.LongTensor``; ``torch.Tensor``: the
    default dtype) or its name (``input`` itself if unchanged). ValueError for another type or
    name, TypeError for anything else (https://pytorch.org/docs/stable/generated/torch.Tensor.type.html)."""
    if dtype is None:
        name = _dtype.legacy_type_name(input.dtype)
        return name.replace(".", ".sparse.", 1) if input.is_sparse else name
    if isinstance(dtype, str):
        dtype = _dtype.dtype_of_legacy_type(dtype)
    elif isinstance(dtype, type):  # torch.FloatTensor & co. carry their dtype
        if issubclass(dtype, _Tensor):
            dtype = _dtype.get_default_dtype()
        elif isinstance(getattr(dtype, "_dtype", None), _dtype.dtype):
            dtype = dtype._dtype
        else:
            raise ValueError(f"invalid type: '{dtype.__name__}'")
    elif not isinstance(dtype, _dtype.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return _to(input, dtype)


METHODS = {"new": new, "fill_diagonal_": fill_diagonal_, "transpose_": transpose_, "swapaxes_": transpose_,
           "swapdims_": transpose_, "is_signed": is_signed, "is_nonzero": is_nonzero, "is_same_size": is_same_size,
           "apply_": apply_, "map_": map_, "map2_": map2_, "resize_as_": resize_as_,
           "untyped_storage": untyped_storage, "storage": storage, "set_": set_,
           "unique_consecutive": unique_consecutive, "igamma": _special.igamma, "igammac": _special.igammac,
           "mvlgamma": _special.mvlgamma, "prelu": prelu, "hardshrink": hardshrink, "narrow_copy": narrow_copy,
           "new_empty_strided": new_empty_strided, "float_power_": float_power_, "nonzero_static": nonzero_static,
           "dim_order": dim_order, "as_strided_": as_strided_, "unsafe_split_with_sizes": unsafe_split_with_sizes,
           "is_pinned": _false, "is_distributed": _false,
           "const_data_ptr": const_data_ptr,
           **_REMOVED_METHODS, "__dlpack__": dlpack, "__dlpack_device__": dlpack_device, "type": type_}

# in-place aliases: torch's other names of ``gt_``, ``ge_``, ... (wrapped in place by _tensor.py)
IN_PLACE = {"greater_": _compare.gt, "greater_equal_": _compare.ge, "less_": _compare.lt, "less_equal_": _compare.le,
            "not_equal_": _compare.ne, "logical_xor_": _compare.logical_xor, "bitwise_not_": _compare.bitwise_not,
            "absolute_": abs_for_in_place, "arctan2_": _float.atan2, "igamma_": _special.igamma,
            "igammac_": _special.igammac, "mvlgamma_": _special.mvlgamma}

# read-only attributes (``_tensor.py`` makes each a property): the node output a tensor is,
# and the backends, layouts and devices ember has not
def output_nr(self):
    """This tensor's position among the results of its ``grad_fn`` (0 for a leaf and a
    single-result op): ``unbind``'s, ``split``'s and ``chunk``'s views count 0, 1, ...
    (https://pytorch.org/docs/stable/generated/torch.Tensor.output_nr.html)."""
    return self._output_nr


def _reverse_dims(self):
    """``x.T``: the dims reversed, with torch's deprecation warnings (once per process) for a
    tensor that is not 1-d or 2-d."""
    if self.ndim == 0:
        warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
    elif self.ndim > 2:
        warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                  "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                  "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
    return permute(self, tuple(reversed(range(self.ndim))))


def _matrix_transpose(self):
    """``x.mT``: the last two dims swapped; a 0-d tensor itself, with torch's warning once."""
    if self.ndim == 0:  # torch returns a 0-d tensor itself, with this warning (once per process)
        warn_once("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.")
        return self
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self.ndim}-D tensor.")
    return transpose(self, -2, -1)


PROPERTIES = {"output_nr": output_nr, "T": _reverse_dims, "mT": _matrix_transpose,
              "mH": lambda self: _complex.conj(_matrix_transpose(self)),
              **{name: _false for name in ("is_nested", "is_mkldnn", "is_mps", "is_xla", "is_vulkan", "is_ipu",
                                           "is_maia", "is_mtia")}}
