"""Reductions and scans. ``dim`` arrives normalised: a tuple of non-negative axes, or None
for all of them."""
import numpy as np

from .core import Op


def _keep_shape(shape, dim):
    """``shape`` with the reduced axes set to 1: the shape a keepdim result has."""
    if dim is None:
        return (1,) * len(shape)
    return tuple(1 if i in dim else s for i, s in enumerate(shape))


def expand_back(g, shape, dim, keepdim):
    """Broadcasts the gradient of a reduction over ``dim`` back to the input's ``shape``."""
    if not keepdim:
        g = g.reshape(_keep_shape(shape, dim))
    return g.expand(shape)


class Sum(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, dim=None, keepdim=False, dtype=None):
        if dtype is None and x.dtype.kind in "biu":
            dtype = np.int64
        return np.sum(x, axis=dim, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, g):
        a = ctx.attrs
        return (expand_back(g, ctx.shapes[0], a.get("dim"), a.get("keepdim", False)),)


class Prod(Op):
    """Product over ``dim`` (one axis or all). The derivative is the product of the other
    elements, computed as exclusive cumulative products from both sides, so zeros are exact."""
    promote = None

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        dtype = np.int64 if x.dtype.kind in "biu" else None
        return np.prod(x, axis=dim, keepdims=keepdim, dtype=dtype)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        dim, keepdim = ctx.attrs.get("dim"), ctx.attrs.get("keepdim", False)
        if not dim:
            others = _prod_of_others(x.reshape(-1), 0).reshape(x.shape)
        else:
            others = _prod_of_others(x, dim[0])
        return (expand_back(g, x.shape, dim, keepdim) * others,)


def _prod_of_others(x, d):
    from .._functional import cat
    n = x.shape[d]
    if n == 0:
        return x
    ones = x.new_ones(x.narrow(d, 0, 1).shape)
    before = cat([ones, x.narrow(d, 0, n - 1)], d).cumprod(d)
    after = cat([x.narrow(d, 1, n - 1), ones], d).flip(d).cumprod(d).flip(d)
    return before * after


