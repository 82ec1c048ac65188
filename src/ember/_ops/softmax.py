"""``logsumexp``, ``softmax`` and ``log_softmax``: each public function, then its op entry.
All three shift by the maximum first, so they stay finite for logits of any size."""
import builtins

import numpy as np

from .._backend import namespace
from .._tensor import _wrap_dim
from .args import dims_arg, dtype_arg, with_out
from .core import Op, elementwise_rule, _type_name, apply
from .reduce import _c_order, expand_back, reduction_rule
from .parser import parsed


@parsed
def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))``, computed stably (finite for large inputs). ``dim=()``
    reduces every dim; without ``keepdim`` torch 2.13 then refuses a non-empty input of one
    or more dims (RuntimeError: its one-element result does not fit the 0-d output). ``dim``
    left out or None: TypeError, as torch's
    (https://pytorch.org/docs/stable/generated/torch.logsumexp.html)."""
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    if not keepdim and isinstance(dim, (tuple, list)) and not dim and input.ndim and input.numel():
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * input.ndim}")
    return with_out(apply(Logsumexp, input, dim=dims_arg(dim, input.ndim) or tuple(range(input.ndim)), keepdim=keepdim), out)


class Logsumexp(Op):
    """log(sum(exp(x))) over ``dim``, shifted by the max so it never overflows."""
    infer = classmethod(reduction_rule)
    promote = "float"
    save_output = True

    @staticmethod
    def forward(x, dim, keepdim=False):
        xp = namespace(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # -inf and nan results, silently
            if x.size == 0:
                return xp.log(xp.add.reduce(xp.exp(x), axis=dim, keepdims=keepdim))
            # shifted by the largest real part only: a complex shift would add its imaginary
            # part outside log's principal branch (torch's result is the principal value)
            m = xp.maximum.reduce(x.real if x.dtype.kind == "c" else x, axis=dim, keepdims=True)
            m = xp.where(xp.isfinite(m), m, 0)
            out = xp.log(xp.add.reduce(xp.exp(x - m), axis=dim, keepdims=True)) + m
        return _c_order(out if keepdim else out.squeeze(axis=dim))  # row-major, as torch's

    @staticmethod
    def backward(ctx, g):
        x = ctx.input(0)
        dim, keepdim = ctx.attrs["dim"], ctx.attrs.get("keepdim", False)
        out = expand_back(ctx.output, x.shape, dim, keepdim)
        return (expand_back(g, x.shape, dim, keepdim) * (x - out).exp(),)


@parsed
def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (required, as ``torch.softmax``'s; ``F.softmax``
    alone guesses it), shifted by the max so it never overflows. NotImplementedError for
    integer input without a float ``dtype``, as in PyTorch."""
    return _softmax(SoftmaxForward, "softmax", input, dim, dtype)


@parsed
def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x)`` along ``dim`` (required, as ``torch.log_softmax``'s); finite for
    logits of any size."""
    return _softmax(LogSoftmaxForward, "log_softmax", input, dim, dtype)


def _softmax(op, kernel, input, dim, dtype):
    input = dtype_arg(input, dtype)
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    d = _wrap_dim(dim, input.ndim)
    if not input.dtype.is_floating_point:
        if not input.numel():  # no element for torch's kernel to refuse: an empty copy
            return input.clone()
        last = "_lastdim" if d == builtins.max(input.ndim - 1, 0) else ""
        raise NotImplementedError(f"\"{kernel}{last}_kernel_impl\" not implemented for '{_type_name(input.dtype)}'")
    if input.ndim == 0:
        return apply(op, input.reshape(1), dim=0).reshape(())
    return apply(op, input, dim=d)


class SoftmaxForward(Op):
    name = "Softmax"
    infer = classmethod(elementwise_rule)
    pointwise = False  # torch allocates a row-major result whatever the input's strides
    promote = "float"
    save_inputs = False
    save_output = True
    at_float32 = True  # (torch's opmath)

    @staticmethod
    def forward(x, dim):
        if x.size == 0:
            return x.copy()
        xp, x = namespace(x), _c_order(x)  # torch's result is contiguous whatever the input's strides
        # course:begin 05/softmax
        # hint: exp(x - max) / sum(exp(x - max)) along dim: subtracting the row's max keeps exp from overflowing
        with np.errstate(invalid="ignore"):  # rows of -inf or with nan give nan, silently
            e = xp.exp(x - xp.maximum.reduce(x, axis=dim, keepdims=True))
            e /= xp.add.reduce(e, axis=dim, keepdims=True)
        return e
        # course:end 05/softmax

    @staticmethod
    def backward(ctx, g):
        # course:begin 05/softmax
        # hint: with y = softmax(x): dx = y * (g - sum(g * y)) along dim (ctx.output is y, ctx.attrs['dim'] the dim)
        out = ctx.output
        d = ctx.attrs["dim"]
        return (out * (g - (g * out).sum(d, keepdim=True)),)
        # course:end 05/softmax


class LogSoftmaxForward(Op):
    name = "LogSoftmax"
    infer = classmethod(elementwise_rule)
    pointwise = False  # as SoftmaxForward
    promote = "float"
    save_inputs = False
    save_output = True
    at_float32 = True  # (torch's opmath)

    @staticmethod
    def forward(x, dim):
        if x.size == 0:
            return x.copy()
        xp, x = namespace(x), _c_order(x)  # torch's result is contiguous whatever the input's strides
        # course:begin 05/log-softmax
        # hint: x - max - log(sum(exp(x - max))) along dim
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = x - xp.maximum.reduce(x, axis=dim, keepdims=True)
            shifted -= xp.log(xp.add.reduce(xp.exp(shifted), axis=dim, keepdims=True))
        return shifted
        # course:end 05/log-softmax

    @staticmethod
    def backward(ctx, g):
        # course:begin 05/log-softmax
        # hint: with y = log_softmax(x): dx = g - exp(y) * sum(g) along dim
        out = ctx.output
        d = ctx.attrs["dim"]
        return (g - out.exp() * g.sum(d, keepdim=True),)
        # course:end 05/log-softmax
