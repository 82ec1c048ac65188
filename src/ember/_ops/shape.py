"""Shape, view, indexing and copy ops.

Views (``is_view``) share storage and the version counter with their input. Indexing
derivatives scatter the gradient back with accumulation, so repeated indices add up.
"""
import numpy as np

from .. import _backend
from ..autograd.grad_mode import STATE
from . import core
from .core import Op


class View(Op):
    """``view``/``reshape``: a new shape over the same elements (a copy if the strides forbid
    a view; ``view`` refuses that case before getting here)."""
    promote = None
    save_inputs = False
    is_view = True

    @staticmethod
    def forward(x, shape):
        return x.reshape(shape)  # the method: np.reshape adds a Python wrapper

    @staticmethod
    def backward(ctx, g):
        return (g.reshape(ctx.shapes[0]),)


class Unsqueeze(View):
    pass


class Squeeze(View):
    pass


class Permute(Op):
    promote = None
    save_inputs = False
    is_view = True

    @staticmethod
    def forward(x, dims):
        return x.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        return (g.permute(tuple(np.argsort(ctx.attrs["dims"]).tolist())),)


class SliceBackward(Op):
    """Slice's gradient for gradients that need no graph of their own: ``g`` scattered (added
    at repeated indices) into fresh zeros of ``shape``, instead of IndexPut on a copy."""
    promote = None
    differentiable = False
    save_inputs = False

    @staticmethod
    def forward(g, shape, index):
        out = np.zeros(shape, g.dtype)
        _backend.index_add_at(out, index, g)
        return out


class Expand(Op):
    """Broadcast to ``shape`` without copying; the dispatcher sums the gradient back."""
    promote = None
    save_inputs = False
    is_view = True

    @staticmethod
    def forward(x, shape):
        return np.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, g):
        return (g,)


class Slice(Op):
    """Basic indexing (ints, slices, None, Ellipsis): a view."""
    promote = None
    save_inputs = False
    is_view = True

    @staticmethod
    def forward(x, index):
        out = x[index]
        # Integers in every dim give a NumPy scalar; a trailing ``...`` gives the 0-d view.
        return out if type(out) is np.ndarray else x[index + (Ellipsis,)]

    @staticmethod
    def backward(ctx, g):
        if not STATE.enabled:
            return (core.apply(SliceBackward, g, shape=ctx.shapes[0], index=ctx.attrs["index"]),)
        zeros = g.new_zeros(ctx.shapes[0])
        return (zeros.index_put(ctx.attrs["index"], g, accumulate=True),)


class Index(Slice):
    """Advanced indexing (integer or boolean arrays): a copy."""
    is_view = False


class IndexPut(Op):
    """``x`` with ``values`` written at ``index`` (added there when ``accumulate``)."""
    promote = None
    save_inputs = False

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


def _grid(index, dim):
    """Full advanced index that addresses ``x[..., index[i], ...]`` along ``dim``."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _fit(src, index):
    """``src`` cut down to the shape of ``index`` (scatter reads only that corner)."""
    if src.shape == index.shape:
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


class Gather(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, dim, index):
        return x[_grid(index, dim)]

    @staticmethod
    def backward(ctx, g):
        dim, index = ctx.attrs["dim"], ctx.attrs["index"]
        return (g.new_zeros(ctx.shapes[0]).index_put(_grid(index, dim), g, accumulate=True),)


class Scatter(Op):
    """``scatter``: ``out[..., index[i], ...] = src[i]``; ``src`` may be a Python number."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, src, dim, index):
        out = x.copy()
        out[_grid(index, dim)] = src if np.ndim(src) == 0 else _fit(src, index)
        return out

    @staticmethod
    def backward(ctx, g):
        dim, index = ctx.attrs["dim"], ctx.attrs["index"]
        grid = _grid(index, dim)
        gx = g.index_put(grid, g.new_zeros(())) if ctx.needs_input_grad[0] else None
        gsrc = _unfit(g[grid], ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return gx, gsrc


class ScatterAdd(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, src, dim, index):
        out = x.copy()
        _backend.index_add_at(out, _grid(index, dim), _fit(src, index))
        return out

    @staticmethod
    def backward(ctx, g):
        dim, index = ctx.attrs["dim"], ctx.attrs["index"]
        gsrc = _unfit(g[_grid(index, dim)], ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return g, gsrc


def _unfit(g, shape):
    """Pads a gradient of the ``index``-shaped corner with zeros up to ``shape``."""
    if tuple(g.shape) == tuple(shape):
        return g
    return g.new_zeros(shape).index_put(tuple(slice(0, n) for n in g.shape), g)


class Cat(Op):
    promote = "promote"
    save_inputs = False

    @staticmethod
    def forward(*xs, dim=0):
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def backward(ctx, g):
        dim = ctx.attrs.get("dim", 0)
        grads, offset = [], 0
        for shape, need in zip(ctx.shapes, ctx.needs_input_grad):
            n = shape[dim] if len(shape) > dim else 0
            grads.append(g.narrow(dim, offset, n) if need else None)
            offset += n
        return tuple(grads)


class Flip(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, dims):
        return np.flip(x, dims).copy()

    @staticmethod
    def backward(ctx, g):
        return (g.flip(ctx.attrs["dims"]),)


class Roll(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, shifts, dims):
        return np.roll(x, shifts, dims)

    @staticmethod
    def backward(ctx, g):
        shifts, dims = ctx.attrs["shifts"], ctx.attrs["dims"]
        back = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return (g.roll(back, dims),)


class Tril(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, diagonal=0):
        return np.tril(x, diagonal)

    @staticmethod
    def backward(ctx, g):
        return (g.tril(ctx.attrs.get("diagonal", 0)),)


class Triu(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, diagonal=0):
        return np.triu(x, diagonal)

    @staticmethod
    def backward(ctx, g):
        return (g.triu(ctx.attrs.get("diagonal", 0)),)


class Diagonal(Op):
    promote = None
    save_inputs = False
    is_view = True

    @staticmethod
    def forward(x, offset=0, dim1=0, dim2=1):
        return np.diagonal(x, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        zeros = g.new_zeros(ctx.shapes[0])
        return (zeros.diagonal_scatter(g, a.get("offset", 0), a.get("dim1", 0), a.get("dim2", 1)),)


class DiagonalScatter(Op):
    """``x`` with ``src`` written on its diagonal (``torch.diagonal_scatter``)."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, src, offset=0, dim1=0, dim2=1):
        out = x.copy()
        moved = np.moveaxis(out, (dim1, dim2), (-2, -1))
        n = np.diagonal(moved, offset, -2, -1).shape[-1]
        rows = np.arange(n) + max(-offset, 0)
        moved[..., rows, rows + offset] = src
        return out

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        args = (a.get("offset", 0), a.get("dim1", 0), a.get("dim2", 1))
        return (g.diagonal_scatter(g.new_zeros(()).expand(g.diagonal(*args).shape), *args),
                g.diagonal(*args))


class Clone(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, contiguous=True):
        return np.array(x, copy=True, order="C" if contiguous else "K")

    @staticmethod
    def backward(ctx, g):
        return (g,)


class ToDtype(Op):
    """Cast to another dtype; the gradient is cast back (and dropped for integer inputs)."""
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, dtype):
        return x.astype(dtype.np)

    @staticmethod
    def backward(ctx, g):
        return (g.to(ctx.dtypes[0]),)
