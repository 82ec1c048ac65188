"""Elementwise floating-point functions of two tensors: ``atan2``, ``hypot``, ``logaddexp``
and ``logaddexp2``, and of three, ``lerp``: each public function, then its op entry; and
``addcmul``/``addcdiv``, composites of the arithmetic operators.

Unlike the arithmetic operators (``pointwise_binary``) these have floating-point (and for
``logaddexp`` complex) kernels only: integer inputs give the default float (``atan2``) or
PyTorch's NotImplementedError, and each is written to stay finite where the naive formula
overflows. The PyTorch page of each is ``https://pytorch.org/docs/stable/generated/torch.<name>.html``.
"""
import math

import numpy as np

from .. import _dtype
from .._backend import kernel, namespace
from .._creation import real_if_fits
from .._tensor import Tensor
from . import fma
from .args import c_type_name, invalid_combination, scalar_first, tensor_args, with_out
from .core import Op, elementwise_rule, _type_name, apply, named
from .parser import parsed


def atan2(input, other, *, out=None):
    """The angle of the point (other, input) in radians, in [-pi, pi]; integer inputs give the
    default float dtype (https://pytorch.org/docs/stable/generated/torch.atan2.html). TypeError
    for a Python number."""
    tensor_args("atan2", input, other)
    return with_out(apply(Atan2, input, other), out)


arctan2 = atan2


class Atan2(Op):
    complex_error = (NotImplementedError, "\"atan2_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    promote = "float"
    forward = staticmethod(kernel("arctan2"))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        r = a * a + b * b
        # At the origin (or where a*a + b*b underflows) PyTorch gives a zero gradient.
        recip = r.reciprocal().masked_fill(r == 0, 0)
        return g * b * recip, -g * a * recip


def _floating_pair(name, input, other, complex_ok=False):
    """PyTorch's errors for a binary op with floating-point kernels only (and complex ones if
    ``complex_ok``): TypeError unless both are tensors, NotImplementedError naming the
    promoted dtype when it has no kernel."""
    tensor_args(name, input, other)
    dtype = _dtype.result_type(input, other)
    if not (dtype.is_floating_point or complex_ok and dtype.is_complex):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_name(dtype)}'")


def hypot(input, other, *, out=None):
    """``sqrt(input**2 + other**2)`` elementwise, without overflow or underflow in the squares
    (https://pytorch.org/docs/stable/generated/torch.hypot.html).

    Shapes broadcast; both must be floating-point tensors after promotion (bool promotes).
    Raises TypeError for a non-tensor argument, NotImplementedError for integer tensors and
    RuntimeError naming the sizes when the shapes do not broadcast. The gradient at the origin
    is nan, as in PyTorch.
    """
    _floating_pair("hypot", input, other)
    return with_out(apply(Hypot, input, other), out)


class Hypot(Op):
    """d/da hypot(a, b) = a / hypot(a, b), and the same for b."""
    complex_error = (NotImplementedError, "\"hypot_cpu\" not implemented for '{T}'")
    infer = classmethod(elementwise_rule)
    save_output = True
    grad_reads = ((0,), (1,))  # (torch saves input or other only for its own gradient)
    forward = staticmethod(kernel("hypot"))

    @staticmethod
    def backward(ctx, g):
        out, needs = ctx.output, ctx.needs_input_grad
        return (g * ctx.input(0) / out if needs[0] else None, g * ctx.input(1) / out if needs[1] else None)


def logaddexp2(input, other, *, out=None):
    """``log2(2**input + 2**other)`` elementwise, finite where the powers would overflow
    (https://pytorch.org/docs/stable/generated/torch.logaddexp2.html).

    Shapes broadcast; both must be floating-point tensors after promotion (bool promotes).
    Raises TypeError for a non-tensor argument, NotImplementedError for integer tensors and
    RuntimeError naming the sizes when the shapes do not broadcast.
    """
    _floating_pair("logaddexp2", input, other)
    return with_out(apply(LogAddExp2, input, other), out)


class LogAddExp2(Op):
    """d/da = 1 / (1 + 2**(b - a)), d/db = 1 / (1 + 2**(a - b)): each input's share of the sum."""
    infer = classmethod(elementwise_rule)
    forward = staticmethod(kernel("logaddexp2"))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        return g / (1 + 2 ** (b - a)), g / (1 + 2 ** (a - b))


