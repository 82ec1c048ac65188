"""Joining, splitting, repeating and rearranging tensors: each public function, then its op
entry (``torch.cat``, ``tensor_split``, ``repeat``, ``flip``, ``roll``, ``tril``, ``diagonal``, ...);
``split``, ``chunk`` and ``unbind``, whose views share one node, live in ``splits.py``."""
import builtins
import itertools

from .. import _dtype
from .._backend import dense, namespace
from .._result_layout import joined
from .._tensor import Tensor, _wrap_dim
from .args import dims_arg, numpy_names, resize_out, shape_arg, with_out
from .core import Op, _type_name, apply, like_input, named, result_dtype
from .indexing import Slice
from .shape import Clone, expand, reshape
from .parser import parsed


def repeat(input, *sizes, repeats=None):
    """``input`` tiled ``sizes`` times along each dim, as new storage
    (https://pytorch.org/docs/stable/generated/torch.Tensor.repeat.html)."""
    sizes = shape_arg(sizes, ("repeat", "repeats"), given=repeats)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    x = reshape(input, (1,) * (len(sizes) - input.ndim) + tuple(input.shape))
    # Interleave a new axis of each repeat count before each dim, expand, then merge.
    shape = tuple(x.shape)
    inter = []
    for r, s in zip(sizes, shape):
        inter += [1, s]
    expanded = expand(reshape(x, inter), [v for r, s in zip(sizes, shape) for v in (r, s)])
    # Materialised first: repeat always returns new storage, even when every count is 1.
    return named(reshape(apply(Clone, expanded), tuple(r * s for r, s in zip(sizes, shape))), "RepeatBackward0")


@parsed
def tile(input, *order, dims=None):
    """``repeat`` with ``dims`` (a sequence; ints or one sequence for the method) padded with
    leading 1s (https://pytorch.org/docs/stable/generated/torch.tile.html)."""
    dims = shape_arg(order, ("tile", "dims"), given=dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats, dim=None):
    """Each element (or slice along ``dim``) repeated ``repeats`` times in place
    (https://pytorch.org/docs/stable/generated/torch.repeat_interleave.html)."""
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = _wrap_dim(dim, input.ndim)
    reps = repeats.tolist() if isinstance(repeats, Tensor) else repeats
    xp = namespace(input._data)
    out = input.index_select(d, Tensor._make(xp.repeat(xp.arange(input.shape[d]), reps)))
    # torch repeats by a number as an expand and a reshape: its node is the view's
    return named(out, "ViewBackward0") if isinstance(reps, int) else out


@parsed
def cat(tensors, dim=0, *, out=None):
    """Concatenates along ``dim``; all other sizes must match (RuntimeError naming them);
    TypeError for an ``out`` whose dtype the inputs' promoted dtype cannot be cast to."""
    tensors = list(tensors) if type(tensors) is list or isinstance(tensors, tuple) else _tensor_list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = next((t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)), tensors[0])
    d = _wrap_dim(dim, ref.ndim)
    parts = [t for t in tensors if t is ref or not (t.ndim == 1 and t.shape[0] == 0)]
    ref_shape = ref._data.shape
    for i, t in enumerate(parts):
        shape = t._data.shape
        if shape == ref_shape:
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for k in range(ref.ndim):
            if k != d and shape[k] != ref_shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                                   f"size {ref.shape[k]} but got size {t.shape[k]} for tensor "
                                   f"number {i} in the list.")
    if len(parts) < len(tensors):
        # The skipped legacy empties still take part in dtype promotion.
        dtype = _dtype.result_type(*tensors)
        parts = [t if t.dtype is dtype else t.to(dtype) for t in parts]
    if out is not None:
        if not _dtype.can_cast(_dtype.result_type(*tensors), out.dtype):
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {_type_name(out.dtype)}")
        shape = list(ref_shape)
        shape[d] = builtins.sum(t._data.shape[d] for t in parts)
        _apart(out, tensors, shape)
    if len(parts) == 1:  # a copy, whose node is torch's all the same
        return with_out(named(parts[0].clone(), "CatBackward0"), out)
    return with_out(apply(Cat, *parts, dim=d), out)


