"""``split``, ``chunk`` and ``unbind``: views of the input along a dim that share one autograd
node, as torch's (``u[0].grad_fn is u[1].grad_fn``, ``UnbindBackward0``, ``SplitBackward0``,
``SplitWithSizesBackward0``; ``output_nr`` 0, 1, ...). Each view is ``select``'s or ``narrow``'s
Slice view (its chain: what a write or a replay follows; dispatched where the compiler captures
ops); while recording, the views are then given the one node of the op
entry :class:`Unbind` or :class:`Split`, whose backward joins the views' gradients (``stack`` or
``cat``, zeros for a view without one), as torch's."""
import builtins
import itertools

import numpy as np

from .._backend import is_view_of
from .._size import type_name
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import DUAL, STATE
from .args import numpy_names
from .core import INPUT_CASTS, OBSERVERS, Op, apply, link_view, mark_multi_output, named, record
from .indexing import Slice
from .join import cat, stack

__all__ = ["split", "chunk", "split_with_sizes", "unbind", "unsafe_split", "unsafe_split_with_sizes",
           "unsafe_chunk"]


def _one_node(op, input, views, name, **attrs):
    """``views`` of ``input``, given one node of ``op`` (``attrs``) while recording, and marked as
    the outputs of multi-output view function ``name``."""
    if STATE.enabled and input.requires_grad and views:
        record(op, (input,), attrs, views)
    return mark_multi_output(views, name)


def _views(input, indices):
    """The views ``input[index]`` (Slice's) for each of ``indices``, as :func:`apply` makes them;
    made here directly (the array's view and its link to ``input``) where nothing watches or
    casts ops: a node of each would be dropped for the views' one node (that was most of
    ``unbind``'s time)."""
    x = input._data
    if OBSERVERS or INPUT_CASTS or DUAL.level is not None or type(x) is not np.ndarray:
        return tuple(apply(Slice, input, index=index) for index in indices)
    views = []
    for index in indices:
        out = Slice.forward(x, index)
        views.append(Tensor._make(out))
        if is_view_of(out, x):
            link_view(views[-1], input, Slice, {"index": index})
    return tuple(views)


def _joined_back(ctx, *grads):
    """The input's gradient from its views': their gradients joined in order along the dim
    (``cat`` for Split's, ``stack`` for Unbind's, as torch's SplitBackward0 / UnbindBackward0), zeros
    of its shape for a view that received none; one copy, linear in the number of views."""
    some = next((g for g in grads if g is not None), None)
    if some is None:
        return (None,)
    shapes = ctx.op.view_shapes(ctx.shapes[0], **ctx.attrs)
    parts = [some.new_zeros(shape) if g is None else g for g, shape in zip(grads, shapes)]
    join = stack if ctx.op is Unbind else cat
    return (join(parts, ctx.attrs["dim"]),)


class Unbind(Op):
    """The views of ``x`` at each index along ``dim``, which is removed."""
    promote = None
    save_inputs = False
    num_outputs = 2  # (or any other count: the input's size along dim; a node counts its results)

    @staticmethod
    def indices(shape, dim):
        return [(slice(None),) * dim + (i,) for i in range(shape[dim])]

    @staticmethod
    def view_shapes(shape, dim):
        return [tuple(shape[:dim]) + tuple(shape[dim + 1:])] * shape[dim]

    @classmethod
    def infer(cls, x, dim):
        return tuple((shape, x.dtype) for shape in cls.view_shapes(x.shape, dim))

    @classmethod
    def forward(cls, x, dim):
        return tuple(x[index] for index in cls.indices(x.shape, dim))

    backward = staticmethod(_joined_back)


class Split(Op):
    """The views of ``x`` of ``sizes`` along ``dim``, in order."""
    promote = None
    save_inputs = False
    num_outputs = 2  # (or any other count: one per size)

    @staticmethod
    def indices(shape, dim, sizes):
        ends = list(itertools.accumulate(sizes))
        return [(slice(None),) * dim + (slice(end - s, end),) for s, end in zip(sizes, ends)]

    @staticmethod
    def view_shapes(shape, dim, sizes):
        return [tuple(shape[:dim]) + (s,) + tuple(shape[dim + 1:]) for s in sizes]

    @classmethod
    def infer(cls, x, dim, sizes):
        return tuple((shape, x.dtype) for shape in cls.view_shapes(x.shape, dim, sizes))

    @classmethod
    def forward(cls, x, dim, sizes):
        return tuple(x[index] for index in cls.indices(x.shape, dim, sizes))

    backward = staticmethod(_joined_back)


