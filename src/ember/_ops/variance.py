"""Variance and standard deviation: ``var``, ``std``, ``var_mean``, ``std_mean``, over two op
entries: a variance (its gradient PyTorch's closed form 2 (x - mean) / (n - c)) and a
variance over all dims with no degrees of freedom left, whose gradient is PyTorch's constant.
The PyTorch page of each is ``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
import builtins
import math
import warnings

import numpy as np

from .. import _dtype
from .._backend import namespace
from .._creation import from_numpy
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from .args import ALL_DIMS, caller_level, dims_arg, invalid_combination, numpy_names, with_out
from .core import Op, apply, named
from .parser import _Signature, refusal
from .reduce import _c_order, _count, mean, reduction_rule
from .shape import _keep_shape, expand_back

__all__ = ["var", "std", "var_mean", "std_mean"]


_SIGNATURES = (" * (tuple of ints dim, bool unbiased = True, bool keepdim = False)\n"
               " * (tuple of ints dim = None, *, Number correction = None, bool keepdim = False)\n"
               " * (bool unbiased = True)\n")


def _signature(name, input, dim, unbiased, keepdim, correction):
    """``(dim, unbiased, keepdim)`` of a call matching one of PyTorch's three signatures:
    ``(dim, unbiased, keepdim)``, ``(dim=None, *, correction, keepdim)`` or ``(unbiased)``
    alone (``x.var(False)``); TypeError as its parser words it for any other combination
    (``unbiased`` with ``correction``, or with ``keepdim`` but no ``dim``), or ``input`` no tensor
    (a NumPy array: the function's signatures listed)."""
    if not isinstance(input, Tensor):
        given = {"dim": dim, "unbiased": unbiased, "keepdim": keepdim, "correction": correction}
        out = ("", "") if name.endswith("_mean") else (", *, Tensor out = None", ", Tensor out = None")
        texts = (f"Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False{out[0]}",
                 f"Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False{out[1]}",
                 "Tensor input, bool unbiased = True")
        raise TypeError(refusal(name, [_Signature(text) for text in texts], (input,),
                                {k: v for k, v in given.items() if v is not None and v is not ALL_DIMS}))
    if isinstance(dim, builtins.bool):  # x.var(False): the third form, nothing else given
        given = {"unbiased": unbiased, "keepdim": keepdim, "correction": correction}
        if any(v is not None for v in given.values()):
            raise TypeError(invalid_combination(name, (dim,), _SIGNATURES,
                                                **{k: v for k, v in given.items() if v is not None}))
        return None, dim, False
    if (unbiased is not None and (not isinstance(unbiased, builtins.bool) or correction is not None
                                  or (dim is ALL_DIMS and keepdim is not None))) \
            or not isinstance(keepdim, (type(None), builtins.bool)):
        given = {"dim": dim, "unbiased": unbiased, "keepdim": keepdim, "correction": correction}
        raise TypeError(invalid_combination(name, (), _SIGNATURES, **{k: v for k, v in given.items()
                                                                     if v is not None and v is not ALL_DIMS}))
    return None if dim is ALL_DIMS else dim, unbiased, builtins.bool(keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


@numpy_names
def var(input, dim=ALL_DIMS, unbiased=None, keepdim=None, *, correction=None, out=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` is 0);
    a float32/float16/bfloat16 variance that overflows or underflows is taken in float64."""
    dim, unbiased, keepdim = _signature("var", input, dim, unbiased, keepdim, correction)
    return with_out(_spread(input, dim, unbiased, keepdim, correction, root=False, name="var"), out)


def _spread(input, dim, unbiased, keepdim, correction, root, name=None):
    """The variance of ``input`` (its square root when ``root``). A float32, float16 or
    bfloat16 variance that left its range, squares that overflowed (inf where the values are
    finite) or underflowed (a variance below 2**-100, whose root is far above float32's
    subnormals), is taken again, with its root, in float64 and rounded, as torch accumulates
    in double: the common case stays in the narrow dtype. ``name``: the public function, named
    in torch's UserWarning when no degrees of freedom are left (None: no warning)."""
    v = _variance(input, dim, unbiased, keepdim, correction, name)
    if input.dtype in _NARROW and v.numel():
        d = v._data  # (a nan fails both tests: computed again, nan again)
        if not (d.min() >= 2.0 ** -100 and d.max() < np.inf):
            wide = _spread(input.double(), dim, unbiased, keepdim, correction, root)
            return named(wide.to(input.dtype), "StdBackward0" if root else "VarBackward0")
    return _sqrt_zero_grad(v) if root else v


def _variance(input, dim, unbiased, keepdim, correction, name=None):
    if not input.dtype.is_inexact:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = dims_arg(dim, input.ndim)
    c = _correction(unbiased, correction)
    n = _count(input.shape, dims)
    if name is not None and n - c <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning,
                      stacklevel=caller_level())
    # With no degrees of freedom left PyTorch returns nan (inf for a nonzero sum), not an
    # error; over an explicit dim its gradient keeps the formula 2 (x - mean) / (n - c), over
    # all dims it is a constant (NoDegreesOfFreedom).
    if n - c > 0 or dims:
        return apply(Var, input, dim=dims, keepdim=keepdim, correction=c)
    return named(apply(NoDegreesOfFreedom, input, dim=dims, keepdim=keepdim), "VarBackward0")


class Var(Op):
    """A variance: the sum of |x - mean|^2 over ``dim`` (the mean summed, then divided by the
    count n, as ``mean`` does) divided by max(n - correction, 0) (inf or nan without degrees
    of freedom left). Its gradient is PyTorch's closed form 2 (x - mean) / (n - c) times the
    incoming gradient (n - c unclamped: +-inf at n = c), itself differentiable (second
    derivatives), and +-inf, not nan, next to an infinite element, where the chain rule
    through the mean would give nan everywhere."""
    infer = classmethod(reduction_rule)
    promote = None
    holomorphic = False

    @staticmethod
    def forward(x, dim=None, keepdim=False, correction=1):
        xp = namespace(x)
        n = x.size if dim is None else int(np.prod([x.shape[d] for d in dim]))
        with np.errstate(all="ignore"):
            centered = x - xp.add.reduce(x, axis=dim, keepdims=True) / n
            squares = centered.real * centered.real + centered.imag * centered.imag \
                if x.dtype.kind == "c" else centered * centered
            # (row-major, as torch's result whatever the input's strides)
            return _c_order(xp.asarray(xp.add.reduce(squares, axis=dim, keepdims=keepdim) / max(n - correction, 0)))

    @staticmethod
    def backward(ctx, g):
        x, a = ctx.inputs[0], ctx.attrs
        dims, keepdim = a.get("dim"), a.get("keepdim", False)
        n = _count(ctx.shapes[0], dims)
        # g broadcast, not expanded (torch's formula): the result is laid out as x - mean, as x
        g = g if keepdim else g.reshape(_keep_shape(ctx.shapes[0], dims))
        dof = n - a.get("correction", 1)
        return (g * (2.0 / dof if dof else math.inf) * (x - mean(x, dims, keepdim=True)),)


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
        centered = x - xp.mean(x) if x.size else x  # (NumPy warns on the mean of nothing)
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
def std(input, dim=ALL_DIMS, unbiased=None, keepdim=None, *, correction=None, out=None):
    """Standard deviation: ``sqrt(var(...))`` with the same arguments; its gradient is zero
    where it is zero, as in PyTorch."""
    dim, unbiased, keepdim = _signature("std", input, dim, unbiased, keepdim, correction)
    return with_out(named(_spread(input, dim, unbiased, keepdim, correction, root=True, name="std"),
                          "StdBackward0"), out)


@numpy_names
def var_mean(input, dim=ALL_DIMS, unbiased=None, keepdim=None, *, correction=None):
    """``(var(...), mean(...))`` with the same arguments
    (https://pytorch.org/docs/stable/generated/torch.var_mean.html)."""
    dim, unbiased, keepdim = _signature("var_mean", input, dim, unbiased, keepdim, correction)
    return (named(_spread(input, dim, unbiased, keepdim, correction, root=False, name="var_mean"),
                  "VarMeanBackward0"),
            named(_welford_mean(input, dim, keepdim), "VarMeanBackward0"))  # torch: one node, two outputs


@numpy_names
def std_mean(input, dim=ALL_DIMS, unbiased=None, keepdim=None, *, correction=None):
    """``(std(...), mean(...))`` with the same arguments
    (https://pytorch.org/docs/stable/generated/torch.std_mean.html)."""
    dim, unbiased, keepdim = _signature("std_mean", input, dim, unbiased, keepdim, correction)
    return (named(_spread(input, dim, unbiased, keepdim, correction, root=True, name="std_mean"),
                  "StdMeanBackward0"),
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