concat, concatenate = parsed(cat.__wrapped__, "concat"), parsed(cat.__wrapped__, "concatenate")  # (torch names them)


class Cat(Op):
    promote = "promote"
    save_inputs = False

    @classmethod
    def infer(cls, *xs, dim=0):
        shape = list(xs[0].shape)
        shape[dim] = builtins.sum(x.shape[dim] for x in xs)
        return tuple(shape), result_dtype(cls, xs)

    @staticmethod
    def forward(*xs, dim=0):
        return joined(namespace(*xs).concatenate, xs, dim)

    @staticmethod
    def backward(ctx, g):
        dim = ctx.attrs.get("dim", 0)
        grads, offset = [], 0
        for shape, need in zip(ctx.shapes, ctx.needs_input_grad):
            n = shape[dim] if len(shape) > dim else 0
            grads.append(g.narrow(dim, offset, n) if need else None)
            offset += n
        return tuple(grads)


@parsed
def stack(tensors, dim=0, *, out=None):
    """The tensors joined along a new dimension ``dim``; RuntimeError naming the shapes when
    they differ (https://pytorch.org/docs/stable/generated/torch.stack.html)."""
    tensors = list(tensors) if type(tensors) is list or isinstance(tensors, tuple) else _tensor_list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape) + 1)
    if out is not None:
        _stack_out(out, tensors, shape, d)
    return with_out(apply(Stack, *tensors, dim=d), out)


def _stack_out(out, tensors, shape, d):
    """torch's errors for ``stack(tensors, d, out=out)``: a dtype the result cannot be cast to, and
    ``out`` among ``tensors`` (torch resizes it to the result first, then compares the inputs again)
    or sharing memory with one (:func:`_apart`)."""
    if not _dtype.can_cast(_dtype.result_type(*tensors), out.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {_type_name(out.dtype)}")
    overlapping = _overlapping(out, tensors)
    resize_out(out, shape[:d] + (len(tensors),) + shape[d:])
    if all(t is out for t in tensors):  # (torch's cat of the resized inputs resizes it again)
        resize_out(out, tuple(out.shape)[:d] + (len(tensors),) + tuple(out.shape)[d:])
    if any(t is out for t in tensors) and any(t is not out for t in tensors):
        if out is not tensors[0]:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(shape)} and {len(shape) + 1}")
        i, result = next(i for i, t in enumerate(tensors) if t is not out), list(shape)
        result.insert(d, len(tensors))
        raise RuntimeError(f"stack expects each tensor to be equal size, but got {result} at "
                           f"entry 0 and {list(shape)} at entry {i}")
    _apart(out, tensors, overlapping=overlapping)


def _tensor_list(tensors, name=None):
    """``tensors`` (a tuple or list) as a list; torch's TypeError for anything else (a generator,
    a Tensor), in its parser's words (``name``'s, or :func:`~.parser.parsed`'s for ``cat``/``stack``)."""
    if isinstance(tensors, (tuple, list)):
        return list(tensors)
    raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {type(tensors).__name__}"
                    if name else "tensors")


def _apart(out, tensors, shape=None, overlapping=None):
    """RuntimeError, as torch's, where the ``out=`` tensor shares memory with one of ``tensors``
    and both are dense (torch cannot tell for other layouts and writes); ``out`` resized to the
    result's ``shape`` first, as torch's, with its warning (``overlapping``: found before)."""
    overlapping = _overlapping(out, tensors) if overlapping is None else overlapping
    if shape is not None:
        resize_out(out, shape)
    if overlapping:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to "
                           "tensor refer to a single memory location. Please clone() the tensor before "
                           "performing the operation.")


def _overlapping(out, tensors):
    return builtins.any(t is out or isinstance(t, Tensor) and namespace(out._data).may_share_memory(out._data, t._data)
                        and dense(out._data) and dense(t._data) for t in tensors)


