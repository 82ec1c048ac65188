"""Indexing: ``tensor[index]``, ``tensor[index] = value``, ``index_select``, masks, ``take``
and ``put``: each public function, then its op entry (``gather`` and ``scatter``: gather.py).

Indexing derivatives scatter the gradient back with accumulation, so repeated indices add up.
"""
import builtins
import warnings

import numpy as np

from .. import _backend, _dtype
from .._backend.index_layout import take_as_torch, torch_layout
from .._creation import check_narrow, from_numpy, full, real_if_fits
from .._tensor import Tensor, _wrap_dim
from .args import c_type_name, caller_level, with_out
from .core import Op, _type_name, apply, like_input, named, reads_indices
from .gather import _same_dtype, gather
from .inplace import write_result
from .pointwise_binary import Where
from .refusals import refuse_unsigned
from .shape import expand, broadcast_shapes
from .parser import parsed


def _index_arg(index):
    """``index`` with Tensors turned into arrays; also says whether it is basic (a view)."""
    if not isinstance(index, tuple):
        index = (index,)
    out, basic = [], True
    for i in index:
        kind = type(i)
        if kind is int:
            out.append(i)
            continue
        if kind is slice and (i.step is None or i.step > 0):
            out.append(i)
            continue
        if isinstance(i, Tensor):
            if i.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            a = i._data
            if a.dtype == np.uint8:
                a = a.astype(bool)
            if a.ndim == 0 and a.dtype != np.bool_:
                out.append(i.__index__())  # while recording: a graph break (the value is read)
                continue
            out.append(a)
            basic = False
        elif isinstance(i, (list, tuple, range, np.ndarray)):
            a = i  # (an array stays as it is: the index kernels make is in the input's namespace)
            if not isinstance(i, np.ndarray):  # the user's own host index (metadata: a compiled graph's constant)
                a = np.asarray([x.item() if isinstance(x, Tensor) else x for x in i] if isinstance(i, (list, tuple)) else i)
                if a.size == 0:
                    a = a.astype(np.int64)  # x[[]] and x[range(0)] select nothing, as an empty long index
                a = from_numpy(a)._data if a.dtype.kind in "biu" else a  # (a compile capture sees a constant made)
            if _backend.is_floating(a.dtype):
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(a)
            basic = False
        elif isinstance(i, builtins.bool):
            out.append(i)
            basic = False
        elif i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)):
            if isinstance(i, slice) and i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
            out.append(i)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(i).__name__})")
    return tuple(out), basic


def _sequence_index(index):
    """A list index as torch reads it: shorter than 32 with a tensor, sequence, slice, None or
    ``...`` in it, it is a tuple of indices (``x[[[0, 1], [1, 2]]]`` is ``x[[0, 1], [1, 2]]``),
    with torch's deprecation UserWarning; otherwise one index."""
    if type(index) is not list or len(index) >= 32 or not builtins.any(
            i is None or i is Ellipsis or isinstance(i, (Tensor, list, tuple, slice, np.ndarray)) for i in index):
        return index
    warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                  "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                  "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result",
                  UserWarning, stacklevel=caller_level())
    return tuple(index)


def getitem(self, index):
    """``self[index]``: a view for basic indices (ints, slices, None, ...), a copy otherwise."""
    kind, given = type(index), index
    if kind is int or kind is slice and (index.step is None or index.step > 0):  # (the common view, walked at once)
        index, basic, tensors = (index,), True, ()
    else:
        index = _sequence_index(index)
        tensors = _index_tensors(index)
        index, basic = _index_arg(index)
    try:
        if basic:
            return apply(Slice, self, index=index)
        split = _ints_first(index)
        if split:
            return reads_indices(apply(Index, apply(Slice, self, index=split[0]), index=split[1]), tensors)
        return reads_indices(apply(Index, self, index=index), tensors)
    except IndexError as e:
        raise _index_error(e, self, given) from None


