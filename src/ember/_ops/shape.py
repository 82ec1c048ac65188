"""Shape and view ops: each public function, then its op entry.

Views (``is_view``) share storage and the version counter with their input; ``reshape``,
``expand`` and friends check their arguments with PyTorch's errors before any kernel runs.
"""
import builtins

from .. import _backend, _dtype, _memory_format
from .._backend import empty_strided_like, namespace, ndarray, overlaps_itself
from .._creation import from_numpy
from .._result_layout import in_input_format
from .._tensor import Tensor, _wrap_dim
from .._size import sizes_arg
from .args import dims_arg, product, shape_arg, tensor_args
from ..autograd.grad_mode import DUAL
from .core import Op, apply, backward_view, dispatches, like_input, named, recording
from .parser import method_refusal, parsed


def tracked(t):
    """Whether a view of ``t`` that changes nothing (a reshape to its own shape) must still be
    dispatched as its op, not be a bare alias: ``t`` requires grad (the view is a node), or a
    dual level is open (``autograd.forward_ad``: the view's tangent follows)."""
    return t.requires_grad or DUAL.level is not None


def _infer_shape(shape, numel, input_shape):
    # course:begin 01/infer-shape
    # hint: one -1 may stand for the size that makes the element count equal numel; two -1s, a negative
    # hint: size or a count that does not fit raise RuntimeError with torch's message; return a tuple
    if -1 not in shape and product(shape) == numel and builtins.min(shape, default=0) >= 0:
        return tuple(shape)  # nothing to infer and nothing wrong: the common case, kept short
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(_ambiguous(shape))
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(_shape_text(shape))}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)
    # course:end 01/infer-shape


def _ambiguous(shape):
    """torch's message for a -1 beside a 0 in the shape of an empty tensor."""
    return (f"cannot reshape tensor of 0 elements into shape {list(_shape_text(shape))} because the "
            "unspecified dimension size -1 can be any value and is ambiguous")


def _shape_text(shape):
    return shape


def reshape(input, *sizes, shape=None, **unknown):
    """Same elements in a new ``shape`` (one entry may be -1); a view when strides allow."""
    if unknown:  # (torch's words, as its Tensor method's)
        raise TypeError(method_refusal("reshape", sizes, {**({} if shape is None else {"shape": shape}), **unknown}))
    shape = _infer_shape(shape_arg(sizes, ("reshape", "shape"), given=shape), input._data.size, input._data.shape)
    if shape == input._data.shape and not tracked(input):
        return input._alias()
    x = input._data
    if not recording(input) or getattr(x, "flags", None) is None or x.flags.c_contiguous:
        return apply(View, input, shape=shape)
    # torch's reshape of a strided tensor: an alias where strides allow (_reshape_alias), else
    # a copy viewed in the new shape (clone + _unsafe_view: a new tensor, not a view)
    probe = x.view()
    try:
        probe.shape = shape
    except AttributeError:
        out = apply(View, apply(Clone, input), shape=shape)
        out._base = out._view_chain = None
        return named(out, "UnsafeViewBackward0")
    return named(apply(View, input, shape=shape), "ReshapeAliasBackward0")


def view(input, *shape, size=None, dtype=None, **unknown):
    """A view with a new ``shape``; RuntimeError when the strides do not allow one (use
    ``reshape``). ``view(dtype)``: the same memory read as ``dtype`` (:func:`_view_dtype`).
    TypeError in torch's words for what neither of its signatures takes."""
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype) and size is dtype is None:
        return _view_dtype(input, shape[0])
    if isinstance(dtype, _dtype.dtype) and not shape and size is None:
        return _view_dtype(input, dtype)
    try:
        if dtype is not None or unknown:  # (with sizes: no signature takes both)
            raise TypeError
        shape = shape_arg(shape, ("view", "size"), given=size)
    except TypeError:
        if len(shape) > 1 and size is dtype is None and not unknown:  # (several sizes: the unpacking's own message)
            raise
        kwargs = {k: v for k, v in (("size", size), ("dtype", dtype)) if v is not None}
        raise TypeError(method_refusal("view", shape, {**kwargs, **unknown})) from None
    shape = _infer_shape(shape, input._data.size, input._data.shape)
    if not input._data.flags.c_contiguous:  # a contiguous array always has the view
        probe = input._data.view()
        try:
            probe.shape = shape
        except AttributeError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                               "least one dimension spans across two contiguous subspaces). Use "
                               ".reshape(...) instead.") from None
    return apply(View, input, shape=shape)