class Stack(Op):
    """The operands (of one shape) joined along a new dim ``dim``; the gradient's ``select`` at
    each index along it is theirs (torch's StackBackward0, whose next functions are the operands'
    nodes)."""
    promote = "promote"
    save_inputs = False

    @classmethod
    def infer(cls, *xs, dim=0):
        shape = list(xs[0].shape)
        shape.insert(dim, len(xs))
        return tuple(shape), result_dtype(cls, xs)

    @staticmethod
    def forward(*xs, dim=0):
        return joined(namespace(*xs).stack, xs, dim, stacked=True)

    @staticmethod
    def backward(ctx, g):
        d = ctx.attrs.get("dim", 0)
        return tuple(g.select(d, i) if need else None for i, need in enumerate(ctx.needs_input_grad))


def non_empty(name, tensors):
    """``tensors`` as a list; RuntimeError, as torch's, for none (``hstack`` and its kin);
    TypeError for no tuple or list."""
    tensors = _tensor_list(tensors, name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


@parsed
def hstack(tensors, *, out=None):
    """``cat`` along dim 1 (dim 0 for 1-d tensors; 0-d ones count as 1-d)
    (https://pytorch.org/docs/stable/generated/torch.hstack.html)."""
    tensors = [t.reshape(1) if t.ndim == 0 else t for t in non_empty("hstack", tensors)]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1, out=out)


@parsed
def vstack(tensors, *, out=None):
    """``cat`` along dim 0, 0-d and 1-d tensors as rows
    (https://pytorch.org/docs/stable/generated/torch.vstack.html)."""
    return cat([t.reshape(1, -1) if t.ndim <= 1 else t for t in non_empty("vstack", tensors)], 0, out=out)


row_stack = parsed(vstack.__wrapped__, "row_stack")


@parsed
def narrow(input, dim, start, length):
    """A view of ``length`` entries from ``start`` along ``dim``; RuntimeError when it runs
    past the end (https://pytorch.org/docs/stable/generated/torch.narrow.html)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    start = int(start)
    if start < 0:
        start += input.shape[d]
    if start < 0 or start + length > input.shape[d] or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({input.shape[d]}).")
    index = (slice(None),) * d + (slice(start, start + length),)
    return apply(Slice, input, index=index)


@parsed
def select(input, dim, index):
    """A view at ``index`` along ``dim``, which is removed; IndexError when out of range
    (https://pytorch.org/docs/stable/generated/torch.select.html)."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    return apply(Slice, input, index=(slice(None),) * d + (index,))


@numpy_names
def tensor_split(input, indices_or_sections, dim=0):
    """Views split into ``indices_or_sections`` parts (sizes differing by at most one) or
    at the given indices (https://pytorch.org/docs/stable/generated/torch.tensor_split.html).
    A tensor gives sections (0-d) or indices (1-d); RuntimeError for another rank or dtype than
    int64, and for fewer than one section, as torch."""
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dtype is not _dtype.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but "
                               f"got {_type_name(indices_or_sections.dtype)}")
        if indices_or_sections.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {indices_or_sections.ndim} dims")
        if indices_or_sections.ndim == 0:
            indices_or_sections = int(indices_or_sections.item())
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        bounds = list(itertools.accumulate(sizes[:-1]))
    else:
        # Each part is the slice between two indices, as torch's: a negative index counts from
        # the end, indices clamp to [0, n] and a decreasing one gives an empty part, so each
        # part is a narrow (a SliceBackward0 view that may be written in place, as torch's
        # sections too), not a split (whose sizes must add up to the length).
        bounds = [builtins.min(builtins.max(int(i) + n if int(i) < 0 else int(i), 0), n)
                  for i in indices_or_sections]
    starts, ends = [0] + bounds, bounds + [n]
    return tuple(narrow(input, d, a, builtins.max(b - a, 0)) for a, b in zip(starts, ends))


def _split_by_dim(name, dim, least_ndim):
    def split_along(input, indices_or_sections):
        if input.ndim < least_ndim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {least_ndim} dimension, but got a "
                               f"tensor with {input.ndim} dimensions!")
        d = dim if input.ndim > 1 or name != "hsplit" else 0
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                               f"dimension {input.shape[d]} is not divisible by the split_size "
                               f"{indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    split_along.__name__ = split_along.__qualname__ = name
    split_along.__doc__ = (f"``tensor_split`` along dim {dim} into equal parts or at indices; RuntimeError "
                           f"when the parts cannot be equal or ``input`` has fewer than {least_ndim} dims "
                           f"(https://pytorch.org/docs/stable/generated/torch.{name}.html).")
    return split_along