def _ints_first(index):
    """An advanced ``index`` holding integers, None or Python bools as ``(basic index of the
    integers and None, the rest)``, else None: PyTorch selects with integers and inserts None's
    dims first (a view, with unsqueeze's strides), so they never join the advanced indices, and
    indexes that view with the arrays (``x[None, [0, 1]]`` of a (4, 3) tensor strides (6, 3,
    1)). A bool is a None whose new dim is then indexed with [0] (True) or [] (False)."""
    if not any(type(i) in (int, builtins.bool) or i is None for i in index):
        return None
    first = tuple(None if type(i) is builtins.bool else i if i is None or i is Ellipsis or type(i) in (int, slice)
                  else (slice(None),) * (i.ndim if i.dtype == np.bool_ else 1) for i in index)
    first = tuple(x for i in first for x in (i if type(i) is tuple else (i,)))
    rest = tuple(np.arange(int(i), dtype=np.int64) if type(i) is builtins.bool
                 else i if isinstance(i, np.ndarray) or i is Ellipsis else slice(None)
                 for i in index if type(i) is not int)
    return first, rest


def _index_tensors(index):
    """The integer index tensors of ``index`` (a boolean mask is read into new arrays of
    positions, as torch's, so writing it later changes no gradient)."""
    items = index if type(index) is tuple else (index,)
    return [i for i in items if isinstance(i, Tensor) and i.ndim and not i.dtype.is_floating_point
            and i.dtype not in (_dtype.bool, _dtype.uint8)]


def _index_error(e, self, given=None):
    """NumPy's IndexError in PyTorch's words; ``given``: the index as written (``x[0]``, ``x[:]``
    and ``x[0, :]`` of a 0-d tensor raise three messages in PyTorch)."""
    text = str(e)
    if self.ndim == 0 and type(given) is slice:
        return IndexError("slice() cannot be applied to a 0-dim tensor.")
    # ("tuple index out of range": an index with None in it walked past the dims)
    if text.startswith("too many indices") or text == "tuple index out of range":
        if self.ndim == 0 and type(given) is not tuple:
            return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                              "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        return IndexError(f"too many indices for tensor of dimension {self.ndim}")
    return IndexError(text.replace("axis", "dimension"))


def setitem(self, index, value):
    """``self[index] = value``. Basic indices (ints, slices, None, ...) write into the view they
    select, as PyTorch does (``copy_``/``fill_`` on the view: its grad_fn on ``self`` is
    ``CopySlices``), a tensor ``value`` cast to ``self``'s dtype; a whole-tensor index
    (``y[:]``, ``y[...]``) writes ``self`` itself (``FillBackward3`` for a number or 0-d
    value, ``CopyBackwards`` otherwise); advanced indices are an in-place ``index_put`` and
    need the same dtype (torch's RuntimeError otherwise), integers among them selecting first.
    RuntimeError (expand's) when ``value`` does not broadcast."""
    given = index = _sequence_index(index)
    if type(given) is slice and self.ndim == 0:  # (before the whole-tensor path below takes it)
        raise _index_error(IndexError(), self, given)
    tensors = _index_tensors(index)
    index, basic = _index_arg(index)
    if basic and isinstance(value, Tensor) and value.dtype is not self.dtype:
        value = value.to(self.dtype)
    if basic and builtins.all(i is Ellipsis or i == slice(None) for i in index):
        # a whole-tensor index: torch's fill_ (a number or 0-d value) or copy_ of self itself
        whole = "FillBackward3" if not isinstance(value, Tensor) or value.ndim == 0 else "CopyBackwards"
        if whole == "CopyBackwards" and tuple(value.shape) != tuple(self.shape):
            # torch copies from a view of value without its leading ones, expanded
            ones = next((k for k, n in enumerate(value.shape) if n != 1), value.ndim)
            value = expand(value.view(tuple(value.shape)[ones:]), tuple(self.shape))
        write_result(self, named(index_put(self, index, value), whole))
        return
    if not basic:
        split = _ints_first(index)  # the integers select a view first, as in getitem
        target = _sliced(self, split[0]) if split else self
        write_result(target, reads_indices(index_put(target, split[1] if split else index, value), tensors))
        return
    if not isinstance(value, Tensor):
        value = full((), value, dtype=self.dtype)
    view = _sliced(self, index, given)
    write_result(view, _fitted(value, tuple(view.shape)))


def _sliced(self, index, given=None):
    """The view a basic ``index`` selects, with PyTorch's IndexError (``given``: see
    :func:`_index_error`)."""
    try:
        return apply(Slice, self, index=index)
    except IndexError as e:
        raise _index_error(e, self, given) from None


