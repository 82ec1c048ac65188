"""Resampling along one dim (interpolation's separable passes): a weighted sum of gathered
taps, ``Resample``, and its adjoint, ``ResampleTranspose``, each the other's derivative, so
gradients of any order are free."""
from .._backend import namespace
from .core import Op, apply


def _resampled_rule(op, x, dim, index, size=None, weights=None):
    """``x``'s shape with dim ``dim`` of length ``size``, or the output count of ``index``."""
    shape = list(x.shape)
    shape[dim] = index.shape[1] if size is None else size
    return tuple(shape), x.dtype


class Resample(Op):
    """Along ``dim``: ``out[..., j, ...] = sum_k weights[k, j] * x[..., index[k, j], ...]``.
    ``index`` is a (taps, out) int64 array whose rows never decrease (interpolation reads
    its sources in order); ``weights`` the matching array in x's dtype, or None for ones."""
    promote = None
    infer = classmethod(_resampled_rule)
    save_inputs = False

    @staticmethod
    def forward(x, dim, index, weights=None):
        shape = (-1,) + (1,) * (x.ndim - 1 - dim)
        out = None
        for k, rows in enumerate(index):
            tap = x.take(rows, axis=dim)
            if weights is not None:
                tap *= weights[k].reshape(shape)
            if out is None:
                out = tap
            else:
                out += tap
        return out

    @staticmethod
    def backward(ctx, g):
        return (apply(ResampleTranspose, g, size=ctx.shapes[0][ctx.attrs["dim"]], **ctx.attrs),)


class ResampleTranspose(Op):
    """The adjoint of :class:`Resample`: each ``g`` entry, times its weight, added to its
    source position along ``dim`` (of length ``size``). Sources of a row come in
    non-decreasing runs, so each run is one segment sum (no scattered adds)."""
    promote = None
    infer = classmethod(_resampled_rule)
    save_inputs = False

    @staticmethod
    def forward(g, dim, index, size, weights=None):
        shape = (-1,) + (1,) * (g.ndim - 1 - dim)
        xp = namespace(g)
        out = xp.zeros(g.shape[:dim] + (size,) + g.shape[dim + 1:], g.dtype)
        lead = (slice(None),) * dim
        for k, rows in enumerate(index):
            part = g if weights is None else g * weights[k].reshape(shape)
            starts = xp.flatnonzero(xp.diff(rows, prepend=-1))
            out[lead + (rows[starts],)] += xp.add.reduceat(part, starts, axis=dim)
        return out

    @staticmethod
    def backward(ctx, h):
        attrs = {k: v for k, v in ctx.attrs.items() if k != "size"}
        return (apply(Resample, h, **attrs),)
