"""Variance and standard deviation: ``var``, ``std``, ``var_mean``, ``std_mean``, written in
ember ops over ``mean`` and ``sum`` (their gradients come from those), and the op entry of a
variance with no degrees of freedom left, whose gradient is PyTorch's own constant.
The PyTorch page of each is ``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
import builtins

import numpy as np

from .. import _dtype
from .._backend import namespace
from .._creation import from_numpy
from ..autograd.grad_mode import STATE
from .args import dims_arg, numpy_names, with_out
from .core import Op, apply, named
from .reduce import _count, expand_back, mean, reduction_rule, sum

__all__ = ["var", "std", "var_mean", "std_mean"]


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


@numpy_names
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` is 0);
    a float32/float16/bfloat16 variance that overflows or underflows is taken in float64."""
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    return with_out(_spread(input, dim, unbiased, keepdim, correction, root=False), out)


def _spread(input, dim, unbiased, keepdim, correction, root):
    """The variance of ``input`` (its square root when ``root``). A float32, float16 or
    bfloat16 variance that left its range, squares that overflowed (inf where the values are
    finite) or underflowed (a variance below 2**-100, whose root is far above float32's
    subnormals), is taken again, with its root, in float64 and rounded, as torch accumulates
    in double: the common case stays in the narrow dtype."""
    v = _variance(input, dim, unbiased, keepdim, correction)
    if input.dtype in _NARROW and v.numel():
        d = v._data  # (a nan fails both tests: computed again, nan again)
        if not (d.min() >= 2.0 ** -100 and d.max() < np.inf):
            wide = _spread(input.double(), dim, unbiased, keepdim, correction, root)
            return named(wide.to(input.dtype), "StdBackward0" if root else "VarBackward0")
    return _sqrt_zero_grad(v) if root else v


def _variance(input, dim, unbiased, keepdim, correction):
    dims = dims_arg(dim, input.ndim)
    c = _correction(unbiased, correction)
    n = _count(input.shape, dims)
    centered = input - mean(input, dims, keepdim=True)
    # |x - mean|^2: complex inputs have a real variance.
    squares = centered.real.square() + centered.imag.square() if input.dtype.is_complex else centered * centered
    ss = sum(squares, dims, keepdim)
    if n - c > 0:
        return named(ss / (n - c), "VarBackward0")
    # With no degrees of freedom left PyTorch returns nan (inf for a nonzero sum), not an
    # error; over an explicit dim its gradient keeps the formula 2 (x - mean) / (n - c), over
    # all dims it is a constant (NoDegreesOfFreedom).
    if not dims:
        return named(apply(NoDegreesOfFreedom, input, dim=dims, keepdim=keepdim), "VarBackward0")
    r = ss / 0.0
    if n - c < 0:
        unclamped = ss / (n - c)
        r = r.detach() + (unclamped - unclamped.detach())
    return named(r, "VarBackward0")


class NoDegreesOfFreedom(Op):
    """A variance over all dims with ``n - correction <= 0``: nan where every element equals
    the mean (a zero sum of squares, as one element has), inf elsewhere. Its gradient is
    PyTorch's limit of 2 (x - mean) / (n - c) at n - c = 0: nan at an element equal to the
    mean (0 * inf), inf at the others, times the incoming gradient; no function of the input's
    history, so it does not require grad again."""
    infer = classmethod(reduction_rule)
    promote = None

    @staticmethod
    def forward(x, dim=None, keepdim=False):
        xp = namespace(x)
        centered = x - xp.mean(x)
        squares = (centered * centered.conj()).real
        with np.errstate(all="ignore"):
            return xp.asarray(squares.sum(axis=dim, keepdims=keepdim) / 0.0)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0].detach()
        at_mean = x == mean(x)
        limit = at_mean.new_full(x.shape, float("inf"), dtype=g.dtype).masked_fill(at_mean, float("nan"))
        return (expand_back(g, ctx.shapes[0], ctx.attrs.get("dim"), ctx.attrs.get("keepdim", False)) * limit,)


@numpy_names
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation: ``sqrt(var(...))`` with the same arguments; its gradient is zero
    where it is zero, as in PyTorch."""
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    return with_out(named(_spread(input, dim, unbiased, keepdim, correction, root=True), "StdBackward0"), out)


@numpy_names
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(...), mean(...))`` with the same arguments
    (https://pytorch.org/docs/stable/generated/torch.var_mean.html)."""
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    return (named(var(input, dim, unbiased, keepdim, correction=correction), "VarMeanBackward0"),
            named(_welford_mean(input, dim, keepdim), "VarMeanBackward0"))  # torch: one node, two outputs


@numpy_names
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(...), mean(...))`` with the same arguments
    (https://pytorch.org/docs/stable/generated/torch.std_mean.html)."""
    if isinstance(dim, builtins.bool):
        dim, unbiased = None, dim
    return (named(std(input, dim, unbiased, keepdim, correction=correction), "StdMeanBackward0"),
            named(_welford_mean(input, dim, keepdim), "StdMeanBackward0"))


def _welford_mean(input, dim, keepdim):
    """The mean ``var_mean`` and ``std_mean`` give: torch takes it by Welford's running update
    over each slice in row-major order, where an infinite element followed by any other makes
    it nan (inf - inf in the next update); only one that comes last leaves +-inf. The
    gradient is the mean's."""
    m = mean(input, dim, keepdim)
    if not input.is_floating_point() or input.ndim == 0 or not input.numel():
        return m
    dims = dims_arg(dim, input.ndim) or tuple(range(input.ndim))
    last = np.ones(input.shape, dtype=bool)
    for d in dims:
        last[(slice(None),) * d + (slice(0, -1),)] = False
    followed = (input.detach().isinf() & ~from_numpy(last)).any(dims, keepdim=keepdim)
    if not followed.any():
        return m
    return m + followed.new_zeros(followed.shape, dtype=m.dtype).masked_fill(followed, float("nan"))


_NARROW = (_dtype.float32, _dtype.float16, _dtype.bfloat16)


def _sqrt_zero_grad(s):
    if not (s.requires_grad and STATE.enabled):
        return s.sqrt()
    zero = s == 0
    safe = s.masked_fill(zero, 1.0).sqrt()
    return safe.masked_fill(zero, 0.0)
