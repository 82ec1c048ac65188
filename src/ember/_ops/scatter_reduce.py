"""Reductions into a tensor at indices: ``scatter_reduce``, ``index_reduce`` and ``scatter``'s
``reduce=`` form (with the plain ``scatter``, which leads to it)
(https://pytorch.org/docs/stable/generated/torch.Tensor.scatter_reduce_.html,
https://pytorch.org/docs/stable/generated/torch.Tensor.index_reduce_.html).

``index_reduce`` is ``scatter_reduce`` with its 1-D index spread over the source's shape.
The derivatives follow PyTorch's choices: ``amax``/``amin`` share the gradient evenly among
the elements equal to the result; ``prod`` gives exact gradients where an element is 0.
"""
import numpy as np

from .. import _backend, _dtype
from .._creation import full, real_if_fits
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import no_grad
from .args import warn_once
from .core import _NAMES, Op, apply, reads_indices
from .gather import (_SCATTER_DTYPES, Gather, Scatter, _at_least_1d, _check_index_tensor, _fit, _grid, _in_range,
                     _same_dtype, _unfit)
from .pointwise_binary import Where
from .unimplemented import not_implemented_link, refusing_link

_UFUNCS = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with each ``src[i][j]`` reduced into ``input[index[i][j]][j]`` (for dim 0) by
    ``reduce`` ("sum", "prod", "mean", "amax" or "amin"); with ``include_self=False`` the
    targeted elements of ``input`` are left out of their reduction. Integer means round
    down. RuntimeError for another ``reduce``, a non-integer index or one out of range;
    NotImplementedError where torch has no kernel (complex amax/amin, bool mean). ("max" and
    "min" are taken for "amax" and "amin", as torch 2.13's kernel takes them; its backward then
    raises RuntimeError.)"""
    d = _wrap_dim(dim, input.ndim)
    if reduce in ("max", "min"):  # torch's kernel takes them, its derivative refuses them
        with no_grad():
            out = scatter_reduce(input, dim, index, src, "a" + reduce, include_self=include_self)
        return refusing_link(out, "Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got "
                             f"{reduce}.", "ScatterReduceBackward0", input, src)
    if reduce not in _UFUNCS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _check_index_tensor("scatter_reduce", input, d, index, src)
    _same_dtype(input, src, _SCATTER_DTYPES)
    if input.dtype.is_complex and reduce in ("amax", "amin") or input.dtype is _dtype.bool and reduce == "mean":
        raise NotImplementedError(f"\"scatter_gather_tensor_cpu_reduce_{reduce}\" not implemented for "
                                  f"'{_NAMES[input.dtype.name]}'")
    return reads_indices(apply(ScatterReduce, input, src, dim=d, index=index._data, reduce=reduce,
                               include_self=include_self), [index])


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """``input`` with ``src`` (or ``value``) written along ``dim`` at ``index``; with ``reduce``
    ("add" or "multiply"), reduced into it (:func:`_scatter_reduced`)
    (https://pytorch.org/docs/stable/generated/torch.Tensor.scatter_.html)."""
    d = _wrap_dim(dim, input.ndim)
    _check_index_tensor("scatter", input, d, index, src)
    if reduce is not None:
        return _scatter_reduced(input, d, index, src, value, reduce)
    if isinstance(src, Tensor):
        _same_dtype(input, src, _SCATTER_DTYPES)
    else:
        src = real_if_fits(value if src is None else src, input.dtype)
    return reads_indices(apply(Scatter, input, src, dim=d, index=index._data), [index])


SCATTER_REDUCE_DEPRECATED = ("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed "
                             "in a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.")


def _scatter_reduced(input, dim, index, src, value, reduce):
    """``scatter(..., reduce="add" | "multiply")``: ``scatter_reduce``'s "sum" or "prod" with
    ``include_self``, on torch's NotImplemented node (torch has no derivative for it: backward
    raises RuntimeError "derivative for aten::scatter is not implemented"); a tensor ``src`` warns
    once that the form is deprecated, as torch does. RuntimeError for another ``reduce``."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        warn_once(SCATTER_REDUCE_DEPRECATED)
        inputs = (input, src)
    else:  # a number (``value``, or passed as ``src``): reduced into every indexed entry
        src, inputs = full(index.shape, value if src is None else src, dtype=input.dtype), (input,)
    with no_grad():
        out = scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod")
    return not_implemented_link(out, "scatter", *inputs)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with the slices of ``source`` along ``dim`` reduced into the slices at the 1-D
    ``index`` by ``reduce`` ("prod", "mean", "amax" or "amin"); see :func:`scatter_reduce`.
    NotImplementedError for bool with ``include_self=False`` or "mean" (torch's kernels)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but "
                           f"got {reduce}.")
    d = _wrap_dim(dim, input.ndim)
    _same_dtype(input, source, "index_reduce_(): self ({self}) and source ({source}) must have the same scalar type")
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"index_func_\" not implemented for '{_NAMES[input.dtype.name]}'")
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if source.ndim and index.numel() != source.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({source.shape[d]}), for dim: {d}")
    if input.dtype is _dtype.bool and (reduce == "mean" or not include_self):
        kernel = "div_floor_cpu" if include_self else "index_reduce_func_exclude_input_init"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    spread = index.reshape(tuple(-1 if i == d else 1 for i in range(source.ndim))).expand(tuple(source.shape))
    return scatter_reduce(input, d, spread, source, reduce, include_self=include_self)


def _identity(reduce, dtype):
    if reduce in ("sum", "mean", "prod"):
        return int(reduce == "prod")
    if dtype.kind == "b":
        return reduce == "amin"
    lowest, highest = (-np.inf, np.inf) if _backend.is_floating(dtype) else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    return lowest if reduce == "amax" else highest


def _counts(shape, dim, index, include_self):
    """How many values each element's reduction takes."""
    hits = _backend.namespace(index).zeros(shape, np.int64)
    _backend.index_add_at(hits, _grid(index, dim), 1)
    return hits + include_self


class ScatterReduce(Op):
    promote = None
    save_output = True

    @classmethod
    def infer(cls, x, src, **attrs):
        return tuple(x.shape), x.dtype

    @staticmethod
    def forward(x, src, dim, index, reduce, include_self):
        _in_range(x, dim, index)
        out, index = _at_least_1d(x).copy(), _at_least_1d(index)
        grid, values = _grid(index, dim), _fit(_at_least_1d(src), index)
        if not include_self:  # targeted elements start from the reduction's identity
            out[grid] = _identity(reduce, x.dtype)
        getattr(_backend.namespace(out), _UFUNCS[reduce]).at(out, grid, values)
        if reduce == "mean":
            count = _counts(out.shape, dim, index, include_self).clip(1)
            out = out / count if x.dtype.kind in "fc" else out // count
        return out.astype(x.dtype, copy=False).reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x, src, out = ctx.input(0), ctx.input(1), ctx.output
        dim, index, reduce, include_self = (ctx.attrs[k] for k in ("dim", "index", "reduce", "include_self"))
        # how many values each element's reduction took, in ops (index is a graph value); float64
        # counts (exact to 2^53) stay in a compiled graph's C kernels
        hits = g.new_zeros(ctx.shapes[0], dtype=_dtype.float64).scatter_add(
            dim, Tensor._make(index), g.new_ones(index.shape, dtype=_dtype.float64))
        targeted = hits > 0
        zero = g.new_zeros(())

        def at_index(t):  # the index-shaped corner of t gathered at the targets
            return apply(Gather, t, dim=dim, index=index)
        if reduce in ("sum", "mean"):
            share = g if reduce == "sum" else g / (hits + include_self).clamp_min(1).to(g.dtype)
            gx, gsrc = share, at_index(share)
        elif reduce in ("amax", "amin"):
            self_hit = x == out  # counted in the ties even when left out (PyTorch's rule)
            src_hit = _fit(src, index) == at_index(out)
            ties = self_hit.to(g.dtype).scatter_add(dim, Tensor._make(index), src_hit.to(g.dtype))
            share = g / ties
            gx = apply(Where, self_hit, share, zero)
            gsrc = apply(Where, src_hit, at_index(share), zero)
        else:
            gx, gsrc = _prod_grads(x, _fit(src, index), out, g, dim, index, include_self, at_index)
        if not include_self:
            gx = apply(Where, targeted, zero, g)
        return gx, _unfit(gsrc, ctx.shapes[1])


def _prod_grads(x, src, out, g, dim, index, include_self, at_index):
    """Each factor's gradient is ``g`` times the product of the other factors: ``out / value``
    for a non-zero factor, the product of the non-zero factors for the only zero, else 0."""
    one = g.new_ones(())
    x_safe, src_safe = apply(Where, x == 0, one, x), apply(Where, src == 0, one, src)
    nonzero = apply(ScatterReduce, x_safe, src_safe, dim=dim, index=index, reduce="prod",
                    include_self=include_self)
    zeros = ((x == 0) & include_self).to(_dtype.float64).scatter_add(dim, Tensor._make(index),
                                                                      (src == 0).to(_dtype.float64))

    def others(value, value_safe, zeros_here, out_here, nonzero_here):
        # out / value for a non-zero factor stays differentiable in a zero elsewhere
        lone_zero = apply(Where, zeros_here == 1, nonzero_here, g.new_zeros(()))
        return apply(Where, value == 0, lone_zero, out_here / value_safe)
    gx = g * others(x, x_safe, zeros, out, nonzero)
    gsrc = at_index(g) * others(src, src_safe, at_index(zeros), at_index(out), at_index(nonzero))
    return gx, gsrc