hsplit = _split_by_dim("hsplit", 1, 1)  # dim 0 of a 1-d tensor
vsplit = _split_by_dim("vsplit", 0, 2)
dsplit = _split_by_dim("dsplit", 2, 3)


@parsed
def flip(input, *order, dims=None):
    """A copy reversed along ``dims`` (a sequence; ints or one sequence for the method; a 0-dim
    tensor: a copy, for dims 0 and -1) (https://pytorch.org/docs/stable/generated/torch.flip.html).
    RuntimeError for a repeated dim."""
    dims = dims_arg(list(shape_arg(order, ("flip", "dims"), given=dims, symbolic=False)), input.ndim)
    return apply(Flip, input, dims=dims or ())


class Flip(Op):
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, dims):
        return namespace(x).flip(x, dims).copy()

    @staticmethod
    def backward(ctx, g):
        return (g.flip(ctx.attrs["dims"]),)


def fliplr(input):
    """``flip(input, (1,))``; RuntimeError below 2 dims
    (https://pytorch.org/docs/stable/generated/torch.fliplr.html)."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """``flip(input, (0,))``; RuntimeError for a 0-dim tensor
    (https://pytorch.org/docs/stable/generated/torch.flipud.html)."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    """Elements shifted by ``shifts`` along ``dims``, wrapping around (flattened when ``dims``
    is None) (https://pytorch.org/docs/stable/generated/torch.roll.html)."""
    if dims is None:
        return named(reshape(roll(input.reshape(-1), shifts, 0), input.shape), "RollBackward0")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dims} but tensor has no dimensions")
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else shifts
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else dims
    return apply(Roll, input, shifts=shifts, dims=dims)


class Roll(Op):
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, shifts, dims):
        return namespace(x).roll(x, shifts, dims)

    @staticmethod
    def backward(ctx, g):
        shifts, dims = ctx.attrs["shifts"], ctx.attrs["dims"]
        back = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return (g.roll(back, dims),)


@parsed
def tril(input, diagonal=0, *, out=None):
    """The lower triangle (on and below ``diagonal``) of the last two dims, zeros above
    (https://pytorch.org/docs/stable/generated/torch.tril.html)."""
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return with_out(apply(Tril, input, diagonal=diagonal), out)


class Tril(Op):
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, diagonal=0):
        return namespace(x).tril(x, diagonal)

    @staticmethod
    def backward(ctx, g):
        return (g.tril(ctx.attrs.get("diagonal", 0)),)


def triu(input, diagonal=0, *, out=None):
    """The upper triangle (on and above ``diagonal``) of the last two dims, zeros below
    (https://pytorch.org/docs/stable/generated/torch.triu.html)."""
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return with_out(apply(Triu, input, diagonal=diagonal), out)