def _view_dtype(input, dtype):
    """``input``'s memory read as ``dtype`` (https://pytorch.org/docs/stable/generated/torch.Tensor.view.html):
    the same shape for an element of the same size, else the last dim scaled by the ratio of
    the sizes; not differentiable. RuntimeError, as torch's, for a 0-d input, a last dim that is
    not contiguous or not divisible, or an offset or stride that does not divide, where the
    sizes differ."""
    x, old, new = input._data, input.dtype.itemsize, dtype.itemsize
    if old != new:
        what = f"to view {_dtype.SCALAR_TYPE_NAMES[input.dtype.name]} as {_dtype.SCALAR_TYPE_NAMES[dtype.name]} " \
               "(different element sizes)"
        if x.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if input.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {input.stride(-1)}")
        if new > old:
            ratio = new // old
            if x.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {x.shape[-1]}")
            if input.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got "
                                   f"{input.storage_offset()}")
            for d, stride in enumerate(input.stride()[:-1]):
                if stride % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, but got {stride}")
    return apply(ViewDtype, input, dtype=dtype)


class ViewDtype(Op):
    """``view(dtype)``: the bytes of the input as another dtype, sharing its memory."""
    promote = None
    save_inputs = False
    is_view = True
    differentiable = False
    infer = classmethod(lambda op, x, dtype: (tuple(x.shape[:-1]) + (x.shape[-1] * x.dtype.itemsize // dtype.itemsize,)
                                              if x.shape else (), dtype))

    @staticmethod
    def forward(x, dtype):
        return x.view(dtype.np)


def view_as(input, other):
    """``view(input, other.shape)``
    (https://pytorch.org/docs/stable/generated/torch.view_as.html)."""
    return view(input, other.shape)


def reshape_as(input, other):
    """``reshape(input, other.shape)``
    (https://pytorch.org/docs/stable/generated/torch.reshape_as.html)."""
    return reshape(input, other.shape)


class View(Op):
    """``view``/``reshape``: a new shape over the same elements (a copy if the strides forbid
    a view; ``view`` refuses that case before getting here)."""
    promote = None
    save_inputs = False
    is_view = True
    infer = classmethod(lambda op, x, shape: (tuple(shape), x.dtype))

    @staticmethod
    def forward(x, shape):
        return x.reshape(shape)  # the method: np.reshape adds a Python wrapper

    @staticmethod
    def backward(ctx, g):
        return (g.reshape(ctx.shapes[0]),)


def flatten(input, start_dim=0, end_dim=-1):
    """Dims ``start_dim`` to ``end_dim`` merged into one (a 0-d input becomes 1-d); RuntimeError when ``start_dim``
    comes after ``end_dim``, TypeError for no tensor (https://pytorch.org/docs/stable/generated/torch.flatten.html)."""
    if not isinstance(input, Tensor):
        tensor_args("flatten", input)
    s, e = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)  # (a 0-d input's dims: 0 and -1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input._data.shape
    return reshape(input, shape[:s] + (-1 if input._data.size else product(shape[s:e + 1]),) + shape[e + 1:])


def ravel(input):
    """``reshape(input, -1)`` (https://pytorch.org/docs/stable/generated/torch.ravel.html)."""
    return reshape(input, -1)


def unflatten(input, dim, sizes):
    """Dim ``dim`` split into ``sizes`` (one may be -1); RuntimeError when they do not
    multiply to its size (https://pytorch.org/docs/stable/generated/torch.unflatten.html)."""
    if input.ndim == 0:
        raise RuntimeError(f"unflatten got an unexpected error: Dimension specified as {dim} but tensor "
                           "has no dimensions")
    d = _wrap_dim(dim, input.ndim)
    sizes = list(given := list(sizes_arg((sizes,), "unflatten", "sizes", position=2, sequence=True)))
    if -1 in sizes:
        known = product(s for s in sizes if s != -1)
        if known == 0 and input.shape[d] == 0:
            raise RuntimeError("unflatten got an unexpected error:\n" + _ambiguous(given))
        sizes[sizes.index(-1)] = input.shape[d] // known if known else -1
    if product(sizes) != input.shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {given} don't multiply up to the size "
                           f"of dim {dim} ({input.shape[d]}) in the input tensor")
    return reshape(input, tuple(input.shape[:d]) + tuple(sizes) + tuple(input.shape[d + 1:]))


@parsed
def squeeze(input, dim=None):
    """Removes size-1 dimensions (only those in ``dim``, or NumPy's ``axis``, when given)."""
    shape = input.shape
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = dims_arg(dim, input.ndim) or ()
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
        return named(apply(Squeeze, input, shape=new), "SqueezeBackward2" if isinstance(dim, (tuple, list))
                     else "SqueezeBackward1")  # torch's squeeze.dims overload is node 2
    return apply(Squeeze, input, shape=new)