class Amax(Op):
    promote = None
    save_output = True
    nan_takes_gradient = False

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        _check_nonempty(x, dim, "amax")
        return np.max(x, axis=dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        return (_spread_to_extremes(ctx, g),)


class Amin(Amax):
    @staticmethod
    def forward(x, dim=None, keepdim=False):
        _check_nonempty(x, dim, "amin")
        return np.min(x, axis=dim, keepdims=keepdim)


class Max(Amax):
    """``max(x)`` over all elements. Unlike ``amax``, a NaN result sends the gradient to the
    NaN elements (PyTorch's ``evenly_distribute_backward``)."""
    nan_takes_gradient = True

    @staticmethod
    def forward(x):
        _check_nonempty(x, None, "max")
        return np.max(x)


class Min(Max):
    @staticmethod
    def forward(x):
        _check_nonempty(x, None, "min")
        return np.min(x)


def _spread_to_extremes(ctx, g):
    """Tied extremes share the gradient evenly, as in PyTorch."""
    x = ctx.input(0)
    dim, keepdim = ctx.attrs.get("dim"), ctx.attrs.get("keepdim", False)
    out = expand_back(ctx.output, x.shape, dim, keepdim)
    mask = x == out
    if ctx.op.nan_takes_gradient:
        mask = mask | (x.isnan() & out.isnan())
    mask = mask.to(g.dtype)
    count = expand_back(mask.sum(dim=dim, keepdim=True), x.shape, dim, True)
    return expand_back(g, x.shape, dim, keepdim) * mask / count


def _check_nonempty(x, dim, name, error=RuntimeError, hint=" Specify the reduction dim with the 'dim' argument."):
    """PyTorch's errors for a max-like reduction with no identity over no elements."""
    if x.size:
        return
    if dim is None:
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{hint}")
    for d in dim:
        if x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


class Argmax(Op):
    differentiable = False
    promote = None

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        return _arg_extreme(np.argmax, "argmax", x, dim, keepdim)


class Argmin(Op):
    differentiable = False
    promote = None

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        return _arg_extreme(np.argmin, "argmin", x, dim, keepdim)


def _arg_extreme(fn, name, x, dim, keepdim):
    _check_nonempty(x, None if dim is None else (dim,), name, IndexError, "")
    if dim is None:
        r = fn(x)
        return np.reshape(r, (1,) * x.ndim) if keepdim else np.int64(r)
    return fn(x, axis=dim, keepdims=keepdim)


class Cumsum(Op):
    promote = None
    save_inputs = False

    @staticmethod
    def forward(x, dim):
        dtype = np.int64 if x.dtype.kind in "biu" else None
        return np.cumsum(x, axis=dim, dtype=dtype)

    @staticmethod
    def backward(ctx, g):
        d = ctx.attrs["dim"]
        return (g.flip(d).cumsum(d).flip(d),)


class Cumprod(Op):
    """Cumulative product. Its derivative, sum over j >= i of g_j * out_j / x_i, is written
    with exclusive products so that zeros in ``x`` give exact values."""
    promote = None

    @staticmethod
    def forward(x, dim):
        dtype = np.int64 if x.dtype.kind in "biu" else None
        return np.cumprod(x, axis=dim, dtype=dtype)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        d = ctx.attrs["dim"]
        n = x.shape[d]
        if n == 0:
            return (g,)
        # grad_i = sum_{j>=i} g_j * prod_{k<=j, k!=i} x_k, computed per i over a (n, n) grid.
        xm = x.movedim(d, -1)
        gm = g.movedim(d, -1)
        eye = xm.new_ones((n, n)).tril()  # eye[j, i] = 1 where i <= j
        # prod_{k<=j, k!=i} x_k: replace x_i by 1 in row i, then cumprod along k.
        diag = xm.new_ones((n,)).diag_embed()
        rows = xm.unsqueeze(-2) * (1 - diag) + diag  # [..., i, k]
        partial = rows.cumprod(-1)  # [..., i, j] = prod_{k<=j, k!=i}
        contrib = partial * gm.unsqueeze(-2) * eye.transpose(-1, -2)
        return (contrib.sum(-1).movedim(-1, d),)


class VectorNorm(Op):
    """``(sum |x|^ord)^(1/ord)`` over ``dim``; ``ord`` may also be 0 (count of nonzeros) or
    +-inf (largest/smallest magnitude). Gradients follow PyTorch's ``norm_backward``: zero
    where the norm is zero, and shared evenly between tied extremes for +-inf."""
    promote = None
    save_output = True

    @staticmethod
    def forward(x, ord, dim, keepdim):
        a = np.abs(x)
        if ord == np.inf:
            return np.max(a, axis=dim, keepdims=keepdim)
        if ord == -np.inf:
            return np.min(a, axis=dim, keepdims=keepdim)
        if ord == 0:
            return np.sum(a != 0, axis=dim, keepdims=keepdim, dtype=x.dtype)
        if ord == 1:
            return np.sum(a, axis=dim, keepdims=keepdim)
        with np.errstate(divide="ignore", over="ignore"):
            if ord == 2:
                return np.sqrt(np.sum(a * a, axis=dim, keepdims=keepdim))
            return np.sum(a ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        ord, dim, keepdim = ctx.attrs["ord"], ctx.attrs["dim"], ctx.attrs["keepdim"]
        norm = expand_back(ctx.output, x.shape, dim, keepdim)
        g = expand_back(g, x.shape, dim, keepdim)
        if ord == 0:
            return (g * 0,)
        if ord == 1:
            return (x.sign() * g,)
        if ord == 2:
            return (x * (g / norm).masked_fill(norm == 0, 0),)
        if ord in (np.inf, -np.inf):
            a = x.abs()
            mask = ((a == norm) | a.isnan()).to(g.dtype)
            count = expand_back(mask.sum(dim=dim, keepdim=True), x.shape, dim, True)
            return (x.sign() * (g / count) * mask,)
        if ord < 1:
            scaled = x.sign() * x.abs().pow(ord - 1).masked_fill(x == 0, 0)
            return (scaled * g * norm.pow(1 - ord),)
        scale = (g / norm.pow(ord - 1)).masked_fill(norm == 0, 0)
        if ord < 2:
            return (x.sign() * x.abs().pow(ord - 1) * scale,)
        return (x * x.abs().pow(ord - 2) * scale,)


class Logsumexp(Op):
    """log(sum(exp(x))) over ``dim``, shifted by the max so it never overflows."""
    promote = "float"
    save_output = True

    @staticmethod
    def forward(x, dim, keepdim=False):
        with np.errstate(divide="ignore", invalid="ignore"):  # -inf and nan results, silently
            if x.size == 0:
                return np.log(np.sum(np.exp(x), axis=dim, keepdims=keepdim))
            m = np.max(x, axis=dim, keepdims=True)
            m = np.where(np.isfinite(m), m, 0)
            out = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
        return out if keepdim else np.squeeze(out, axis=dim)

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        dim, keepdim = ctx.attrs["dim"], ctx.attrs.get("keepdim", False)
        out = expand_back(ctx.output, x.shape, dim, keepdim)
        return (expand_back(g, x.shape, dim, keepdim) * (x - out).exp(),)


class Softmax(Op):
    promote = "float"
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x, dim):
        if x.size == 0:
            return x.copy()
        with np.errstate(invalid="ignore"):  # rows of -inf or with nan give nan, silently
            e = np.exp(x - np.max(x, axis=dim, keepdims=True))
            e /= np.sum(e, axis=dim, keepdims=True)
        return e

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        d = ctx.attrs["dim"]
        return (out * (g - (g * out).sum(d, keepdim=True)),)


class LogSoftmax(Op):
    promote = "float"
    save_inputs = False
    save_output = True

    @staticmethod
    def forward(x, dim):
        if x.size == 0:
            return x.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = x - np.max(x, axis=dim, keepdims=True)
            shifted -= np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))
        return shifted

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        d = ctx.attrs["dim"]
        return (g - out.exp() * g.sum(d, keepdim=True),)


class Argsort(Op):
    """Indices that sort ``x`` along ``dim`` (stable), ascending or descending."""
    differentiable = False
    promote = None

    @staticmethod
    def forward(x, dim=-1, descending=False):
        if descending:
            # Reverse a stable ascending sort of the reversed axis: ties keep their order,
            # and NaN (sorted last ascending) comes first, as in PyTorch.
            n = x.shape[dim]
            flipped = np.flip(x, axis=dim)
            idx = np.argsort(flipped, axis=dim, kind="stable")
            return np.flip(n - 1 - idx, axis=dim)
        return np.argsort(x, axis=dim, kind="stable")