def _fitted(value, shape):
    """``value`` to copy into a tensor of ``shape``: its leading size-1 dimensions beyond
    ``shape``'s dropped (torch's setitem copies ``ones(1, 4)`` into a row); expand's
    RuntimeError when it does not broadcast to ``shape``."""
    vshape = tuple(value.shape)
    if vshape == shape:
        return value
    extra = len(vshape) - len(shape)
    if extra > 0 and builtins.all(n == 1 for n in vshape[:extra]):
        value = value.reshape(vshape[extra:])
    try:
        if broadcast_shapes(tuple(value.shape), shape) == shape:
            return value
    except RuntimeError:
        pass
    return expand(value, shape)  # raises with torch's message


def _indexed_shape(shape, index):
    """The shape ``index`` selects from an array of ``shape``: NumPy's indexing rules applied
    to an array of zero-byte elements, so no element is read or allocated."""
    return np.empty(shape, np.dtype([]))[index].shape


class Slice(Op):
    """Basic indexing (ints, slices, None, Ellipsis): a view."""
    promote = None
    save_inputs = False
    is_view = True

    @classmethod
    def infer(cls, x, index):
        return _indexed_shape(x.shape, index), x.dtype

    @staticmethod
    def forward(x, index):
        out = _backend.placed_as_torch(x, index)
        # Integers in every dim give a NumPy scalar; a trailing ``...`` gives the 0-d view.
        return x[index + (Ellipsis,)] if isinstance(out, np.generic) else out

    @staticmethod
    def backward(ctx, g):
        return (apply(IndexBackward, g, shape=ctx.shapes[0], index=ctx.attrs["index"]),)


class Index(Slice):
    """Advanced indexing (integer or boolean arrays): a copy. A boolean mask's values set the
    result's shape (``mask_sets_shape``: the compiler breaks the graph there)."""
    is_view = False
    mask_sets_shape = True

    @staticmethod
    def forward(x, index):
        taken = take_as_torch(x, index)
        return taken if taken is not None else torch_layout(x, index, _backend.placed_as_torch(x, index))