class Squeeze(View):
    pass


@parsed
def unsqueeze(input, dim):
    """A view with a size-1 dimension inserted at ``dim``
    (https://pytorch.org/docs/stable/generated/torch.unsqueeze.html)."""
    d = _wrap_dim(dim, input.ndim + 1)
    shape = tuple(input.shape)
    return apply(Unsqueeze, input, shape=shape[:d] + (1,) + shape[d:])


class Unsqueeze(View):
    pass


def permute(input, *order, dims=None, **unknown):
    """A view with the dimensions in the order ``dims``; RuntimeError for a wrong count or
    repeated dims (https://pytorch.org/docs/stable/generated/torch.permute.html)."""
    if unknown:  # (torch's words, as its Tensor method's)
        raise TypeError(method_refusal("permute", order, {**({} if dims is None else {"dims": dims}), **unknown}))
    dims = shape_arg(order, ("permute", "dims"), given=dims, symbolic=False)
    if sorted(dims) == list(range(input.ndim)):
        return apply(Permute, input, dims=dims)  # valid as given: non-negative, distinct
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() "
                           f"= {input.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(Permute, input, dims=dims)


# torch.reshape/permute take one sequence (torch's parser: no lone int); the methods take the bodies
reshape_function, permute_function = parsed(reshape), parsed(permute)


class Permute(Op):
    promote = None
    save_inputs = False
    is_view = True

    @classmethod
    def infer(cls, x, dims):
        return tuple(x.shape[d] for d in dims), x.dtype

    @staticmethod
    def forward(x, dims):
        return x.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        dims = ctx.attrs["dims"]
        out = backward_view(Permute, g, dims=tuple(sorted(range(len(dims)), key=dims.__getitem__)))
        # a transpose's gradient is the gradient transposed back: torch's node, t()'s or transpose's
        name = type(ctx).__name__
        return (named(out, name) if name in ("TBackward0", "TransposeBackward0") else out,)


@parsed
def transpose(input, dim0, dim1):
    """A view with ``dim0`` and ``dim1`` swapped
    (https://pytorch.org/docs/stable/generated/torch.transpose.html)."""
    n = input.ndim
    if n < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return input._alias() if not tracked(input) else apply(View, input, shape=tuple(input.shape))
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    dims = list(range(n))
    dims[d0], dims[d1] = d1, d0
    return named(apply(Permute, input, dims=tuple(dims)), "TransposeBackward0")


swapaxes = swapdims = transpose


def t(input):
    """Transpose of a tensor with at most 2 dimensions; RuntimeError otherwise."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return named(apply(Permute, input, dims=_REVERSED[input.ndim]), "TBackward0")


_REVERSED = {0: (), 1: (0,), 2: (1, 0)}


@parsed
def movedim(input, source, destination):
    """A view with the dims ``source`` moved to the positions ``destination``
    (https://pytorch.org/docs/stable/generated/torch.movedim.html)."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = input.ndim
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(d, n) for d in dst]
    if n == 0:  # a 0-dim tensor's one "dim" (0 or -1) moves nowhere
        return permute(input, ())
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, tuple(order))


moveaxis = movedim


