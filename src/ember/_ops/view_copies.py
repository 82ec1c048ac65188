"""The ``*_copy`` functions: each view op followed by a copy into new contiguous memory
(``torch.t_copy(x)`` is ``x.t().clone(memory_format=torch.contiguous_format)``), with ``out=``
and the view's gradient; the node is the view's, named ``<ViewNode>_copy`` as torch's
(https://pytorch.org/docs/stable/generated/torch.view_copy.html and its siblings). Multi-result
ones (``split_copy``, ``unbind_copy``, ...) write a list ``out`` and then return None, as torch."""
import numpy as np

from .._memory_format import contiguous_format
from .._tensor import Tensor
from .args import with_out
from .complex import view_as_complex, view_as_real
from .core import named, recording
from .join import diagonal, select
from .splits import split, split_with_sizes, unbind
from .restride import as_strided
from .shape import clone, expand, permute, squeeze, t, transpose, unfold, unsqueeze, view
from .unimplemented import not_implemented_link


def _copied(view, out=None):
    node = view.grad_fn
    result = clone(view, memory_format=contiguous_format)
    if node is not None:
        named(result, f"{type(node).__name__}_copy")
    return with_out(result, out)


def _all_copied(views, out, kernel):
    if out is None:
        return tuple(_copied(v) for v in views)
    if len(out) != len(views):
        raise RuntimeError(f"{kernel} expected an out= argument of size {len(views)}, got size {len(out)}")
    for v, o in zip(views, out):
        _copied(v, o)
    return None


def view_copy(input, size, *, out=None):
    """``input.view(size)`` (a shape or a dtype) copied."""
    return _copied(view(input, size), out)


def permute_copy(input, dims, *, out=None):
    """``input.permute(dims)`` copied."""
    return _copied(permute(input, dims), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    """``input.transpose(dim0, dim1)`` copied."""
    return _copied(transpose(input, dim0, dim1), out)


def t_copy(input, *, out=None):
    """``input.t()`` copied."""
    return _copied(t(input), out)


def expand_copy(input, size, *, implicit=False, out=None):
    """``input.expand(size)`` copied (each repeated element written out)."""
    return _copied(expand(input, size), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    """``input.diagonal(offset, dim1, dim2)`` copied."""
    return _copied(diagonal(input, offset, dim1, dim2), out)


def select_copy(input, dim, index, *, out=None):
    """``input.select(dim, index)`` copied."""
    return _copied(select(input, dim, index), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """``input[..., start:end:step]`` along ``dim``, copied; RuntimeError for a step below 1."""
    if step < 1:
        raise RuntimeError("slice step must be positive")
    dim = dim % input.ndim if input.ndim else dim
    return _copied(input[(slice(None),) * dim + (slice(start, end, step),)], out)


def squeeze_copy(input, dim=None, *, out=None):
    """``input.squeeze(dim)`` copied."""
    return _copied(squeeze(input, dim), out)


def unsqueeze_copy(input, dim, *, out=None):
    """``input.unsqueeze(dim)`` copied."""
    return _copied(unsqueeze(input, dim), out)


def unfold_copy(input, dimension, size, step, *, out=None):
    """``input.unfold(dimension, size, step)`` copied."""
    return _copied(unfold(input, dimension, size, step), out)


def alias_copy(input, *, out=None):
    """A copy of ``input`` (the copy of its alias)."""
    return _copied(named(view(input, input.shape), "AliasBackward0"), out)


def detach_copy(input, *, out=None):
    """``input.detach()`` copied into new memory. From a tensor that requires grad (grad mode on)
    the copy requires grad too, and its backward raises torch's RuntimeError "derivative for
    aten::detach_copy is not implemented" (with ``out``, the values are written and ``out`` stays
    as it was: torch puts it on that node)."""
    copy = clone(input.detach(), memory_format=contiguous_format)
    return with_out(copy, out) if out is not None else not_implemented_link(copy, "detach_copy", input)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    """``input.as_strided(size, stride, storage_offset)`` copied."""
    return _copied(as_strided(input, size, stride, storage_offset), out)


def view_as_real_copy(input, *, out=None):
    """``torch.view_as_real(input)`` copied."""
    return _copied(view_as_real(input), out)


def view_as_complex_copy(input, *, out=None):
    """``torch.view_as_complex(input)`` copied; RuntimeError when its gradient would be recorded
    (torch has no derivative for this copy's complex output)."""
    if recording(input):
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return _copied(view_as_complex(input), out)


def unbind_copy(input, dim=0, *, out=None):
    """``input.unbind(dim)``, each copied."""
    return _all_copied(unbind(input, dim), out, "unbind_copy_int_out")


def split_copy(input, split_size, dim=0, *, out=None):
    """``input.split(split_size, dim)``, each copied. ``split_size`` is one int (TypeError for a
    list: that is ``split_with_sizes_copy``)."""
    if isinstance(split_size, (list, tuple, float)) or isinstance(split_size, Tensor) and split_size.ndim:
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    if isinstance(split_size, np.integer):  # taken as torch's split_copy does (Tensor.split refuses it)
        split_size = int(split_size)
    return _all_copied(split(input, split_size, dim), out, "split_copy_Tensor_out()")


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    """``torch.split_with_sizes(input, split_sizes, dim)``, each copied."""
    return _all_copied(split_with_sizes(input, split_sizes, dim), out, "split_with_sizes_copy_out")