class Triu(Op):
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, diagonal=0):
        return namespace(x).triu(x, diagonal)

    @staticmethod
    def backward(ctx, g):
        return (g.triu(ctx.attrs.get("diagonal", 0)),)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal at ``offset`` of dims ``dim1`` and ``dim2`` (appended last)
    (https://pytorch.org/docs/stable/generated/torch.diagonal.html)."""
    n = input.ndim
    return apply(Diagonal, input, offset=offset, dim1=_wrap_dim(dim1, n), dim2=_wrap_dim(dim2, n))


class Diagonal(Op):
    promote = None
    save_inputs = False
    is_view = True

    @classmethod
    def infer(cls, x, offset=0, dim1=0, dim2=1):
        shape = x.shape
        n = builtins.min(shape[dim1] + builtins.min(offset, 0), shape[dim2] - builtins.max(offset, 0))
        return tuple(s for i, s in enumerate(shape) if i not in (dim1, dim2)) + (builtins.max(n, 0),), x.dtype

    @staticmethod
    def forward(x, offset=0, dim1=0, dim2=1):
        view = x.diagonal(offset, dim1, dim2)
        # NumPy hands out diagonals read-only (a legacy of when they were copies); torch's
        # diagonal is a writable view wherever its base is.
        if x.flags.writeable:
            view.flags.writeable = True
        return view

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        zeros = g.new_zeros(ctx.shapes[0])
        return (zeros.diagonal_scatter(g, a.get("offset", 0), a.get("dim1", 0), a.get("dim2", 1)),)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``src`` written on the diagonal at ``offset`` of ``dim1``, ``dim2``
    (https://pytorch.org/docs/stable/generated/torch.diagonal_scatter.html)."""
    n = input.ndim
    return apply(DiagonalScatter, input, src, offset=offset, dim1=_wrap_dim(dim1, n), dim2=_wrap_dim(dim2, n))


class DiagonalScatter(Op):
    """``x`` with ``src`` written on its diagonal (``torch.diagonal_scatter``)."""
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, src, offset=0, dim1=0, dim2=1):
        out = x.copy()
        xp = namespace(x)
        moved = xp.moveaxis(out, (dim1, dim2), (-2, -1))
        n = moved.diagonal(offset, -2, -1).shape[-1]
        rows = xp.arange(n) + max(-offset, 0)
        moved[..., rows, rows + offset] = src
        return out

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        args = (a.get("offset", 0), a.get("dim1", 0), a.get("dim2", 1))
        return (g.diagonal_scatter(g.new_zeros(()).expand(g.diagonal(*args).shape), *args),
                g.diagonal(*args))


def select_scatter(input, src, dim, index):
    """``input`` with ``src`` written at ``index`` of ``dim`` (``src`` has that dim removed),
    as new storage; gradients flow to both
    (https://pytorch.org/docs/stable/generated/torch.select_scatter.html)."""
    out = input.clone()
    out.select(dim, index).copy_(src)
    return out


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``src`` written into ``input[start:end:step]`` along ``dim``, as new
    storage (https://pytorch.org/docs/stable/generated/torch.slice_scatter.html)."""
    out = input.clone()
    index = [slice(None)] * input.ndim
    index[_wrap_dim(dim, input.ndim)] = slice(start, end, step)
    out[tuple(index)] = src
    return out


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices with ``input``'s last dim on their diagonal at ``offset``
    (https://pytorch.org/docs/stable/generated/torch.diag_embed.html)."""
    n = input.shape[-1] + builtins.abs(offset)
    base = input.new_zeros(tuple(input.shape[:-1]) + (n, n))
    return diagonal_scatter(base, input, offset, -2, -1).movedim((-2, -1), (dim1, dim2)) \
        if (dim1, dim2) != (-2, -1) else diagonal_scatter(base, input, offset, -2, -1)


def diagflat(input, offset=0):
    """A 2-d tensor with the flattened ``input`` on its diagonal at ``offset``
    (https://pytorch.org/docs/stable/generated/torch.diagflat.html)."""
    return diag_embed(input.reshape(-1), offset)


def diag(input, diagonal=0):
    """The diagonal of a 2-d tensor, or a 2-d tensor with a 1-d ``input`` on its diagonal
    (https://pytorch.org/docs/stable/generated/torch.diag.html)."""
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    return input.diagonal(diagonal)  # the argument hides the function


@parsed
def trace(input):
    """The sum of the main diagonal of a 2-d tensor; NotImplementedError for bool, as torch
    (https://pytorch.org/docs/stable/generated/torch.trace.html)."""
    if input.dtype is _dtype.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return named(diagonal(input).sum(), "TraceBackward0")


def cartesian_prod(*tensors):
    """The cartesian product of 1-d tensors, one row per combination, differentiable: the
    flattened ``meshgrid`` stacked as columns; one tensor comes back as it is
    (https://pytorch.org/docs/stable/generated/torch.cartesian_prod.html)."""
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids (expanded views) of 1-d tensors, ``indexing`` "ij" or "xy"
    (https://pytorch.org/docs/stable/generated/torch.meshgrid.html)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    n = len(tensors)
    shape = [t.numel() for t in tensors]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(tensors):
        view_shape = [1] * n
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        view_shape[pos] = -1
        out.append(expand(t.reshape(view_shape), shape))
    return tuple(out)