def expand(input, *sizes, size=None):
    """Broadcast view to ``sizes`` (ints or one sequence; ``size=``: a sequence) (-1 keeps a
    dimension); RuntimeError naming both shapes."""
    sizes = shape_arg(sizes, ("expand", "size"), given=size)
    shape = tuple(input.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand({_dtype.legacy_type_name(input.dtype)}{{{list(shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}")
            target.append(s)
        else:
            cur = shape[i - lead]
            if s == -1:
                target.append(cur)
            elif cur == 1 or cur == s:
                target.append(s)
            else:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                                   f"({cur}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                                   f"Tensor sizes: {list(shape)}")
    target = tuple(target)
    if target == shape:  # a writable view (NumPy's broadcast_to is read-only), named as torch's
        return input._alias() if not tracked(input) else named(apply(View, input, shape=shape), "ExpandBackward0")
    return apply(Expand, input, shape=target)


class Expand(Op):
    """Broadcast to ``shape`` without copying; the dispatcher sums the gradient back."""
    promote = None
    save_inputs = False
    is_view = True
    infer = View.__dict__["infer"]

    @staticmethod
    def forward(x, shape):
        return _backend.expand(x, shape)

    @staticmethod
    def backward(ctx, g):
        return (g,)


def _keep_shape(shape, dim):
    """``shape`` with the reduced axes set to 1: the shape a keepdim result has."""
    if dim is None:
        return (1,) * len(shape)
    return tuple(1 if i in dim else s for i, s in enumerate(shape))


def expand_back(g, shape, dim, keepdim):
    """Broadcasts the gradient of a reduction over ``dim`` back to the input's ``shape``: the
    array's views wrapped directly where no view of ``g`` :func:`dispatches` (two dispatches
    were most of a small sum's backward)."""
    if not dispatches(g) and type(g._data) is ndarray:  # (meta and sparse storage: their ops)
        data = g._data if keepdim else View.forward(g._data, _keep_shape(shape, dim))
        return Tensor._make(Expand.forward(data, tuple(shape)))
    if not keepdim:
        g = g.reshape(_keep_shape(shape, dim))
    return g.expand(shape)


def expand_as(input, other):
    """``expand(input, other.shape)``
    (https://pytorch.org/docs/stable/generated/torch.expand_as.html)."""
    return expand(input, other.shape)


@parsed
def broadcast_to(input, *sizes, size=None):
    """``expand(input, size)`` (https://pytorch.org/docs/stable/generated/torch.broadcast_to.html)."""
    return expand(input, shape_arg(sizes, ("broadcast_to", "size"), given=size))


def broadcast_shapes(*shapes):
    """The shape ``shapes`` broadcast to, as a tuple; RuntimeError when they do not
    (https://pytorch.org/docs/stable/generated/torch.broadcast_shapes.html)."""
    try:
        return _backend.broadcast_shapes(*[tuple(s) if not isinstance(s, int) else (s,) for s in shapes])
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: {list(shapes)}") from None


def broadcast_tensors(*tensors):
    """The tensors expanded (as views) to their common broadcast shape; a tensor that has that
    shape already is returned as it is, as PyTorch does
    (https://pytorch.org/docs/stable/generated/torch.broadcast_tensors.html)."""
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


def sum_to_size(input, *sizes, size=None):
    """Sums ``input`` down to ``size`` (the inverse of broadcasting to ``input``'s shape)."""
    size = shape_arg(sizes, names=("sum_to_size", "size"), given=size)
    shape = tuple(input.shape)
    if size == shape:
        return input
    lead = len(shape) - len(size)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size) if s == 1 and shape[i + lead] != 1)
    r = input.sum(dims, keepdim=True) if dims else input
    return reshape(r, size) if lead else r


def unfold(input, dimension, size, step):
    """``Tensor.unfold``: every window of ``size`` elements along ``dimension``, ``step`` apart,
    as a view of shape ``input.shape`` with that dim replaced by the window count
    ``(shape[dimension] - size) // step + 1`` and a last dim of ``size`` (a 0-d input gives
    shape ``(size,)``). RuntimeError if ``size`` exceeds the dim or is negative, or
    ``step <= 0``; IndexError for a bad dim.
    Source: https://pytorch.org/docs/stable/generated/torch.Tensor.unfold.html"""
    dim = _wrap_dim(dimension, input.ndim)
    length = input.shape[dim] if input.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply(Windows, input, dim=dim, size=size, step=step)


class Windows(Op):
    """A strided view of overlapping windows; the gradient adds each window back in place."""
    name = "Unfold"  # torch's grad_fn name; the class name would collide with nn.Unfold
    promote = None
    save_inputs = False
    is_view = True

    @classmethod
    def infer(cls, x, dim, size, step):
        if not x.shape:
            return (size,), x.dtype
        count = (x.shape[dim] - size) // step + 1
        return tuple(x.shape[:dim]) + (count,) + tuple(x.shape[dim + 1:]) + (size,), x.dtype

    @staticmethod
    def forward(x, dim, size, step):
        if x.ndim == 0:
            return x.reshape(1)[:size]
        shape = Windows.infer(x, dim, size, step)[0]
        strides = x.strides[:dim] + (x.strides[dim] * step,) + x.strides[dim + 1:] + (x.strides[dim],)
        return namespace(x).lib.stride_tricks.as_strided(x, shape, strides)

    @staticmethod
    def backward(ctx, g):
        shape, (dim, size, step) = ctx.shapes[0], (ctx.attrs[k] for k in ("dim", "size", "step"))
        if not shape:
            return (g.sum(),)
        count = g.shape[dim]
        xp = namespace(g._data)
        index = (xp.arange(count)[:, None] * step + xp.arange(size)).reshape(-1)
        windows = g.movedim(-1, dim + 1).reshape(tuple(shape[:dim]) + (count * size,) + tuple(shape[dim + 1:]))
        return (g.new_zeros(shape).index_add(dim, from_numpy(index), windows),)  # a constant table


def contiguous(input, memory_format=_memory_format.contiguous_format):
    """``input`` itself when laid out as ``memory_format`` (row-major by default;
    ``channels_last`` for 4-D, ``channels_last_3d`` for 5-D tensors), else a copy that is
    (https://pytorch.org/docs/stable/generated/torch.Tensor.contiguous.html). RuntimeError for
    a channels-last format of another rank and for ``preserve_format`` on a non-contiguous
    tensor; TypeError for anything but a memory format."""
    if memory_format is _memory_format.contiguous_format:  # (the common call, without the checks)
        return input if input._data.flags.c_contiguous else apply(Clone, input)
    fmt = _memory_format.checked(memory_format, "contiguous")
    if _memory_format.is_contiguous(input._data, fmt):
        return input
    if fmt is _memory_format.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(input, memory_format=fmt)


def clone(input, *, memory_format=_memory_format.preserve_format):
    """A copy with its own storage, recorded for autograd, laid out as ``memory_format``
    (by default as ``input`` is) (https://pytorch.org/docs/stable/generated/torch.clone.html)."""
    if memory_format is _memory_format.preserve_format:
        return apply(Clone, input, contiguous=False)
    fmt = _memory_format.checked(memory_format, "clone")
    if fmt in (_memory_format.channels_last, _memory_format.channels_last_3d):
        _memory_format.channels_order(fmt, input.ndim)
        return apply(Clone, input, layout=fmt._name)
    return apply(Clone, input, contiguous=fmt is _memory_format.contiguous_format)


class Clone(Op):
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, contiguous=True, layout=None):
        if layout is not None:  # a channels-last format, by name
            return _memory_format.laid_out(x, getattr(_memory_format, layout), namespace(x))
        # preserve_format keeps the order of the input's strides, but torch leaves dims with a
        # zero stride (an expanded input) where they are, which NumPy's "K" makes the innermost
        if not x.size and not contiguous and builtins.any(x.strides):  # NumPy's empty copy loses them
            return empty_strided_like(x)
        if contiguous or overlaps_itself(x):
            return namespace(x).array(x, copy=True, order="C")
        return _memory_format.preserved_copy(x, namespace(x))

    @staticmethod
    def backward(ctx, g):
        return (g,)


class Detach(Op):
    """``x.detach()`` as a graph node: the same memory, no gradient. Eagerly ``detach`` is an
    alias made outside the dispatcher; the compiler's tracer records this node where an op
    reads such an alias, so that a graph replayed with autograd (``make_fx``, ``export``, a
    control-flow branch's vector-Jacobian product) stops the gradient there as eager did."""
    promote = None
    save_inputs = False
    differentiable = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x):
        return x.view()  # a new array object over the same memory, as detach's alias


def _pixel_layout(shape, r, shuffle):
    """For ``pixel_shuffle`` (``shuffle``) or ``pixel_unshuffle`` by ``r`` of a tensor of
    ``shape``: the sizes it is viewed as, the order of those axes in the result, its shape."""
    lead, (c, h, w) = tuple(shape[:-3]), shape[-3:]
    if shuffle:
        split, order, out = (c // (r * r), r, r, h, w), (0, 3, 1, 4, 2), (c // (r * r), h * r, w * r)
    else:
        split, order, out = (c, h // r, r, w // r, r), (0, 2, 4, 1, 3), (c * r * r, h // r, w // r)
    n = len(lead)
    return lead + split, tuple(range(n)) + tuple(n + f for f in order), lead + out


class PixelShuffleForward(Op):
    """``shuffle``: (*, C r^2, H, W) -> (*, C, H r, W r) (``pixel_shuffle``, Shi et al., 2016),
    else the inverse (``pixel_unshuffle``), ``r = factor``, into a new row-major tensor (the
    functions lay it out as torch's kernels, and name the unshuffle's node). Each direction's
    gradient is the other of the incoming one, a new tensor too, in the format that one
    suggests (an expanded gradient: row-major), as torch's. (Named ``PixelShuffle``, as
    torch's node; the class name would be ``nn.PixelShuffle``'s.)"""
    name = "PixelShuffle"
    promote = None
    save_inputs = False
    infer = classmethod(lambda op, x, factor, shuffle: (_pixel_layout(x.shape, factor, shuffle)[2], x.dtype))

    @staticmethod
    def forward(x, factor, shuffle):
        split, axes, out = _pixel_layout(x.shape, factor, shuffle)
        return namespace(x).ascontiguousarray(x.reshape(split).transpose(axes)).reshape(out)

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        return (in_input_format(apply(PixelShuffleForward, g, factor=a["factor"], shuffle=not a["shuffle"]), g, (4,)),)