def split(tensor, split_size_or_sections, dim=0):
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller) or of the listed sizes;
    RuntimeError for a 0-dim tensor (https://pytorch.org/docs/stable/generated/torch.split.html)."""
    d, sizes, name = _pieces(tensor, split_size_or_sections, dim)
    views = _one_node(Split, tensor, _views(tensor, Split.indices(tensor.shape, d, sizes)), name, dim=d,
                      sizes=tuple(sizes))
    named(views[0], name + "Backward0")  # (their one node, named as torch's)
    return views


def split_method(self, split_size, dim=0):
    """``Tensor.split``: :func:`split` of ``self``; Python's errors name ``Tensor.split`` and its
    ``split_size``, as for torch's method, which is written in Python."""
    return split(self, split_size, dim)


split_method.__name__, split_method.__qualname__ = "split", "Tensor.split"


def _pieces(tensor, split_size_or_sections, dim):
    """The wrapped ``dim``, the sizes of the pieces and torch's name of the split ("Split",
    "SplitWithSizes"); torch's errors for a size or sizes that do not fit."""
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, Tensor):  # a 0-dim one is a size, as an int
        if split_size_or_sections.ndim:
            raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not Tensor")
        split_size_or_sections = int(split_size_or_sections)
    elif isinstance(split_size_or_sections, np.integer) or not isinstance(split_size_or_sections, (int, tuple, list)):
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                        f"{type_name(split_size_or_sections)}")  # (a NumPy int too: torch's split_with_sizes)
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [n]
        if n == 0:
            sizes = [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                               f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return d, sizes, "Split" if isinstance(split_size_or_sections, int) else "SplitWithSizes"


@numpy_names
def chunk(input, chunks, dim=0):
    """``chunks`` views of (nearly) equal size along ``dim``; the last may be smaller
    (https://pytorch.org/docs/stable/generated/torch.chunk.html)."""
    return split(input, _chunk_size(input, chunks, dim), dim)


def _chunk_size(input, chunks, dim):
    """The size (or, for an empty dim, the sizes) ``split`` gives ``chunk``'s pieces."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    return [0] * chunks if n == 0 else -(-n // chunks)


def split_with_sizes(input, split_sizes, dim=0):
    """``split`` into pieces of the listed ``split_sizes``, which must add up to the length."""
    return split(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    """``split``'s pieces as tensors that share the input's memory without being its views
    (torch's ``UnsafeSplitBackward0``): writing one in place is allowed, and the input's history
    does not see it (https://pytorch.org/docs/stable/generated/torch.unsafe_split.html). Inside
    ``inference_mode`` the pieces of a normal tensor are ``split``'s views, as torch's (they
    require grad as it does)."""
    if STATE.inference and not input.is_inference():
        return split(input, split_size, dim)
    d, sizes, name = _pieces(input, split_size, dim)
    pieces = apply(Split, input, dim=d, sizes=tuple(sizes))
    named(pieces[0], f"Unsafe{name}Backward0")
    return pieces


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``unsafe_split`` into pieces of the listed ``split_sizes`` (``UnsafeSplitWithSizesBackward0``)."""
    return unsafe_split(input, list(split_sizes), dim)


def unsafe_chunk(input, chunks, dim=0):
    """``chunk``'s pieces as :func:`unsafe_split` gives them."""
    return unsafe_split(input, _chunk_size(input, chunks, dim), dim)


@numpy_names
def unbind(input, dim=0):
    """The views along ``dim``, which is removed
    (https://pytorch.org/docs/stable/generated/torch.unbind.html)."""
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input.ndim)
    return _one_node(Unbind, input, _views(input, Unbind.indices(input.shape, d)), "Unbind", dim=d)