class IndexBackward(Op):
    """The gradient of indexing: ``g`` added into zeros of the input's ``shape`` at ``index``
    (repeated indices add up). An entry of its own because one scatter into fresh zeros is
    faster than zeros followed by an out-of-place ``index_put``, which copies them first."""
    promote = None
    save_inputs = False
    infer = classmethod(lambda op, g, shape, index: (tuple(shape), g.dtype))

    @staticmethod
    def forward(g, shape, index):
        out = _backend.namespace(g).zeros(shape, g.dtype)
        _backend.index_add_at(out, index, g)
        return out

    @staticmethod
    def backward(ctx, gg):
        return (getitem(gg, ctx.attrs["index"]),)


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` written (or added, ``accumulate=True``) at ``indices``."""
    index = indices if isinstance(indices, tuple) and builtins.all(not isinstance(i, Tensor) for i in indices) \
        and _is_array_index(indices) else _index_arg(indices)[0]
    if not isinstance(values, Tensor):
        values = full((), values, dtype=input.dtype)
    _check_broadcast(index)  # torch's IndexError comes before its dtype check
    if values.dtype is not input.dtype and values.numel() == 1 and _single_mask(index):
        # torch fills through one boolean mask (masked_fill): the value converts as a number does
        check_narrow(values.item(), input.dtype)
        values = full((), real_if_fits(values.item(), input.dtype), dtype=input.dtype)
    _same_dtype(input, values, "Index put requires the source and destination dtypes match, got "
                               "{self} for the destination and {source} for the source.")
    try:
        return reads_indices(apply(IndexPut, input, values, index=index, accumulate=accumulate),
                             _index_tensors(indices))
    except IndexError as e:
        raise _index_error(e, input) from None
    except RuntimeError:
        target = input._data[index].shape
        if _is_array_index(index) and not builtins.any(isinstance(i, np.ndarray) for i in index):
            expand(values, target)  # basic indexing: PyTorch reports the failed expand
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(target)}") from None


def _check_broadcast(index):
    """IndexError, in torch's words, when the index arrays in ``index`` (a boolean one counting
    as the positions it selects, one array per dimension) do not broadcast together."""
    shapes = [s for i in (index if isinstance(index, tuple) else (index,)) if isinstance(i, np.ndarray)
              for s in ([(int(i.sum()),)] * i.ndim if i.dtype == np.bool_ else [tuple(i.shape)])]
    try:
        _backend.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(s)) for s in shapes)) from None


def _single_mask(index):
    """Whether ``index`` selects with exactly one boolean array (the rest basic indexing)."""
    arrays = [i for i in (index if isinstance(index, tuple) else (index,)) if isinstance(i, np.ndarray)]
    return len(arrays) == 1 and arrays[0].dtype == np.bool_


def _is_array_index(index):
    return builtins.all(isinstance(i, (np.ndarray, slice, int, type(None), type(Ellipsis))) for i in index)


def index_put_(input, indices, values, accumulate=False):
    """In-place ``index_put``
    (https://pytorch.org/docs/stable/generated/torch.Tensor.index_put_.html)."""
    return write_result(input, index_put(input, indices, values, accumulate))


class IndexPut(Op):
    """``x`` with ``values`` written at ``index`` (added there when ``accumulate``)."""
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, values, index, accumulate=False):
        out = x.copy()
        if accumulate:
            _backend.index_add_at(out, index, values)
        else:
            out[index] = values
        return out

    @staticmethod
    def backward(ctx, g):
        index, accumulate = ctx.attrs["index"], ctx.attrs.get("accumulate", False)
        gx = gv = None
        if ctx.needs_input_grad[0]:
            gx = g if accumulate else g.index_put(index, g.new_zeros(()))
        if ctx.needs_input_grad[1]:
            gv = g[index]
        return gx, gv


@parsed
def index_select(input, dim, index, *, out=None):
    """Entries along ``dim`` at the 1-D (int64/int32) ``index``."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    refuse_unsigned("index_select", input.dtype)
    return with_out(named(getitem(input, (slice(None),) * d + (index.reshape(-1),)), "IndexSelectBackward0"), out)


@parsed
def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source`` added at ``index`` along ``dim``
    (https://pytorch.org/docs/stable/generated/torch.index_add.html)."""
    d = _wrap_dim(dim, input.ndim)
    _same_dtype(input, source, "index_add_(): self ({self}) and source ({source}) must have the same scalar type")
    src = source if alpha == 1 else source * real_if_fits(alpha, input.dtype)
    # index_add's input gradient is the gradient itself: only the source's reads the index
    return reads_indices(index_put(input, (slice(None),) * d + (index._data,), src, accumulate=True),
                         [index] if source.requires_grad else ())


def index_fill(input, dim, index, value):
    """``input`` with ``value`` at ``index`` along ``dim``
    (https://pytorch.org/docs/stable/generated/torch.Tensor.index_fill_.html)."""
    refuse_unsigned("index_fill_cpu", input.dtype)
    d = _wrap_dim(dim, input.ndim)
    complex_value = value.dtype.is_complex if isinstance(value, Tensor) else isinstance(value, builtins.complex)
    if complex_value and not input.dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    if isinstance(value, Tensor):
        value = value.to(input.dtype)
    if input.ndim == 0:  # its one element, at index 0 or -1 of dim 0 (or -1)
        return index_fill(input.reshape(1), 0, index, value).reshape(())
    if not input.numel():  # torch fills a view with len(index) slices of stride 0 along d, unchecked
        sizes, strides = list(input.shape), list(input.stride())
        sizes[d], strides[d] = index.numel(), 0
        if 0 not in sizes:
            offset, item = input.storage_offset(), input.itemsize
            need = (offset + 1 + builtins.sum((n - 1) * s for n, s in zip(sizes, strides))) * item
            raise RuntimeError(f"setStorage: sizes {sizes}, strides {strides}, storage offset {offset}, and itemsize "
                               f"{item} requiring a storage size of {need} are out of bounds for storage of size "
                               f"{_backend.shared.owner(input._data).nbytes}")
        return input.clone()
    return reads_indices(index_put(input, (slice(None),) * d + (index._data,), value), [index])


def index_copy(input, dim, index, source):
    """``input`` with the slices of ``source`` written at ``index`` along ``dim``
    (https://pytorch.org/docs/stable/generated/torch.index_copy.html)."""
    d = _wrap_dim(dim, input.ndim)
    _same_dtype(input, source, "index_copy_(): self and source expected to have the same dtype, but got "
                               "(self) {self} and (source) {source}")
    return reads_indices(index_put(input, (slice(None),) * d + (index._data,), source), [index])


@parsed
def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` (bool, broadcastable) is True."""
    if not isinstance(mask, Tensor) or mask.dtype is not _dtype.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{c_type_name(mask.dtype) if isinstance(mask, Tensor) else type(mask).__name__}")
    refuse_unsigned("masked_fill", input.dtype)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        number = real_if_fits(value.item(), input.dtype)  # (torch converts it checked: RuntimeError)
        v = value.to(input.dtype) if input.dtype.is_complex or not value.dtype.is_complex \
            else full((), number, dtype=input.dtype)
    else:
        v = full((), value, dtype=input.dtype)
    check_narrow(value.item() if isinstance(value, Tensor) else value, input.dtype)
    return named(apply(Where, mask, v, input), "MaskedFillBackward0")


def masked_select(input, mask):
    """The elements where the (broadcast) bool ``mask`` is True, as a 1-d tensor
    (https://pytorch.org/docs/stable/generated/torch.masked_select.html)."""
    refuse_unsigned("masked_select", input.dtype)
    shape = broadcast_shapes(input.shape, mask.shape)
    return named(getitem(expand(input, shape), expand(mask, shape)), "MaskedSelectBackward0")


def masked_scatter(input, mask, source):
    """``input`` with consecutive elements of ``source`` written where ``mask`` is True
    (https://pytorch.org/docs/stable/generated/torch.Tensor.masked_scatter_.html)."""
    refuse_unsigned("masked_scatter", input.dtype)
    _same_dtype(input, source, "masked_scatter: expected self and source to have same dtypes but got"
                               "{self} and {source}")
    shape = broadcast_shapes(input.shape, mask.shape)  # out of place, self broadcasts too
    where = _backend.namespace(mask._data).broadcast_to(mask._data, shape)
    return named(index_put(expand(input, shape), (where,), source.reshape(-1)[:builtins.int(where.sum())]),
                 "MaskedScatterBackward0")


def take(input, index):
    """Elements of the flattened ``input`` at ``index``, in ``index``'s shape
    (https://pytorch.org/docs/stable/generated/torch.take.html)."""
    return getitem(input.reshape(-1), index.reshape(-1)).reshape(index.shape)


def put(input, index, source, accumulate=False):
    """``input`` with the elements of ``source`` written (added, ``accumulate=True``) at the
    flat indices ``index`` of ``input`` in C order (negative ones count from the end)
    (https://pytorch.org/docs/stable/generated/torch.Tensor.put.html). RuntimeError for a
    non-integer ``index``; IndexError when ``index`` and ``source`` differ in size or an index
    is out of range, as PyTorch's."""
    if index.dtype.is_inexact or index.dtype is _dtype.bool:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_type_name(index.dtype)}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = input.numel()
    if index.numel() and (int(index._data.max()) >= n or int(index._data.min()) < -n):
        bad = int(index._data.max()) if int(index._data.max()) >= n else int(index._data.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    flat = index_put(input.reshape(-1), (index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input.shape)


def put_(self, index, source, accumulate=False):
    """In-place :func:`put`."""
    return write_result(self, put(self, index, source, accumulate))


def take_along_dim(input, indices, dim=None):
    """Elements of ``input`` at ``indices`` along ``dim`` (broadcast; flattened when ``dim``
    is None; with a ``dim``, negative indices count from its end, as torch's)
    (https://pytorch.org/docs/stable/generated/torch.take_along_dim.html)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if indices.numel() and int(indices._data.min()) < 0 and int(indices._data.min()) >= -n:
        indices = Tensor._make(_backend.namespace(indices._data).where(indices._data < 0, indices._data + n,
                                                                      indices._data))
    shape_in = list(input.shape)
    shape_idx = list(indices.shape)
    shape_in[d] = shape_idx[d] = 1
    b = broadcast_shapes(shape_in, shape_idx)
    si, sx = list(b), list(b)
    si[d], sx[d] = indices.shape[d], input.shape[d]
    return gather(expand(input, sx), d, expand(indices, si))