def logaddexp(input, other, *, out=None):
    """``log(exp(input) + exp(other))``, finite where the exponentials would overflow; real or
    complex (https://pytorch.org/docs/stable/generated/torch.logaddexp.html).
    TypeError for a non-tensor argument, NotImplementedError for integer tensors."""
    _floating_pair("logaddexp", input, other, complex_ok=True)
    return with_out(apply(LogAddExp, input, other), out)


def log_add_exp(a, b):
    """``log(exp(a) + exp(b))`` on arrays, complex ones as torch computes them: the term with
    the larger real part ``hi`` factored out, ``hi + log1p(exp(lo - hi))``; a nan part in either
    gives nan + nan j; two equal infinite real parts give ``lo`` (both -inf) or the plain sum."""
    xp = namespace(a, b)
    if a.dtype.kind != "c" and b.dtype.kind != "c":
        return xp.logaddexp(a, b)
    a, b = xp.broadcast_arrays(a, b)
    swap = a.real < b.real
    lo, hi = xp.where(swap, a, b), xp.where(swap, b, a)
    with np.errstate(all="ignore"):
        out = hi + xp.log1p(xp.exp(lo - hi))
        infinite = xp.isinf(lo.real) & (lo.real == hi.real)
        out = xp.where(infinite, xp.where(lo.real < 0, lo, xp.log(xp.exp(lo) + xp.exp(hi))), out)
    out[xp.isnan(a) | xp.isnan(b)] = complex(math.nan, math.nan)
    return out


class LogAddExp(Op):
    """d/da = 1 / (1 + exp(b - a)), and symmetrically for b (holomorphic). Written so, not as
    sigmoid(a - b), since its own derivative is then torch's: nan where exp(b - a) overflows."""
    infer = classmethod(elementwise_rule)
    forward = staticmethod(log_add_exp)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        return g / (1 + (b - a).exp()), g / (1 + (a - b).exp())


@parsed
def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)``; ``weight`` a number or broadcasting tensor.
    TypeError unless ``end`` is a tensor; RuntimeError unless floating ``input`` and ``end``
    share their dtype; NotImplementedError for an integer ``input`` with a number ``weight``
    (https://pytorch.org/docs/stable/generated/torch.lerp.html)."""
    if not isinstance(input, Tensor):
        raise TypeError(invalid_combination("lerp", (input, end, weight), _LERP_SIGNATURES))
    if not isinstance(end, Tensor):
        raise TypeError(f"lerp(): argument 'end' (position 1) must be Tensor, not {type(end).__name__}")
    if not isinstance(weight, Tensor) and not input.dtype.is_inexact:
        raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for '{_type_name(input.dtype)}'")
    if end.dtype is not input.dtype and input.dtype.is_inexact:
        raise RuntimeError(f"expected dtype {c_type_name(input.dtype)} for `end` but got dtype "
                           f"{c_type_name(end.dtype)}")
    _check_float_number(weight, input.dtype)
    return with_out(apply(Lerp, input, end, weight), out)


_LERP_SIGNATURES = (" * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n"
                    " * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n")


class Lerp(Op):
    """torch's two-sided lerp: ``start + w (end - start)`` for |w| < 0.5, else ``end - (end - start) (1 - w)``."""
    opmath = True
    infer = classmethod(elementwise_rule)
    promote = "float"
    grad_reads = ((2,), (2,), (0, 1))

    @staticmethod
    def forward(start, end, weight):
        diff = end - start
        with np.errstate(invalid="ignore"):  # (end - start) of infinities: nan, silently
            return namespace(start, end).where(abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))

    @staticmethod
    def backward(ctx, g):
        weight = ctx.input(2)
        return g * (1 - weight), g * weight, (g * (ctx.input(1) - ctx.input(0)) if ctx.needs_input_grad[2] else None)


def addcmul(input, tensor1, tensor2, *args, value=1, out=None):
    """``input + value * tensor1 * tensor2``; the deprecated ``addcmul(value, tensor1,
    tensor2)`` works with torch's warning."""
    value, tensor1, tensor2 = _addc_args("addcmul", tensor1, tensor2, args, value)
    _check_float_number(value, input.dtype)
    dtype = _dtype.result_type(input, tensor1, tensor2)
    if dtype.is_floating_point and not isinstance(value, complex):
        # torch's CPU kernel: one fused multiply-add, fma(value * tensor1, tensor2, input)
        input, tensor1, tensor2 = (t if t.dtype is dtype else t.to(dtype) for t in (input, tensor1, tensor2))
        return with_out(apply(Addcmul, input, tensor1, tensor2, value=value), out)
    if not dtype.is_inexact and dtype is not _dtype.bool:
        value = integer_number(value, dtype)  # (2.5 is 2 for int64 tensors, as torch's kernel takes it)
    prod = tensor1 * tensor2
    return with_out(named(input + (prod if value == 1 else prod * value), "AddcmulBackward0"), out)


