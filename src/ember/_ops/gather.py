"""``gather`` and ``scatter`` along a dimension (https://pytorch.org/docs/stable/generated/torch.gather.html,
https://pytorch.org/docs/stable/generated/torch.Tensor.scatter_.html): reading ``input`` at, and
writing ``src`` into it at, the positions an index tensor gives along ``dim``, with torch's
checks of the index; each public function, then its op entry. ``scatter_reduce.py`` builds
the reductions on them.
"""
from .. import _backend, _dtype
from .._creation import real_if_fits
from .._tensor import Tensor, _wrap_dim
from .args import with_out
from .core import Op, _type_name, apply, like_input, reads_indices
from .parser import parsed


def _same_dtype(input, source, message):
    """torch's RuntimeError (``message`` with the dtypes' names) when an indexed write's
    ``source`` has another dtype than ``input``: these writes do not cast."""
    if source.dtype is not input.dtype:
        raise RuntimeError(message.format(self=_type_name(input.dtype), source=_type_name(source.dtype)))


def _check_index_tensor(name, input, dim, index, src=None):
    """torch's RuntimeErrors for the index of ``gather`` and the scatters: its dtype, rank (0-d
    counts as 1-D), sizes (no larger than ``input``'s but along ``dim``, than a tensor ``src``'s)."""
    if not isinstance(index, Tensor) or index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    operand = "input" if name == "gather" else "self"
    for other, what in ((input, operand), (src, "src")):
        if isinstance(other, Tensor) and max(index.ndim, 1) != max(other.ndim, 1):
            raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    sizes, x_sizes = index.shape or (1,), input.shape or (1,)
    too_big = [k for k, n in enumerate(sizes) if k != dim and n > x_sizes[k]]
    if index.numel() == 0 or not too_big and (
            not isinstance(src, Tensor) or all(n <= m for n, m in zip(sizes, src.shape or (1,)))):
        return
    message = f"index {list(index.shape)} to be no larger than self {list(input.shape)} apart from dimension {dim}"
    if name == "gather":
        raise RuntimeError(f"Size does not match at dimension {too_big[0]} expected {message}")
    raise RuntimeError(f"Expected {message}" + (f" and to be no larger size than src {list(src.shape)}"
                                                 if isinstance(src, Tensor) else ""))


def _in_range(x, dim, index):
    """torch's RuntimeError for an ``index`` entry outside ``[0, x.shape[dim])`` (no wrapping):
    checked by the kernels, so a compiled graph whose index is an input checks it too."""
    n = x.shape[dim] if x.ndim else 1
    if index.size and (index.max() >= n or index.min() < 0):
        bad = index.max() if index.max() >= n else index.min()
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


def _at_least_1d(a):
    """A 0-d array as one element of 1-D (how gather and the scatters read a 0-d operand)."""
    return a.reshape(1) if getattr(a, "ndim", None) == 0 else a


def _grid(index, dim):
    """Full advanced index that addresses ``x[..., index[i], ...]`` along ``dim``."""
    grid = list(_backend.namespace(index).indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _fit(src, index):
    """``src`` cut down to the shape of ``index`` (scatter reads only that corner)."""
    if src.shape == index.shape:
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def _unfit(g, shape):
    """Pads a gradient of the ``index``-shaped corner with zeros up to ``shape``."""
    if tuple(g.shape) == tuple(shape):
        return g
    if g.ndim == 0:  # the gradient at a 0-d index: the corner of one element
        g = g.reshape((1,) * len(shape))
    return g.new_zeros(shape).index_put(tuple(slice(0, n) for n in g.shape), g)


@parsed
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[i][index[i][j]]`` (for dim=1): picks along ``dim`` (index int64)."""
    d = _wrap_dim(dim, input.ndim)
    _check_index_tensor("gather", input, d, index)
    return with_out(reads_indices(apply(Gather, input, dim=d, index=index._data), [index]), out)


class Gather(Op):
    promote = None
    save_inputs = False
    infer = classmethod(lambda op, x, dim, index: (index.shape, x.dtype))

    @staticmethod
    def forward(x, dim, index):
        _in_range(x, dim, index)
        return _at_least_1d(x)[_grid(_at_least_1d(index), dim)].reshape(index.shape)

    @staticmethod
    def backward(ctx, g):
        return (apply(ScatterAdd, g.new_zeros(ctx.shapes[0]), g, **ctx.attrs),)


_SCATTER_DTYPES = "scatter(): Expected self.dtype to be equal to src.dtype"


class Scatter(Op):
    """``scatter``: ``out[..., index[i], ...] = src[i]``; ``src`` may be a Python number."""
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, src, dim, index):
        _in_range(x, dim, index)
        out, index = _at_least_1d(x).copy(), _at_least_1d(index)
        out[_grid(index, dim)] = src if getattr(src, "ndim", 0) == 0 else _fit(src, index)  # (src: array or number)
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        gx = apply(Scatter, g, real_if_fits(0, g.dtype), **ctx.attrs) if ctx.needs_input_grad[0] else None
        gsrc = _unfit(apply(Gather, g, **ctx.attrs), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return gx, gsrc


def scatter_add(input, dim, index, src):
    """``input`` with ``src`` added along ``dim`` at ``index`` (repeats add up)
    (https://pytorch.org/docs/stable/generated/torch.Tensor.scatter_add_.html)."""
    d = _wrap_dim(dim, input.ndim)
    _check_index_tensor("scatter_add", input, d, index, src)
    _same_dtype(input, src, _SCATTER_DTYPES)
    return reads_indices(apply(ScatterAdd, input, src, dim=d, index=index._data), [index])


class ScatterAdd(Op):
    promote = None
    index_read_by = (1,)  # the input's gradient is the gradient itself (reads_indices)
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(x, src, dim, index):
        _in_range(x, dim, index)
        out, index = _at_least_1d(x).copy(), _at_least_1d(index)
        _backend.index_add_at(out, _grid(index, dim), _fit(_at_least_1d(src), index))
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        gsrc = _unfit(apply(Gather, g, **ctx.attrs), ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return g, gsrc