class Addcmul(Op):
    """``input + value * tensor1 * tensor2`` of floating tensors of one dtype as torch's CPU
    kernel computes it (``PointwiseOpsKernel.cpp``): ``fma(value * tensor1, tensor2, input)``,
    the first product rounded, the rest rounded once; float16 and bfloat16 in float32 (torch's
    opmath), then rounded to their dtype (:func:`ember._ops.fma.addcmul`)."""
    promote = None
    infer = classmethod(elementwise_rule)
    grad_reads = ((), (2,), (1,))

    forward = staticmethod(fma.addcmul)

    @staticmethod
    def backward(ctx, g):
        value = ctx.attrs["value"]
        return (g, g * (ctx.input(2) * value) if ctx.needs_input_grad[1] else None,
                g * (ctx.input(1) * value) if ctx.needs_input_grad[2] else None)


def addcdiv(input, tensor1, tensor2, *args, value=1, out=None):
    """``input + value * tensor1 / tensor2``; RuntimeError for integer tensor1 and tensor2. The
    deprecated ``addcdiv(value, tensor1, tensor2)`` works with torch's warning."""
    value, tensor1, tensor2 = _addc_args("addcdiv", tensor1, tensor2, args, value)
    _check_float_number(value, input.dtype)
    if not tensor1.dtype.is_inexact and not tensor2.dtype.is_inexact:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  "
                           "release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                           "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")
    dtype = _dtype.result_type(input, tensor1, tensor2)
    if dtype in (_dtype.float16, _dtype.bfloat16):  # torch's kernel computes in float32, rounds once
        input, tensor1, tensor2 = (t.to(_dtype.float32) for t in (input, tensor1, tensor2))
    # (torch's grouping: value times tensor1 first; exact at 1 for a floating tensor1, so value is not
    # compared: a compiled function's float argument stays a graph input)
    q = (tensor1 * value if tensor1.dtype.is_floating_point or value != 1 else tensor1) / tensor2
    return with_out(named((input + q).to(dtype), "AddcdivBackward0"), out)


def _check_float_number(number, dtype):
    """RuntimeError where torch's float32 (or 16-bit) kernel converts a real number argument
    (lerp's weight, addcmul's and addcdiv's value) checked to float: beyond float32's range."""
    if isinstance(number, (int, float)) and dtype in (_dtype.float32, _dtype.float16, _dtype.bfloat16):
        # (a float read as a plain one: a compiled function's guard tells a float beyond float32's range apart)
        real_if_fits(float.__float__(number) if isinstance(number, float) else number, _dtype.float32)


def integer_number(number, dtype):
    """A real ``number`` as torch's checked conversion to integer ``dtype`` (``Scalar.to<int64_t>()``)
    gives it to a kernel (``addcmul``'s value, ``threshold``'s bounds for integer tensors): a Python
    int, a float truncated (-2.5 is -2), a negative int wrapped for uint8; RuntimeError
    "value cannot be converted to type int64_t without overflow" beyond the type's range, NaN and
    inf included, OverflowError for an int beyond int64's (:func:`~ember._creation.real_if_fits`)."""
    number = real_if_fits(number, dtype)
    if isinstance(number, (float, np.floating)):
        with np.errstate(invalid="ignore"):  # (2.0**63 passes torch's check as a double and wraps, as C's cast)
            return int(np.array(number, np.float64).astype(dtype.np))
    return int(number)


def _addc_args(name, tensor1, tensor2, args, value):
    """addcmul/addcdiv's ``(value, tensor1, tensor2)``, also from the scale-first form."""
    if args or not isinstance(tensor1, Tensor):
        if not args:  # (number, tensor): torch's parser names the argument that is not a tensor
            raise TypeError(f"{name}(): argument 'tensor1' (position 1) must be Tensor, not {type(tensor1).__name__}")
        value, (tensor1, tensor2) = scalar_first(name, "value", (tensor1, tensor2) + args, ("tensor1", "tensor2"),
                                                 value, numbers=False)
    if not isinstance(tensor2, Tensor):
        raise TypeError(f"{name}(): argument 'tensor2' (position 2) must be Tensor, not {type(tensor2).__name__}")
    return value, tensor1, tensor2
